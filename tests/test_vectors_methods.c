/* test_vectors_methods.c — the three ways `glue vectors train` makes vectors
 * (models/baselines/vectors.h): skip-gram's, CBOW's and GloVe's loss falls
 * over the epochs of a tiny corpus and topics separate; GloVe's counts follow
 * the 1/distance window and its gradient matches finite differences; a bad
 * corpus path or method is one clear message; `glue vectors eval` finds
 * neighbours and scores an analogy file (models/baselines/vectors_eval.h). */
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
#include "models/baselines/vectors_eval.h"
#include "models/baselines/vectors_glove.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"

/* Lines of 10 words of one topic each: "red0".."red7" or "car0".."car7". */
static char *vm_corpus(int lines) {
    char *path = xmalloc(SCRATCH_PATH_MAX);
    FILE *f = fdopen(scratch_file("vm_corpus", path, SCRATCH_PATH_MAX), "w");
    Rng r;
    rng_seed(&r, 9);
    for (int i = 0; i < lines; i++) {
        const char *topic = i % 2 ? "car" : "red";
        for (int k = 0; k < 10; k++) fprintf(f, "%s%s%u", k ? " " : "", topic, rng_below(&r, 8));
        fputc('\n', f);
    }
    fclose(f);
    return path;
}

static VecConfig vm_config(VecMethod m) {
    VecConfig c = vectors_default_config();
    c.method = m;
    c.dim = 16;
    c.epochs = 5;
    c.min_count = 1;
    c.bucket = 10000;
    c.sample = 0;
    c.threads = 1;
    if (m == VEC_GLOVE) {
        c.maxn = 0;
        c.window = 10;
        c.epochs = 15;
    }
    return c;
}

/* Mean cosine of two words of one topic minus that of two of different topics. */
static double vm_separation(const char *path) {
    VecTable t;
    if (vec_table_load(&t, path) != 0) return -1;
    double same = 0, other = 0;
    int ns = 0, no = 0;
    for (int i = 0; i < t.n; i++)
        for (int j = i + 1; j < t.n; j++) {
            double s = 0;
            for (int d = 0; d < t.D; d++) s += t.unit[i * t.D + d] * t.unit[j * t.D + d];
            if (strmap_key(&t.words, i)[0] == strmap_key(&t.words, j)[0]) { same += s; ns++; } else { other += s; no++; }
        }
    vec_table_free(&t);
    return same / ns - other / no;
}

static void vm_method_learns(VecMethod m) {
    char *corpus = vm_corpus(400), out[SCRATCH_PATH_MAX];
    close(scratch_file("vm_out", out, sizeof out));
    VecConfig c = vm_config(m);
    VecStats st;
    const char *files[] = {corpus};
    if (CHECK(vectors_train(&c, files, 1, out, &st) == 0)) {
        CHECK_EQ_INT(st.vocab, 16);
        /* the words of a topic are drawn at random: the loss has a high floor */
        CHECK_MSG(st.loss < 0.99 * st.loss_first, "%s: loss %.4f after %.4f in the first epoch", VEC_METHODS[m],
                  st.loss, st.loss_first);
        double sep = vm_separation(out);
        CHECK_MSG(sep > 0.3, "%s: topics separate by %.3f in mean cosine", VEC_METHODS[m], sep);
    }
    unlink(out);
    unlink(corpus);
    free(corpus);
}

TEST(vectors_skipgram_loss_falls) { vm_method_learns(VEC_SKIPGRAM); }
TEST(vectors_cbow_loss_falls) { vm_method_learns(VEC_CBOW); }
TEST(vectors_glove_loss_falls) { vm_method_learns(VEC_GLOVE); }

/* "a b c a" with window 2: X(a,b) = 1 + 1/2 (positions 0-1, and 3 back to
 * 1 at distance 2), X(a,c) = 1/2 + 1, X(b,c) = 1, X(a,a) = 0 (distance 3). */
TEST(vectors_glove_counts) {
    int32_t ids[4] = {2, 3, 4, 2}, len_a[1] = {4}, len_b[1] = {0};
    int64_t off[2] = {0, 4};
    WordSeqs s = {.n = 1, .ids = ids, .off = off, .len_a = len_a, .len_b = len_b};
    GloveCooc *e = NULL;
    long n = glove_count(&s, 5, 2, &e);
    CHECK_EQ_INT(n, 6);
    float x[5][5] = {{0}};
    for (long k = 0; k < n; k++) x[e[k].i][e[k].j] = e[k].x;
    CHECK_NEAR(x[2][3], 1.5, 1e-6);
    CHECK_NEAR(x[3][2], 1.5, 1e-6);
    CHECK_NEAR(x[2][4], 1.5, 1e-6);
    CHECK_NEAR(x[4][3], 1.0, 1e-6);
    CHECK_NEAR(x[2][2], 0.0, 0);
    free(e);
}

