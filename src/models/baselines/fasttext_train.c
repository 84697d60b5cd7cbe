/* fasttext_train.c — fastText's SGD: one update per example, Hogwild across
 * threads (workers write the shared matrices without locks, as the reference does;
 * rows are sparse so collisions are rare and harmless), the learning rate decaying
 * linearly with the tokens processed. No allocation: each worker has its own
 * scratch (hidden, grad, output) sized at create time. The threads are the
 * model's pool (fasttext_workers.c). */
#include "models/baselines/fasttext.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/common.h"
#include "core/rng.h"

/* Rows a worker takes at a time: few enough to balance, enough to keep the
 * shared counter off the hot path. */
#define FT_ROWS_PER_GRAB 16
/* Inside the reference's logs too: -log(p + eps) never overflows. */
#define FT_LOG_EPS 1e-5f

void ft_init_row(FastText *m, long r) {
    /* Uniform in (-1/C, 1/C) like the reference, but seeded by the row number so a
     * row's init does not depend on when (or whether) other rows were set. */
    int C = m->cfg.dim;
    Rng rng;
    rng_seed_stream(&rng, m->cfg.seed, (uint64_t)r);
    float *w = m->wi + (size_t)r * C;
    for (int i = 0; i < C; i++) w[i] = (2.0f * rng_uniform(&rng) - 1.0f) / (float)C;
    m->wi_ready[r] = 1;
}

/* h (C) = mean of the input rows ids[0..L). */
static void ft_hidden(const FastText *m, const int32_t *ids, int L, float *h) {
    int C = m->cfg.dim;
    memset(h, 0, (size_t)C * sizeof *h);
    for (int i = 0; i < L; i++) vec_axpy(h, 1.0f, m->wi + (size_t)ids[i] * C, C);
    float inv = 1.0f / (float)L;
    for (int i = 0; i < C; i++) h[i] *= inv;
}

/* out (K) = softmax(wo h). */
static void ft_softmax(const FastText *m, const float *h, float *out) {
    int C = m->cfg.dim, K = m->K;
    float mx = -INFINITY, sum = 0.0f;
    for (int k = 0; k < K; k++) {
        out[k] = vec_dot(m->wo + (size_t)k * C, h, C);
        if (out[k] > mx) mx = out[k];
    }
    for (int k = 0; k < K; k++) sum += (out[k] = expf(out[k] - mx));
    for (int k = 0; k < K; k++) out[k] /= sum;
}

/* The output layer's loss for one example, with its SGD step (grad += the step
 * for h): softmax cross-entropy, hierarchical softmax, or squared error. */
static float ft_output_update(FastText *m, const Encoded *e, int r, const float *h, float *grad, float *out,
                              float lr) {
    int y = e->label[r];
    float target = e->score[r];
    int C = m->cfg.dim;
    if (m->K == 1) {   /* our regression extension: 0.5 (wo.h + b - target)^2 */
        float err = target - (vec_dot(m->wo, h, C) + m->bias);
        float alpha = lr * err;
        vec_axpy(grad, alpha, m->wo, C);
        vec_axpy(m->wo, alpha, h, C);
        m->bias += alpha;
        return 0.5f * err * err;
    }
    if (m->cfg.loss == FT_LOSS_OVA) {
        uint8_t one[TASK_MAX_LABELS] = {0};   /* a single-label task: its class alone */
        const uint8_t *t = e->target ? e->target + (size_t)r * (size_t)m->K : one;
        if (!e->target) one[y] = 1;
        return ft_ova_update(m->wo, h, grad, C, m->K, t, lr);
    }
    if (m->cfg.loss == FT_LOSS_HS) return ft_hs_update(&m->tree, m->wo, h, grad, C, y, lr);
    ft_softmax(m, h, out);
    for (int k = 0; k < m->K; k++) {
        float alpha = lr * ((k == y ? 1.0f : 0.0f) - out[k]);
        vec_axpy(grad, alpha, m->wo + (size_t)k * C, C);
        vec_axpy(m->wo + (size_t)k * C, alpha, h, C);
    }
    return -logf(out[y] + FT_LOG_EPS);
}

/* One example: forward, output update, then every input row moves by grad / L
 * (the reference's supervised mode normalises the gradient by the row count). */
