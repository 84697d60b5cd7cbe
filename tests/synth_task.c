/* synth_task.c — synthetic text tasks and the small training loop of the model
 * tests (see synth_task.h). */
#include "tests/synth_task.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "metrics/metrics.h"
#include "metrics/multilabel.h"
#include "metrics/thresholds.h"
#include "train/decision.h"
#include "tests/test.h"
#include "train/evaluate.h"
#include "train/step.h"

const Task SYNTH_TASK2 = {.name = "synth2", .display = "SYNTH-2", .num_labels = 2,
                          .metrics = {METRIC_ACC, METRIC_NONE}};
const Task SYNTH_TASK3 = {.name = "synth3", .display = "SYNTH-3", .num_labels = 3,
                          .metrics = {METRIC_ACC, METRIC_NONE}};
const Task SYNTH_TASKML = {.name = "synthml", .display = "SYNTH-ML", .num_labels = 4, .multi_label = 1,
                           .labels = {"a", "b", "c", "d"}, .metrics = {METRIC_MACRO_F1, METRIC_MICRO_F1}};
const Task SYNTH_TASKR = {.name = "synthr", .display = "SYNTH-R", .num_labels = 1,
                          .metrics = {METRIC_PEARSON, METRIC_NONE}};

/* Topics of SYNTH_SAME_TOPIC. Whether a and b agree is drawn first, so the
 * labels are balanced (not 1 in 4 by chance). */
enum { SYNTH_TOPICS = 4 };

/* Room for one word and its separator: "c<int>k<int>" is at most 24 bytes. */
enum { SYNTH_WORD_MAX = 32 };

/* Uniform in [lo, hi]. A fixed value takes no draw: a size held fixed leaves
 * the random stream, hence the rest of the data, as a constant would. */
static int synth_range(Rng *r, int lo, int hi) {
    return hi <= lo ? lo : lo + (int)rng_below(r, (uint32_t)(hi - lo + 1));
}

/* Appends word w to the text s ends at p (a space before all but the first). */
static char *synth_put(char *s, char *p, const char *w) {
    return p + sprintf(p, "%s%s", p == s ? "" : " ", w);
}

static char *synth_put_class(char *s, char *p, Rng *r, const SynthTask *st, int cls) {
    char w[SYNTH_WORD_MAX];
    snprintf(w, sizeof w, "c%dk%d", cls, synth_range(r, 0, st->class_words - 1));
    return synth_put(s, p, w);
}

static char *synth_put_noise(char *s, char *p, Rng *r, const SynthTask *st) {
    char w[SYNTH_WORD_MAX];
    snprintf(w, sizeof w, "n%u", rng_below(r, (uint32_t)st->noise_words));
    return synth_put(s, p, w);
}

/* `noise` noise words with `signal` class words of cls, or the words of
 * `fixed` when not NULL, in a row at a uniformly random place among them. */
static char *synth_spliced(Rng *r, const SynthTask *st, int noise, int cls, int signal, const char *fixed) {
    char *s = xmalloc((size_t)(noise + signal + 2) * SYNTH_WORD_MAX + 1), *p = s;
    int at = (int)rng_below(r, (uint32_t)noise + 1);
    *p = '\0';
    for (int i = 0; i <= noise; i++) {
        if (i == at) {
            if (fixed) p = synth_put(s, p, fixed);
            for (int k = 0; !fixed && k < signal; k++) p = synth_put_class(s, p, r, st, cls);
        }
        if (i < noise) p = synth_put_noise(s, p, r, st);
    }
    return s;
}

char *synth_text(Rng *r, const SynthTask *st, int cls, int len, int signal) {
    if (st->phrase) return synth_spliced(r, st, len - signal, cls, signal, NULL);
    char *s = xmalloc((size_t)len * SYNTH_WORD_MAX + 1), *p = s;
    *p = '\0';
    /* Word i is signal with probability (signal left) / (words left): every
     * placement of the signal words equally likely, in one pass. */
    for (int i = 0; i < len; i++) {
        if ((int)rng_below(r, (uint32_t)(len - i)) < signal) {
            p = synth_put_class(s, p, r, st, cls);
            signal--;
        } else {
            p = synth_put_noise(s, p, r, st);
        }
    }
    return s;
}

