/* boost.c — stacked boosting with SAMME weights (see boost.h). */
#include "experiments/boost.h"

#include "core/common.h"
#include "core/crc32.h"
#include "core/exit_codes.h"
#include "core/files.h"
#include "experiments/ensemble_build.h"
#include "train/evaluate.h"
#include "train/trainer.h"
#include "train/run_dir.h"
#include "train/run_txn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int boost_samme_step(double *w, const int *pred, const int *gold, int n, int K, double *err, double *alpha) {
    double wrong = 0, total = 0;
    for (int i = 0; i < n; i++) {
        if (gold[i] < 0) continue;
        total += w[i];
        if (pred[i] != gold[i]) wrong += w[i];
    }
    *err = total > 0 ? wrong / total : 0;
    if (*err <= 0) {   /* scikit-learn: kept with weight 1, and boosting stops */
        *alpha = 1;
        return BOOST_PERFECT;
    }
    if (*err >= 1.0 - 1.0 / K) {
        *alpha = 0;
        return BOOST_CHANCE;
    }
    *alpha = log((1 - *err) / *err) + log(K - 1.0);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (gold[i] >= 0 && pred[i] != gold[i] && w[i] > 0) w[i] *= exp(*alpha);
        sum += w[i];
    }
    for (int i = 0; i < n; i++) w[i] /= sum;
    return BOOST_GO_ON;
}

/* What can be refused before anything is trained: 0, or EXIT_USAGE after a message. */
static int boost_check(const BoostOptions *o) {
    const Task *t = o->base.task;
    const ModelOps *ops = o->base.ops;
    if (t->multi_label || t->num_labels < 2) {
        user_error_usage("boost a single-label classification task", "SAMME boosts one label per row; %s is %s",
                         t->display, t->multi_label ? "multi-label" : "regression");
        return EXIT_USAGE;
    }
    if (!ops->forward) {
        user_error_usage("boost a model whose loss is the harness's head (textcnn, bilstm, ...)",
                         "%s takes its own step: its rows cannot be weighted", ops->name);
        return EXIT_USAGE;
    }
    if (o->rounds < 1 || o->rounds > ENSEMBLE_MAX_MEMBERS) {
        user_error_usage(NULL, "--rounds must be 1 to %d, got %d", ENSEMBLE_MAX_MEMBERS, o->rounds);
        return EXIT_USAGE;
    }
    return run_dir_check(NULL, o->base.out_dir, o->base.out_dir, 0, o->base.overwrite, 1);
}

/* Round k's predicted class of every training row into pred. 0, or 1 after a message. */
static int boost_predict(const BoostOptions *o, const char *dir, const Dataset *train, int *pred) {
    char path[4400];
    file_join(dir, RUN_CKPT, path, sizeof path);
    Model *m = o->base.ops->load(path, o->base.task);
    if (!m) return 1;
    float *p = evaluate_predict_dataset(o->base.ops, m, train, EVALUATE_BATCH_DEFAULT, NULL);
    o->base.ops->free(m);
    if (!p) return 1;
    int K = evaluate_num_outputs(o->base.task);
    for (int i = 0; i < train->n; i++) pred[i] = evaluate_argmax(p + (size_t)i * (size_t)K, K);
    free(p);
    return 0;
}

/* Beside each round's run: the CRC of the example weights it was trained with
 * (they follow from the earlier rounds, not from its settings), written
 * before the round trains, so that an interrupted round can be continued. */
#define BOOST_WEIGHTS_FILE "boost_weights.crc"
static const RunKind BOOST_ROUND_KIND = {.results = RUN_RESULTS, .finished = "glue eval scores it",
                                         .early = BOOST_WEIGHTS_FILE};

/* 1 when dir's recorded example weights are crc's. */
static int boost_weights_are(const char *dir, const char *crc) {
    char path[4400];
    file_join(dir, BOOST_WEIGHTS_FILE, path, sizeof path);
    char *kept = file_exists(path) ? file_read(path, NULL) : NULL;
    int same = kept && strcmp(kept, crc) == 0;
    free(kept);
    return same;
}

/* What a round's directory holds for these settings, seed and weights: a
 * finished round (reused: a boost run again after an interruption, or with
 * its OUT removed, does not train it again), an interrupted one (continued
 * from its resume point), or neither (trained afresh, over whatever is
 * there: the round of other weights or settings is boost's own to replace).
 * --overwrite trains every round afresh. */
enum { BOOST_ROUND_NEW, BOOST_ROUND_DONE, BOOST_ROUND_INTERRUPTED };
static int boost_round_state(const BoostOptions *o, const char *dir, uint64_t seed, const char *crc) {
    if (o->base.overwrite || !boost_weights_are(dir, crc)) return BOOST_ROUND_NEW;
    cJSON *res = trainer_finished_run(dir, o->base.config, (long)seed, 0);
    cJSON_Delete(res);
    if (res) return BOOST_ROUND_DONE;
    return trainer_can_resume(dir, o->base.config, seed, 0) ? BOOST_ROUND_INTERRUPTED : BOOST_ROUND_NEW;
}

/* A fresh round's directory: emptied (with an --overwrite stage of an
 * earlier boost), made, its weights' CRC written. 0, or 1 after a message. */
