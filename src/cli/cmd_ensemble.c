/* cmd_ensemble.c — `glue ensemble [TASK] --runs DIR,DIR,... | --models M1,M2 [--seeds S1,..]
 * [--weights w1,w2,...|dev] [--set combine=probs|logits] [--set threshold=...] [--out DIR]
 * [--overwrite] [--json]`: finished runs combined into a run directory
 * (experiments/ensemble_build.h) that eval, predict and compare read like
 * any run. --models takes the runs `glue compare TASK --models ... --seeds ...`
 * trained or reused (cli_compare_finished), one per model and seed. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/combined_show.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "experiments/ensemble_build.h"
#include "models/run_config.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENSEMBLE_USAGE                                                                                      \
    "glue ensemble [TASK] --runs DIR,DIR,... | TASK --models M1,M2 [--seeds S1,S2,..]\n"                    \
    "       [--weights w1,w2,...|dev] [--set combine=probs|logits] [--set threshold=T|tuned] [--set top_k=K]\n" \
    "       [--out DIR] [--overwrite] [--json]"
#define ENSEMBLE_MAX_SETS 8

typedef struct EnsembleArgs {
    const char *target, *runs, *models, *seeds, *weights, *out;
    const char *sets[ENSEMBLE_MAX_SETS];
    int num_sets, overwrite, json;
    char *lists[2];                        /* the split --runs and the member paths (owned) */
    char dirs[ENSEMBLE_MAX_MEMBERS][4200];
} EnsembleArgs;

/* --weights: "dev" (fit), or one finite number >= 0 per run, not all 0 (the
 * mean divides by their sum). 0, or EXIT_USAGE. */
static int ensemble_parse_weights(const char *text, int n, double *w, int *fit) {
    *fit = text && strcmp(text, "dev") == 0;
    if (!text || *fit) return 0;
    char *buf = xstrdup(text);
    const char *item[ENSEMBLE_MAX_MEMBERS];
    int k = cli_split_list(buf, item, ENSEMBLE_MAX_MEMBERS), rc = k == n ? 0 : EXIT_USAGE;
    double sum = 0;
    for (int i = 0; rc == 0 && i < k; i++) {
        char *end;
        w[i] = strtod(item[i], &end);
        if (end == item[i] || *end || !(w[i] >= 0) || !isfinite(w[i])) rc = EXIT_USAGE;
        sum += w[i];
    }
    if (rc == 0 && !(sum > 0 && isfinite(sum))) rc = EXIT_USAGE;
    free(buf);
    if (rc) user_error_usage("--weights w1,w2,... (finite numbers >= 0, one per run, not all 0), or --weights dev",
                             "--weights '%s' for %d runs", text, n);
    return rc;
}

/* The member directories into o->runs: --runs as given, or compare's runs of --models x --seeds. */
static int ensemble_members(EnsembleArgs *e, const Task *t, EnsembleOptions *o) {
    if (e->runs) {
        e->lists[0] = xstrdup(e->runs);
        o->num_runs = cli_split_list(e->lists[0], o->runs, ENSEMBLE_MAX_MEMBERS);
        return o->num_runs < 0 ? (user_error_usage(NULL, "--runs: more than %d runs", ENSEMBLE_MAX_MEMBERS), EXIT_USAGE) : 0;
    }
    long seeds[ENSEMBLE_MAX_MEMBERS] = {42};
    int ns = e->seeds ? cli_parse_seeds(e->seeds, seeds, ENSEMBLE_MAX_MEMBERS) : 1;
    if (ns < 1) return EXIT_USAGE;
    e->lists[1] = xstrdup(e->models);
    const char *names[ENSEMBLE_MAX_MEMBERS];
    int nm = cli_split_list(e->lists[1], names, ENSEMBLE_MAX_MEMBERS);
    if (nm < 1 || nm * ns > ENSEMBLE_MAX_MEMBERS) {
        user_error_usage(NULL, "--models x --seeds: 1 to %d runs", ENSEMBLE_MAX_MEMBERS);
        return EXIT_USAGE;
    }
    if (cli_names_unique(names, nm, "--models")) return EXIT_USAGE;
    for (int m = 0; m < nm; m++) {
        const ModelOps *ops = cli_find_model(names[m]);
        if (!ops) return EXIT_USAGE;
        for (int s = 0; s < ns; s++) {
            char *dir = e->dirs[o->num_runs];
            if (cli_compare_finished(t, ops, seeds[s], dir, sizeof e->dirs[0]) != 0) return EXIT_USAGE;
            o->runs[o->num_runs++] = dir;
        }
    }
    return 0;
}

