/* evaluate.c — whole-split prediction and scoring (see evaluate.h). */
#include "train/evaluate.h"

#include "core/common.h"
#include "core/threads.h"
#include "metrics/multilabel.h"
#include "metrics/per_label.h"
#include "train/decision.h"
#include "train/head.h"
#include "train/length_batches.h"

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

/* evaluate_rows with the head of a multi-label task (sigmoid) when multi. */
static void evaluate_rows_kind(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n,
                               int num_outputs, int multi, float *out) {
    if (!ops->forward) {
        ops->predict(m, e, rows, n, out);
        return;
    }
    Head h;
    head_init(&h, num_outputs, multi, ops->score_scale ? ops->score_scale(m) : 1.0f);
    ops->forward(m, e, rows, n, NULL, out);   /* logits, then what they say, in place */
    head_outputs(&h, out, n, out);
    head_free(&h);
}

void evaluate_rows(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n, int num_outputs,
                   float *out) {
    evaluate_rows_kind(ops, m, e, rows, n, num_outputs, 0, out);
}

void evaluate_rows_task(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n, const Task *t,
                        float *out) {
    evaluate_rows_kind(ops, m, e, rows, n, evaluate_num_outputs(t), t->multi_label, out);
}

void evaluate_predict_all(const ModelOps *ops, Model *m, const Encoded *e, int n, const Task *t, int batch,
                          float *out, double *seconds) {
    int num_outputs = evaluate_num_outputs(t);
    if (batch < 1) batch = EVALUATE_BATCH_DEFAULT;
    int *order = xmalloc(sizeof(int) * (size_t)(n ? n : 1)), *starts = xmalloc(sizeof(int) * (size_t)(n + 1));
    int batches;
    if (ops->length) {   /* longest first, cut where lengths change (length_batches.h) */
        RowLen *rl = xmalloc(sizeof(RowLen) * (size_t)(n ? n : 1));
        int *len = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++) rl[i] = (RowLen){ops->length(e, i), i};
        qsort(rl, (size_t)n, sizeof *rl, rowlen_cmp);
        for (int i = 0; i < n; i++) order[i] = rl[i].row, len[i] = rl[i].len;
        batches = length_batches_plan(len, n, batch, threads_count(), starts);
        free(len);
        free(rl);
    } else {
        for (int i = 0; i < n; i++) order[i] = i;
        batches = 0;
        for (int i = 0; i < n; i += batch) starts[batches++] = i;
        starts[batches] = n;
    }
    float *buf = xmalloc(sizeof(float) * (size_t)batch * (size_t)num_outputs);  /* (batch, K) */
    double t0 = now_seconds();
    for (int k = 0; k < batches; k++) {
        int i = starts[k], b = starts[k + 1] - i;
        evaluate_rows_kind(ops, m, e, order + i, b, num_outputs, t->multi_label, buf);
        for (int r = 0; r < b; r++)
            memcpy(out + (size_t)order[i + r] * (size_t)num_outputs, buf + (size_t)r * (size_t)num_outputs,
                   sizeof(float) * (size_t)num_outputs);
    }
    if (seconds) *seconds = now_seconds() - t0;
    free(buf);
    free(starts);
    free(order);
}

float *evaluate_predict_dataset(const ModelOps *ops, Model *m, const Dataset *d, int batch, double *seconds) {
    Encoded *e = ops->encode(m, d);
    if (!e) return NULL;
    int k = evaluate_num_outputs(d->task);
    float *out = xmalloc(sizeof(float) * (size_t)(d->n ? d->n : 1) * (size_t)k);  /* (n, K) */
    evaluate_predict_all(ops, m, e, d->n, d->task, batch, out, seconds);
    ops->encoded_free(e);
    return out;
}

int evaluate_argmax(const float *p, int k) {
    int best = 0;
    for (int i = 1; i < k; i++)
        if (p[i] > p[best]) best = i;
    return best;
}

/* The task's metrics of a multi-label split: its label sets under rule. */
static cJSON *evaluate_metrics_multi(const Task *t, const Dataset *d, const float *out, const Decision *rule) {
    int n = d->n, K = t->num_labels;
    uint8_t *gold = decision_gold(d, K), *pred = xmalloc((size_t)(n ? n : 1) * (size_t)K);
    decision_apply(rule, out, n, pred);
    cJSON *j = cJSON_CreateObject();
    for (int mi = 0; mi < 2; mi++)
        if (t->metrics[mi] != METRIC_NONE)
            cJSON_AddNumberToObject(j, metric_name(t->metrics[mi]),
                                    100.0 * multilabel_metric(t->metrics[mi], pred, gold, n, K));
    free(gold);
    free(pred);
    return j;
}

cJSON *evaluate_metrics(const Task *t, const Dataset *d, const float *out) {
    return evaluate_metrics_rule(t, d, out, NULL);
}

