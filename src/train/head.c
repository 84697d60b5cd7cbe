/* head.c — losses of logits and what is reported from them (see head.h). */
#include "train/head.h"

#include "core/common.h"
#include "models/run_config.h"
#include "nn/mse.h"
#include "nn/sigmoid_bce.h"
#include "nn/softmax_focal.h"
#include "nn/softmax_xent.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The label of a row no loss counts (unlabelled: a test split's rows). */
#define HEAD_IGNORE_LABEL (-1)
/* The largest weight a class or label may get: beyond it one row outweighs a
 * whole training split, which is a typo rather than a wish. */
#define HEAD_MAX_WEIGHT 1e6
#define HEAD_HINT "glue finetune --help-settings lists the settings"

void head_init(Head *h, int num_outputs, int multi_label, float score_scale) {
    if (num_outputs < 1 || !(score_scale > 0)) DIE("head_init: %d outputs, score scale %g", num_outputs, score_scale);
    HeadKind kind = multi_label ? HEAD_SIGMOID : num_outputs == 1 ? HEAD_REGRESSION : HEAD_SOFTMAX;
    *h = (Head){.kind = kind, .K = num_outputs, .score_scale = score_scale};
}

void head_free(Head *h) {
    free(h->labels);
    free(h->targets);
    free(h->weights);
    free(h->mask);
    free(h->class_weight);
    free(h->pos_weight);
    memset(h, 0, sizeof *h);
}

/* ---- the settings ---- */

/* One "label:weight" pair of an explicit class_weights list into w (K). The
 * label by its name (task_label_name: "acceptable") or its string in the
 * files ("1"). 0, or -1 after a message. */
static int head_weight_pair(const Task *t, const char *item, float *w) {
    const char *colon = strrchr(item, ':');
    char name[256];
    size_t len = colon ? (size_t)(colon - item) : 0;
    if (!colon || len == 0 || len >= sizeof name) {
        user_error_usage("class_weights=balanced, or label:weight,... (e.g. class_weights=acceptable:1,unacceptable:2.2)",
                         "class_weights: '%s' is not label:weight", item);
        return -1;
    }
    memcpy(name, item, len);
    name[len] = '\0';
    int k = -1;
    for (int c = 0; c < t->num_labels && k < 0; c++)
        if (strcmp(task_label_name(t, c), name) == 0 || (t->labels[c] && strcmp(t->labels[c], name) == 0)) k = c;
    char *end;
    double v = strtod(colon + 1, &end);
    if (k < 0) {
        char known[512];
        int n = 0;
        known[0] = '\0';
        for (int c = 0; c < t->num_labels && n < (int)sizeof known; c++)
            n += snprintf(known + n, sizeof known - (size_t)n, "%s%s", c ? ", " : "", task_label_name(t, c));
        char hint[600];
        snprintf(hint, sizeof hint, "the labels of %s: %s", t->display, known);
        user_error_usage(hint, "class_weights: '%s' is not a label of %s", name, t->display);
        return -1;
    }
    if (end == colon + 1 || *end || !(v > 0) || v > HEAD_MAX_WEIGHT) {
        user_error_usage(HEAD_HINT, "class_weights: the weight of '%s' must be a number in (0, %g], got '%s'", name,
                         HEAD_MAX_WEIGHT, colon + 1);
        return -1;
    }
    w[k] = (float)v;
    return 0;
}

/* class_weights text into w (K) ("none": NULL effect, all 1; "balanced":
 * counts, which need the data, marked by returning 1). 0 explicit or none,
 * 1 balanced, -1 after a message. */
static int head_parse_class_weights(const Task *t, const char *text, float *w) {
    for (int k = 0; k < t->num_labels; k++) w[k] = 1.0f;
    if (strcmp(text, "none") == 0) return 0;
    if (strcmp(text, "balanced") == 0) return 1;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (head_weight_pair(t, item, w) != 0) return -1;
    return 0;
}