/* A text of class cls with its length, then its signal, drawn from st's ranges. */
static char *synth_class_text(Rng *r, const SynthTask *st, int cls) {
    int len = synth_range(r, st->len_min, st->len_max);
    return synth_text(r, st, cls, len, synth_range(r, st->signal_min, st->signal_max));
}

Dataset synth_dataset(const SynthTask *st, int n, uint64_t seed) {
    Dataset d = {.task = st->task, .n = n};
    d.ex = xcalloc((size_t)n, sizeof *d.ex);
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        Example *x = &d.ex[i];
        switch (st->kind) {
        case SYNTH_CLASS:
            x->label = (int)rng_below(&r, (uint32_t)st->task->num_labels);
            x->a = synth_class_text(&r, st, x->label);
            break;
        case SYNTH_CLASS_IN_B:
            x->label = (int)rng_below(&r, (uint32_t)st->task->num_labels);
            x->a = synth_text(&r, st, 0, synth_range(&r, st->len_min, st->len_max), 0);
            x->b = synth_class_text(&r, st, x->label);
            break;
        case SYNTH_SAME_TOPIC: {
            int ta = (int)rng_below(&r, SYNTH_TOPICS), same = (int)rng_below(&r, 2);
            int tb = same ? ta : (ta + 1 + (int)rng_below(&r, SYNTH_TOPICS - 1)) % SYNTH_TOPICS;
            x->label = same;
            x->a = synth_class_text(&r, st, ta);
            x->b = synth_class_text(&r, st, tb);
            break;
        }
        case SYNTH_ORDER:
            x->label = (int)rng_below(&r, 2);
            x->a = synth_spliced(&r, st, synth_range(&r, st->len_min, st->len_max) - 2, 0, 0,
                                 x->label ? "x y" : "y x");
            break;
        case SYNTH_MULTI: {   /* the set, then the words of each of its labels in turn */
            int set[TASK_MAX_LABELS], n = 0, K = st->task->num_labels;
            for (int k = 0; k < K; k++)
                if (rng_below(&r, 5) < 2) set[n++] = k;
            if (n == 0) set[n++] = (int)rng_below(&r, (uint32_t)K);
            x->label = -1;
            x->labels = xmalloc(sizeof(int) * (size_t)n);
            x->nlabels = n;
            size_t len = 1;
            char *parts[TASK_MAX_LABELS];
            for (int j = 0; j < n; j++) {
                x->labels[j] = set[j];
                parts[j] = synth_class_text(&r, st, set[j]);
                len += strlen(parts[j]) + 1;
            }
            x->a = xmalloc(len);
            x->a[0] = '\0';
            for (int j = 0; j < n; j++) {
                if (j) strcat(x->a, " ");
                strcat(x->a, parts[j]);
                free(parts[j]);
            }
            break;
        }
        case SYNTH_COUNT: {
            int k = synth_range(&r, st->signal_min, st->signal_max);
            x->a = synth_text(&r, st, 1, synth_range(&r, st->len_min, st->len_max), k);
            x->score = (float)k;
            break;
        }
        }
    }
    return d;
}

void synth_free(Dataset *d) {
    for (int i = 0; i < d->n; i++) { free(d->ex[i].a); free(d->ex[i].b); free(d->ex[i].labels); }
    free(d->ex);
}

void synth_train_epochs(const ModelOps *ops, Model *m, const Dataset *d, const Encoded *e, const cJSON *cfg,
                        uint64_t seed, int from, int to) {
    int n = d->n;
    TrainStep *step = train_step_create(ops, m, d, e);
    int batch = cJSON_GetObjectItem(cfg, "batch")->valueint;
    int epochs = cJSON_GetObjectItem(cfg, "epochs")->valueint;
    float lr = (float)cJSON_GetObjectItem(cfg, "lr")->valuedouble;
    long steps_per_epoch = (n + batch - 1) / batch, total = epochs * steps_per_epoch;
    int *rows = xmalloc((size_t)n * sizeof *rows);
    for (int ep = from; ep < to; ep++) {
        for (int i = 0; i < n; i++) rows[i] = i;
        Rng r;
        rng_seed_stream(&r, seed, (uint64_t)ep);
        rng_shuffle_int(&r, rows, n);
        for (int s = 0; s < n; s += batch) {
            long k = ep * steps_per_epoch + s / batch;
            TrainState st = {.step = k, .total_steps = total, .progress = (double)k / (double)total,
                             .lr = lr, .epoch = ep, .share = 1};
            float loss = train_step_run(step, rows + s, n - s < batch ? n - s : batch, &st);
            if (!CHECK_MSG(isfinite(loss) && loss >= 0.0f, "%s: loss %g", ops->name, loss)) {
                train_step_free(step);
                free(rows);
                return;
            }
        }
    }
    train_step_free(step);
    free(rows);
}

