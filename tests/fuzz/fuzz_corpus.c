/* fuzz_corpus.c — the pretraining corpus readers (pretrain/corpus.c): text,
 * WikiExtractor, Brown, WikiText, and the format guess from a file's name and
 * first line. Byte 0: the format (0-4, 4 = auto), the file name (for the
 * guess) and gzip; the rest is the file. Every unit handed out must be
 * non-empty. */
#include "pretrain/corpus.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const char *const NAMES[] = {"corpus.txt", "brown_tagged.txt", "wiki.train.tokens", "wiki.txt"};
    CorpusFormat fmt = (CorpusFormat)(data[0] % 5);
    char path[600];
    snprintf(path, sizeof path, "%s%s", fuzz_path(NAMES[(data[0] >> 3) % 4]), data[0] & 0x80 ? ".gz" : "");
    fuzz_write(path, data + 1, size - 1, data[0] >> 7);
    CorpusFile f = {.path = path, .format = fmt};
    CorpusReader r;
    corpus_open(&r, &f, 1);
    const char *text;
    size_t len;
    int new_doc, got;
    while ((got = corpus_next(&r, &text, &len, &new_doc)) == 1)
        if (len == 0) __builtin_trap();
    corpus_close(&r);
    fuzz_remove(path);
    return 0;
}
