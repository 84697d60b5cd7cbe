/* test_fasttext.c — fastText: hashing against the reference's definition, learning
 * on small synthetic tasks (softmax, hierarchical softmax, pairs, regression),
 * the Huffman tree, checkpoint round trips and bad inputs. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/rng.h"
#include "models/fasttext.h"
#include "text/ngrams.h"

/* ---- hashing: expected values worked out from the definition fastText uses
 * (h = 2166136261; per byte: h ^= (uint32)(int8)byte; h *= 16777619), by an
 * independent Python script over code points, not from this code ---- */

TEST(fasttext_hash_fnv1a) {
    CHECK_EQ_INT(ngram_hash("", 0), 2166136261u);
    CHECK_EQ_INT(ngram_hash("a", 1), 3826002220u);   /* 0xe40c292c, the FNV-1a test vector */
    CHECK_EQ_INT(ngram_hash("the", 3), 3020861980u);
    CHECK_EQ_INT(ngram_hash("</s>", 4), 3617362777u);
    /* Bytes >= 0x80 are sign-extended: plain FNV-1a would give 2821410889, 2577008683
     * and 2670128721 for these. */
    CHECK_EQ_INT(ngram_hash("caf\xc3\xa9", 5), 1970454601u);
    CHECK_EQ_INT(ngram_hash("na\xc3\xafve", 6), 3440832043u);
    CHECK_EQ_INT(ngram_hash("\xe6\x97\xa5\xe6\x9c\xac", 6), 4164387409u);
}

static void hashes_of(const char *const *words, int n, uint32_t *out) {
    for (int i = 0; i < n; i++) out[i] = ngram_hash(words[i], strlen(words[i]));
}

TEST(fasttext_hash_word_ngrams) {
    const char *words[] = {"not", "bad", "caf\xc3\xa9", "</s>"};
    uint32_t h[4];
    hashes_of(words, 4, h);
    int32_t out[8];
    CHECK_EQ_INT(ngram_word_count(4, 1), 0);
    CHECK_EQ_INT(ngram_word_count(4, 2), 3);
    CHECK_EQ_INT(ngram_word_count(4, 3), 5);
    CHECK_EQ_INT(ngram_word_ngrams(h, 4, 2, 2000000, out), 3);
    const int32_t bigrams[] = {1579526, 23665, 501452};
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(out[i], bigrams[i]);
    CHECK_EQ_INT(ngram_word_ngrams(h, 4, 3, 2000000, out), 5);
    const int32_t upto3[] = {1579526, 9323, 23665, 588420, 501452};
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(out[i], upto3[i]);
}

TEST(fasttext_hash_char_ngrams) {
    /* "<where>" with minn 3, maxn 6: <wh <whe <wher <where whe wher where where>
     * her here here> ere ere> re> */
    const int32_t where[] = {167652, 989715, 1526707, 1071586, 420941, 312621, 969176,
                             121234, 1473420, 1540811, 114991, 1529033, 1568469, 867498};
    int32_t out[32];
    CHECK_EQ_INT(ngram_char_ngrams("where", 5, 3, 6, 2000000, NULL, 0), 14);
    CHECK_EQ_INT(ngram_char_ngrams("where", 5, 3, 6, 2000000, out, 32), 14);
    for (int i = 0; i < 14; i++) CHECK_EQ_INT(out[i], where[i]);
    /* UTF-8 characters count as one; lone "<" and ">" are skipped:
     * <é é ét t té é é> */
    const int32_t ete[] = {36627, 1043777, 452975, 111267, 41387, 1043777, 1996781};
    CHECK_EQ_INT(ngram_char_ngrams("\xc3\xa9t\xc3\xa9", 5, 1, 2, 2000000, out, 32), 7);
    for (int i = 0; i < 7; i++) CHECK_EQ_INT(out[i], ete[i]);
    /* cap is respected, the count is still the full one */
    out[2] = -7;
    CHECK_EQ_INT(ngram_char_ngrams("where", 5, 3, 6, 2000000, out, 2), 14);
    CHECK_EQ_INT(out[2], -7);
}

TEST(fasttext_split_words) {
    const char *s = "  a\tbb\v\fccc \r\n d";
    size_t pos = 0, start, len, n = 0;
    const char *want[] = {"a", "bb", "ccc", "d"};
    while (ngram_next_word(s, strlen(s), &pos, &start, &len)) {
        CHECK_MSG(n < 4 && len == strlen(want[n]) && !memcmp(s + start, want[n], len), "word %zu", n);
        n++;
    }
    CHECK_EQ_INT(n, 4);
}

