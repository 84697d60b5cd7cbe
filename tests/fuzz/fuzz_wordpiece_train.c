/* fuzz_wordpiece_train.c — WordPiece vocabulary training input (glue vocab
 * train): the text file read through the line reader, then training to a
 * small vocabulary (byte 0: size, cased, join marks) and saving it. */
#include "tests/fuzz/fuzz_util.h"
#include "text/wordpiece_train.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *path = fuzz_path("corpus.txt");
    fuzz_write(path, data + 1, size - 1, data[0] & 1);
    WordpieceTrainer *tr = wordpiece_trainer_create();
    wordpiece_trainer_set_options(tr, data[0] >> 1 & 1, data[0] >> 2 & 1);
    long lines = 0;
    if (wordpiece_trainer_add_file(tr, path, &lines) == 0 &&
        wordpiece_trainer_train(tr, 8 + (data[0] >> 3) * 4, 1 + (data[0] >> 7)) == 0) {
        for (int i = 0; i < wordpiece_trainer_num_tokens(tr); i++)
            if (!wordpiece_trainer_token(tr, i)) __builtin_trap();
        wordpiece_trainer_save(tr, fuzz_path("vocab.out"));
    }
    wordpiece_trainer_free(tr);
    return 0;
}
