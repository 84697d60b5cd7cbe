/* glue_lib.c — libglue (include/glue.h): a trained run behind an opaque
 * handle. A thin layer over what `glue predict` uses: the model kind from
 * the checkpoint (core/checkpoint.h), the task from the run directory
 * (results.json, or a user's dataset.json: tasks/user_data.h), the model's
 * own load (models/model.h) and evaluate_predict_dataset (train/evaluate.h)
 * for batching. Messages of the code below are captured per call
 * (core/common.h error_capture) into the caller's buffer: nothing is printed. */
#include "include/glue.h"

#include "core/args.h"
#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/kernels.h"
#include "core/sgemm.h"
#include "core/threads.h"
#include "models/model.h"
#include "models/run_config.h"
#include "tasks/user_data.h"
#include "text/utf8.h"
#include "train/decision.h"
#include "train/evaluate.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <libgen.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xmmintrin.h>

extern void openblas_set_num_threads(int n);

struct glue_model {
    const ModelOps *ops;
    Model *model;
    const Task *task;
    int task_owned;        /* a user's dataset (user_data_load): freed with the handle */
    TaskSplit input;       /* the layout of a text given to predict (the dev split's) */
    int threads, batch, outputs;
    Decision rule;         /* a multi-label run's prediction rule (its tuned thresholds), as glue predict's */
    pthread_mutex_t lock;  /* predict calls on one handle take turns (a model's buffers are its own) */
};

int glue_api_version(void) { return GLUE_API_VERSION; }

/* Process-wide choices the model code reads without locks (the kernel level,
 * the GEMM backend), made once before any handle exists; OpenBLAS gets one
 * thread, as core/threads.h requires: products are split over OpenMP. */
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static void lib_init(void) {
    kernels_level();
    gemm_backend();
    openblas_set_num_threads(1);
}

/* The status of a failed call: the kind of its first error, else failed. */
static glue_status lib_fail(const ErrorCapture *c, char *error, unsigned long cap, const char *fallback) {
    if (error && cap) snprintf(error, cap, "%s", c->message[0] ? c->message : fallback);
    return c->kind ? (glue_status)c->kind : GLUE_ERR_FAILED;
}

/* The task of the run in dir: a user's dataset.json, else results.json's
 * "task", else the checkpoint's own "task" (the baselines record it). */
static const Task *lib_task(const char *dir, const cJSON *ckpt_config, int *owned) {
    char path[4200];
    *owned = 0;
    file_join(dir, USER_DATA_FILE, path, sizeof path);
    if (file_exists(path)) {
        *owned = 1;
        return user_data_load(path);
    }
    file_join(dir, RUN_RESULTS, path, sizeof path);
    cJSON *res = json_file_read(path, 0);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(res, "task");
    if (!cJSON_IsString(name)) name = cJSON_GetObjectItemCaseSensitive(ckpt_config, "task");
    const Task *t = cJSON_IsString(name) ? task_find(name->valuestring) : NULL;
    if (!t)
        user_error_data("open a run directory written by glue finetune (it has results.json or dataset.json)",
                        "%s: cannot tell which task the model was trained on", dir);
    cJSON_Delete(res);
    return t;
}

/* path (a run directory or its model.ckpt) into the run's directory and checkpoint. */
static int lib_paths(const char *path, char *dir, char *ckpt, size_t cap) {
    struct stat st;
    if (stat(path, &st) != 0) {
        user_error_io("name a run directory (glue finetune --out DIR) or its model.ckpt", "%s: no such file or directory",
                      path);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(dir, cap, "%s", path);
        file_join(path, MODEL_CKPT, ckpt, cap);
    } else {
        char *copy = xstrdup(path);
        snprintf(dir, cap, "%s", dirname(copy));
        free(copy);
        snprintf(ckpt, cap, "%s", path);
    }
    if (file_exists(ckpt)) return 0;
    user_error_io("train it first: glue finetune ... --out DIR", "%s: no trained model (%s does not exist)", path, ckpt);
    return -1;
}