/* ---- the Huffman tree ---- */

TEST(fasttext_huffman_tree) {
    /* Counts 10, 30, 60: the two rarest merge into node 0, which merges with
     * label 2 at the root (node 1); the second pick of each merge is code 1. */
    int64_t count[3] = {10, 30, 60};
    FtTree t;
    ft_tree_build(&t, count, 3);
    CHECK_EQ_INT(t.depth[2], 1);
    CHECK_EQ_INT(t.node[2 * 2 + 0], 1);
    CHECK_EQ_INT(t.code[2 * 2 + 0], 1);
    CHECK_EQ_INT(t.depth[1], 2);
    CHECK_EQ_INT(t.node[1 * 2 + 0], 0);
    CHECK_EQ_INT(t.code[1 * 2 + 0], 1);
    CHECK_EQ_INT(t.node[1 * 2 + 1], 1);
    CHECK_EQ_INT(t.code[1 * 2 + 1], 0);
    CHECK_EQ_INT(t.depth[0], 2);
    CHECK_EQ_INT(t.code[0 * 2 + 0], 0);
    CHECK_EQ_INT(t.code[0 * 2 + 1], 0);
    /* Probabilities over the leaves sum to 1 for any node weights. */
    float wo[2 * 4] = {0.3f, -1.0f, 2.0f, 0.5f, -0.7f, 0.1f, 0.9f, -2.0f}, h[4] = {0.2f, 0.4f, -0.3f, 1.0f}, p[3];
    ft_hs_probs(&t, wo, h, 4, p);
    CHECK_NEAR(p[0] + p[1] + p[2], 1.0, 1e-6);
    /* The loss of a label is -log of its probability (up to the 1e-5 guard). */
    float grad[4] = {0};
    CHECK_NEAR(ft_hs_update(&t, wo, h, grad, 4, 1, 0.0f), -log(p[1] + 1e-5), 1e-4);
    ft_tree_free(&t);
}

/* ---- synthetic tasks ---- */

static const Task TASK2 = {.name = "synth2", .display = "SYNTH-2", .num_labels = 2,
                           .metrics = {METRIC_ACC, METRIC_NONE}};
static const Task TASK3 = {.name = "synth3", .display = "SYNTH-3", .num_labels = 3,
                           .metrics = {METRIC_ACC, METRIC_NONE}};
static const Task TASKR = {.name = "synthr", .display = "SYNTH-R", .num_labels = 1,
                           .metrics = {METRIC_PEARSON, METRIC_NONE}};

/* A text of `len` words: `signal` of them "c<class>_<k>" (k < 10), the rest noise
 * "n<k>" (k < 300), in random order. */
static char *synth_text(Rng *r, int cls, int len, int signal) {
    char *s = xmalloc((size_t)len * 12 + 1), *p = s;
    for (int i = 0; i < len; i++) {
        int is_signal = (int)rng_below(r, (uint32_t)(len - i)) < signal;
        if (is_signal) { p += sprintf(p, "%sc%d_%u", i ? " " : "", cls, rng_below(r, 10)); signal--; }
        else p += sprintf(p, "%sn%u", i ? " " : "", rng_below(r, 300));
    }
    return s;
}

/* n rows; pair: the class shows only in text b (a is noise). regression: the
 * score is the number of "c1_*" words among 6. */
static Dataset synth_dataset(const Task *t, int n, int pair, uint64_t seed) {
    Dataset d = {.task = t, .n = n};
    d.ex = xcalloc((size_t)n, sizeof *d.ex);
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        Example *x = &d.ex[i];
        if (t->num_labels == 1) {
            int k = (int)rng_below(&r, 6);
            x->a = synth_text(&r, 1, 6, k);
            x->score = (float)k;
            continue;
        }
        x->label = (int)rng_below(&r, (uint32_t)t->num_labels);
        x->a = synth_text(&r, pair ? (int)rng_below(&r, 3) : x->label, 8, pair ? 0 : 2);
        if (pair) x->b = synth_text(&r, x->label, 6, 2);
    }
    return d;
}

static void synth_free(Dataset *d) {
    for (int i = 0; i < d->n; i++) { free(d->ex[i].a); free(d->ex[i].b); }
    free(d->ex);
}

static void config_set(cJSON *c, const char *key, double v) {
    cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v));
}