static int boost_round_fresh(const char *dir, const char *crc) {
    char path[4400];
    snprintf(path, sizeof path, "%s" RUN_STAGE_SUFFIX, dir);
    if ((file_exists(dir) && file_remove_tree(dir) != 0) || (file_exists(path) && file_remove_tree(path) != 0) ||
        file_make_dir(dir) != 0)
        return 1;
    file_join(dir, BOOST_WEIGHTS_FILE, path, sizeof path);
    return atomic_write(path, crc, strlen(crc)) != 0;
}

/* One round: trained with the weights w (or reused, or continued:
 * boost_round_state), its SAMME step. The step's status into *status; 0, or
 * the exit code. */
static int boost_round(const BoostOptions *o, int k, const Dataset *train, double *w, char *dir, size_t cap,
                       cJSON *rounds, int *status, double *alpha_out) {
    int n = train->n;
    float *wf = xmalloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) wf[i] = (float)(w[i] * n);   /* mean 1: the head sums the weighted losses */
    snprintf(dir, cap, "%s-round%d", o->base.out_dir, k);
    TrainerOptions to = o->base;
    to.out_dir = dir;
    to.seed = o->base.seed + (uint64_t)(k - 1);
    to.example_weights = wf;
    to.num_example_weights = n;
    to.overwrite = 0;   /* a fresh round's directory is emptied first (boost's own) */
    to.run_kind = &BOOST_ROUND_KIND;
    to.resume = 0;
    char crc[16];
    snprintf(crc, sizeof crc, "%08x", (unsigned)crc32_update(0, wf, sizeof(float) * (size_t)n));
    int rc = 0, state = boost_round_state(o, dir, to.seed, crc);
    static const char *const WHAT[] = {":", ": reusing", ": continuing"};
    if (o->base.show_progress) fprintf(stderr, "== boost round %d/%d%s %s\n", k, o->rounds, WHAT[state], dir);
    if (state != BOOST_ROUND_DONE) {
        to.resume = state == BOOST_ROUND_INTERRUPTED;
        rc = state == BOOST_ROUND_NEW && boost_round_fresh(dir, crc) ? 1 : trainer_run(&to, NULL);
    }
    free(wf);
    int *pred = xmalloc(sizeof(int) * (size_t)(n ? n : 1)), *gold = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    if (rc == 0) rc = boost_predict(o, dir, train, pred);
    if (rc == 0) {
        for (int i = 0; i < n; i++) gold[i] = train->ex[i].label;
        double err, alpha;
        *status = boost_samme_step(w, pred, gold, n, o->base.task->num_labels, &err, &alpha);
        *alpha_out = alpha;
        cJSON *r = cJSON_CreateObject();
        char where[4400];
        file_portable_path(dir, where, sizeof where);
        cJSON_AddNumberToObject(r, "round", k);
        cJSON_AddStringToObject(r, "run", where);
        cJSON_AddNumberToObject(r, "seed", (double)to.seed);
        cJSON_AddNumberToObject(r, "error", err);
        cJSON_AddNumberToObject(r, "alpha", alpha);
        if (*status == BOOST_CHANCE) cJSON_AddBoolToObject(r, "dropped", 1);
        cJSON_AddItemToArray(rounds, r);
        if (o->base.show_progress)
            fprintf(stderr, "round %d: weighted training error %.4f, alpha %.4f%s\n", k, err, alpha,
                    *status == BOOST_CHANCE ? " (no better than chance: dropped)" : "");
    }
    free(pred);
    free(gold);
    return rc;
}

int boost_run(const BoostOptions *o, cJSON **results) {
    if (results) *results = NULL;
    int rc = boost_check(o);
    if (rc) return rc;
    const Task *t = o->base.task;
    Dataset train;
    if (task_load(t, "train", o->base.data_root, o->base.strict, &train) != 0) return 1;
    double *w = xmalloc(sizeof(double) * (size_t)(train.n ? train.n : 1));
    for (int i = 0; i < train.n; i++) w[i] = 1.0 / train.n;
    static char dirs[ENSEMBLE_MAX_MEMBERS][4200];
    double alpha[ENSEMBLE_MAX_MEMBERS];
    cJSON *rounds = cJSON_CreateArray();
    EnsembleOptions e = {.task = t, .kind = BOOST_MODEL, .combine = "vote", .weights = alpha,
                         .out_dir = o->base.out_dir, .command = o->base.command, .overwrite = o->base.overwrite,
                         .record = rounds, .record_key = "rounds"};
    for (int k = 1; rc == 0 && k <= o->rounds; k++) {
        int status = BOOST_GO_ON;
        rc = boost_round(o, k, &train, w, dirs[e.num_runs], sizeof dirs[0], rounds, &status, &alpha[e.num_runs]);
        if (rc || status == BOOST_CHANCE) {
            if (rc == 0 && e.num_runs == 0) {
                user_error_usage("train the model longer, or with other settings",
                                 "boost: round 1 is no better than chance on %s's training split", t->display);
                rc = EXIT_USAGE;
            }
            break;
        }
        e.runs[e.num_runs] = dirs[e.num_runs];
        e.num_runs++;
        if (status == BOOST_PERFECT) break;
    }
    if (rc == 0) rc = ensemble_build(&e, results);
    cJSON_Delete(rounds);
    free(w);
    dataset_free(&train);
    return rc;
}