/* pos_weight text: "none" (0, *w = 1), "balanced" (1), or one number (0, *w). -1 after a message. */
static int head_parse_pos_weight(const char *text, float *w) {
    *w = 1.0f;
    if (strcmp(text, "none") == 0) return 0;
    if (strcmp(text, "balanced") == 0) return 1;
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v > 0) || v > HEAD_MAX_WEIGHT) {
        user_error_usage(HEAD_HINT, "pos_weight must be none, balanced or a number in (0, %g], got '%s'",
                         HEAD_MAX_WEIGHT, text);
        return -1;
    }
    *w = (float)v;
    return 0;
}

int head_settings_check(const cJSON *config, const Task *t) {
    SettingsReader s = settings_reader(config, "head", HEAD_HINT);
    int focal = settings_choice(&s, "loss", RUN_LOSSES, 2) == 1;
    int label_error = settings_choice(&s, "boost", RUN_BOOSTS, 2) == 1;
    settings_real(&s, "focal_gamma", 2, 0, RUN_MAX_FOCAL_GAMMA);
    const char *cw = settings_string(&s, "class_weights", "none"), *pw = settings_string(&s, "pos_weight", "none");
    if (s.failed) return -1;
    int regression = t->num_labels == 1 && !t->multi_label;
    const char *kind = t->multi_label ? "multi-label" : regression ? "regression" : "single-label";
    if (strcmp(cw, "none") != 0 && (t->multi_label || regression)) {
        user_error_usage(t->multi_label ? "a multi-label task weighs each label's positives: --set pos_weight=balanced"
                                        : "drop class_weights",
                         "class_weights applies to single-label classification; %s is %s", t->display, kind);
        return -1;
    }
    if (strcmp(pw, "none") != 0 && !t->multi_label) {
        user_error_usage(regression ? "drop pos_weight" : "a single-label task weighs classes: --set class_weights=balanced",
                         "pos_weight applies to multi-label tasks; %s is %s", t->display, kind);
        return -1;
    }
    if (label_error && (t->multi_label || regression)) {
        user_error_usage("drop boost=label_error", "boost=label_error weighs classes by their dev accuracy: it applies "
                         "to single-label classification; %s is %s", t->display, kind);
        return -1;
    }
    if (label_error && strcmp(cw, "none") != 0) {
        user_error_usage("give one of them", "boost=label_error sets the class weights itself: drop class_weights=%s", cw);
        return -1;
    }
    if (focal && regression) {
        user_error_usage("drop loss=focal", "loss=focal applies to classification; %s is regression", t->display);
        return -1;
    }
    float w[TASK_MAX_LABELS], p;
    return head_parse_class_weights(t, cw, w) < 0 || head_parse_pos_weight(pw, &p) < 0 ? -1 : 0;
}

/* scikit-learn's "balanced": n_samples / (K count_k) over the labelled rows. */
static void head_balanced_classes(const Dataset *train, int K, float *w) {
    long count[TASK_MAX_LABELS] = {0}, n = 0;
    for (int i = 0; i < train->n; i++) {
        int y = train->ex[i].label;
        if (y >= 0 && y < K) count[y]++, n++;
    }
    for (int k = 0; k < K; k++) w[k] = count[k] ? (float)((double)n / ((double)K * (double)count[k])) : 1.0f;
}

/* negatives / positives per label over the labelled rows (1 for a label never or always present). */
static void head_balanced_labels(const Dataset *train, int K, float *w) {
    long pos[TASK_MAX_LABELS] = {0}, n = 0;
    for (int i = 0; i < train->n; i++) {
        const Example *x = &train->ex[i];
        if (x->nlabels == 0) continue;
        n++;
        for (int j = 0; j < x->nlabels; j++)
            if (x->labels[j] >= 0 && x->labels[j] < K) pos[x->labels[j]]++;
    }
    for (int k = 0; k < K; k++) w[k] = pos[k] && pos[k] < n ? (float)((double)(n - pos[k]) / (double)pos[k]) : 1.0f;
}

