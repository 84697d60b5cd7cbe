/* test_vectors.c — skip-gram word vectors (models/baselines/vectors.h): words that share
 * contexts end up close, and words that never do do not; one thread is
 * deterministic; the .vec file loads into an embedding (word_features); bad
 * settings and files give messages. */
#include "tests/scratch.h"
#include "tests/test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/rng.h"
#include "models/baselines/vectors.h"
#include "models/baselines/word_features.h"
#include "tests/capture.h"

#define VT_WORDS 8   /* per topic */

/* Lines of 10 words, each line from one topic: "red0".."red7" or "car0".."car7"
 * (the char n-grams of a topic's words overlap too, as real morphology does),
 * plus a <doc> marker line the reader must skip. */
static char *vt_corpus(int lines) {
    char *path = xmalloc(SCRATCH_PATH_MAX);
    int fd = scratch_file("vt_corpus", path, SCRATCH_PATH_MAX);
    FILE *f = fdopen(fd, "w");
    Rng r;
    rng_seed(&r, 5);
    fputs("<doc id=\"1\" url=\"x\" title=\"t\">\n", f);
    for (int i = 0; i < lines; i++) {
        const char *topic = i % 2 ? "car" : "red";
        for (int k = 0; k < 10; k++) fprintf(f, "%s%s%u", k ? " " : "", topic, rng_below(&r, VT_WORDS));
        fputc('\n', f);
    }
    fputs("</doc>\n", f);
    fclose(f);
    return path;
}

static VecConfig vt_config(void) {
    VecConfig c = vectors_default_config();
    c.dim = 16;
    c.epochs = 5;
    c.min_count = 1;
    c.bucket = 10000;
    c.sample = 0;   /* 16 words: all frequent, subsampling would drop most */
    c.threads = 1;
    return c;
}

/* Reads a .vec file: words (n) and vectors (n, D); returns n, -1 on a bad file. */
static int vt_read(const char *path, int D, char words[][16], float *vec, int max) {
    FILE *f = fopen(path, "r");
    int n, d;
    if (!f || fscanf(f, "%d %d", &n, &d) != 2 || d != D || n > max) { if (f) fclose(f); return -1; }
    for (int i = 0; i < n; i++) {
        if (fscanf(f, "%15s", words[i]) != 1) { fclose(f); return -1; }
        for (int k = 0; k < D; k++)
            if (fscanf(f, "%f", &vec[i * D + k]) != 1) { fclose(f); return -1; }
    }
    fclose(f);
    return n;
}

static double vt_cos(const float *a, const float *b, int D) {
    double ab = 0, aa = 0, bb = 0;
    for (int k = 0; k < D; k++) { ab += a[k] * b[k]; aa += a[k] * a[k]; bb += b[k] * b[k]; }
    return ab / sqrt(aa * bb + 1e-30);
}

TEST(vectors_topics_separate) {
    char *corpus = vt_corpus(600), out[SCRATCH_PATH_MAX];
    close(scratch_file("vt_out", out, sizeof out));
    VecConfig c = vt_config();
    VecStats st;
    const char *files[] = {corpus};
    if (CHECK(vectors_train(&c, files, 1, out, &st) == 0)) {
        CHECK_EQ_INT(st.vocab, 2 * VT_WORDS);
        CHECK_EQ_INT(st.lines, 600);   /* the <doc> lines are not text */
        CHECK_EQ_INT(st.words, 6000);
        char words[2 * VT_WORDS][16];
        float vec[2 * VT_WORDS * 16];
        int n = vt_read(out, 16, words, vec, 2 * VT_WORDS);
        CHECK_EQ_INT(n, 2 * VT_WORDS);
        if (n == 2 * VT_WORDS) {
            double same = 0, other = 0;
            int ns = 0, no = 0;
            for (int i = 0; i < n; i++)
                for (int j = i + 1; j < n; j++) {
                    double s = vt_cos(vec + i * 16, vec + j * 16, 16);
                    if (words[i][0] == words[j][0]) { same += s; ns++; } else { other += s; no++; }
                }
            same /= ns;
            other /= no;
            CHECK_MSG(same > 0.5 && other < same - 0.5, "mean cosine within topics %.3f, across %.3f", same, other);
        }
    }
    /* one thread: the same file again, byte for byte */
    char again[SCRATCH_PATH_MAX];
    close(scratch_file("vt_again", again, sizeof again));
    if (CHECK(vectors_train(&c, files, 1, again, NULL) == 0)) {
        char cmd[2 * SCRATCH_PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "cmp -s %s %s", out, again);
        CHECK_MSG(system(cmd) == 0, "two runs with one thread differ");
    }
    unlink(again);
    unlink(out);
    unlink(corpus);
    free(corpus);
}

