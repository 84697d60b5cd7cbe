/* search.c — learning-rate x batch-size search selected on a held-out slice
 * of the training split (see search.h). */
#include "experiments/search.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "experiments/intermediate.h"
#include "models/run_config.h"

void search_default_grid(SearchOptions *o) {
    static const double LRS[] = {3e-4, 1e-4, 5e-5, 3e-5};
    static const int BATCHES[] = {8, 16, 32, 64, 128};
    o->n_lrs = 4;
    o->n_batches = 5;
    memcpy(o->lrs, LRS, sizeof LRS);
    memcpy(o->batches, BATCHES, sizeof BATCHES);
    o->holdout = 0.1;
}

/* The config with lr and batch set (eval_batch follows batch where the model
 * ties them). Caller frees; NULL after a message. */
static cJSON *search_config(const cJSON *base, double lr, int batch) {
    cJSON *c = cJSON_Duplicate(base, 1);
    char v[32];
    snprintf(v, sizeof v, "%g", lr);
    int bad = run_config_set(c, "lr", v, "--search");
    snprintf(v, sizeof v, "%d", batch);
    bad |= run_config_set(c, "batch", v, "--search");
    if (cJSON_GetObjectItemCaseSensitive(c, "eval_batch")) bad |= run_config_set(c, "eval_batch", v, "--search");
    if (bad) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* One trainer run of config into dir; its results. A finished trial is not
 * trained again and an interrupted one is continued; every trial and the
 * final run go through one intermediate stage (<search dir>/intermediate:
 * lr and batch are the target's, not the stage's). NULL on failure, with *rc
 * the trainer's exit code (128 + signal when stopped by one: the search stops
 * too, and running it again continues). */
static cJSON *search_train(const SearchOptions *o, const cJSON *config, const char *dir, double holdout, int *rc) {
    *rc = 1;
    if (!config) return NULL;
    cJSON *done = trainer_finished_run(dir, config, (long)o->base.seed, holdout);
    if (done) {
        *rc = 0;
        return done;
    }
    char stage[4200];
    file_join(o->base.out_dir, INTERMEDIATE_DIR, stage, sizeof stage);
    TrainerOptions t = o->base;
    t.config = config;
    t.out_dir = dir;
    t.holdout = holdout;
    t.resume = trainer_can_resume(dir, config, o->base.seed, holdout);
    t.overwrite = 1;   /* its own directory, other settings: trained again */
    cJSON *res = NULL;
    *rc = intermediate_run(&t, stage, &res);
    if (*rc == 0 && !res) *rc = 1;   /* no results to choose from */
    return *rc == 0 ? res : NULL;
}

static double search_best_score(const cJSON *res, int *epoch) {
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    *epoch = (int)run_config_number(best, "epoch", 0);
    return run_config_number(best, "score", NAN);
}

int search_run(const SearchOptions *o, cJSON **result) {
    const char *out = o->base.out_dir;
    if (file_make_dir(out)) return 1;
    cJSON *s = cJSON_CreateObject(), *trials = NULL;
    cJSON_AddStringToObject(s, "task", o->base.task->name);
    cJSON_AddStringToObject(s, "model", o->base.ops->name);
    cJSON_AddStringToObject(s, "command", o->base.command ? o->base.command : "");
    cJSON_AddNumberToObject(s, "holdout", o->holdout);
    char sel[256];
    snprintf(sel, sizeof sel, "best held-out score: %.0f%% of the training split (the same examples for every "
             "trial), never dev; the winner retrained on the full training split", 100 * o->holdout);
    cJSON_AddStringToObject(s, "selection", sel);
    trials = cJSON_AddArrayToObject(s, "trials");
    double best = -INFINITY, best_lr = 0;
    int best_batch = 0, rc = 0;
    for (int i = 0; i < o->n_lrs && rc == 0; i++)
        for (int j = 0; j < o->n_batches && rc == 0; j++) {
            char dir[4200];
            snprintf(dir, sizeof dir, "%s/trial-lr%g-b%d", out, o->lrs[i], o->batches[j]);
            cJSON *config = search_config(o->base.config, o->lrs[i], o->batches[j]);
            cJSON *res = search_train(o, config, dir, o->holdout, &rc);
            cJSON_Delete(config);
            if (!res) break;
            int epoch;
            double score = search_best_score(res, &epoch);
            cJSON *t = cJSON_CreateObject();
            cJSON_AddNumberToObject(t, "lr", o->lrs[i]);
            cJSON_AddNumberToObject(t, "batch", o->batches[j]);
            cJSON_AddStringToObject(t, "dir", dir);
            cJSON_AddNumberToObject(t, "heldout_score", score);
            cJSON_AddNumberToObject(t, "best_epoch", epoch);
            cJSON_AddItemToArray(trials, t);
            fprintf(stderr, "search: lr %g batch %d -> held-out %.2f\n", o->lrs[i], o->batches[j], score);
            if (score > best) best = score, best_lr = o->lrs[i], best_batch = o->batches[j];
            cJSON_Delete(res);
        }
    if (rc == 0 && !isfinite(best)) {
        user_error("check the task's data", "search: no trial produced a held-out score");
        rc = 1;
    }
    if (rc == 0) {
        cJSON *w = cJSON_AddObjectToObject(s, "winner");
        cJSON_AddNumberToObject(w, "lr", best_lr);
        cJSON_AddNumberToObject(w, "batch", best_batch);
        cJSON_AddNumberToObject(w, "heldout_score", best);
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/final", out);
        cJSON *config = search_config(o->base.config, best_lr, best_batch);
        cJSON *res = search_train(o, config, dir, 0.0, &rc);
        cJSON_Delete(config);
        if (res) {
            cJSON *f = cJSON_AddObjectToObject(s, "final");
            cJSON_AddStringToObject(f, "dir", dir);
            cJSON_AddItemToObject(f, "best", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(res, "best"), 1));
            cJSON_Delete(res);
            char path[4200];
            file_join(out, SEARCH_FILE, path, sizeof path);
            rc = json_file_write(path, s) ? 1 : 0;
        }
    }
    if (rc == 0 && result) *result = s;
    else cJSON_Delete(s);
    return rc;
}
