/* cmd_vocab.c — `glue vocab train`: learn a WordPiece vocabulary (vocab.txt) from
 * text files, plain or .gz, one text a line (see text/wordpiece_train.h). */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "text/wordpiece_train.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOCAB_USAGE \
    "glue vocab train --corpus FILE... --size N --out FILE [--overwrite] [--min-count N] [--cased] [--mark-joins] [--json]"
#define VOCAB_MAX_CORPORA 64
#define VOCAB_DEFAULT_MIN_COUNT 2      /* a pair seen once only memorises one word */
#define VOCAB_MAX_SIZE 10000000

static void vocab_print_summary(const WordpieceTrainer *tr, const char *out, int ncorpora, long lines,
                                double secs, int json) {
    if (!json) {
        printf("wrote %s: %d tokens (%d merges) from %d file(s), %ld lines, %ld words (%d distinct) in %.2f s\n",
               out, wordpiece_trainer_num_tokens(tr), wordpiece_trainer_num_merges(tr), ncorpora, lines,
               wordpiece_trainer_total_words(tr), wordpiece_trainer_distinct_words(tr), secs);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "out", out);
    cJSON_AddNumberToObject(o, "vocab_size", wordpiece_trainer_num_tokens(tr));
    cJSON_AddNumberToObject(o, "merges", wordpiece_trainer_num_merges(tr));
    cJSON_AddNumberToObject(o, "files", ncorpora);
    cJSON_AddNumberToObject(o, "lines", (double)lines);
    cJSON_AddNumberToObject(o, "words", (double)wordpiece_trainer_total_words(tr));
    cJSON_AddNumberToObject(o, "distinct_words", wordpiece_trainer_distinct_words(tr));
    cJSON_AddNumberToObject(o, "seconds", secs);
    json_print_line(o);
    cJSON_Delete(o);
}

int cmd_vocab(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *corpus = args_str(&a, "--corpus", NULL);
    int size_given = args_flag(&a, "--size");
    long size = args_int(&a, "--size", 0);
    const char *out = args_str(&a, "--out", NULL);
    long min_count = args_int(&a, "--min-count", VOCAB_DEFAULT_MIN_COUNT);
    int json = args_flag(&a, "--json");
    int cased = args_flag(&a, "--cased"), mark_joins = args_flag(&a, "--mark-joins");
    int overwrite = args_flag(&a, "--overwrite");
    /* "train" first, then any further corpus files after --corpus FILE. */
    const char *pos[VOCAB_MAX_CORPORA + 1];
    int npos = args_positional(&a, pos, VOCAB_MAX_CORPORA + 1);
    int rc = args_finish(&a, VOCAB_USAGE);
    if (rc) return rc;
    const char *problem = args_train_corpora_problem(pos, npos, corpus, out, VOCAB_MAX_CORPORA);
    char range[96];   /* a --size given out of range is no missing --size */
    if (!problem && size_given && (size < 1 || size > VOCAB_MAX_SIZE)) {
        snprintf(range, sizeof range, "--size must be from 1 to %d, got %ld", VOCAB_MAX_SIZE, size);
        problem = range;
    }
    if (!problem)
        problem = !size_given    ? "--size N (the vocabulary size) is required"
                  : min_count < 1 ? "--min-count must be at least 1"
                                  : NULL;
    if (problem) {
        user_error("usage: " VOCAB_USAGE, "vocab: %s", problem);
        return EXIT_USAGE;
    }
    if ((rc = args_out_file_free("vocab", out, overwrite)) != 0) return rc;
    double t0 = now_seconds();
    WordpieceTrainer *tr = wordpiece_trainer_create();
    wordpiece_trainer_set_options(tr, cased, mark_joins);
    long lines = 0;
    rc = wordpiece_trainer_add_file(tr, corpus, &lines);
    for (int i = 1; i < npos && rc == 0; i++) rc = wordpiece_trainer_add_file(tr, pos[i], &lines);
    /* No words: the vocabulary would be the specials alone, useless to any model. */
    if (rc == 0 && wordpiece_trainer_total_words(tr) == 0) {
        user_error_data("give text files with one text a line", "vocab: no words in %s%s (%ld lines)", corpus,
                        npos > 1 ? " and the other corpora" : "", lines);
        rc = 1;
    }
    if (rc == 0) {
        int n = wordpiece_trainer_train(tr, (int)size, min_count);
        if (n > size)
            user_warning("the specials and single characters alone make %d tokens (more than --size %ld)", n, size);
        rc = wordpiece_trainer_save(tr, out) == 0 ? 0 : 1;
    }
    if (rc == 0) vocab_print_summary(tr, out, npos, lines, now_seconds() - t0, json);
    wordpiece_trainer_free(tr);
    return rc;
}