/* The model kind the checkpoint names; NULL after a message. */
static const ModelOps *lib_model_kind(const char *ckpt, const cJSON *config) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(config, "model");
    const ModelOps *ops = cJSON_IsString(kind) ? model_find(kind->valuestring) : NULL;
    if (!config) user_error_data("pass a model.ckpt written by glue", "%s: not a readable glue checkpoint", ckpt);
    else if (!ops)
        user_error_data("read it with the glue that trained it", "%s: a model of kind '%s', which this library does not have",
                        ckpt, cJSON_IsString(kind) ? kind->valuestring : "(none)");
    return ops;
}

/* glue_open's work, with messages captured; NULL after one. */
static glue_model *lib_open(const char *path, int threads) {
    char dir[4096], ckpt[4200];
    if (lib_paths(path, dir, ckpt, sizeof dir) != 0) return NULL;
    cJSON *config = checkpoint_peek_config(ckpt);
    glue_model *m = xcalloc(1, sizeof *m);
    m->ops = lib_model_kind(ckpt, config);
    m->task = m->ops ? lib_task(dir, config, &m->task_owned) : NULL;
    cJSON_Delete(config);
    m->model = m->task ? m->ops->load(ckpt, m->task) : NULL;
    if (m->model && decision_of_run(&m->rule, m->task, dir) != 0) {
        m->ops->free(m->model);
        m->model = NULL;
    }
    if (!m->model) {
        if (m->task_owned) user_data_free(m->task);
        free(m);
        return NULL;
    }
    const TaskSplit *dev = task_dev_split(m->task);
    m->input = dev ? *dev : m->task->splits[0];
    m->input.name = "input";
    m->threads = threads > 0 ? threads : threads_default();
    m->outputs = evaluate_num_outputs(m->task);
    file_join(dir, RUN_CONFIG, ckpt, sizeof ckpt);   /* the eval batch the run was configured with */
    cJSON *run_config = json_file_read(ckpt, 0);
    m->batch = (int)run_config_number(run_config, "eval_batch", EVALUATE_BATCH_DEFAULT);
    if (m->batch <= 0) m->batch = EVALUATE_BATCH_DEFAULT;
    cJSON_Delete(run_config);
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

/* The public limit is the command line's (core/args.h), not a second one. */
_Static_assert(GLUE_MAX_THREADS == ARGS_MAX_THREADS, "glue_open's thread limit is --threads'");

glue_status glue_open(const char *path, int threads, glue_model **out, char *error, unsigned long error_cap) {
    ErrorCapture cap;
    if (out) *out = NULL;
    int bad_threads = threads < 0 || threads > GLUE_MAX_THREADS;   /* -1 was every core without a word */
    if (!path || !out || bad_threads) {
        if (error && error_cap && bad_threads)
            snprintf(error, error_cap, "glue_open: threads: 0 (every core) to %d, not %d", GLUE_MAX_THREADS, threads);
        else if (error && error_cap)
            snprintf(error, error_cap, "glue_open: path and out must not be NULL");
        return GLUE_ERR_ARGUMENT;
    }
    pthread_once(&lib_once, lib_init);
    error_capture_begin(&cap);
    *out = lib_open(path, threads);
    error_capture_end();
    return *out ? GLUE_OK : lib_fail(&cap, error, error_cap, "glue_open failed");
}

void glue_close(glue_model *m) {
    if (!m) return;
    m->ops->free(m->model);
    if (m->task_owned) user_data_free(m->task);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

int glue_num_labels(const glue_model *m) { return m ? m->outputs : 0; }
int glue_is_pair(const glue_model *m) { return m && m->input.col_b >= 0; }
int glue_is_regression(const glue_model *m) { return m && m->task->num_labels == 1; }
int glue_is_multi_label(const glue_model *m) { return m && m->task->multi_label; }
const char *glue_model_kind(const glue_model *m) { return m ? m->ops->name : NULL; }
const char *glue_task(const glue_model *m) { return m ? m->task->name : NULL; }

const char *glue_label(const glue_model *m, int i) {
    if (!m || i < 0 || i >= m->outputs) return NULL;
    return m->outputs == 1 ? "score" : task_label_name(m->task, i);
}

/* The texts into d (copies); -1 after a message naming the first bad one. */
static int lib_dataset(const glue_model *m, const char *const *a, const char *const *b, int n, Dataset *d) {
    int pair = glue_is_pair(m);
    for (int i = 0; i < n; i++) {
        const char *t[2] = {a[i], pair ? b[i] : NULL};
        for (int j = 0; j < 1 + pair; j++)
            if (!t[j] || !*t[j] || !utf8_valid(t[j], strlen(t[j]))) {
                user_error_data("give non-empty UTF-8 text", "text %s%d: %s", j ? "b " : "", i,
                                !t[j] ? "NULL" : !*t[j] ? "empty" : "invalid UTF-8");
                return -1;
            }
    }
    *d = (Dataset){.task = m->task, .split = &m->input, .n = n};
    d->ex = xcalloc((size_t)n, sizeof *d->ex);
    for (int i = 0; i < n; i++)
        d->ex[i] = (Example){.a = xstrdup(a[i]), .b = pair ? xstrdup(b[i]) : NULL, .label = -1, .index = i, .line = i + 1};
    return 0;
}

/* Predicts d under the handle's lock, on its thread count with flush-to-zero
 * (as `glue predict` runs), restoring the caller's settings. */
static float *lib_run(glue_model *m, const Dataset *d) {
    pthread_mutex_lock(&m->lock);
    unsigned csr = _mm_getcsr();
    int omp_before = omp_get_max_threads();
    threads_set_ftz();
    omp_set_num_threads(m->threads);
    float *out = evaluate_predict_dataset(m->ops, m->model, d, m->batch, NULL);
    omp_set_num_threads(omp_before);
    _mm_setcsr(csr);
    pthread_mutex_unlock(&m->lock);
    return out;
}

/* The predicted set of each row: the argmax, a multi-label model's labels
 * under its run's rule (threshold, top_k or the tuned thresholds: not a fixed
 * 0.5, which disagreed with glue predict), nothing for a score. */
static void lib_predicted(const glue_model *m, const float *p, int n, unsigned char *flags) {
    int k = m->outputs;
    memset(flags, 0, (size_t)n * (size_t)k);
    if (k == 1) return;
    if (m->task->multi_label) {
        decision_apply(&m->rule, p, n, flags);
        return;
    }
    for (int i = 0; i < n; i++) flags[(size_t)i * (size_t)k + (size_t)evaluate_argmax(p + (size_t)i * (size_t)k, k)] = 1;
}

glue_status glue_predict(glue_model *m, const char *const *texts, const char *const *texts_b, int n, float *probs,
                         unsigned char *predicted, char *error, unsigned long error_cap) {
    ErrorCapture cap;
    const char *bad = !m ? "model is NULL" : n < 0 ? "n < 0" : n > 0 && (!texts || !probs) ? "texts and probs must not be NULL"
                    : n > 0 && glue_is_pair(m) && !texts_b ? "a pair model needs texts_b" : NULL;
    if (bad) {
        if (error && error_cap) snprintf(error, error_cap, "glue_predict: %s", bad);
        return GLUE_ERR_ARGUMENT;
    }
    if (n == 0) return GLUE_OK;
    error_capture_begin(&cap);
    Dataset d;
    int made = lib_dataset(m, texts, texts_b, n, &d) == 0;
    float *out = made ? lib_run(m, &d) : NULL;
    if (out) {
        memcpy(probs, out, sizeof(float) * (size_t)n * (size_t)m->outputs);
        if (predicted) lib_predicted(m, out, n, predicted);
        free(out);
    }
    if (made) dataset_free(&d);
    error_capture_end();
    return out ? GLUE_OK : lib_fail(&cap, error, error_cap, "glue_predict failed");
}
