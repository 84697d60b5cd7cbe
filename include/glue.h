/* glue.h — libglue, the C API of glue: load a classifier trained with
 * `glue finetune` and predict with it from your own program.
 *
 *   glue_model *m;
 *   char err[GLUE_ERROR_MAX];
 *   if (glue_open("runs/sst2/bert", 0, &m, err, sizeof err) != GLUE_OK) { puts(err); return 1; }
 *   const char *texts[] = {"a gripping film", "dull and far too long"};
 *   float p[2 * GLUE_MAX_LABELS];
 *   if (glue_predict(m, texts, NULL, 2, p, NULL, err, sizeof err) == GLUE_OK)
 *       printf("%s %.3f\n", glue_label(m, 1), p[1]);
 *   glue_close(m);
 *
 * Link: cc app.c $(pkg-config --cflags --libs glue)  (or -lglue).
 *
 * Stability: GLUE_API_VERSION is incremented when a function's meaning or
 * signature changes; functions are only ever added within one version, and
 * libglue.so.GLUE_API_VERSION is the library's SONAME. A program built
 * against this header can check glue_api_version() == GLUE_API_VERSION.
 *
 * Errors: every function that can fail returns a glue_status and writes one
 * line saying what went wrong and what to do into the caller's buffer (error,
 * error_cap bytes; may be NULL). The library never prints and never exits;
 * it aborts only on what no caller can handle (out of memory, an internal
 * check). There is no global "last error": each call has its own buffer.
 *
 * Threads: one glue_model may be used by any number of threads at once
 * (glue_predict calls on one model take turns; each runs on up to the
 * model's thread count of OpenMP threads). Handles share nothing: closing or
 * using one never affects another. The calling thread's floating-point
 * control word is restored after each call (flush-to-zero is set inside).
 * Idle OpenMP threads spin as the program's libgomp was told when it loaded:
 * its default spins for milliseconds, which on a busy machine cost 1.3-5x the
 * CPU time of predictions made with GOMP_SPINCOUNT=3000 in the environment
 * (what the glue command and the Python binding use); a program chooses by
 * setting GOMP_SPINCOUNT or OMP_WAIT_POLICY before it starts.
 */
#ifndef GLUE_H
#define GLUE_H

#ifdef __cplusplus
extern "C" {
#endif

#define GLUE_API_VERSION 1
#define GLUE_ERROR_MAX 1024    /* an error buffer of this size never truncates */
#define GLUE_MAX_THREADS 1024  /* glue_open's threads, as the command line's --threads */
#define GLUE_MAX_LABELS 100    /* the most labels a model can have */

#if defined(__GNUC__)
#define GLUE_EXPORT __attribute__((visibility("default")))
#else
#define GLUE_EXPORT
#endif

typedef enum glue_status {
    GLUE_OK = 0,
    GLUE_ERR_FAILED = 1,     /* the work failed for another reason */
    GLUE_ERR_ARGUMENT = 2,   /* a bad argument (NULL pointer, wrong count, a pair model given one text) */
    GLUE_ERR_DATA = 65,      /* an input's contents: invalid UTF-8, a damaged checkpoint or dataset file */
    GLUE_ERR_IO = 74,        /* a file missing or unreadable */
} glue_status;

typedef struct glue_model glue_model;   /* opaque */

/* GLUE_API_VERSION of the library actually loaded. */
GLUE_EXPORT int glue_api_version(void);

/* Opens a trained model: a run directory (glue finetune --out DIR, or
 * runs/<task>/<model>: model.ckpt with results.json or dataset.json beside
 * it, which say the task and its labels), or a model.ckpt file (whose
 * directory is read the same way). The model kind (any of glue finetune
 * --model) comes from the checkpoint. threads: OpenMP threads per
 * glue_predict (0: the cores this process may use; at most GLUE_MAX_THREADS;
 * more, or fewer than 0, is GLUE_ERR_ARGUMENT). *out gets the handle, or
 * NULL on error. */
GLUE_EXPORT glue_status glue_open(const char *path, int threads, glue_model **out, char *error, unsigned long error_cap);
/* Releases a handle (NULL: nothing). No call on it may be running. */
GLUE_EXPORT void glue_close(glue_model *m);

/* What the model predicts. Outputs per text: glue_num_labels(m) (1 for a
 * regression model, whose one output is a score, e.g. STS-B's 0..5). */
GLUE_EXPORT int glue_num_labels(const glue_model *m);
/* Label i's name (0 <= i < glue_num_labels), NULL when out of range; a
 * regression model's one output is named "score". Valid until glue_close. */
GLUE_EXPORT const char *glue_label(const glue_model *m, int i);
/* 1 when the model takes pairs of texts (MRPC, MNLI, ...): glue_predict needs texts_b. */
GLUE_EXPORT int glue_is_pair(const glue_model *m);
/* 1 for a regression model (one score per text). */
GLUE_EXPORT int glue_is_regression(const glue_model *m);
/* 1 when each text may have a set of labels (independent per-label
 * probabilities; see glue_predict's predicted). */
GLUE_EXPORT int glue_is_multi_label(const glue_model *m);
/* The model kind ("bert", "fasttext", ...) and the task or dataset name. */
GLUE_EXPORT const char *glue_model_kind(const glue_model *m);
GLUE_EXPORT const char *glue_task(const glue_model *m);

/* Predicts n texts (UTF-8; texts_b[i] the second text of pair i, NULL for a
 * single-text model). probs gets n * glue_num_labels(m) floats, row i for
 * text i: the class probabilities (summing to 1), each label's own
 * probability for a multi-label model, or the score. predicted (may be NULL)
 * gets n * glue_num_labels(m) flags, 1 for the labels predicted for text i:
 * the most probable one, or for a multi-label model every label the model
 * predicts (zeros for a regression model). n == 0 does nothing. A bad text
 * (invalid UTF-8, empty) fails the whole call, naming its index. */
GLUE_EXPORT glue_status glue_predict(glue_model *m, const char *const *texts, const char *const *texts_b, int n,
                                     float *probs, unsigned char *predicted, char *error, unsigned long error_cap);

#ifdef __cplusplus
}
#endif

#endif
