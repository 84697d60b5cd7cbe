/* zoo_checks.c — save/load, exact resume and batch independence of a word
 * model through ModelOps, and its gradients against PyTorch (see zoo_checks.h). */
#include "tests/zoo_checks.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "train/evaluate.h"

static char *zoo_temp(const char *tag) {
    char *p = xmalloc(SCRATCH_PATH_MAX), full_tag[64];
    snprintf(full_tag, sizeof full_tag, "zoo_%s", tag);
    int fd = scratch_file(full_tag, p, SCRATCH_PATH_MAX);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    return p;
}

void zoo_check_save_load(const ModelOps *ops, const SynthTask *st, const cJSON *cfg) {
    Dataset tr = synth_dataset(st, 200, 31);
    Model *m = ops->create(cfg, st->task, &tr, 4);
    char *path = zoo_temp("ckpt");
    int K = st->task->num_labels;
    if (CHECK(m != NULL)) {
        Encoded *e = ops->encode(m, &tr);
        synth_train_epochs(ops, m, &tr, e, cfg, 3, 0, 1);
        ops->encoded_free(e);
        CHECK(ops->save(m, path) == 0);
        Model *l = ops->load(path, st->task);
        if (CHECK(l != NULL)) {
            float *a = synth_predict(ops, m, &tr, 0), *b = synth_predict(ops, l, &tr, 0);
            CHECK_MSG(memcmp(a, b, (size_t)tr.n * K * sizeof *a) == 0, "%s: loaded model predicts otherwise", ops->name);
            CHECK_EQ_INT(ops->num_params(l), ops->num_params(m));
            free(a);
            free(b);
            ops->free(l);
        }
        const Task *other = st->task == &SYNTH_TASKR ? &SYNTH_TASK2 : &SYNTH_TASKR;
        StderrCapture cap;
        stderr_capture_begin(&cap);
        Model *x = ops->load(path, other);
        char *err = stderr_capture_end(&cap);
        CHECK(x == NULL);
        CHECK_MSG(strstr(err, "trained for task") != NULL, "message: %s", err);
        free(err);
        ops->free(m);
    }
    unlink(path);
    free(path);
    synth_free(&tr);
}

void zoo_check_resume_exact(const ModelOps *ops, const SynthTask *st, const cJSON *cfg) {
    Dataset tr = synth_dataset(st, 200, 41), dv = synth_dataset(st, 60, 42);
    Model *a = ops->create(cfg, st->task, &tr, 8), *b = ops->create(cfg, st->task, &tr, 8);
    char *ckpt = zoo_temp("resume"), *state = zoo_temp("state");
    int K = st->task->num_labels;
    if (CHECK(a && b)) {
        Encoded *ea = ops->encode(a, &tr), *eb = ops->encode(b, &tr);
        synth_train_epochs(ops, a, &tr, ea, cfg, 5, 0, 2);
        synth_train_epochs(ops, b, &tr, eb, cfg, 5, 0, 1);
        CHECK(ops->save(b, ckpt) == 0 && ops->save_state(b, state) == 0);
        ops->free(b);
        b = ops->load(ckpt, st->task);
        if (CHECK(b != NULL) && CHECK(ops->load_state(b, state) == 0)) {
            synth_train_epochs(ops, b, &tr, eb, cfg, 5, 1, 2);
            float *pa = synth_predict(ops, a, &dv, 0), *pb = synth_predict(ops, b, &dv, 0);
            CHECK_MSG(memcmp(pa, pb, (size_t)dv.n * K * sizeof *pa) == 0, "%s: resumed run differs", ops->name);
            const Params *p = ((WordModelBase *)a)->params, *q = ((WordModelBase *)b)->params;
            CHECK_MSG(memcmp(p->data, q->data, p->total * sizeof *p->data) == 0, "%s: weights differ", ops->name);
            free(pa);
            free(pb);
        }
        ops->encoded_free(ea);
        ops->encoded_free(eb);
    }
    if (a) ops->free(a);
    if (b) ops->free(b);
    unlink(ckpt);
    unlink(state);
    free(ckpt);
    free(state);
    synth_free(&tr);
    synth_free(&dv);
}

/* A row's length in words: the longer of its two texts. */
static int zoo_row_words(const Example *x) {
    int words[2] = {0, 0};
    const char *t[2] = {x->a, x->b};
    for (int k = 0; k < 2; k++)
        for (const char *c = t[k]; c && *c; c++)
            if (*c != ' ' && (c == t[k] || c[-1] == ' ')) words[k]++;
    return words[0] > words[1] ? words[0] : words[1];
}

/* On a fresh model: a batch of the two longest rows, then one of more rows,
 * the shortest, in no more cells (rows x steps), as an evaluation batch after
 * the training batches. The buffers sized by rows must grow though those sized
 * by cells need not (DMN's per-sequence lengths and GRU scratch once did not:
 * a heap overflow after the first epoch on GoEmotions). Their logits go to
 * out (n rows, into rows). */
