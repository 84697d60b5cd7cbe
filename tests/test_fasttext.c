/* test_fasttext.c — fastText: hashing against the reference's definition, learning
 * on small synthetic tasks (softmax, hierarchical softmax, pairs, regression),
 * the Huffman tree, checkpoint round trips and bad inputs. */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "models/baselines/fasttext.h"
#include "text/ngrams.h"
#include "tests/synth_task.h"

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

/* Bag-of-words tasks: 2 of 8 words say the class (10 words per class among 300
 * noise words); pairs: only text b does; regression: the score is the number
 * of class-1 words among 6. */
static const SynthTask FT_CLASS2 = {.name = "class2", .task = &SYNTH_TASK2, .kind = SYNTH_CLASS,
                                    .class_words = 10, .noise_words = 300, .len_min = 8, .len_max = 8,
                                    .signal_min = 2, .signal_max = 2};
static const SynthTask FT_CLASS3 = {.name = "class3", .task = &SYNTH_TASK3, .kind = SYNTH_CLASS,
                                    .class_words = 10, .noise_words = 300, .len_min = 8, .len_max = 8,
                                    .signal_min = 2, .signal_max = 2};
static const SynthTask FT_PAIR = {.name = "pair", .task = &SYNTH_TASK3, .kind = SYNTH_CLASS_IN_B,
                                  .class_words = 10, .noise_words = 300, .len_min = 8, .len_max = 8,
                                  .signal_min = 2, .signal_max = 2};
static const SynthTask FT_COUNT = {.name = "count", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                   .class_words = 10, .noise_words = 300, .len_min = 6, .len_max = 6,
                                   .signal_min = 0, .signal_max = 5};

static void config_set(cJSON *c, const char *key, double v) {
    cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v));
}

/* Trains on a fresh synthetic task and returns dev accuracy. */
static double learn_synthetic(const SynthTask *st, const char *loss, int threads, int word_ngrams) {
    cJSON *cfg = FASTTEXT_OPS.default_config(st->task);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString(loss));
    config_set(cfg, "threads", threads);
    config_set(cfg, "wordNgrams", word_ngrams);
    config_set(cfg, "bucket", 100000);
    double acc = synth_learn(&FASTTEXT_OPS, st, cfg, 3000, 600, 11);
    cJSON_Delete(cfg);
    return acc;
}

TEST(fasttext_learns_softmax) {
    double acc = learn_synthetic(&FT_CLASS2, "softmax", 2, 1);
    CHECK_MSG(acc >= 95.0, "softmax, 2 threads: dev accuracy %.1f", acc);
    acc = learn_synthetic(&FT_CLASS3, "softmax", 1, 2);
    CHECK_MSG(acc >= 95.0, "softmax, 3 classes, bigrams: dev accuracy %.1f", acc);
}

TEST(fasttext_learns_hierarchical_softmax) {
    double acc = learn_synthetic(&FT_CLASS3, "hs", 2, 1);
    CHECK_MSG(acc >= 95.0, "hs, 3 classes: dev accuracy %.1f", acc);
}

TEST(fasttext_learns_pairs) {
    double acc = learn_synthetic(&FT_PAIR, "softmax", 2, 2);
    CHECK_MSG(acc >= 95.0, "pair task: dev accuracy %.1f", acc);
}

TEST(fasttext_pair_encoding) {
    /* a + separator + b + end of text; the second text's words are inputs too. */
    Dataset d = {.task = &SYNTH_TASK2, .n = 1};
    Example x = {.a = "good film", .b = "bad plot twist", .label = 1};
    d.ex = &x;
    cJSON *cfg = ft_reference_config();   /* words only: no bigram ids between them */
    FastText *m = (FastText *)FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &d, 1);
    CHECK_EQ_INT(word_dict_size(&m->dict), 7);   /* 5 words, __sep__, </s> */
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
    cJSON *cfg = FASTTEXT_OPS.default_config(FT_COUNT.task);
    config_set(cfg, "epochs", 10);
    double r = synth_learn(&FASTTEXT_OPS, &FT_COUNT, cfg, 3000, 500, 21);
    CHECK_MSG(r > 0.9, "regression: dev Pearson %.3f", r);
    cJSON_Delete(cfg);
}

TEST(fasttext_bad_config) {
    Dataset tr = synth_dataset(&FT_CLASS2, 50, 1);
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASK2);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString("ns"));
    CHECK(FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &tr, 1) == NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString("softmax"));
    config_set(cfg, "minn", 4);
    config_set(cfg, "maxn", 3);
    CHECK(FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &tr, 1) == NULL);
    config_set(cfg, "maxn", 0);
    config_set(cfg, "dim", 1.5);   /* not a whole number */
    CHECK(FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &tr, 1) == NULL);
    config_set(cfg, "dim", 1e12);  /* out of range, not cast blindly */
    CHECK(FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &tr, 1) == NULL);
    config_set(cfg, "dim", 100);
    config_set(cfg, "minCount", 1000000);   /* every word pruned */
    CHECK(FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &tr, 1) == NULL);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* ---- checkpoints ---- */