/* What the trainer does: epochs of shuffled batches with progress in [0,1]. */
static Model *train_model(const Task *t, const Dataset *train, cJSON *cfg, uint64_t seed) {
    const ModelOps *ops = &FASTTEXT_OPS;
    Model *m = ops->create(cfg, t, train, seed);
    if (!m) return NULL;
    Encoded *e = ops->encode(m, train);
    int epochs = cJSON_GetObjectItem(cfg, "epochs")->valueint;
    int batch = cJSON_GetObjectItem(cfg, "batch")->valueint;
    int *rows = xmalloc((size_t)train->n * sizeof *rows);
    for (int i = 0; i < train->n; i++) rows[i] = i;
    Rng r;
    rng_seed(&r, seed + 1);
    long steps_per_epoch = (train->n + batch - 1) / batch, step = 0;
    for (int ep = 0; ep < epochs; ep++) {
        rng_shuffle_int(&r, rows, train->n);
        for (int s = 0; s < train->n; s += batch, step++) {
            TrainState st = {.step = step, .total_steps = epochs * steps_per_epoch,
                             .progress = (double)step / (double)(epochs * steps_per_epoch), .epoch = ep};
            int n = train->n - s < batch ? train->n - s : batch;
            float loss = ops->train_step(m, e, rows + s, n, &st);
            CHECK_MSG(loss == loss && loss >= 0.0f, "loss %g", loss);
        }
    }
    free(rows);
    ops->encoded_free(e);
    return m;
}

/* out (n, K or 1) for all of d. */
static float *predict_all(Model *m, const Dataset *d, int K) {
    Encoded *e = FASTTEXT_OPS.encode(m, d);
    int *rows = xmalloc((size_t)d->n * sizeof *rows);
    for (int i = 0; i < d->n; i++) rows[i] = i;
    float *out = xmalloc((size_t)d->n * (size_t)K * sizeof *out);
    FASTTEXT_OPS.predict(m, e, rows, d->n, out);
    free(rows);
    FASTTEXT_OPS.encoded_free(e);
    return out;
}

static double accuracy_of(const float *out, const Dataset *d, int K) {
    int ok = 0;
    for (int i = 0; i < d->n; i++) {
        int best = 0;
        for (int k = 1; k < K; k++) if (out[i * K + k] > out[i * K + best]) best = k;
        ok += best == d->ex[i].label;
    }
    return 100.0 * ok / d->n;
}

/* Trains on a fresh synthetic task and returns dev accuracy (or -1). */
static double learn_synthetic(const Task *t, int pair, const char *loss, int threads, int word_ngrams) {
    Dataset tr = synth_dataset(t, 3000, pair, 11), dv = synth_dataset(t, 600, pair, 12);
    cJSON *cfg = FASTTEXT_OPS.default_config(t);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString(loss));
    config_set(cfg, "threads", threads);
    config_set(cfg, "wordNgrams", word_ngrams);
    config_set(cfg, "bucket", 100000);
    Model *m = train_model(t, &tr, cfg, 5);
    double acc = -1;
    if (m) {
        float *out = predict_all(m, &dv, t->num_labels);
        for (int i = 0; i < dv.n; i++) {
            float sum = 0;
            for (int k = 0; k < t->num_labels; k++) sum += out[i * t->num_labels + k];
            if (!CHECK_MSG(fabsf(sum - 1.0f) < 1e-4f, "row %d probabilities sum to %g", i, sum)) break;
        }
        acc = accuracy_of(out, &dv, t->num_labels);
        free(out);
        FASTTEXT_OPS.free(m);
    }
    cJSON_Delete(cfg);
    synth_free(&tr);
    synth_free(&dv);
    return acc;
}

TEST(fasttext_learns_softmax) {
    double acc = learn_synthetic(&TASK2, 0, "softmax", 2, 1);
    CHECK_MSG(acc >= 95.0, "softmax, 2 threads: dev accuracy %.1f", acc);
    acc = learn_synthetic(&TASK3, 0, "softmax", 1, 2);
    CHECK_MSG(acc >= 95.0, "softmax, 3 classes, bigrams: dev accuracy %.1f", acc);
}

TEST(fasttext_learns_hierarchical_softmax) {
    double acc = learn_synthetic(&TASK3, 0, "hs", 2, 1);
    CHECK_MSG(acc >= 95.0, "hs, 3 classes: dev accuracy %.1f", acc);
}

