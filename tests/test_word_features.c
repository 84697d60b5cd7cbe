/* test_word_features.c — the word input of TextCNN and the BiLSTM: vocabulary
 * (basic-tokenizer words, min count, reserved ids, frequency order), encoding
 * with truncation and pairs, checkpoint round trip, and .vec loading (exact and
 * lower-cased matches, coverage, bad files). */
#include "tests/scratch.h"
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "models/baselines/word_features.h"
#include "tests/capture.h"

static const Task WF_TASK = {.name = "wf", .display = "WF", .num_labels = 2, .metrics = {METRIC_ACC, METRIC_NONE}};

static Dataset wf_dataset(const char *const *a, const char *const *b, int n) {
    Dataset d = {.task = &WF_TASK, .n = n};
    d.ex = xcalloc((size_t)n, sizeof *d.ex);
    for (int i = 0; i < n; i++) {
        d.ex[i].a = xstrdup(a[i]);
        d.ex[i].b = b ? xstrdup(b[i]) : NULL;
        d.ex[i].label = i % 2;
        d.ex[i].score = (float)i;
    }
    return d;
}

static void wf_dataset_free(Dataset *d) {
    for (int i = 0; i < d->n; i++) { free(d->ex[i].a); free(d->ex[i].b); }
    free(d->ex);
}

static const char *const TEXTS[] = {"The cat sat.", "the CAT ran", "A dog, the dog!", "Café naïve the"};

TEST(word_vocab_build_counts_and_order) {
    Dataset d = wf_dataset(TEXTS, NULL, 4);
    WordVocab v;
    if (!CHECK(word_vocab_build(&v, &d, 1) == 0)) { wf_dataset_free(&d); return; }
    CHECK(strcmp(word_vocab_word(&v, WF_PAD), "<pad>") == 0);
    CHECK(strcmp(word_vocab_word(&v, WF_UNK), "<unk>") == 0);
    /* "the" x4 first, then "cat" and "dog" (x2, first seen first) */
    CHECK(strcmp(word_vocab_word(&v, 2), "the") == 0);
    CHECK(strcmp(word_vocab_word(&v, 3), "cat") == 0);
    CHECK(strcmp(word_vocab_word(&v, 4), "dog") == 0);
    CHECK_EQ_INT(v.dict.count[2], 4);
    /* lower-cased, accents stripped, punctuation its own word; the fastText
     * end/separator tokens are not words */
    CHECK(word_vocab_id(&v, "cafe", 4) > WF_UNK);
    CHECK(word_vocab_id(&v, "naive", 5) > WF_UNK);
    CHECK(word_vocab_id(&v, ".", 1) > WF_UNK);
    CHECK_EQ_INT(word_vocab_id(&v, "Cat", 3), WF_UNK);
    CHECK_EQ_INT(word_vocab_id(&v, "</s>", 4), WF_UNK);
    /* the, cat, sat, ., ran, a, dog, ",", !, cafe, naive */
    CHECK_EQ_INT(word_vocab_size(&v), 2 + 11);
    word_vocab_free(&v);
    /* min count 2 keeps the, cat, dog */
    CHECK(word_vocab_build(&v, &d, 2) == 0);
    CHECK_EQ_INT(word_vocab_size(&v), 2 + 3);
    word_vocab_free(&v);
    /* nothing occurs 5 times: a clear error, not an empty model */
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = word_vocab_build(&v, &d, 5);
    char *err = stderr_capture_end(&cap);
    CHECK(rc != 0);
    CHECK_MSG(strstr(err, "no word occurs 5 times") != NULL, "message: %s", err);
    free(err);
    wf_dataset_free(&d);
}

