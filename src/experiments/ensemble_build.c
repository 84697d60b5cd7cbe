/* ensemble_build.c — a run directory made of finished runs (see ensemble_build.h). */
#include "experiments/ensemble_build.h"

#include "core/common.h"
#include "core/crc32.h"
#include "core/exit_codes.h"
#include "core/files.h"
#include "core/threads.h"
#include "models/run_config.h"
#include "tasks/user_data.h"
#include "train/decision.h"
#include "train/evaluate.h"
#include "train/run_dir.h"
#include "train/run_txn.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENSEMBLE_FIT_MAX_MOVES 1000
#define ENSEMBLE_FIT_ALL_POINTS 1001   /* 5 members on the grid of tenths */

static int ensemble_combine_index(const char *name) {
    for (int c = 0; c < 3; c++)
        if (name && strcmp(name, ENSEMBLE_COMBINES[c]) == 0) return c;
    return -1;
}

/* The absolute path of an existing dir into out (else dir as given). */
static void ensemble_real_path(const char *dir, char *out, size_t cap) {
    char buf[PATH_MAX];
    snprintf(out, cap, "%s", realpath(dir, buf) ? buf : dir);
}

/* Member i: a finished run of o->task with its labels in order. 0, or the exit code after a message. */
static int ensemble_check_member(const EnsembleOptions *o, int i) {
    const char *dir = o->runs[i];
    char path[4400], ckpt[4400];
    file_join(dir, RUN_RESULTS, path, sizeof path);
    file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
    cJSON *res = file_exists(path) && file_exists(ckpt) ? json_file_read(path, 0) : NULL;
    const char *task = run_config_string(res, "task", NULL), *model = run_config_string(res, "model", NULL);
    int rc = 0;
    if (!file_exists(dir)) {   /* missing, as eval and predict say it (74) */
        user_error_io("give the directories of finished runs (results.json and model.ckpt)", "%s: no such run", dir);
        rc = EXIT_IO;
    } else if (!res || !cJSON_GetObjectItemCaseSensitive(res, "best") || !task || !model) {
        user_error_usage("give the directories of finished runs (results.json and model.ckpt)",
                         "%s is not a finished run", dir);
        rc = EXIT_USAGE;
    } else if (strcmp(task, o->task->name) != 0) {
        user_error_usage("an ensemble's members are runs of one task",
                         "%s is a run of %s, not of %s (the task given, or the first member's)", dir, task,
                         o->task->name);
        rc = EXIT_USAGE;
    } else if (run_dir_check_labels(dir, o->task) != 0) {
        rc = EXIT_DATA;
    }
    cJSON_Delete(res);
    return rc;
}

int ensemble_check(const EnsembleOptions *o) {
    const Task *t = o->task;
    int how = ensemble_combine_index(o->combine);
    if (o->num_runs < 1 || o->num_runs > ENSEMBLE_MAX_MEMBERS) {
        user_error_usage("--runs DIR,DIR,...", "an ensemble takes 1 to %d runs, got %d", ENSEMBLE_MAX_MEMBERS,
                         o->num_runs);
        return EXIT_USAGE;
    }
    if (how < 0 || (how == ENSEMBLE_VOTE && (t->multi_label || t->num_labels == 1))) {
        user_error_usage("--set combine=probs or combine=logits", "combine=%s: %s", o->combine ? o->combine : "",
                         how < 0 ? "not probs, logits or vote" : "vote counts one label per row of a single-label task");
        return EXIT_USAGE;
    }
    for (int i = 0; o->weights && i < o->num_runs; i++)
        if (!(o->weights[i] >= 0) || !isfinite(o->weights[i])) {
            user_error_usage("--weights w1,w2,... (numbers >= 0, one per run), or --weights dev",
                             "weight %d is %g", i + 1, o->weights[i]);
            return EXIT_USAGE;
        }
    char out[PATH_MAX + 8], member[PATH_MAX + 8];
    ensemble_real_path(o->out_dir, out, sizeof out);
    for (int i = 0; i < o->num_runs; i++) {
        int rc = ensemble_check_member(o, i);
        if (rc) return rc;
        ensemble_real_path(o->runs[i], member, sizeof member);
        if (strcmp(member, out) == 0) {
            user_error_usage("give another --out", "the output %s is member %d of the ensemble", o->out_dir, i + 1);
            return EXIT_USAGE;
        }
        /* A run twice is one member weighted twice, without a word: --weights says that. */
        for (int j = 0; j < i; j++) {
            char earlier[PATH_MAX + 8];
            ensemble_real_path(o->runs[j], earlier, sizeof earlier);
            if (strcmp(member, earlier) == 0) {
                user_error_usage("each run once (--weights gives a member more weight)",
                                 "%s is member %d and member %d of the ensemble", o->runs[i], j + 1, i + 1);
                return EXIT_USAGE;
            }
        }
    }
    return run_dir_check(NULL, o->out_dir, o->out_dir, 0, o->overwrite, 1);
}