void head_configure(Head *h, const cJSON *config, const Dataset *train) {
    if (head_settings_check(config, train->task) != 0) DIE("head_configure: settings not checked");
    h->focal = strcmp(run_config_string(config, "loss", "ce"), "focal") == 0;
    h->gamma = h->focal ? (float)run_config_number(config, "focal_gamma", 2) : 0.0f;
    float w[TASK_MAX_LABELS];
    h->label_error = h->kind == HEAD_SOFTMAX && strcmp(run_config_string(config, "boost", "none"), "label_error") == 0;
    if (h->label_error) {   /* all 1 until the first epoch's dev accuracies */
        for (int k = 0; k < h->K; k++) w[k] = 1.0f;
        head_set_class_weights(h, w);
    }
    if (h->kind == HEAD_SOFTMAX) {
        int how = head_parse_class_weights(train->task, run_config_string(config, "class_weights", "none"), w);
        if (how == 1) head_balanced_classes(train, h->K, w);
        if (strcmp(run_config_string(config, "class_weights", "none"), "none") != 0) {
            h->class_weight = xmalloc(sizeof(float) * (size_t)h->K);
            memcpy(h->class_weight, w, sizeof(float) * (size_t)h->K);
        }
    }
    if (h->kind == HEAD_SIGMOID) {
        const char *pw = run_config_string(config, "pos_weight", "none");
        float one;
        int how = head_parse_pos_weight(pw, &one);
        if (strcmp(pw, "none") != 0) {
            h->pos_weight = xmalloc(sizeof(float) * (size_t)h->K);
            if (how == 1) head_balanced_labels(train, h->K, h->pos_weight);
            else for (int k = 0; k < h->K; k++) h->pos_weight[k] = one;
        }
    }
}

cJSON *head_describe(const Head *h) {
    static const char *const KINDS[] = {"softmax", "regression", "sigmoid"};
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "kind", KINDS[h->kind]);
    const char *loss = h->kind == HEAD_REGRESSION ? "mse" : h->kind == HEAD_SIGMOID ? "bce" : "cross_entropy";
    cJSON_AddStringToObject(j, "loss", h->focal ? "focal" : loss);
    if (h->focal) cJSON_AddNumberToObject(j, "focal_gamma", h->gamma);
    if (h->label_error) cJSON_AddStringToObject(j, "boost", "label_error");
    if (h->example_weight) cJSON_AddBoolToObject(j, "example_weights", 1);
    const float *w = h->class_weight ? h->class_weight : h->pos_weight;
    if (w) {
        cJSON *a = cJSON_AddArrayToObject(j, h->class_weight ? "class_weights" : "pos_weight");
        for (int k = 0; k < h->K; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(w[k]));
    }
    return j;
}

void head_set_class_weights(Head *h, const float *w) {
    if (!h->class_weight) h->class_weight = xmalloc(sizeof(float) * (size_t)h->K);
    memcpy(h->class_weight, w, sizeof(float) * (size_t)h->K);
}

/* brightmart's label-error weight of a class with accuracy acc in [0, 1]. */
#define HEAD_LABEL_ERROR_CAP 1.5
#define HEAD_LABEL_ERROR_EPS 0.001

void head_label_error_update(Head *h, const Dataset *d, const float *probs) {
    long count[TASK_MAX_LABELS] = {0}, right[TASK_MAX_LABELS] = {0};
    for (int i = 0; i < d->n; i++) {
        int y = d->ex[i].label;
        if (y < 0 || y >= h->K) continue;
        const float *p = probs + (size_t)i * (size_t)h->K;
        int best = 0;
        for (int k = 1; k < h->K; k++)
            if (p[k] > p[best]) best = k;
        count[y]++;
        right[y] += best == y;
    }
    float w[TASK_MAX_LABELS];
    for (int k = 0; k < h->K; k++) {
        double acc = count[k] ? (double)right[k] / (double)count[k] : -1;
        w[k] = acc < 0 ? 1.0f : (float)fmin(HEAD_LABEL_ERROR_CAP, 1.0 / (acc + HEAD_LABEL_ERROR_EPS));
    }
    head_set_class_weights(h, w);
}

int head_example_weights(Head *h, const float *w) {
    if (h->kind != HEAD_SOFTMAX) {
        user_error_usage("boost a single-label classifier", "per-example weights apply to the softmax head: this "
                         "task is %s", h->kind == HEAD_SIGMOID ? "multi-label" : "regression");
        return -1;
    }
    h->example_weight = w;
    return 0;
}

/* ---- the loss ---- */