/* dJ/dw, dw~, db, db~ against finite differences, counts on both sides of x_max. */
TEST(vectors_glove_gradient) {
    enum { V = 4, D = 3 };
    static float w[V * D], wt[V * D], b[V], bt[V], gw[V * D], gwt[V * D], gb[V], gbt[V];
    struct {
        GloveParams p, g;
        GloveCooc e[6];
    } c = {.p = {V, D, w, wt, b, bt}, .g = {V, D, gw, gwt, gb, gbt},
           .e = {{0, 1, 3.0f}, {1, 0, 3.0f}, {2, 3, 0.5f}, {3, 3, 150.0f}, {0, 2, 40.0f}, {1, 3, 1.0f}}};
    gradcheck_fill(w, V * D, -1, 1, 1);
    gradcheck_fill(wt, V * D, -1, 1, 2);
    gradcheck_fill(b, V, -1, 1, 3);
    gradcheck_fill(bt, V, -1, 1, 4);
    /* The cost is a double (gradcheck.h checks float outputs): central differences by hand. */
    float *x[4] = {w, wt, b, bt}, *gx[4] = {gw, gwt, gb, gbt};
    long nx[4] = {V * D, V * D, V, V};
    for (int t = 0; t < 4; t++) memset(gx[t], 0, (size_t)nx[t] * sizeof(float));
    glove_cost(&c.p, c.e, 6, 100, 0.75, &c.g);
    double worst = 0;
    for (int t = 0; t < 4; t++)
        for (long i = 0; i < nx[t]; i++) {
            float keep = x[t][i], h = 1e-3f;
            x[t][i] = keep + h;
            double up = glove_cost(&c.p, c.e, 6, 100, 0.75, NULL);
            x[t][i] = keep - h;
            double down = glove_cost(&c.p, c.e, 6, 100, 0.75, NULL);
            x[t][i] = keep;
            double num = (up - down) / (2.0 * ((double)(keep + h) - keep)), err = fabs(num - gx[t][i]) / fmax(1, fabs(num));
            if (err > worst) worst = err;
        }
    CHECK_MSG(worst < 2e-3, "GloVe gradient: worst relative error %g", worst);
    CHECK_NEAR(glove_weight(50, 100, 0.75), pow(0.5, 0.75), 1e-12);
    CHECK_NEAR(glove_weight(150, 100, 0.75), 1.0, 0);
}

TEST(vectors_methods_bad_input) {
    char cmd[1024];
    int status;
    const char *methods[] = {"cbow", "glove"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s vectors train --method %s --corpus /nonexistent/c.txt --out /nonexistent-dir/x.vec 2>&1",
                 test_glue_bin(), methods[i]);
        char *o = test_run(cmd, &status);
        CHECK_MSG(status != 0 && o && strstr(o, "/nonexistent/c.txt") && strlen(o) < 400, "%s: status %d, output: %s",
                  methods[i], status, o ? o : "");
        free(o);
    }
    snprintf(cmd, sizeof cmd, "%s vectors train --method word2vec --corpus /tmp/c.txt --out /nonexistent-dir/x.vec 2>&1", test_glue_bin());
    char *o = test_run(cmd, &status);
    CHECK_EQ_INT(status, 2);
    CHECK_MSG(o && strstr(o, "--method must be skipgram, cbow or glove"), "output: %s", o ? o : "");
    free(o);
}

static char *vm_write(const char *text);

/* A corpus that cannot make vectors is a data error (65) naming the option to
 * change, and writes nothing: no word frequent enough (the hint names
 * --min-count, not a model's --set), no context for any word (skip-gram and
 * CBOW would write their random start; GloVe refuses it too). */
