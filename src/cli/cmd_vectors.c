/* cmd_vectors.c — `glue vectors train`: word vectors from text files by
 * fastText skip-gram or CBOW (with char n-grams) or GloVe, written as a .vec
 * file that TextCNN and the BiLSTM take with --set embedding=non-static (or
 * static, multichannel) --set vectors=FILE (models/baselines/vectors.h);
 * `glue vectors eval`: nearest neighbours and word-analogy accuracy of a .vec
 * file (models/baselines/vectors_eval.h). */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/threads.h"
#include "models/baselines/vectors.h"
#include "models/baselines/vectors_eval.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define VECTORS_USAGE                                                                                          \
    "glue vectors train --corpus FILE... --out FILE.vec [--method skipgram|cbow|glove] [--dim 300] [--epochs 5]" \
    " [--lr 0.05] [--window 5] [--neg 5] [--min-count 5] [--minn 3] [--maxn 6] [--bucket 2000000] [--sample 1e-4]" \
    " [--x-max 100] [--alpha 0.75] [--max-words N] [--threads N] [--seed S] [--overwrite] [--json]\n"                           \
    "       glue vectors eval FILE.vec [--analogies FILE] [--words w1,w2,...] [--k 5] [--json]"
#define VECTORS_MAX_CORPORA 64

static void vectors_print(const VecStats *s, const char *out, const char *method, int json) {
    if (!json) {
        printf("wrote %s (%s): %d words from %ld lines (%ld words of text), loss %.4f (first epoch %.4f), %.1f s\n",
               out, method, s->vocab, s->lines, s->words, s->loss, s->loss_first, s->seconds);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "out", out);
    cJSON_AddStringToObject(o, "method", method);
    cJSON_AddNumberToObject(o, "vocab", s->vocab);
    cJSON_AddNumberToObject(o, "lines", (double)s->lines);
    cJSON_AddNumberToObject(o, "words", (double)s->words);
    cJSON_AddNumberToObject(o, "loss", s->loss);
    cJSON_AddNumberToObject(o, "loss_first", s->loss_first);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    json_print_line(o);
    cJSON_Delete(o);
}

/* --method's value as a VecMethod, -1 when unknown. */
static int vectors_method(const char *name) {
    for (int i = 0; VEC_METHODS[i]; i++)
        if (strcmp(name, VEC_METHODS[i]) == 0) return i;
    return -1;
}

static int vectors_train_cmd(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    VecConfig c = vectors_default_config();
    const char *corpus = args_str(&a, "--corpus", NULL), *out = args_str(&a, "--out", NULL);
    const char *method = args_str(&a, "--method", "skipgram");
    int m = vectors_method(method), glove = m == VEC_GLOVE;
    c.method = m < 0 ? VEC_SKIPGRAM : (VecMethod)m;
    c.dim = (int)args_int(&a, "--dim", c.dim);
    /* GloVe's own defaults: 10 words each side (the paper), 15 passes (the reference's demo) */
    c.epochs = (int)args_int(&a, "--epochs", glove ? 15 : c.epochs);
    c.lr = args_double(&a, "--lr", c.lr);
    c.window = (int)args_int(&a, "--window", glove ? 10 : c.window);
    c.neg = (int)args_int(&a, "--neg", c.neg);
    c.min_count = (int)args_int(&a, "--min-count", c.min_count);
    c.minn = (int)args_int(&a, "--minn", c.minn);
    c.maxn = (int)args_int(&a, "--maxn", glove ? 0 : c.maxn);
    c.bucket = args_int(&a, "--bucket", c.bucket);
    c.sample = args_double(&a, "--sample", c.sample);
    c.x_max = args_double(&a, "--x-max", c.x_max);
    c.alpha = args_double(&a, "--alpha", c.alpha);
    c.max_words = args_int(&a, "--max-words", 0);
    long threads = args_threads(&a, 0), seed = args_int(&a, "--seed", 1);
    int json = args_flag(&a, "--json"), overwrite = args_flag(&a, "--overwrite");
    /* "train" first, then any further corpus files after --corpus FILE. */
    const char *pos[VECTORS_MAX_CORPORA + 1];
    int npos = args_positional(&a, pos, VECTORS_MAX_CORPORA + 1);
    int rc = args_finish(&a, VECTORS_USAGE);
    if (rc) return rc;
    const char *problem = args_train_corpora_problem(pos, npos, corpus, out, VECTORS_MAX_CORPORA);
    if (!problem && m < 0) problem = "--method must be skipgram, cbow or glove";
    if (!problem && seed < 0) problem = "--seed must not be negative";
    if (problem) {
        user_error("usage: " VECTORS_USAGE, "vectors: %s", problem);
        return EXIT_USAGE;
    }
    if ((rc = args_out_file_free("vectors", out, overwrite)) != 0) return rc;
    c.threads = threads_init((int)threads);
    c.seed = (uint64_t)seed;
    c.show_progress = !json;
    const char *files[VECTORS_MAX_CORPORA];
    files[0] = corpus;
    for (int i = 1; i < npos; i++) files[i] = pos[i];
    VecStats st;
    rc = vectors_train(&c, files, npos, out, &st);
    if (rc == 0) vectors_print(&st, out, method, json);
    return rc;
}