TEST(vectors_file_loads_into_embedding) {
    char *corpus = vt_corpus(100), out[SCRATCH_PATH_MAX];
    close(scratch_file("vt_out", out, sizeof out));
    VecConfig c = vt_config();
    c.epochs = 1;
    c.maxn = 0;   /* words only */
    c.max_words = 500;   /* the first 50 lines */
    const char *files[] = {corpus};
    VecStats st;
    if (CHECK(vectors_train(&c, files, 1, out, &st) == 0)) {
        CHECK_EQ_INT(st.lines, 50);
        Dataset d = {.n = 1};
        Example x = {.a = "Red3 car5 unseen"};
        d.ex = &x;
        WordVocab v;
        if (CHECK(word_vocab_build(&v, &d, 1) == 0)) {
            float emb[5 * 16] = {0};
            WordVecCoverage cov;
            StderrCapture cap;
            stderr_capture_begin(&cap);
            int rc = word_vectors_load(&v, out, emb, 16, &cov);
            free(stderr_capture_end(&cap));
            CHECK(rc == 0);
            CHECK_EQ_INT(cov.found, 2);
            CHECK_EQ_INT(cov.file_words, 16);
            CHECK(emb[word_vocab_id(&v, "red3", 4) * 16] != 0.0f);
            word_vocab_free(&v);
        }
    }
    unlink(out);
    unlink(corpus);
    free(corpus);
}

TEST(vectors_bad_input) {
    VecConfig c = vt_config();
    const char *missing[] = {"/nonexistent/corpus.txt"};
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = vectors_train(&c, missing, 1, "/tmp/never.vec", NULL);
    char *err = stderr_capture_end(&cap);
    CHECK_EQ_INT(rc, 1);
    CHECK_MSG(strstr(err, "/nonexistent/corpus.txt") != NULL, "message: %s", err);
    free(err);
    c.minn = 7;   /* > maxn */
    stderr_capture_begin(&cap);
    rc = vectors_train(&c, missing, 1, "/tmp/never.vec", NULL);
    err = stderr_capture_end(&cap);
    CHECK_EQ_INT(rc, 2);
    CHECK_MSG(strstr(err, "--minn") != NULL, "message: %s", err);
    free(err);
    /* an unwritable output is reported, not a crash */
    char *corpus = vt_corpus(10);
    const char *files[] = {corpus};
    c = vt_config();
    c.epochs = 1;
    stderr_capture_begin(&cap);
    rc = vectors_train(&c, files, 1, "/nonexistent/dir/out.vec", NULL);
    err = stderr_capture_end(&cap);
    CHECK_EQ_INT(rc, 1);
    CHECK_MSG(strstr(err, "cannot write /nonexistent/dir/out.vec") != NULL, "message: %s", err);
    free(err);
    unlink(corpus);
    free(corpus);
}

/* The command line: usage errors exit 2, a run prints its summary. */
TEST(vectors_cli) {
    char cmd[1024];
    int status;
    snprintf(cmd, sizeof cmd, "%s vectors train --out /nonexistent-dir/x.vec 2>&1", test_glue_bin());
    char *o = test_run(cmd, &status);
    CHECK_EQ_INT(status, 2);
    CHECK_MSG(o && strstr(o, "--corpus FILE is required"), "output: %s", o ? o : "");
    free(o);
    char *corpus = vt_corpus(20), out[SCRATCH_PATH_MAX];
    close(scratch_file("vt_cli", out, sizeof out));
    /* --sample 0: 16 words, all frequent (subsampling would leave no pair to train) */
    snprintf(cmd, sizeof cmd, "%s vectors train --corpus %s --out %s --dim 8 --epochs 1 --min-count 1 --sample 0 --threads 1 --json",
             test_glue_bin(), corpus, out);
    o = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    CHECK_MSG(o && strstr(o, "\"vocab\":16"), "output: %s", o ? o : "");
    free(o);
    unlink(out);
    unlink(corpus);
    free(corpus);
}