TEST(word_seqs_encode_truncates_and_pairs) {
    const char *const b[] = {"cat", "", "unseen words here", "the the the the the"};
    Dataset d = wf_dataset(TEXTS, b, 4);
    WordVocab v;
    if (!CHECK(word_vocab_build(&v, &d, 1) == 0)) { wf_dataset_free(&d); return; }
    WordSeqs *s = word_seqs_encode(&v, &d, 3);
    CHECK_EQ_INT(s->n, 4);
    CHECK(s->pair);
    CHECK_EQ_INT(s->len_a[0], 3);   /* "the cat sat ." truncated to 3 */
    CHECK_EQ_INT(s->len_b[0], 1);
    CHECK_EQ_INT(s->len_b[1], 0);   /* empty text: length 0 */
    CHECK_EQ_INT(s->len_b[3], 3);
    const int32_t *a0 = word_seqs_a(s, 0), *b0 = word_seqs_b(s, 0);
    CHECK_EQ_INT(a0[0], word_vocab_id(&v, "the", 3));
    CHECK_EQ_INT(a0[1], word_vocab_id(&v, "cat", 3));
    CHECK_EQ_INT(a0[2], word_vocab_id(&v, "sat", 3));
    CHECK_EQ_INT(b0[0], word_vocab_id(&v, "cat", 3));
    /* unseen words of b were in train, so they are known; a new split's are not */
    CHECK_EQ_INT(s->unknown, 0);
    CHECK_EQ_INT(s->off[4], s->tokens);
    word_seqs_free(s);
    const char *const other[] = {"zebra THE"};
    Dataset o = wf_dataset(other, NULL, 1);
    s = word_seqs_encode(&v, &o, 10);
    CHECK(!s->pair);
    CHECK_EQ_INT(s->len_a[0], 2);
    CHECK_EQ_INT(word_seqs_a(s, 0)[0], WF_UNK);
    CHECK_EQ_INT(word_seqs_a(s, 0)[1], word_vocab_id(&v, "the", 3));
    CHECK_EQ_INT(s->unknown, 1);
    word_seqs_free(s);
    wf_dataset_free(&o);
    word_vocab_free(&v);
    wf_dataset_free(&d);
}

TEST(word_vocab_checkpoint_round_trip) {
    Dataset d = wf_dataset(TEXTS, NULL, 4);
    WordVocab v, w;
    if (!CHECK(word_vocab_build(&v, &d, 1) == 0)) { wf_dataset_free(&d); return; }
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("wf_ckpt", path, sizeof path);
    CHECK(fd >= 0);
    close(fd);
    CkptWriter *wr = checkpoint_writer_open(path, NULL, -1);
    CHECK(word_vocab_save(&v, wr, "vocab.") == 0);
    CHECK(checkpoint_writer_commit(wr) == 0);
    Checkpoint *c = checkpoint_read(path);
    if (CHECK(c != NULL) && CHECK(word_vocab_load(&w, c, "vocab.", path) == 0)) {
        CHECK_EQ_INT(word_vocab_size(&w), word_vocab_size(&v));
        for (int i = 0; i < word_vocab_size(&v); i++) {
            CHECK(strcmp(word_vocab_word(&w, i), word_vocab_word(&v, i)) == 0);
            CHECK_EQ_INT(w.dict.count[i], v.dict.count[i]);
        }
        word_vocab_free(&w);
        /* a missing vocabulary is a message, not a crash */
        StderrCapture cap;
        stderr_capture_begin(&cap);
        int rc = word_vocab_load(&w, c, "other.", path);
        free(stderr_capture_end(&cap));
        CHECK(rc != 0);
    }
    checkpoint_free(c);
    unlink(path);
    word_vocab_free(&v);
    wf_dataset_free(&d);
}

