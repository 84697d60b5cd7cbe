/* test_head.c — the harness's head (src/train/head.h): the softmax
 * cross-entropy and the regression MSE of logits against a Dataset's rows,
 * their gradients against finite differences and against PyTorch
 * (tests/ref/head_ref.py), what is reported from logits, and the siamese
 * score scale. */
#include <stdlib.h>
#include <string.h>

#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"
#include "train/head.h"

enum { HN = 9, HK = 4 };

/* A dataset of n rows with labels (classes, -1 every fourth: unlabelled) and scores. */
static Dataset head_dataset(Example *ex, int n, int K) {
    for (int i = 0; i < n; i++)
        ex[i] = (Example){.label = i % 4 == 3 ? -1 : (i * 7 + 1) % K, .score = 0.37f * (float)((i * 5) % 11) - 1.1f};
    return (Dataset){.ex = ex, .n = n};
}

typedef struct {
    Head h;
    const Dataset *d;
    int rows[HN], n;
    float logits[HN * HK], dlogits[HN * HK], loss;
} HeadCase;

static void head_case_forward(void *p) {
    HeadCase *c = p;
    c->loss = head_loss(&c->h, c->d, c->rows, c->n, c->logits, NULL);
}

static void head_case_backward(void *p, const float *dout) {
    HeadCase *c = p;
    float d[HN * HK];
    head_loss(&c->h, c->d, c->rows, c->n, c->logits, d);
    for (int i = 0; i < c->n * c->h.K; i++) c->dlogits[i] += dout[0] * d[i];
}

/* rows: the dataset's rows in a shuffled order (the head reads d->ex[rows[i]]). */
static void head_case_init(HeadCase *c, const Dataset *d, int K, float scale, uint64_t seed) {
    memset(c, 0, sizeof *c);
    head_init(&c->h, K, 0, scale);
    c->d = d;
    c->n = d->n;
    for (int i = 0; i < c->n; i++) c->rows[i] = (i * 4 + 2) % c->n;   /* 9 and 4 coprime: a permutation */
    gradcheck_fill(c->logits, (long)c->n * K, -3, 3, seed);
}

/* The loss from its definition, in double. */
static double head_reference(const HeadCase *c) {
    double sum = 0;
    int counted = 0;
    for (int i = 0; i < c->n; i++) {
        const Example *x = &c->d->ex[c->rows[i]];
        const float *z = c->logits + (long)i * c->h.K;
        if (c->h.kind == HEAD_REGRESSION) {
            double e = z[0] - (double)x->score / c->h.score_scale;
            sum += e * e;
            counted++;
            continue;
        }
        if (x->label < 0) continue;
        double mx = z[0], s = 0;
        for (int k = 1; k < c->h.K; k++) mx = z[k] > mx ? z[k] : mx;
        for (int k = 0; k < c->h.K; k++) s += exp(z[k] - mx);
        sum += mx + log(s) - z[x->label];
        counted++;
    }
    return sum / counted;
}

/* Loss, dlogits and outputs against PyTorch's. */
static void head_against_torch(HeadCase *c, const char *kind) {
    float targets[HN], dl[HN * HK], out[HN * HK], ref_loss, ref_dl[HN * HK], ref_out[HN * HK];
    for (int i = 0; i < c->n; i++) {
        const Example *x = &c->d->ex[c->rows[i]];
        targets[i] = c->h.kind == HEAD_REGRESSION ? x->score : (float)x->label;
    }
    float loss = head_loss(&c->h, c->d, c->rows, c->n, c->logits, dl);
    head_outputs(&c->h, c->logits, c->n, out);
    long nk = (long)c->n * c->h.K;
    RefTensor in[] = {{"logits", c->logits, nk}, {"targets", targets, c->n}};
    RefTensor res[] = {{"loss", &ref_loss, 1}, {"dlogits", ref_dl, nk}, {"out", ref_out, nk}};
    char args[128];
    snprintf(args, sizeof args, "%s %d %d %.9g", kind, c->n, c->h.K, (double)c->h.score_scale);
    if (torchref_run("head_ref.py", args, in, 2, res, 3) != 1) return;
    CHECK_MSG(fabsf(loss - ref_loss) <= 1e-6f * (1 + fabsf(ref_loss)), "%s loss %.9g, torch %.9g", kind, loss, ref_loss);
    double ed = torchref_max_diff(dl, ref_dl, nk), eo = torchref_max_diff(out, ref_out, nk);
    CHECK_MSG(ed < 1e-7 && eo < 1e-6, "%s vs torch: dlogits %.3g, outputs %.3g", kind, ed, eo);
}

