/* fuzz_vocab.c — the vocabulary loader (text/vocab.c) on any file, then a
 * tokenizer over it when it has the special tokens. */
#include "tests/fuzz/fuzz_util.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_path("vocab.txt");
    fuzz_write(path, data, size, 0);
    Vocab *v = vocab_load(path);
    if (!v) return 0;
    for (int i = 0; i < vocab_size(v); i++)
        if (vocab_id(v, vocab_token(v, i)) < 0) __builtin_trap();
    Tokenizer *tok = tokenizer_create(v);
    if (tok) {
        static const char TEXT[] = "Hello, world! unbelievable caf\xc3\xa9 \xe4\xb8\xad";
        int ids[32], seg[32];
        tokenizer_encode(tok, TEXT, sizeof TEXT - 1, "the cats", 8, 32, ids, seg);
        tokenizer_free(tok);
    }
    vocab_free(v);
    return 0;
}
