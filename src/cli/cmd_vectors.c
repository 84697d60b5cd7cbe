/* cmd_vectors.c — `glue vectors train`: fastText skip-gram word vectors (with
 * char n-grams) from text files, written as a .vec file that TextCNN and the
 * BiLSTM take with --set embedding=non-static --set vectors=FILE (see
 * models/baselines/vectors.h). */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/threads.h"
#include "models/baselines/vectors.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define VECTORS_USAGE                                                                                    \
    "glue vectors train --corpus FILE... --out FILE.vec [--dim 300] [--epochs 5] [--lr 0.05] [--window 5]" \
    " [--neg 5] [--min-count 5] [--minn 3] [--maxn 6] [--bucket 2000000] [--sample 1e-4] [--max-words N]"  \
    " [--threads N] [--seed S] [--json]"
#define VECTORS_MAX_CORPORA 64

static void vectors_print(const VecStats *s, const char *out, int json) {
    if (!json) {
        printf("wrote %s: %d words from %ld lines (%ld words of text), loss %.4f, %.1f s\n", out, s->vocab, s->lines,
               s->words, s->loss, s->seconds);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "out", out);
    cJSON_AddNumberToObject(o, "vocab", s->vocab);
    cJSON_AddNumberToObject(o, "lines", (double)s->lines);
    cJSON_AddNumberToObject(o, "words", (double)s->words);
    cJSON_AddNumberToObject(o, "loss", s->loss);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    json_print_line(o);
    cJSON_Delete(o);
}

int cmd_vectors(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    VecConfig c = vectors_default_config();
    const char *corpus = args_str(&a, "--corpus", NULL), *out = args_str(&a, "--out", NULL);
    c.dim = (int)args_int(&a, "--dim", c.dim);
    c.epochs = (int)args_int(&a, "--epochs", c.epochs);
    c.lr = args_double(&a, "--lr", c.lr);
    c.window = (int)args_int(&a, "--window", c.window);
    c.neg = (int)args_int(&a, "--neg", c.neg);
    c.min_count = (int)args_int(&a, "--min-count", c.min_count);
    c.minn = (int)args_int(&a, "--minn", c.minn);
    c.maxn = (int)args_int(&a, "--maxn", c.maxn);
    c.bucket = args_int(&a, "--bucket", c.bucket);
    c.sample = args_double(&a, "--sample", c.sample);
    c.max_words = args_int(&a, "--max-words", 0);
    long threads = args_int(&a, "--threads", 0), seed = args_int(&a, "--seed", 1);
    int json = args_flag(&a, "--json");
    /* "train" first, then any further corpus files after --corpus FILE. */
    const char *pos[VECTORS_MAX_CORPORA + 1];
    int npos = args_positional(&a, pos, VECTORS_MAX_CORPORA + 1);
    int rc = args_finish(&a, VECTORS_USAGE);
    if (rc) return rc;
    const char *problem = args_train_corpora_problem(pos, npos, corpus, out, VECTORS_MAX_CORPORA);
    if (!problem && (threads < 0 || seed < 0)) problem = "--threads and --seed must not be negative";
    if (problem) {
        user_error("usage: " VECTORS_USAGE, "vectors: %s", problem);
        return EXIT_USAGE;
    }
    c.threads = threads_init((int)threads);
    c.seed = (uint64_t)seed;
    c.show_progress = !json;
    const char *files[VECTORS_MAX_CORPORA];
    files[0] = corpus;
    for (int i = 1; i < npos; i++) files[i] = pos[i];
    VecStats st;
    rc = vectors_train(&c, files, npos, out, &st);
    if (rc == 0) vectors_print(&st, out, json);
    return rc;
}