TEST(head_softmax_xent_matches_definition_gradient_and_torch) {
    Example ex[HN];
    Dataset d = head_dataset(ex, HN, HK);
    HeadCase c;
    head_case_init(&c, &d, HK, 1.0f, 11);
    CHECK(c.h.kind == HEAD_SOFTMAX);
    head_case_forward(&c);
    CHECK_NEAR(c.loss, head_reference(&c), 1e-5);
    GradCheck g;
    gradcheck_init(&g, &c, head_case_forward, head_case_backward, &c.loss, 1);
    gradcheck_add(&g, "logits", c.logits, c.dlogits, (long)c.n * HK);
    gradcheck_expect(&g, "softmax head");
    /* Unlabelled rows (label -1) get no gradient; the head writes (not adds). */
    float dl[HN * HK];
    for (int i = 0; i < HN * HK; i++) dl[i] = 123.0f;
    head_loss(&c.h, &d, c.rows, c.n, c.logits, dl);
    for (int i = 0; i < c.n; i++)
        if (ex[c.rows[i]].label < 0)
            for (int k = 0; k < HK; k++) CHECK_NEAR(dl[i * HK + k], 0, 0);
    /* Reported: probabilities, rows summing to 1, the arg-max the logits'. */
    float p[HN * HK];
    head_outputs(&c.h, c.logits, c.n, p);
    for (int i = 0; i < c.n; i++) {
        float s = 0;
        int a = 0, b = 0;
        for (int k = 0; k < HK; k++) {
            s += p[i * HK + k];
            a = p[i * HK + k] > p[i * HK + a] ? k : a;
            b = c.logits[i * HK + k] > c.logits[i * HK + b] ? k : b;
        }
        CHECK_NEAR(s, 1, 1e-6);
        CHECK_EQ_INT(a, b);
    }
    head_against_torch(&c, "softmax");
    head_free(&c.h);
}

TEST(head_regression_mse_matches_definition_gradient_and_torch) {
    Example ex[HN];
    Dataset d = head_dataset(ex, HN, HK);
    for (int s = 0; s < 2; s++) {   /* scale 1, and a siamese head's 5 */
        float scale = s ? 5.0f : 1.0f;
        HeadCase c;
        head_case_init(&c, &d, 1, scale, 12 + s);
        CHECK(c.h.kind == HEAD_REGRESSION);
        head_case_forward(&c);
        CHECK_NEAR(c.loss, head_reference(&c), 1e-5);
        GradCheck g;
        gradcheck_init(&g, &c, head_case_forward, head_case_backward, &c.loss, 1);
        gradcheck_add(&g, "logits", c.logits, c.dlogits, c.n);
        gradcheck_expect(&g, s ? "regression head, scale 5" : "regression head");
        /* Reported: the output times the scale; a perfect output has loss 0. */
        float out[HN], perfect[HN];
        head_outputs(&c.h, c.logits, c.n, out);
        for (int i = 0; i < c.n; i++) {
            CHECK_NEAR(out[i], c.logits[i] * scale, 0);
            perfect[i] = ex[c.rows[i]].score / scale;
        }
        CHECK_NEAR(head_loss(&c.h, &d, c.rows, c.n, perfect, NULL), 0, 0);
        head_against_torch(&c, "regression");
        head_free(&c.h);
    }
}

/* No rows (a data-parallel rank given none of a short last batch): loss 0. */
TEST(head_loss_of_no_rows_is_zero) {
    Head h;
    head_init(&h, 3, 0, 1.0f);
    CHECK_NEAR(head_loss(&h, NULL, NULL, 0, NULL, NULL), 0, 0);
    head_free(&h);
}