TEST(fasttext_learns_pairs) {
    double acc = learn_synthetic(&TASK3, 1, "softmax", 2, 2);
    CHECK_MSG(acc >= 95.0, "pair task: dev accuracy %.1f", acc);
}

TEST(fasttext_pair_encoding) {
    /* a + separator + b + end of text; the second text's words are inputs too. */
    Dataset d = {.task = &TASK2, .n = 1};
    Example x = {.a = "good film", .b = "bad plot twist", .label = 1};
    d.ex = &x;
    cJSON *cfg = ft_reference_config();   /* words only: no bigram ids between them */
    FastText *m = (FastText *)FASTTEXT_OPS.create(cfg, &TASK2, &d, 1);
    CHECK_EQ_INT(ft_dict_size(&m->dict), 7);   /* 5 words, __sep__, </s> */
    Encoded *e = FASTTEXT_OPS.encode((Model *)m, &d);
    CHECK_EQ_INT(e->off[1], 7);
    CHECK_EQ_INT(e->ntok[0], 7);
    int seen_sep = 0, seen_twist = 0;
    for (int i = 0; i < 7; i++) {
        seen_sep |= e->ids[i] == strmap_find(&m->dict.map, NULL, 0, FT_SEP, strlen(FT_SEP));
        seen_twist |= e->ids[i] == strmap_find(&m->dict.map, NULL, 0, "twist", 5);
    }
    CHECK(seen_sep && seen_twist);
    FASTTEXT_OPS.encoded_free(e);
    FASTTEXT_OPS.free((Model *)m);
    cJSON_Delete(cfg);
}

TEST(fasttext_learns_regression) {
    Dataset tr = synth_dataset(&TASKR, 3000, 0, 21), dv = synth_dataset(&TASKR, 500, 0, 22);
    cJSON *cfg = FASTTEXT_OPS.default_config(&TASKR);
    config_set(cfg, "epochs", 10);
    Model *m = train_model(&TASKR, &tr, cfg, 3);
    float *out = predict_all(m, &dv, 1);
    double *x = xmalloc((size_t)dv.n * sizeof *x), *y = xmalloc((size_t)dv.n * sizeof *y);
    for (int i = 0; i < dv.n; i++) { x[i] = out[i]; y[i] = dv.ex[i].score; }
    double r = metric_pearson(x, y, dv.n);
    CHECK_MSG(r > 0.9, "regression: dev Pearson %.3f", r);
    free(x); free(y); free(out);
    FASTTEXT_OPS.free(m);
    cJSON_Delete(cfg);
    synth_free(&tr);
    synth_free(&dv);
}

TEST(fasttext_bad_config) {
    Dataset tr = synth_dataset(&TASK2, 50, 0, 1);
    cJSON *cfg = FASTTEXT_OPS.default_config(&TASK2);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString("ns"));
    CHECK(FASTTEXT_OPS.create(cfg, &TASK2, &tr, 1) == NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString("softmax"));
    config_set(cfg, "minn", 4);
    config_set(cfg, "maxn", 3);
    CHECK(FASTTEXT_OPS.create(cfg, &TASK2, &tr, 1) == NULL);
    config_set(cfg, "maxn", 0);
    config_set(cfg, "dim", 1.5);   /* not a whole number */
    CHECK(FASTTEXT_OPS.create(cfg, &TASK2, &tr, 1) == NULL);
    config_set(cfg, "dim", 1e12);  /* out of range, not cast blindly */
    CHECK(FASTTEXT_OPS.create(cfg, &TASK2, &tr, 1) == NULL);
    config_set(cfg, "dim", 100);
    config_set(cfg, "minCount", 1000000);   /* every word pruned */
    CHECK(FASTTEXT_OPS.create(cfg, &TASK2, &tr, 1) == NULL);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* ---- checkpoints ---- */