cJSON *evaluate_metrics_rule(const Task *t, const Dataset *d, const float *out, const Decision *rule) {
    Decision fallback;
    if (t->multi_label) {
        if (!rule) decision_default(&fallback, t->num_labels), rule = &fallback;
        return evaluate_metrics_multi(t, d, out, rule);
    }
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
    for (int mi = 0; mi < (t->multi_label ? 1 : 2); mi++) {   /* multi-label: its primary (macro-F1) */
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
    if (t->multi_label) {   /* each label at its training frequency: the threshold keeps the common ones */
        long rows = 0;
        for (int i = 0; i < train->n; i++) {
            rows += train->ex[i].nlabels > 0;
            for (int j = 0; j < train->ex[i].nlabels; j++)
                if (train->ex[i].labels[j] >= 0 && train->ex[i].labels[j] < k) count[train->ex[i].labels[j]]++;
        }
        for (int i = 0; i < n; i++)
            for (int c = 0; c < k; c++) out[(size_t)i * (size_t)k + (size_t)c] = rows ? (float)count[c] / (float)rows : 0;
        return;
    }
    for (int i = 0; i < train->n; i++)
        if (train->ex[i].label >= 0 && train->ex[i].label < k) count[train->ex[i].label]++;
    int best = 0;
    for (int c = 1; c < k; c++)
        if (count[c] > count[best]) best = c;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++) out[(size_t)i * (size_t)k + (size_t)c] = c == best ? 1.0f : 0.0f;
}

/* The per-label table as [{"label": name, "precision", "recall", "f1" (x100), "support", "predicted"}]. */
static cJSON *evaluate_label_table(const Task *t, const LabelScore *ls, int K) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < K; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "label", task_label_name(t, k));
        cJSON_AddNumberToObject(o, "precision", 100.0 * ls[k].precision);
        cJSON_AddNumberToObject(o, "recall", 100.0 * ls[k].recall);
        cJSON_AddNumberToObject(o, "f1", 100.0 * ls[k].f1);
        cJSON_AddNumberToObject(o, "support", (double)ls[k].support);
        cJSON_AddNumberToObject(o, "predicted", (double)ls[k].predicted);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static void evaluate_add_prf(cJSON *j, const char *avg, PrfAverage p) {
    char key[64];
    snprintf(key, sizeof key, "%s_precision", avg);
    cJSON_AddNumberToObject(j, key, 100.0 * p.precision);
    snprintf(key, sizeof key, "%s_recall", avg);
    cJSON_AddNumberToObject(j, key, 100.0 * p.recall);
    snprintf(key, sizeof key, "%s_f1", avg);
    cJSON_AddNumberToObject(j, key, 100.0 * p.f1);
}

cJSON *evaluate_details(const Task *t, const Dataset *d, const float *out, const Decision *rule) {
    int n = d->n, K = t->num_labels;
    if (K < 2 && !t->multi_label) return NULL;
    LabelScore ls[TASK_MAX_LABELS];
    cJSON *j = cJSON_CreateObject();
    if (t->multi_label) {
        Decision fallback;
        if (!rule) decision_default(&fallback, K), rule = &fallback;
        uint8_t *gold = decision_gold(d, K), *pred = xmalloc((size_t)(n ? n : 1) * (size_t)K);
        decision_apply(rule, out, n, pred);
        MultiLabelScores s;
        multilabel_score(pred, gold, n, K, &s, ls);
        evaluate_add_prf(j, "micro", s.micro);
        evaluate_add_prf(j, "macro", s.macro);
        evaluate_add_prf(j, "samples", s.samples);
        cJSON_AddNumberToObject(j, "hamming_loss", s.hamming_loss);
        cJSON_AddNumberToObject(j, "subset_accuracy", 100.0 * s.subset_accuracy);
        cJSON_AddNumberToObject(j, "empty_predictions", (double)s.empty_predictions);
        cJSON_AddItemToObject(j, "decision", decision_json(rule, t));
        free(gold);
        free(pred);
    } else {
        int *pred = xmalloc(sizeof(int) * (size_t)(n ? n : 1)), *gold = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
        int m = 0;
        for (int i = 0; i < n; i++)
            if (d->ex[i].label >= 0 && d->ex[i].label < K) {
                gold[m] = d->ex[i].label;
                pred[m++] = evaluate_argmax(out + (size_t)i * (size_t)K, K);
            }
        LabelCounts c[TASK_MAX_LABELS];
        label_counts_single(pred, gold, m, K, c);
        label_scores(c, K, ls);
        evaluate_add_prf(j, "macro", label_macro_average(c, K, 1));
        cJSON_AddNumberToObject(j, "accuracy", 100.0 * metric_micro_f1(pred, gold, m, K));
        free(pred);
        free(gold);
    }
    cJSON_AddItemToObject(j, "per_label", evaluate_label_table(t, ls, K));
    return j;
}