/* Writes text to a fresh temporary file; path receives its name. */
static void write_temp(char *path, size_t cap, const char *text) {
    int fd = scratch_file("wf_vec", path, cap);
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

TEST(word_vectors_load_matches_and_coverage) {
    Dataset d = wf_dataset(TEXTS, NULL, 4);
    WordVocab v;
    if (!CHECK(word_vocab_build(&v, &d, 1) == 0)) { wf_dataset_free(&d); return; }
    int V = word_vocab_size(&v), D = 3;
    float *emb = xmalloc((size_t)V * D * sizeof *emb);
    for (int i = 0; i < V * D; i++) emb[i] = 9.0f;
    char path[SCRATCH_PATH_MAX];
    /* "The" (upper case) comes first but the exact "the" wins; "CAT" fills cat;
     * "Café" maps to "cafe"; "zebra" is not in the vocabulary. */
    write_temp(path, sizeof path, "5 3\nThe 7 7 7 \nthe 1 2 3\nCAT 4 5 6\nzebra 0 0 0\nCaf\xc3\xa9 -1 -2 -3.5e0\n");
    WordVecCoverage cov;
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = word_vectors_load(&v, path, emb, D, &cov);
    char *err = stderr_capture_end(&cap);
    CHECK(rc == 0);
    CHECK_MSG(strstr(err, "3 of 11 words") != NULL, "report: %s", err);
    free(err);
    int the = word_vocab_id(&v, "the", 3), cat = word_vocab_id(&v, "cat", 3), cafe = word_vocab_id(&v, "cafe", 4);
    CHECK_NEAR(emb[the * D + 0], 1, 0); CHECK_NEAR(emb[the * D + 2], 3, 0);
    CHECK_NEAR(emb[cat * D + 1], 5, 0);
    CHECK_NEAR(emb[cafe * D + 2], -3.5, 0);
    CHECK_NEAR(emb[WF_UNK * D], 9, 0);                              /* reserved rows untouched */
    CHECK_NEAR(emb[word_vocab_id(&v, "dog", 3) * D], 9, 0);         /* missing: keeps its init */
    CHECK_EQ_INT(cov.found, 3);
    CHECK_EQ_INT(cov.words, 11);
    CHECK_EQ_INT(cov.file_words, 5);
    /* tokens: the 4 + cat 2 + cafe 1 of 4+3+6+3 = 16 */
    CHECK_NEAR(cov.token_frac, 7.0 / 16.0, 1e-12);
    unlink(path);
    /* no header (GloVe style) works too */
    write_temp(path, sizeof path, "dog 1 1 1\n");
    stderr_capture_begin(&cap);
    rc = word_vectors_load(&v, path, emb, D, NULL);
    free(stderr_capture_end(&cap));
    CHECK(rc == 0);
    CHECK_NEAR(emb[word_vocab_id(&v, "dog", 3) * D], 1, 0);
    unlink(path);
    free(emb);
    word_vocab_free(&v);
    wf_dataset_free(&d);
}

/* Loading `text` must fail with a message containing `want`. */
static void expect_vec_error(const WordVocab *v, const char *text, const char *want) {
    char path[SCRATCH_PATH_MAX];
    write_temp(path, sizeof path, text);
    float emb[64 * 3];
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = word_vectors_load(v, path, emb, 3, NULL);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(rc != 0, "accepted: %s", text);
    CHECK_MSG(strstr(err, want) != NULL, "message '%s' lacks '%s'", err, want);
    free(err);
    unlink(path);
}

TEST(word_vectors_load_bad_files) {
    Dataset d = wf_dataset(TEXTS, NULL, 4);
    WordVocab v;
    if (!CHECK(word_vocab_build(&v, &d, 1) == 0)) { wf_dataset_free(&d); return; }
    expect_vec_error(&v, "2 4\nthe 1 2 3 4\n", "4 dimensions");
    expect_vec_error(&v, "2 3\nthe 1 2\n", ":2: expected a word and 3 numbers, got 3 fields");
    expect_vec_error(&v, "2 3\nthe 1 2 3\ncat 1 2 3 4\n", ":3: expected");
    expect_vec_error(&v, "2 3\nthe 1 x 3\n", "not a finite number");
    expect_vec_error(&v, "2 3\nthe 1 nan 3\n", "not a finite number");
    expect_vec_error(&v, "1 3\n", "no word vectors");
    float emb[3];
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = word_vectors_load(&v, "/nonexistent/vectors.vec", emb, 3, NULL);
    char *err = stderr_capture_end(&cap);
    CHECK(rc != 0);
    CHECK_MSG(strstr(err, "/nonexistent/vectors.vec") != NULL, "message: %s", err);
    free(err);
    word_vocab_free(&v);
    wf_dataset_free(&d);
}
