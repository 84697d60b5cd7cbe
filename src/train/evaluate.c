/* evaluate.c — whole-split prediction and scoring (see evaluate.h). */
#include "train/evaluate.h"

#include "core/common.h"
#include "train/head.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int evaluate_num_outputs(const Task *t) { return t->num_labels == 1 ? 1 : t->num_labels; }

typedef struct { int len, row; } RowLen;

/* Longest first, then by row, so the order is total and the run deterministic. */
static int rowlen_cmp(const void *a, const void *b) {
    const RowLen *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

void evaluate_rows(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n, int num_outputs,
                   float *out) {
    if (!ops->forward) {
        ops->predict(m, e, rows, n, out);
        return;
    }
    Head h;
    head_init(&h, num_outputs, ops->score_scale ? ops->score_scale(m) : 1.0f);
    ops->forward(m, e, rows, n, NULL, out);   /* logits, then what they say, in place */
    head_outputs(&h, out, n, out);
    head_free(&h);
}

void evaluate_predict_all(const ModelOps *ops, Model *m, const Encoded *e, int n, int num_outputs,
                      int batch, float *out, double *seconds) {
    if (batch < 1) batch = EVALUATE_BATCH_DEFAULT;
    int *order = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    if (ops->length) {
        RowLen *rl = xmalloc(sizeof(RowLen) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++) rl[i] = (RowLen){ops->length(e, i), i};
        qsort(rl, (size_t)n, sizeof *rl, rowlen_cmp);
        for (int i = 0; i < n; i++) order[i] = rl[i].row;
        free(rl);
    } else {
        for (int i = 0; i < n; i++) order[i] = i;
    }
    float *buf = xmalloc(sizeof(float) * (size_t)batch * (size_t)num_outputs);  /* (batch, K) */
    double t0 = now_seconds();
    for (int i = 0; i < n; i += batch) {
        int b = n - i < batch ? n - i : batch;
        evaluate_rows(ops, m, e, order + i, b, num_outputs, buf);
        for (int r = 0; r < b; r++)
            memcpy(out + (size_t)order[i + r] * (size_t)num_outputs, buf + (size_t)r * (size_t)num_outputs,
                   sizeof(float) * (size_t)num_outputs);
    }
    if (seconds) *seconds = now_seconds() - t0;
    free(buf);
    free(order);
}

float *evaluate_predict_dataset(const ModelOps *ops, Model *m, const Dataset *d, int batch, double *seconds) {
    Encoded *e = ops->encode(m, d);
    if (!e) return NULL;
    int k = evaluate_num_outputs(d->task);
    float *out = xmalloc(sizeof(float) * (size_t)(d->n ? d->n : 1) * (size_t)k);  /* (n, K) */
    evaluate_predict_all(ops, m, e, d->n, k, batch, out, seconds);
    ops->encoded_free(e);
    return out;
}

int evaluate_argmax(const float *p, int k) {
    int best = 0;
    for (int i = 1; i < k; i++)
        if (p[i] > p[best]) best = i;
    return best;
}

cJSON *evaluate_metrics(const Task *t, const Dataset *d, const float *out) {
    int n = d->n, k = evaluate_num_outputs(t);
    int *pred = xmalloc(sizeof(int) * (size_t)(n ? n : 1)), *gold = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    double *ps = xmalloc(sizeof(double) * (size_t)(n ? n : 1)), *gs = xmalloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        pred[i] = k == 1 ? 0 : evaluate_argmax(out + (size_t)i * (size_t)k, k);
        gold[i] = d->ex[i].label;
        ps[i] = k == 1 ? out[i] : 0;
        gs[i] = d->ex[i].score;
    }
    cJSON *j = cJSON_CreateObject();
    for (int mi = 0; mi < 2; mi++) {
        MetricId id = t->metrics[mi];
        if (id == METRIC_NONE) continue;
        double v = metric_compute(id, n, t->num_labels, pred, gold, ps, gs);
        cJSON_AddNumberToObject(j, metric_name(id), 100.0 * v);
    }
    free(pred); free(gold); free(ps); free(gs);
    return j;
}

double evaluate_score(const Task *t, const cJSON *metrics) {
    double sum = 0;
    int n = 0;
    for (int mi = 0; mi < 2; mi++) {
        if (t->metrics[mi] == METRIC_NONE) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(metrics, metric_name(t->metrics[mi]));
        if (!cJSON_IsNumber(v)) return NAN;
        sum += v->valuedouble;
        n++;
    }
    return n ? sum / n : NAN;
}

void evaluate_majority_predict(const Task *t, const Dataset *train, int n, float *out) {
    int k = evaluate_num_outputs(t);
    if (k == 1) {
        float mean = (float)dataset_mean_score(train);
        for (int i = 0; i < n; i++) out[i] = mean;
        return;
    }
    long count[TASK_MAX_LABELS] = {0};
    for (int i = 0; i < train->n; i++)
        if (train->ex[i].label >= 0 && train->ex[i].label < k) count[train->ex[i].label]++;
    int best = 0;
    for (int c = 1; c < k; c++)
        if (count[c] > count[best]) best = c;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++) out[(size_t)i * (size_t)k + (size_t)c] = c == best ? 1.0f : 0.0f;
}