static void temp_path(char *out, size_t cap, const char *name) {
    const char *tmp = getenv("TMPDIR");
    snprintf(out, cap, "%s/glue-test-ft-%d-%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), name);
}

/* Trains a small model (bigrams, so hashed rows are saved too), saves it, loads it
 * back and checks the predictions match bit for bit, including rows that only
 * the dev data uses (their init comes from the saved seed). */
static void round_trip(const char *loss) {
    Dataset tr = synth_dataset(&TASK3, 800, 1, 31), dv = synth_dataset(&TASK3, 200, 1, 32);
    cJSON *cfg = FASTTEXT_OPS.default_config(&TASK3);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString(loss));
    config_set(cfg, "wordNgrams", 2);
    config_set(cfg, "bucket", 50000);
    config_set(cfg, "epochs", 2);
    char path[512];
    temp_path(path, sizeof path, "model.ckpt");
    Model *m = train_model(&TASK3, &tr, cfg, 9);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, path), 0);
    Model *back = FASTTEXT_OPS.load(path, &TASK3);
    CHECK(back != NULL);
    if (back) {
        float *a = predict_all(m, &dv, 3), *b = predict_all(back, &dv, 3);
        CHECK(memcmp(a, b, (size_t)dv.n * 3 * sizeof *a) == 0);
        CHECK_EQ_INT(FASTTEXT_OPS.num_params(back), FASTTEXT_OPS.num_params(m));
        free(a);
        free(b);
        FASTTEXT_OPS.free(back);
        /* A model of another task is refused. */
        CHECK(FASTTEXT_OPS.load(path, &TASK2) == NULL);
    }
    FASTTEXT_OPS.free(m);
    unlink(path);
    cJSON_Delete(cfg);
    synth_free(&tr);
    synth_free(&dv);
}

TEST(fasttext_checkpoint_round_trip) {
    round_trip("softmax");
    round_trip("hs");
}

TEST(fasttext_checkpoint_regression_round_trip) {
    Dataset tr = synth_dataset(&TASKR, 300, 0, 41);
    cJSON *cfg = FASTTEXT_OPS.default_config(&TASKR);
    char path[512];
    temp_path(path, sizeof path, "reg.ckpt");
    Model *m = train_model(&TASKR, &tr, cfg, 2);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, path), 0);
    Model *back = FASTTEXT_OPS.load(path, &TASKR);
    CHECK(back != NULL);
    if (back) {
        float *a = predict_all(m, &tr, 1), *b = predict_all(back, &tr, 1);
        CHECK(memcmp(a, b, (size_t)tr.n * sizeof *a) == 0);
        free(a);
        free(b);
        FASTTEXT_OPS.free(back);
    }
    FASTTEXT_OPS.free(m);
    unlink(path);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* Every damaged file is a clean NULL (the test would crash otherwise). */
TEST(fasttext_checkpoint_corrupt) {
    Dataset tr = synth_dataset(&TASK2, 300, 0, 51);
    cJSON *cfg = FASTTEXT_OPS.default_config(&TASK2);
    char path[512], bad[512];
    temp_path(path, sizeof path, "good.ckpt");
    temp_path(bad, sizeof bad, "bad.ckpt");
    Model *m = train_model(&TASK2, &tr, cfg, 4);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, path), 0);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) {
        static unsigned char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        CHECK(n > 100 && n < sizeof buf);
        const long cuts[] = {0, 7, 40, (long)n / 2, (long)n - 1};
        for (int i = 0; i < 5; i++) {   /* truncated */
            FILE *g = fopen(bad, "wb");
            fwrite(buf, 1, (size_t)cuts[i], g);
            fclose(g);
            CHECK_MSG(FASTTEXT_OPS.load(bad, &TASK2) == NULL, "truncated at %ld", cuts[i]);
        }
        const long flips[] = {0, 9, 45, (long)n / 3, (long)n - 2};
        for (int i = 0; i < 5; i++) {   /* one flipped byte */
            buf[flips[i]] ^= 0x5A;
            FILE *g = fopen(bad, "wb");
            fwrite(buf, 1, n, g);
            fclose(g);
            buf[flips[i]] ^= 0x5A;
            CHECK_MSG(FASTTEXT_OPS.load(bad, &TASK2) == NULL, "byte %ld flipped", flips[i]);
        }
    }
    CHECK(FASTTEXT_OPS.load("/nonexistent/model.ckpt", &TASK2) == NULL);
    FASTTEXT_OPS.free(m);
    unlink(path);
    unlink(bad);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* A checkpoint that is intact but not a fastText model of this task is refused. */