/* {"model", "combine", "members": [{run, model, weight, results_crc}], + the multi-label rule}. */
static cJSON *ensemble_config(const EnsembleOptions *o, const cJSON *rule) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "model", o->kind);
    cJSON_AddStringToObject(c, "combine", o->combine);
    cJSON *members = cJSON_AddArrayToObject(c, "members");
    for (int i = 0; i < o->num_runs; i++) {
        char dir[PATH_MAX + 8], path[PATH_MAX + 64], crc[16] = "";
        ensemble_real_path(o->runs[i], dir, sizeof dir);
        file_join(dir, RUN_RESULTS, path, sizeof path);
        cJSON *res = json_file_read(path, 0);
        uint32_t v;
        if (crc32_file(path, 0, -1, &v) == 0) snprintf(crc, sizeof crc, "%08x", (unsigned)v);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "run", dir);
        cJSON_AddStringToObject(m, "model", run_config_string(res, "model", ""));
        cJSON_AddNumberToObject(m, "weight", o->weights ? o->weights[i] : 1.0);
        cJSON_AddStringToObject(m, "results_crc", crc);
        cJSON_AddItemToArray(members, m);
        cJSON_Delete(res);
    }
    static const char *const RULE_KEYS[] = {"threshold", "top_k"};
    for (int k = 0; k < 2 && o->task->multi_label; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(rule, RULE_KEYS[k]);
        if (v) cJSON_AddItemToObject(c, RULE_KEYS[k], cJSON_Duplicate(v, 1));
    }
    return c;
}

/* What a build holds: the combination, the labelled dev splits and each
 * member's outputs on them (in the combine's space), the rule. */
typedef struct Build {
    const EnsembleOptions *o;
    const Task *t;
    Model *E;
    int M, K, nd;
    const TaskSplit *split[TASK_MAX_SPLITS];
    Dataset dev[TASK_MAX_SPLITS];
    float *outs[TASK_MAX_SPLITS][ENSEMBLE_MAX_MEMBERS];
    Decision rule;
    double seconds;
    long examples;
} Build;

/* Every member's outputs on dev split s, in the batches `glue eval` predicts
 * the ensemble in (rows in order, EVALUATE_BATCH_DEFAULT), so that the run's
 * numbers are the ones eval reproduces. 0, or 1 after a message. */
static int build_outputs(Build *B, int s) {
    const Dataset *d = &B->dev[s];
    double t0 = now_seconds();
    Encoded *e = ENSEMBLE_OPS.encode(B->E, d);
    if (!e) return 1;
    int *rows = xmalloc(sizeof(int) * (size_t)(d->n ? d->n : 1));
    for (int r = 0; r < d->n; r++) rows[r] = r;
    for (int i = 0; i < B->M; i++) {
        B->outs[s][i] = xmalloc(sizeof(float) * (size_t)(d->n ? d->n : 1) * (size_t)B->K);
        for (int lo = 0; lo < d->n; lo += EVALUATE_BATCH_DEFAULT) {
            int b = d->n - lo < EVALUATE_BATCH_DEFAULT ? d->n - lo : EVALUATE_BATCH_DEFAULT;
            ensemble_member_outputs(B->E, i, e, rows + lo, b, B->outs[s][i] + (size_t)lo * (size_t)B->K);
        }
    }
    ENSEMBLE_OPS.encoded_free(e);
    free(rows);
    B->seconds += now_seconds() - t0;
    B->examples += d->n;
    return 0;
}

/* The metrics of split s under weights w (M; members from `first`, M of
 * them), the combination into probs (n, K); tune: a tuned multi-label rule
 * is chosen on it first. Caller frees. */