static int ensemble_parse(int argc, char **argv, EnsembleArgs *e) {
    Args a;
    args_init(&a, argc, argv);
    e->runs = args_str(&a, "--runs", NULL);
    e->models = args_str(&a, "--models", NULL);
    e->seeds = args_str(&a, "--seeds", NULL);
    e->weights = args_str(&a, "--weights", NULL);
    e->out = args_str(&a, "--out", NULL);
    e->overwrite = args_flag(&a, "--overwrite");
    e->json = args_flag(&a, "--json");
    e->num_sets = args_strs(&a, "--set", e->sets, ENSEMBLE_MAX_SETS);
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, ENSEMBLE_USAGE);
    if (rc) return rc;
    e->target = npos ? pos[0] : NULL;
    if (npos > 1 || !e->runs == !e->models || (e->models && !e->target) || (e->seeds && !e->models)) {
        user_error_usage("give --runs DIR,DIR,... or TASK --models M1,M2 [--seeds S1,S2]", "ensemble: %s",
                         npos > 1 ? "one TASK at most" : "which runs?");
        return args_usage(ENSEMBLE_USAGE);
    }
    return 0;
}

/* The settings: combine=..., and the multi-label rule (threshold, top_k) into *rule (NULL: none given). */
static int ensemble_settings(const EnsembleArgs *e, const char **combine, cJSON **rule) {
    *combine = "probs";
    *rule = NULL;
    for (int i = 0; i < e->num_sets; i++) {
        RunSetting rs;
        if (run_setting_split(e->sets[i], &rs) != 0 || rs.task[0]) {
            user_error_usage("--set key=value", "ensemble: '%s' is not key=value", e->sets[i]);
            return EXIT_USAGE;
        }
        if (strcmp(rs.key, "combine") == 0) { *combine = rs.value; continue; }
        if (strcmp(rs.key, "threshold") != 0 && strcmp(rs.key, "top_k") != 0) {
            user_error_usage("an ensemble's settings: combine, threshold, top_k", "ensemble: no setting '%s'", rs.key);
            return EXIT_USAGE;
        }
        if (!*rule) *rule = cJSON_CreateObject();
        char *end;
        long k = strtol(rs.value, &end, 10);
        if (strcmp(rs.key, "top_k") == 0 && !*end && end != rs.value) cJSON_AddNumberToObject(*rule, "top_k", (double)k);
        else cJSON_AddStringToObject(*rule, rs.key, rs.value);
    }
    return 0;
}

int cmd_ensemble(int argc, char **argv) {
    EnsembleArgs e = {0};
    int rc = ensemble_parse(argc, argv, &e);
    if (rc) return rc;
    const char *first = NULL;
    if (e.runs) {   /* the task the first run records */
        e.lists[0] = xstrdup(e.runs);
        const char *item[ENSEMBLE_MAX_MEMBERS];
        first = cli_split_list(e.lists[0], item, ENSEMBLE_MAX_MEMBERS) >= 1 ? item[0] : e.runs;
    }
    char results[4400];
    if (first && !e.target) file_join(first, RUN_RESULTS, results, sizeof results);
    if (first && !e.target && !file_exists(results)) {   /* the task comes from it: say what is wrong with it */
        int there = file_exists(first);
        if (there)
            user_error_usage("give the directories of finished runs (results.json and model.ckpt)",
                             "%s is not a finished run", first);
        else
            user_error_io("give the directories of finished runs (results.json and model.ckpt)", "%s: no such run",
                          first);
        free(e.lists[0]);
        return there ? EXIT_USAGE : EXIT_IO;
    }
    const Task *t = cli_resolve_task(e.target, NULL, first && !e.target ? first : NULL);
    if (!t) return EXIT_USAGE;
    EnsembleOptions o = {.task = t, .kind = ENSEMBLE_MODEL, .overwrite = e.overwrite};
    double w[ENSEMBLE_MAX_MEMBERS];
    cJSON *rule = NULL;
    char out[4200];
    free(e.lists[0]);   /* (first pointed into it) */
    e.lists[0] = NULL;
    rc = ensemble_members(&e, t, &o);
    if (rc == 0) rc = ensemble_parse_weights(e.weights, o.num_runs, w, &o.fit_dev);
    if (rc == 0) rc = ensemble_settings(&e, &o.combine, &rule);
    if (rc == 0) {
        o.weights = e.weights && !o.fit_dev ? w : NULL;
        o.settings = rule;
        if (e.out) snprintf(out, sizeof out, "%s", e.out);
        else run_dir_path(t->name, ENSEMBLE_MODEL, out, sizeof out);
        o.out_dir = out;
        char *cmd = cli_command_line(argc, argv);
        o.command = cmd;
        cJSON *res = NULL;
        rc = ensemble_build(&o, &res);
        if (rc == 0) rc = combined_show(t, o.out_dir, res, e.json);
        cJSON_Delete(res);
        free(cmd);
    }
    cJSON_Delete(rule);
    free(e.lists[0]);
    free(e.lists[1]);
    cli_task_free(t);
    return rc;
}