TEST(fasttext_checkpoint_foreign) {
    char path[512];
    temp_path(path, sizeof path, "foreign.ckpt");
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", "bert");
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    CHECK(w && checkpoint_writer_commit(w) == 0);
    CHECK(FASTTEXT_OPS.load(path, &TASK2) == NULL);
    /* Right model and task, but no weights. */
    cJSON_ReplaceItemInObjectCaseSensitive(j, "model", cJSON_CreateString("fasttext"));
    cJSON_AddStringToObject(j, "task", TASK2.name);
    cJSON_AddNumberToObject(j, "num_labels", 2);
    cJSON_AddItemToObject(j, "config", FASTTEXT_OPS.default_config(&TASK2));
    w = checkpoint_writer_open(path, j, -1);
    uint64_t seed = 1;
    checkpoint_write_blob(w, "seed", &seed, sizeof seed);
    checkpoint_write_blob(w, "words", "a\0b\0", 4);
    checkpoint_write_blob(w, "counts", (int64_t[]){2, 1}, 2 * sizeof(int64_t));
    checkpoint_write_blob(w, "label_count", (int64_t[]){1, 1}, 2 * sizeof(int64_t));
    CHECK(checkpoint_writer_commit(w) == 0);
    CHECK(FASTTEXT_OPS.load(path, &TASK2) == NULL);
    cJSON_Delete(j);
    unlink(path);
}

TEST(fasttext_basic_tokenizer_words) {
    /* "basic": BERT's lower-cased words with punctuation split off, so "Film," and
     * "film" are one word; whitespace splitting keeps them apart. */
    Example x[2] = {{.a = "Great Film, great CAST!", .label = 1}, {.a = "great film", .label = 0}};
    Dataset d = {.task = &TASK2, .ex = x, .n = 2};
    cJSON *cfg = FASTTEXT_OPS.default_config(&TASK2);
    FastText *ws = (FastText *)FASTTEXT_OPS.create(cfg, &TASK2, &d, 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "tokenizer", cJSON_CreateString("basic"));
    FastText *bt = (FastText *)FASTTEXT_OPS.create(cfg, &TASK2, &d, 1);
    /* whitespace: Great Film, great CAST! film </s> */
    CHECK_EQ_INT(ft_dict_size(&ws->dict), 6);
    /* basic: great film , cast ! </s> */
    CHECK_EQ_INT(ft_dict_size(&bt->dict), 6);
    CHECK(strmap_find(&bt->dict.map, NULL, 0, "cast", 4) >= 0);
    CHECK(strmap_find(&bt->dict.map, NULL, 0, ",", 1) >= 0);
    /* most frequent first: "great" (3) and "film" (2) ahead of the rest */
    CHECK_EQ_INT(strmap_find(&bt->dict.map, NULL, 0, "great", 5), 0);
    CHECK_EQ_INT(bt->dict.count[0], 3);
    FASTTEXT_OPS.free((Model *)ws);
    FASTTEXT_OPS.free((Model *)bt);
    cJSON_Delete(cfg);
}

/* ---- glue bench fasttext ---- */

TEST(fasttext_bench_usage_errors) {
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "%s bench 2>/dev/null", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    snprintf(cmd, sizeof cmd, "%s bench fastext 2>/dev/null", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    snprintf(cmd, sizeof cmd, "%s bench fasttext --task stsb 2>/dev/null", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    snprintf(cmd, sizeof cmd, "%s bench fasttext --reps 0 2>/dev/null", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    snprintf(cmd, sizeof cmd, "%s bench fasttext --fasttext /nonexistent/fasttext 2>&1", test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 1);
    CHECK_MSG(strstr(out, "apt-get install fasttext") != NULL, "no install hint in: %s", out);
    free(out);
}

/* One quick round against the official binary on SST-2 (1 epoch): both sides
 * report, both learn, the results file is written. */
TEST(fasttext_bench_runs) {
    if (access("/usr/bin/fasttext", X_OK) != 0) {
        test_skip("no /usr/bin/fasttext (apt-get install fasttext)");
        return;
    }
    char dir[512], cmd[2048];
    temp_path(dir, sizeof dir, "results");
    snprintf(cmd, sizeof cmd, "GLUE_DATA='%s/data/glue' GLUE_RESULTS='%s' %s bench fasttext --epoch 1 --reps 1 --json",
             test_shared_dir(), dir, test_glue_bin());
    int st;
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 0);
    cJSON *j = cJSON_Parse(out);
    CHECK_MSG(j != NULL, "not JSON: %s", out);
    if (j) {
        double off = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "official"), "accuracy")->valuedouble;
        double ours = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ours"), "accuracy")->valuedouble;
        CHECK_MSG(off > 70 && ours > 70, "dev accuracy official %.2f ours %.2f", off, ours);
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "time_ratio")));
        cJSON_Delete(j);
    }
    free(out);
    char file[600];
    snprintf(file, sizeof file, "%s/bench_fasttext.json", dir);
    CHECK(access(file, R_OK) == 0);
    unlink(file);
    rmdir(dir);
}