/* Words whose neighbours are shown when --words is not given: a capital, a
 * country, a plural, an adjective, a verb, a number. */
#define VECTORS_EVAL_WORDS "paris,france,cars,good,running,three"

static void eval_neighbours(const VecTable *t, const char *list, int k, cJSON *json) {
    char *words = xstrdup(list), *save = NULL;
    int *ids = xmalloc((size_t)k * sizeof *ids);
    float *sim = xmalloc((size_t)k * sizeof *sim);
    cJSON *nb = json ? cJSON_AddObjectToObject(json, "neighbours") : NULL;
    for (char *w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int row = vec_table_find(t, w), n = row < 0 ? 0 : vec_neighbours(t, row, k, ids, sim);
        cJSON *arr = nb ? cJSON_AddArrayToObject(nb, w) : NULL;
        if (!json) printf("%-12s %s", w, row < 0 ? "(not in the file)" : "");
        for (int i = 0; i < n; i++) {
            const char *name = strmap_key(&t->words, ids[i]);
            if (arr) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "word", name);
                cJSON_AddNumberToObject(o, "cosine", sim[i]);
                cJSON_AddItemToArray(arr, o);
            } else {
                printf("%s%s %.3f", i ? ", " : "", name, sim[i]);
            }
        }
        if (!json) putchar('\n');
    }
    free(words);
    free(ids);
    free(sim);
}

static void eval_analogy_print(const VecAnalogyResult *r, cJSON *json) {
    long q = 0, an = 0, ok = 0;
    cJSON *cats = json ? cJSON_AddArrayToObject(json, "analogies") : NULL;
    if (!json) printf("\n%-24s %9s %9s %9s\n", "category", "questions", "answered", "accuracy");
    for (int c = 0; c < r->categories; c++) {
        double acc = r->answered[c] ? 100.0 * r->correct[c] / r->answered[c] : 0;
        q += r->questions[c];
        an += r->answered[c];
        ok += r->correct[c];
        if (cats) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "category", r->name[c]);
            cJSON_AddNumberToObject(o, "questions", (double)r->questions[c]);
            cJSON_AddNumberToObject(o, "answered", (double)r->answered[c]);
            cJSON_AddNumberToObject(o, "correct", (double)r->correct[c]);
            cJSON_AddItemToArray(cats, o);
        } else {
            printf("%-24s %9ld %9ld %8.1f%%\n", r->name[c], r->questions[c], r->answered[c], acc);
        }
    }
    double acc = an ? 100.0 * ok / an : 0;
    if (json) {
        cJSON_AddNumberToObject(json, "questions", (double)q);
        cJSON_AddNumberToObject(json, "answered", (double)an);
        cJSON_AddNumberToObject(json, "correct", (double)ok);
        cJSON_AddNumberToObject(json, "accuracy", acc);
    } else {
        printf("%-24s %9ld %9ld %8.1f%%  (of the answered; all four words must be in the file)\n", "all", q, an, acc);
    }
}

static int vectors_eval_cmd(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *analogies = args_str(&a, "--analogies", NULL), *words = args_str(&a, "--words", VECTORS_EVAL_WORDS);
    long k = args_int(&a, "--k", 5);
    int json = args_flag(&a, "--json");
    const char *pos[3];
    int npos = args_positional(&a, pos, 3);
    int rc = args_finish(&a, VECTORS_USAGE);
    if (rc) return rc;
    if (npos != 2 || k < 1 || k > 1000) {
        user_error("usage: " VECTORS_USAGE, "vectors eval: %s", npos != 2 ? "give one FILE.vec" : "--k must be in 1..1000");
        return EXIT_USAGE;
    }
    VecTable t;
    if (vec_table_load(&t, pos[1]) != 0) return EXIT_FAILED;
    VecAnalogyResult r;
    if (analogies && vec_analogies(&t, analogies, &r) != 0) {
        vec_table_free(&t);
        return EXIT_FAILED;
    }
    cJSON *o = json ? cJSON_CreateObject() : NULL;
    if (o) {
        cJSON_AddStringToObject(o, "vectors", pos[1]);
        cJSON_AddNumberToObject(o, "words", t.n);
        cJSON_AddNumberToObject(o, "dim", t.D);
    } else {
        printf("%s: %d words, %d dimensions; nearest by cosine:\n", pos[1], t.n, t.D);
    }
    eval_neighbours(&t, words, (int)k, o);
    if (analogies) eval_analogy_print(&r, o);
    if (o) {
        json_print_line(o);
        cJSON_Delete(o);
    }
    vec_table_free(&t);
    return 0;
}

int cmd_vectors(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "eval") == 0) return vectors_eval_cmd(argc, argv);
    return vectors_train_cmd(argc, argv);
}