/* Room for n rows' targets. */
static void head_reserve(Head *h, int n) {
    if (n <= h->cap) return;
    h->labels = xrealloc(h->labels, sizeof(int) * (size_t)n);
    h->targets = xrealloc(h->targets, sizeof(float) * (size_t)n * (size_t)h->K);
    h->weights = xrealloc(h->weights, sizeof(float) * (size_t)n);
    h->mask = xrealloc(h->mask, (size_t)n);
    h->cap = n;
}

static float head_softmax_loss(Head *h, const Dataset *d, const int *rows, int n, const float *logits,
                               float *dlogits) {
    for (int i = 0; i < n; i++) {
        h->labels[i] = d->ex[rows[i]].label;
        h->weights[i] = h->class_weight && h->labels[i] >= 0 && h->labels[i] < h->K ? h->class_weight[h->labels[i]] : 1.0f;
        if (h->example_weight) h->weights[i] *= h->example_weight[rows[i]];
    }
    const float *w = h->class_weight || h->example_weight ? h->weights : NULL;
    float loss = h->focal ? softmax_focal_forward_backward(dlogits, logits, h->labels, w, n, h->K, HEAD_IGNORE_LABEL, h->gamma)
                          : softmax_xent_forward_backward(dlogits, logits, h->labels, w, n, h->K, HEAD_IGNORE_LABEL);
    if (!h->example_weight) return loss;
    /* Per-example weights: the sum of weighted losses over the batch's
     * labelled rows, not their weighted mean, so that a batch of rows the
     * last round got right (small weights) moves the model less: the
     * batches then estimate the whole split's weighted loss (weights of mean 1). */
    double wsum = 0;
    int counted = 0;
    for (int i = 0; i < n; i++)
        if (h->labels[i] != HEAD_IGNORE_LABEL) wsum += h->weights[i], counted++;
    float scale = counted ? (float)(wsum / counted) : 0.0f;
    if (dlogits)
        for (long j = 0; j < (long)n * h->K; j++) dlogits[j] *= scale;
    return loss * scale;
}

static float head_sigmoid_loss(Head *h, const Dataset *d, const int *rows, int n, const float *logits,
                               float *dlogits) {
    memset(h->targets, 0, sizeof(float) * (size_t)n * (size_t)h->K);
    for (int i = 0; i < n; i++) {
        const Example *x = &d->ex[rows[i]];
        h->mask[i] = x->nlabels > 0;   /* a set is never empty in a file; none: unlabelled */
        for (int j = 0; j < x->nlabels; j++)
            if (x->labels[j] >= 0 && x->labels[j] < h->K) h->targets[(size_t)i * (size_t)h->K + (size_t)x->labels[j]] = 1.0f;
    }
    return sigmoid_bce_forward_backward(dlogits, logits, h->targets, h->pos_weight, h->mask, n, h->K, h->gamma);
}

float head_loss(Head *h, const Dataset *d, const int *rows, int n, const float *logits, float *dlogits) {
    if (n <= 0) return 0.0f;
    head_reserve(h, n);
    if (dlogits) memset(dlogits, 0, sizeof(float) * (size_t)n * (size_t)h->K);   /* the ops add */
    switch (h->kind) {
    case HEAD_SOFTMAX:
        return head_softmax_loss(h, d, rows, n, logits, dlogits);
    case HEAD_SIGMOID:
        return head_sigmoid_loss(h, d, rows, n, logits, dlogits);
    case HEAD_REGRESSION:
        for (int i = 0; i < n; i++) h->targets[i] = d->ex[rows[i]].score / h->score_scale;
        return mse_forward_backward(dlogits, logits, h->targets, n);
    }
    DIE("head_loss: head kind %d", (int)h->kind);
}

void head_outputs(const Head *h, const float *logits, int n, float *out) {
    long count = (long)n * h->K;
    switch (h->kind) {
    case HEAD_SOFTMAX:
        softmax_forward(out, logits, n, h->K);
        return;
    case HEAD_SIGMOID:
        sigmoid_forward(out, logits, n, h->K);
        return;
    case HEAD_REGRESSION:
        for (long i = 0; i < count; i++) out[i] = logits[i] * h->score_scale;
        return;
    }
}