/* A fresh scratch file (tests/scratch.h) for a checkpoint or state the test writes; name tags it. */
static void temp_path(char *out, size_t cap, const char *name) {
    int fd = scratch_file(name, out, cap);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

/* Trains a small model (bigrams, so hashed rows are saved too), saves it, loads it
 * back and checks the predictions match bit for bit, including rows that only
 * the dev data uses (their init comes from the saved seed). */
static void round_trip(const char *loss) {
    Dataset tr = synth_dataset(&FT_PAIR, 800, 31), dv = synth_dataset(&FT_PAIR, 200, 32);
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASK3);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString(loss));
    config_set(cfg, "wordNgrams", 2);
    config_set(cfg, "bucket", 50000);
    config_set(cfg, "epochs", 2);
    char path[512];
    temp_path(path, sizeof path, "model.ckpt");
    Model *m = synth_train(&FASTTEXT_OPS, &tr, cfg, 9);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, path), 0);
    Model *back = FASTTEXT_OPS.load(path, &SYNTH_TASK3);
    CHECK(back != NULL);
    if (back) {
        float *a = synth_predict(&FASTTEXT_OPS, m, &dv, 0), *b = synth_predict(&FASTTEXT_OPS, back, &dv, 0);
        CHECK(memcmp(a, b, (size_t)dv.n * 3 * sizeof *a) == 0);
        CHECK_EQ_INT(FASTTEXT_OPS.num_params(back), FASTTEXT_OPS.num_params(m));
        free(a);
        free(b);
        FASTTEXT_OPS.free(back);
        /* A model of another task is refused. */
        CHECK(FASTTEXT_OPS.load(path, &SYNTH_TASK2) == NULL);
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
    Dataset tr = synth_dataset(&FT_COUNT, 300, 41);
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASKR);
    char path[512];
    temp_path(path, sizeof path, "reg.ckpt");
    Model *m = synth_train(&FASTTEXT_OPS, &tr, cfg, 2);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, path), 0);
    Model *back = FASTTEXT_OPS.load(path, &SYNTH_TASKR);
    CHECK(back != NULL);
    if (back) {
        float *a = synth_predict(&FASTTEXT_OPS, m, &tr, 0), *b = synth_predict(&FASTTEXT_OPS, back, &tr, 0);
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
    Dataset tr = synth_dataset(&FT_CLASS2, 300, 51);
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASK2);
    char path[512], bad[512];
    temp_path(path, sizeof path, "good.ckpt");
    temp_path(bad, sizeof bad, "bad.ckpt");
    Model *m = synth_train(&FASTTEXT_OPS, &tr, cfg, 4);
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
            CHECK_MSG(FASTTEXT_OPS.load(bad, &SYNTH_TASK2) == NULL, "truncated at %ld", cuts[i]);
        }
        const long flips[] = {0, 9, 45, (long)n / 3, (long)n - 2};
        for (int i = 0; i < 5; i++) {   /* one flipped byte */
            buf[flips[i]] ^= 0x5A;
            FILE *g = fopen(bad, "wb");
            fwrite(buf, 1, n, g);
            fclose(g);
            buf[flips[i]] ^= 0x5A;
            CHECK_MSG(FASTTEXT_OPS.load(bad, &SYNTH_TASK2) == NULL, "byte %ld flipped", flips[i]);
        }
    }
    CHECK(FASTTEXT_OPS.load("/nonexistent/model.ckpt", &SYNTH_TASK2) == NULL);
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
    CHECK(FASTTEXT_OPS.load(path, &SYNTH_TASK2) == NULL);
    /* Right model and task, but no weights. */
    cJSON_ReplaceItemInObjectCaseSensitive(j, "model", cJSON_CreateString("fasttext"));
    cJSON_AddStringToObject(j, "task", SYNTH_TASK2.name);
    cJSON_AddNumberToObject(j, "num_labels", 2);
    cJSON_AddItemToObject(j, "config", FASTTEXT_OPS.default_config(&SYNTH_TASK2));
    w = checkpoint_writer_open(path, j, -1);
    uint64_t seed = 1;
    checkpoint_write_blob(w, "seed", &seed, sizeof seed);
    checkpoint_write_blob(w, "words", "a\0b\0", 4);
    checkpoint_write_blob(w, "counts", (int64_t[]){2, 1}, 2 * sizeof(int64_t));
    checkpoint_write_blob(w, "label_count", (int64_t[]){1, 1}, 2 * sizeof(int64_t));
    CHECK(checkpoint_writer_commit(w) == 0);
    CHECK(FASTTEXT_OPS.load(path, &SYNTH_TASK2) == NULL);
    cJSON_Delete(j);
    unlink(path);
}

TEST(fasttext_basic_tokenizer_words) {
    /* "basic": BERT's lower-cased words with punctuation split off, so "Film," and
     * "film" are one word; whitespace splitting keeps them apart. */
    Example x[2] = {{.a = "Great Film, great CAST!", .label = 1}, {.a = "great film", .label = 0}};
    Dataset d = {.task = &SYNTH_TASK2, .ex = x, .n = 2};
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASK2);
    FastText *ws = (FastText *)FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &d, 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "tokenizer", cJSON_CreateString("basic"));
    FastText *bt = (FastText *)FASTTEXT_OPS.create(cfg, &SYNTH_TASK2, &d, 1);
    /* whitespace: Great Film, great CAST! film </s> */
    CHECK_EQ_INT(word_dict_size(&ws->dict), 6);
    /* basic: great film , cast ! </s> */
    CHECK_EQ_INT(word_dict_size(&bt->dict), 6);
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
    CHECK(scratch_dir("results", dir, sizeof dir));
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