Model *synth_train(const ModelOps *ops, const Dataset *train, const cJSON *cfg, uint64_t seed) {
    Model *m = ops->create(cfg, train->task, train, seed);
    if (!m) return NULL;
    Encoded *e = ops->encode(m, train);
    synth_train_epochs(ops, m, train, e, cfg, seed, 0, cJSON_GetObjectItem(cfg, "epochs")->valueint);
    ops->encoded_free(e);
    return m;
}

float *synth_predict(const ModelOps *ops, Model *m, const Dataset *d, int batch) {
    int K = d->task->num_labels;
    if (batch <= 0) batch = d->n;
    Encoded *e = ops->encode(m, d);
    int *rows = xmalloc((size_t)d->n * sizeof *rows);
    for (int i = 0; i < d->n; i++) rows[i] = i;
    float *out = xmalloc((size_t)d->n * (size_t)K * sizeof *out);
    for (int s = 0; s < d->n; s += batch)
        evaluate_rows_task(ops, m, e, rows + s, d->n - s < batch ? d->n - s : batch, d->task, out + (long)s * K);
    free(rows);
    ops->encoded_free(e);
    return out;
}

/* out (n, K) probabilities: % of rows whose most probable class is the label.
 * Checks that every row sums to 1 (the first row that does not is reported). */
static double synth_accuracy(const char *name, const float *out, const Dataset *d) {
    int K = d->task->num_labels, ok = 0, sums_ok = 1;
    for (int i = 0; i < d->n; i++) {
        float sum = 0;
        int best = 0;
        for (int k = 0; k < K; k++) {
            sum += out[i * K + k];
            if (out[i * K + k] > out[i * K + best]) best = k;
        }
        if (sums_ok)
            sums_ok = CHECK_MSG(fabsf(sum - 1.0f) < 1e-5f, "%s: row %d probabilities sum to %g", name, i, sum);
        ok += best == d->ex[i].label;
    }
    return 100.0 * ok / d->n;
}

/* Macro-F1 in % of out (n, K) probabilities at threshold 0.5 against d's label sets. */
static double synth_macro_f1(const float *out, const Dataset *d) {
    int K = d->task->num_labels;
    uint8_t *gold = decision_gold(d, K), *pred = xmalloc((size_t)d->n * (size_t)K);
    thresholds_apply(out, d->n, K, THRESHOLD_DEFAULT, pred);
    double f1 = multilabel_metric(METRIC_MACRO_F1, pred, gold, d->n, K);
    free(gold);
    free(pred);
    return 100.0 * f1;
}

static double synth_pearson(const float *out, const Dataset *d) {
    double *x = xmalloc((size_t)d->n * sizeof *x), *y = xmalloc((size_t)d->n * sizeof *y);
    for (int i = 0; i < d->n; i++) { x[i] = out[i]; y[i] = d->ex[i].score; }
    double r = metric_pearson(x, y, d->n);
    free(x);
    free(y);
    return r;
}

double synth_learn(const ModelOps *ops, const SynthTask *st, const cJSON *cfg, int n_train, int n_dev,
                   uint64_t seed) {
    Dataset tr = synth_dataset(st, n_train, seed), dv = synth_dataset(st, n_dev, seed + 1);
    Model *m = synth_train(ops, &tr, cfg, seed);
    double score = NAN;
    if (CHECK_MSG(m != NULL, "%s: %s refused the config", st->name, ops->name)) {
        float *out = synth_predict(ops, m, &dv, 64);   /* evaluation's batches, not one call */
        score = st->task->multi_label ? synth_macro_f1(out, &dv)
                : st->task->num_labels == 1 ? synth_pearson(out, &dv) : synth_accuracy(st->name, out, &dv);
        free(out);
        ops->free(m);
    }
    synth_free(&tr);
    synth_free(&dv);
    return score;
}