static float ft_update_example(FastText *m, const Encoded *e, int r, float lr, float *scratch) {
    int C = m->cfg.dim;
    int L = (int)(e->off[r + 1] - e->off[r]);
    int unlabelled = e->target ? 0 : m->K > 1 && (e->label[r] < 0 || e->label[r] >= m->K);
    if (e->target) {   /* a multi-label row without labels is unlabelled */
        unlabelled = 1;
        for (int k = 0; k < m->K; k++) unlabelled &= !e->target[(size_t)r * (size_t)m->K + (size_t)k];
    }
    if (L == 0 || unlabelled) return 0.0f;
    const int32_t *ids = e->ids + e->off[r];
    float *h = scratch, *grad = scratch + C, *out = scratch + 2 * C;
    ft_hidden(m, ids, L, h);
    memset(grad, 0, (size_t)C * sizeof *grad);
    float loss = ft_output_update(m, e, r, h, grad, out, lr);
    float inv = 1.0f / (float)L;
    for (int i = 0; i < L; i++) vec_axpy(m->wi + (size_t)ids[i] * C, inv, grad, C);
    return loss;
}

/* A step's rows, shared by the workers; each takes FT_ROWS_PER_GRAB at a time. */
typedef struct {
    FastText *m;
    const Encoded *e;
    const int *rows;
    int n;
    double progress, per_row;   /* progress at row i: progress + per_row * i */
    float *out;                 /* predict only: (n, K) */
    atomic_int next;            /* first row nobody has taken */
} FtJob;

/* Dynamic grabs: on a busy machine a descheduled worker does not hold the step
 * up; the running ones take its rows. */
static int job_grab(FtJob *j, int *hi) {
    int lo = atomic_fetch_add_explicit(&j->next, FT_ROWS_PER_GRAB, memory_order_relaxed);
    *hi = lo + FT_ROWS_PER_GRAB < j->n ? lo + FT_ROWS_PER_GRAB : j->n;
    return lo;
}

static void train_worker(void *arg, int k) {
    FtJob *j = arg;
    FastText *m = j->m;
    float *scratch = m->scratch + (size_t)k * m->scratch_stride;
    double loss = 0.0;
    int lo, hi;
    while ((lo = job_grab(j, &hi)) < j->n)
        for (int i = lo; i < hi; i++) {
            double p = j->progress + j->per_row * i;
            float lr = m->cfg.lr * (float)(p < 1.0 ? 1.0 - p : 0.0);
            loss += ft_update_example(m, j->e, j->rows[i], lr, scratch);
        }
    m->worker_loss[(size_t)k * WORKER_DOUBLES_PER_LINE] = loss;
}

float ft_train_rows(FastText *m, const Encoded *e, const int *rows, int n, double progress) {
    /* Tokens of the whole run: the denominator of the linear decay. Within the
     * step, progress moves on by each row's share of the step's tokens. */
    double total = (double)e->total_tokens * m->cfg.epochs, step_tokens = 0.0;
    for (int i = 0; i < n; i++) step_tokens += e->ntok[rows[i]];
    FtJob j = {.m = m, .e = e, .rows = rows, .n = n, .progress = progress,
               .per_row = n > 0 && total > 0 ? step_tokens / total / n : 0.0};
    atomic_init(&j.next, 0);
    workers_run(m->workers, train_worker, &j);
    double loss = 0.0;
    for (int k = 0; k < workers_count(m->workers); k++) loss += m->worker_loss[(size_t)k * WORKER_DOUBLES_PER_LINE];
    return n > 0 ? (float)(loss / n) : 0.0f;
}

/* out (K): class probabilities, or (1) the score for regression. */
static void ft_predict_one(const FastText *m, const Encoded *e, int r, float *scratch, float *out) {
    int C = m->cfg.dim, L = (int)(e->off[r + 1] - e->off[r]);
    if (L == 0) {   /* nothing known about the text: the uninformed answer */
        for (int k = 0; k < m->K; k++)
            out[k] = m->K == 1 ? m->bias : m->cfg.loss == FT_LOSS_OVA ? 0.0f : 1.0f / (float)m->K;
        return;
    }
    ft_hidden(m, e->ids + e->off[r], L, scratch);
    if (m->K == 1) out[0] = vec_dot(m->wo, scratch, C) + m->bias;
    else if (m->cfg.loss == FT_LOSS_HS) ft_hs_probs(&m->tree, m->wo, scratch, C, out);
    else if (m->cfg.loss == FT_LOSS_OVA) ft_ova_probs(m->wo, scratch, C, m->K, out);
    else ft_softmax(m, scratch, out);
}

static void predict_worker(void *arg, int k) {
    FtJob *j = arg;
    float *scratch = j->m->scratch + (size_t)k * j->m->scratch_stride;
    int lo, hi;
    while ((lo = job_grab(j, &hi)) < j->n)
        for (int i = lo; i < hi; i++) ft_predict_one(j->m, j->e, j->rows[i], scratch, j->out + (size_t)i * j->m->K);
}

void ft_predict_rows(FastText *m, const Encoded *e, const int *rows, int n, float *out) {
    FtJob j = {.m = m, .e = e, .rows = rows, .n = n, .out = out};
    atomic_init(&j.next, 0);
    workers_run(m->workers, predict_worker, &j);
}