static cJSON *build_metrics(Build *B, int s, int first, int M, const double *w, Decision *rule, int tune,
                            float *probs) {
    const Dataset *d = &B->dev[s];
    ensemble_combine(ensemble_combine_of(B->E), B->t->multi_label, (const float *const *)&B->outs[s][first], w, M,
                     d->n, B->K, probs);
    if (tune && B->t->multi_label && rule->rule == DECISION_TUNED) {
        uint8_t *gold = decision_gold(d, B->t->num_labels);
        decision_tune(rule, probs, gold, d->n);
        free(gold);
    }
    return evaluate_metrics_rule(B->t, d, probs, rule);
}

/* The selection score on dev of weights units / ENSEMBLE_FIT_STEPS. */
static double build_fit_score(Build *B, const int *units, float *probs) {
    double w[ENSEMBLE_MAX_MEMBERS];
    for (int i = 0; i < B->M; i++) w[i] = units[i];
    Decision rule = B->rule;
    cJSON *m = build_metrics(B, 0, 0, B->M, w, &rule, 1, probs);
    double score = evaluate_score(B->t, m);
    cJSON_Delete(m);
    return isfinite(score) ? score : -INFINITY;
}

/* Squared distance of units from equal weights (a tie goes to the nearer). */
static double build_spread(const int *units, int M, int steps) {
    double d = 0;
    for (int i = 0; i < M; i++) d += ((double)units[i] - (double)steps / M) * ((double)units[i] - (double)steps / M);
    return d;
}

typedef struct FitState {
    int units[ENSEMBLE_MAX_MEMBERS], best[ENSEMBLE_MAX_MEMBERS];
    int steps;
    double best_score, best_spread;
    float *probs;
} FitState;

/* Every point of the simplex grid with units[0..i) fixed and left steps to place. */
static void build_fit_all(Build *B, FitState *f, int i, int left) {
    if (i == B->M - 1) {
        f->units[i] = left;
        double sc = build_fit_score(B, f->units, f->probs), sp = build_spread(f->units, B->M, f->steps);
        if (sc > f->best_score || (sc == f->best_score && sp < f->best_spread)) {
            f->best_score = sc, f->best_spread = sp;
            memcpy(f->best, f->units, sizeof(int) * (size_t)B->M);
        }
        return;
    }
    for (int u = 0; u <= left; u++) {
        f->units[i] = u;
        build_fit_all(B, f, i + 1, left - u);
    }
}

/* Coordinate search from equal weights: the best move of one step of weight
 * from one member to another while it raises the score. */
static void build_fit_moves(Build *B, FitState *f) {
    for (int i = 0; i < B->M; i++) f->best[i] = f->steps / B->M + (i < f->steps % B->M);
    f->best_score = build_fit_score(B, f->best, f->probs);
    for (int move = 0; move < ENSEMBLE_FIT_MAX_MOVES; move++) {
        int bi = -1, bj = -1;
        double top = f->best_score;
        for (int i = 0; i < B->M; i++)
            for (int j = 0; j < B->M; j++) {
                if (i == j || f->best[j] == 0) continue;
                f->best[i]++, f->best[j]--;
                double sc = build_fit_score(B, f->best, f->probs);
                f->best[i]--, f->best[j]++;
                if (sc > top) top = sc, bi = i, bj = j;
            }
        if (bi < 0) break;
        f->best[bi]++, f->best[bj]--;
        f->best_score = top;
    }
}

/* --weights dev on the simplex grid of step 1/steps: every point when there
 * are few (ties: the nearest to equal weights), else the coordinate search. */
static void build_fit(Build *B, double *w) {
    FitState f = {.steps = B->M > ENSEMBLE_FIT_STEPS ? B->M : ENSEMBLE_FIT_STEPS, .best_score = -INFINITY,
                  .best_spread = INFINITY};
    f.probs = xmalloc(sizeof(float) * (size_t)(B->dev[0].n ? B->dev[0].n : 1) * (size_t)B->K);
    double points = 1;   /* C(steps + M - 1, M - 1) */
    for (int i = 1; i < B->M; i++) points = points * (f.steps + i) / i;
    if (points <= ENSEMBLE_FIT_ALL_POINTS) build_fit_all(B, &f, 0, f.steps);
    else build_fit_moves(B, &f);
    for (int i = 0; i < B->M; i++) w[i] = (double)f.best[i] / f.steps;
    free(f.probs);
}