TEST(vectors_corpus_refusals_write_nothing) {
    char *few = vm_write("the cat sat\nthe dog sat\n"), *single = vm_write("a\nb\na\n");
    struct { const char *corpus, *opts, *says; } cases[] = {
        {few, "", "--min-count 1"},
        {few, "--min-count 1", "--sample 0"},
        {single, "--min-count 1 --sample 0", "every line has one word"},
        {single, "--min-count 1 --method cbow --sample 0", "every line has one word"},
        {single, "--min-count 1 --method glove", "ever occur together"},
    };
    for (int i = 0; i < 5; i++) {
        char cmd[1024], *out = vm_write("");   /* a fresh path, removed: the refusal must not create it */
        int status;
        unlink(out);
        snprintf(cmd, sizeof cmd, "%s vectors train --corpus %s --out %s --dim 4 --epochs 1 --threads 1 %s 2>&1",
                 test_glue_bin(), cases[i].corpus, out, cases[i].opts);
        char *o = test_run(cmd, &status);
        CHECK_MSG(status == 65 && o && strstr(o, cases[i].says) && access(out, F_OK) != 0, "%s: status %d, output: %s",
                  cmd, status, o ? o : "");
        free(o);
        unlink(out);
        free(out);
    }
    unlink(few);
    unlink(single);
    free(few);
    free(single);
}

static char *vm_write(const char *text) {
    char *p = xmalloc(SCRATCH_PATH_MAX);
    FILE *f = fdopen(scratch_file("vm_file", p, SCRATCH_PATH_MAX), "w");
    fputs(text, f);
    fclose(f);
    return p;
}

/* Vectors made so that b - a + c lands on d for the first question only. */
TEST(vectors_eval_neighbours_and_analogies) {
    char *vec = vm_write("6 3\nParis 1 0 0.1\nfrance 1 1 0\nrome 0.9 0 0.3\nitaly 0.9 1 0.3\ncar 0 0 1\ncars -1 -1 1\n");
    char *qs = vm_write(": capitals\nparis france rome italy\nrome italy paris france\n: plural\ncar cars dog dogs\n");
    VecTable t;
    if (CHECK(vec_table_load(&t, vec) == 0)) {
        CHECK_EQ_INT(t.n, 6);
        int row = vec_table_find(&t, "PARIS"), nb[2];
        float sim[2];
        CHECK(row == 0);
        CHECK_EQ_INT(vec_neighbours(&t, row, 2, nb, sim), 2);
        CHECK_MSG(strcmp(strmap_key(&t.words, nb[0]), "rome") == 0, "nearest to paris: %s", strmap_key(&t.words, nb[0]));
        CHECK(sim[0] >= sim[1]);
        VecAnalogyResult r;
        if (CHECK(vec_analogies(&t, qs, &r) == 0)) {
            CHECK_EQ_INT(r.categories, 2);
            CHECK_EQ_INT((int)r.questions[0], 2);
            CHECK_EQ_INT((int)r.answered[0], 2);
            CHECK_EQ_INT((int)r.correct[0], 2);
            CHECK_EQ_INT((int)r.answered[1], 0);   /* "dog" is not in the file */
        }
        vec_table_free(&t);
    }
    /* a malformed analogy line and a malformed vectors file are one message each */
    char *bad = vm_write(": c\nparis france rome\n");
    StderrCapture cap;
    if (CHECK(vec_table_load(&t, vec) == 0)) {
        VecAnalogyResult r;
        stderr_capture_begin(&cap);
        int rc = vec_analogies(&t, bad, &r);
        char *err = stderr_capture_end(&cap);
        CHECK(rc == -1);
        CHECK_MSG(strstr(err, ":2: not four words") != NULL, "message: %s", err);
        free(err);
        vec_table_free(&t);
    }
    stderr_capture_begin(&cap);
    int rc = vec_table_load(&t, qs);
    char *err = stderr_capture_end(&cap);
    CHECK(rc == -1);
    CHECK_MSG(strstr(err, ":1: expected a word and 1 numbers") != NULL, "message: %s", err);   /* ": capitals" */
    char *plain = vm_write("car 0 0 1\ncars -1 -1 1 2\n");   /* no header: the first row tells D */
    stderr_capture_begin(&cap);
    rc = vec_table_load(&t, plain);
    free(err);
    err = stderr_capture_end(&cap);
    CHECK(rc == -1);
    CHECK_MSG(strstr(err, ":2: expected a word and 3 numbers") != NULL, "message: %s", err);
    unlink(plain);
    free(plain);
    free(err);
    char cmd[1024];
    int status;
    snprintf(cmd, sizeof cmd, "%s vectors eval %s --analogies %s --words paris,nowhere --k 1", test_glue_bin(), vec, qs);
    char *o = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    CHECK_MSG(o && strstr(o, "paris        rome") && strstr(o, "(not in the file)") && strstr(o, "100.0%"),
              "output: %s", o ? o : "");
    free(o);
    unlink(bad); unlink(vec); unlink(qs);
    free(bad); free(vec); free(qs);
}