static int zoo_short_after_long(const ModelOps *ops, Model *m, const Encoded *e, const Dataset *d, int K,
                                int *rows, float *out) {
    int by_len[64], words[64], n = d->n < 64 ? d->n : 64;
    for (int i = 0; i < n; i++) by_len[i] = i, words[i] = zoo_row_words(&d->ex[i]);
    for (int i = 1; i < n; i++)   /* insertion sort, shortest first */
        for (int j = i; j > 0 && words[by_len[j]] < words[by_len[j - 1]]; j--) {
            int t = by_len[j]; by_len[j] = by_len[j - 1]; by_len[j - 1] = t;
        }
    int longest[2] = {by_len[n - 1], by_len[n - 2]}, cells = 2 * words[longest[0]], k = 0;
    float two[2 * 8];
    evaluate_rows(ops, m, e, longest, 2, K, two);
    while (k < n - 2 && k < 16 && (k + 1) * words[by_len[k]] <= cells) rows[k] = by_len[k], k++;
    CHECK_MSG(k > 2, "%s: the fixture's rows are too alike in length to test a batch of more, shorter rows", ops->name);
    evaluate_rows(ops, m, e, rows, k, K, out);
    return k;
}

void zoo_check_batch_independent(const ModelOps *ops, const SynthTask *st, const cJSON *cfg, double tol) {
    Dataset d = synth_dataset(st, 40, 21);
    int K = st->task->num_labels;
    Model *m = ops->create(cfg, st->task, &d, 2);
    if (CHECK(m != NULL)) {
        Encoded *e = ops->encode(m, &d);
        int short_rows[16];
        float short_out[16 * 8];
        int n_short = zoo_short_after_long(ops, m, e, &d, K, short_rows, short_out);
        float *all = synth_predict(ops, m, &d, 0);
        for (int j = 0; j < n_short; j++)
            for (int k = 0; k < K; k++) {
                double diff = fabs((double)short_out[j * K + k] - all[(long)short_rows[j] * K + k]);
                CHECK_MSG(diff <= tol, "%s: row %d in a batch of %d short rows differs by %g", ops->name,
                          short_rows[j], n_short, diff);
            }
        float one[8];
        for (int i = 0; i < d.n; i++) {
            evaluate_rows(ops, m, e, &i, 1, K, one);
            double worst = 0;
            for (int k = 0; k < K; k++) worst = fmax(worst, fabs((double)one[k] - all[(long)i * K + k]));
            if (!CHECK_MSG(worst <= tol, "%s: row %d alone differs from in its batch by %g", ops->name, i, worst)) break;
        }
        ops->encoded_free(e);
        free(all);
        ops->free(m);
    }
    synth_free(&d);
}

void zoo_check_divergence_refused(const ModelOps *ops, const SynthTask *st, const cJSON *cfg) {
    Dataset d = synth_dataset(st, 8, 51);
    int K = st->task->num_labels, rows[4] = {0, 1, 2, 3};
    Model *m = ops->create(cfg, st->task, &d, 3);
    if (CHECK(m != NULL)) {
        Encoded *e = ops->encode(m, &d);
        const Params *p = ((WordModelBase *)m)->params;
        float *before = xmalloc(p->total * sizeof *before), logits[4 * 8], dlogits[4 * 8];
        memcpy(before, p->data, p->total * sizeof *before);
        TrainState ts = {.total_steps = 1, .lr = 1e-3f, .share = 1};
        ops->forward(m, e, rows, 4, &ts, logits);
        for (int i = 0; i < 4 * K; i++) dlogits[i] = i == 1 ? NAN : 0.1f;
        ops->backward(m, dlogits);
        CHECK_MSG(ops->update(m, &ts) == -1, "%s: a NaN gradient was not reported", ops->name);
        CHECK_MSG(memcmp(before, p->data, p->total * sizeof *before) == 0, "%s: weights changed on a NaN gradient",
                  ops->name);
        free(before);
        ops->encoded_free(e);
        ops->free(m);
    }
    synth_free(&d);
}

void zoo_check_torch_grads(const char *script, const char *args, const Params *p, const RefTensor *extra, int n_extra,
                           const float *logits, long n_logits, double tol, long pad_row, const char *label) {
    int np = params_num_tensors(p), ni = 0, no = 0;
    RefTensor *in = xcalloc((size_t)np + (size_t)n_extra, sizeof *in), *out = xcalloc((size_t)np + 1, sizeof *out);
    char (*gname)[PARAM_NAME_MAX + 8] = xcalloc((size_t)np, sizeof *gname);
    float **grads = xcalloc((size_t)np, sizeof *grads), *ref_logits = xmalloc((size_t)n_logits * sizeof *ref_logits);
    for (int h = 0; h < np; h++) {
        const ParamTensor *t = params_tensor(p, h);
        in[ni++] = (RefTensor){t->name, params_data(p, h), t->numel};
        snprintf(gname[h], sizeof gname[h], "grad.%s", t->name);
        grads[h] = xmalloc((size_t)t->numel * sizeof **grads);
        out[no++] = (RefTensor){gname[h], grads[h], t->numel};
    }
    for (int k = 0; k < n_extra; k++) in[ni++] = extra[k];
    out[no++] = (RefTensor){"logits", ref_logits, n_logits};
    if (torchref_run(script, args, in, ni, out, no) == 1) {
        double e = torchref_max_diff(logits, ref_logits, n_logits);
        CHECK_MSG(e <= tol, "%s logits: max diff %g", label, e);
        for (int h = 0; h < np; h++) {
            const ParamTensor *t = params_tensor(p, h);
            long skip = strcmp(t->name, "emb") == 0 ? pad_row : 0;
            e = torchref_max_diff(params_grad(p, h) + skip, grads[h] + skip, t->numel - skip);
            CHECK_MSG(e <= tol, "%s gradient of %s: max diff %g", label, t->name, e);
        }
    }
    for (int h = 0; h < np; h++) free(grads[h]);
    free(grads); free(gname); free(in); free(out); free(ref_logits);
}