/* The multi-label rule: o->settings, else member 1's config. 0, or EXIT_USAGE. */
static int build_rule(Build *B, cJSON **rule_json) {
    const EnsembleOptions *o = B->o;
    char path[4400];
    file_join(o->runs[0], RUN_CONFIG, path, sizeof path);
    *rule_json = o->settings ? cJSON_Duplicate(o->settings, 1) : json_file_read(path, 0);
    if (!*rule_json) *rule_json = cJSON_CreateObject();
    return decision_read(&B->rule, *rule_json, B->t) ? EXIT_USAGE : 0;
}

/* The model, dev splits and members' outputs; weights fit when asked. 0, or the exit code. */
static int build_prepare(Build *B, cJSON **config) {
    cJSON *rule = NULL;
    int rc = build_rule(B, &rule);
    if (rc == 0) *config = ensemble_config(B->o, rule);
    cJSON_Delete(rule);
    if (rc) return rc;
    if (!(B->E = ensemble_from_config(*config, B->t))) return 1;
    B->M = ensemble_size(B->E);
    B->K = evaluate_num_outputs(B->t);
    const TaskSplit *want[TASK_MAX_SPLITS];
    int n = task_dev_splits(B->t, want, TASK_MAX_SPLITS);
    if (n == 0) {
        user_error_usage(NULL, "%s has no labelled dev split to score an ensemble on", B->t->display);
        return EXIT_USAGE;
    }
    for (int s = 0; s < n; s++) {
        if (task_load(B->t, want[s]->name, task_data_root(), 0, &B->dev[B->nd]) != 0) {
            if (s == 0) return 1;
            continue;   /* MNLI mismatched absent: matched reported alone, as the trainer does */
        }
        B->split[B->nd++] = want[s];
        if (build_outputs(B, B->nd - 1) != 0) return 1;
    }
    if (B->o->fit_dev) {
        double w[ENSEMBLE_MAX_MEMBERS];
        build_fit(B, w);
        ensemble_set_weights(B->E, w);
        cJSON_Delete(*config);
        *config = cJSON_Duplicate(ensemble_config_of(B->E), 1);
    }
    return 0;
}

/* results.json's members: [{run, model, weight, dev score alone}], and the
 * members' training seconds (what the ensemble cost) into *seconds. */
static cJSON *build_members(Build *B, const cJSON *config, double *seconds) {
    cJSON *arr = cJSON_CreateArray();
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(config, "members");
    float *probs = xmalloc(sizeof(float) * (size_t)(B->dev[0].n ? B->dev[0].n : 1) * (size_t)B->K);
    int i = 0;
    *seconds = 0;
    for (const cJSON *it = members->child; it; it = it->next, i++) {
        cJSON *m = cJSON_CreateObject();
        char where[4400], path[4400];
        file_portable_path(run_config_string(it, "run", ""), where, sizeof where);
        cJSON_AddStringToObject(m, "run", where);
        cJSON_AddStringToObject(m, "model", run_config_string(it, "model", ""));
        cJSON_AddNumberToObject(m, "weight", run_config_number(it, "weight", 0));
        double one = 1;
        Decision rule = B->rule;
        cJSON *metrics = build_metrics(B, 0, i, 1, &one, &rule, 1, probs);
        cJSON_AddNumberToObject(m, "score", evaluate_score(B->t, metrics));
        cJSON_AddItemToObject(m, B->split[0]->name, metrics);
        file_join(run_config_string(it, "run", ""), RUN_RESULTS, path, sizeof path);
        cJSON *res = json_file_read(path, 0);
        *seconds += run_config_number(res, "train_seconds", 0);
        cJSON_Delete(res);
        cJSON_AddItemToArray(arr, m);
    }
    free(probs);
    return arr;
}

/* The ensemble scored on every dev split (the rule tuned on the first):
 * results.json's content. */
static cJSON *build_results(Build *B, const cJSON *config) {
    const EnsembleOptions *o = B->o;
    double w[ENSEMBLE_MAX_MEMBERS], seconds;
    ensemble_weights(B->E, w);
    cJSON *j = run_results_head(o->command, 0, threads_count(), config);
    cJSON_AddStringToObject(j, "task", B->t->name);
    cJSON_AddStringToObject(j, "model", o->kind);
    cJSON_AddItemToObject(j, "labels", run_labels_json(B->t));
    cJSON_AddNumberToObject(j, "num_params", (double)ENSEMBLE_OPS.num_params(B->E));
    cJSON_AddItemToObject(j, "members", build_members(B, config, &seconds));
    cJSON_AddStringToObject(j, "weights", o->fit_dev ? "dev" : o->weights ? "given" : "equal");
    cJSON_AddStringToObject(j, "combine", o->combine);
    cJSON_AddNumberToObject(j, "train_seconds", seconds);
    cJSON_AddNumberToObject(j, "eval_examples_per_sec", B->seconds > 0 ? B->examples / B->seconds : 0);
    cJSON *best = cJSON_CreateObject();
    cJSON_AddNumberToObject(best, "epoch", 1);
    double score = NAN;
    for (int s = 0; s < B->nd; s++) {
        float *probs = xmalloc(sizeof(float) * (size_t)(B->dev[s].n ? B->dev[s].n : 1) * (size_t)B->K);
        cJSON *m = build_metrics(B, s, 0, B->M, w, &B->rule, s == 0, probs);
        if (s == 0) {
            score = evaluate_score(B->t, m);
            cJSON *details = evaluate_details(B->t, &B->dev[0], probs, &B->rule);
            if (details) cJSON_AddItemToObject(j, "details", details);
        }
        cJSON_AddItemToObject(best, B->split[s]->name, m);
        free(probs);
    }
    cJSON_AddNumberToObject(best, "score", isfinite(score) ? score : 0.0);
    char sel[256];
    snprintf(sel, sizeof sel, "%s on %s", B->t->metrics[1] != METRIC_NONE && !B->t->multi_label ? "mean of the metrics"
             : metric_name(B->t->metrics[0]), B->split[0]->name);
    cJSON_AddStringToObject(j, "selection", sel);
    cJSON *epochs = cJSON_AddArrayToObject(j, "epochs");
    cJSON_AddItemToArray(epochs, cJSON_Duplicate(best, 1));
    cJSON_AddItemToObject(j, "best", best);
    if (o->record) cJSON_AddItemToObject(j, o->record_key, cJSON_Duplicate(o->record, 1));
    return j;
}

/* The run directory, as a transaction (run_txn.h). 0, or the exit code. */
static int build_write(Build *B, const cJSON *config, cJSON *res) {
    const EnsembleOptions *o = B->o;
    RunDirTxn txn = {0};
    int rc = run_dir_open(&txn, o->out_dir, 0);
    if (rc) return rc;
    rc = run_dir_check(NULL, o->out_dir, txn.work, 0, o->overwrite, 1);
    if (rc == 0) rc = run_dir_stage(&txn, o->overwrite, 0);
    char path[4400];
    if (rc == 0) rc = run_dir_begin(txn.work, RUN_RESULTS, config);
    file_join(txn.work, RUN_CKPT, path, sizeof path);
    if (rc == 0) rc = ENSEMBLE_OPS.save(B->E, path) ? 1 : 0;
    if (rc == 0 && B->t->multi_label) rc = decision_save(&B->rule, B->t, txn.work) ? 1 : 0;
    file_join(txn.work, USER_DATA_FILE, path, sizeof path);
    if (rc == 0 && B->t->user) rc = user_data_save(B->t, path) ? 1 : 0;
    if (rc == 0) rc = run_dir_finish(txn.work, RUN_RESULTS, res, 0);
    if (rc == 0) rc = run_dir_commit(&txn);
    run_dir_close(&txn, rc == 0);
    return rc;
}

int ensemble_build(const EnsembleOptions *o, cJSON **results) {
    if (results) *results = NULL;
    int rc = ensemble_check(o);
    if (rc) return rc;
    Build B = {.o = o, .t = o->task};
    cJSON *config = NULL, *res = NULL;
    rc = build_prepare(&B, &config);
    if (rc == 0) res = build_results(&B, config);
    if (rc == 0) rc = build_write(&B, ensemble_config_of(B.E), res);
    if (rc == 0 && results) *results = res;
    else cJSON_Delete(res);
    for (int s = 0; s < B.nd; s++) {
        for (int i = 0; i < B.M; i++) free(B.outs[s][i]);
        dataset_free(&B.dev[s]);
    }
    if (B.E) ENSEMBLE_OPS.free(B.E);
    cJSON_Delete(config);
    return rc;
}
