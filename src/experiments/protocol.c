/* protocol.c — fine-tuning recipe changes measured over seeds, one table (see
 * protocol.h). */
#include "experiments/protocol.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "core/provenance.h"
#include "core/stats.h"
#include "train/evaluate.h"
#include "experiments/intermediate.h"
#include "models/model.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "tasks/task.h"

#define PROTOCOL_TITLE "Fine-tuning protocol: each change of the recipe over seeds"

int protocol_parse_change(char *text, ProtocolRow *row) {
    memset(row, 0, sizeof *row);
    char *colon = strchr(text, ':');
    if (!colon || colon == text || !colon[1]) {
        user_error("e.g. --change epochs10:epochs=10 or --change feat:mrpc.pair_encoding=features,pair_swap=1",
                   "--change '%s': expected NAME:key=value[,key=value...]", text);
        return -1;
    }
    *colon = '\0';
    row->name = text;
    /* the row's runs go to <root>/<name>/: "." and ".." would put them in the
     * root itself or beside it (outside --out) */
    int bad = strcmp(text, ".") == 0 || strcmp(text, "..") == 0;
    for (const char *c = text; *c && !bad; c++)
        bad = !(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') || ('0' <= *c && *c <= '9') || strchr("-_.+", *c));
    if (bad) {
        user_error("a change's name is a directory name: letters, digits, - _ . + (not . or ..)",
                   "--change: bad name '%s'", text);
        return -1;
    }
    for (char *s = colon + 1, *next; s && *s; s = next) {
        next = strchr(s, ',');
        if (next) *next++ = '\0';
        if (!strchr(s, '=') || row->n_sets == PROTOCOL_MAX_SETS) {
            user_error("write key=value (up to 16 per change)", "--change %s: bad setting '%s'", row->name, s);
            return -1;
        }
        row->sets[row->n_sets++] = s;
    }
    return 0;
}

/* A qualified setting (of --set or of a --change, named by what) names a task
 * of the protocol (a typo would silently change nothing). 0 ok, -1 after a message. */
static int protocol_check_sets(const ProtocolOptions *o, const char *const *sets, int n, const char *what) {
    for (int i = 0; i < n; i++) {
        RunSetting rs;
        if (run_setting_split(sets[i], &rs) != 0 || !rs.task[0]) continue;
        int known = 0;
        for (int k = 0; k < o->n_tasks; k++) known |= strcmp(o->tasks[k], rs.task) == 0;
        if (!known) {
            user_error("qualify a setting with one of the --tasks", "%s %s: '%s' is not a task of this protocol",
                       what, sets[i], rs.task);
            return -1;
        }
    }
    return 0;
}

/* The row whose fine-tunes row's are on task t: a change that leaves the
 * task alone shares the baseline's. */
static const ProtocolRow *protocol_owner(const ProtocolOptions *o, const ProtocolRow *row, const Task *t) {
    const char *task_sets[PROTOCOL_MAX_SETS];
    return run_config_sets_for_task(row->sets, row->n_sets, t->name, task_sets) > 0 ? row : &o->rows[0];
}

/* The config of owner's fine-tunes on t: the model's defaults, --set,
 * --init, then the row's change. NULL after a message. */
static cJSON *protocol_config(const ProtocolOptions *o, const ProtocolRow *owner, const Task *t) {
    char init[4200];
    const ModelOps *ops = model_find(o->model);
    const char *sets[2 * PROTOCOL_MAX_SETS + 1], *origin[2 * PROTOCOL_MAX_SETS + 1];
    int nsets = run_config_sets_for_task(o->sets, o->n_sets < PROTOCOL_MAX_SETS ? o->n_sets : PROTOCOL_MAX_SETS,
                                         t->name, sets);
    for (int i = 0; i < nsets; i++) origin[i] = "--set";
    if (o->init) {
        snprintf(init, sizeof init, "init=%s", o->init);
        sets[nsets] = init, origin[nsets++] = "--init";
    }
    int n = run_config_sets_for_task(owner->sets, owner->n_sets, t->name, sets + nsets);
    for (int i = 0; i < n; i++) origin[nsets + i] = "--change";
    nsets += n;
    return run_config_build(ops->default_config(t), NULL, sets, origin, nsets);
}

/* Every row's settings on every task, before the first fine-tune: a typo in
 * the last --change fails now, not after the rows before it trained. One
 * message naming the row, the model, the task and the setting. 0, or EXIT_USAGE. */
static int protocol_check_configs(const ProtocolOptions *o) {
    const ModelOps *ops = model_find(o->model);
    for (int r = 0; r < o->n_rows; r++)
        for (int k = 0; k < o->n_tasks; k++) {
            const Task *t = task_find(o->tasks[k]);
            char who[160];
            snprintf(who, sizeof who, "protocol: row %s", o->rows[r].name);
            ErrorCapture e;
            error_capture_begin(&e);
            cJSON *config = protocol_config(o, protocol_owner(o, &o->rows[r], t), t);
            error_capture_end();
            int rc = config ? trainer_check_config(ops, t, config, who) : EXIT_USAGE;
            if (!config) user_error_usage(NULL, "%s: %s on %s: %s", who, ops->name, t->display, e.message);
            cJSON_Delete(config);
            if (rc) return rc;
        }
    return 0;
}

/* results.json of one fine-tune, training it first when it is not there. NULL after a message. */
static cJSON *protocol_finetune(const ProtocolOptions *o, const ProtocolRow *row, const Task *t, long seed) {
    char dir[4096], path[4200];
    const ProtocolRow *owner = protocol_owner(o, row, t);
    snprintf(dir, sizeof dir, "%s/%s/%s-seed%ld", o->root, owner->name, t->name, seed);
    file_join(dir, RUN_RESULTS, path, sizeof path);
    const ModelOps *ops = model_find(o->model);
    cJSON *config = protocol_config(o, owner, t);
    if (!config) return NULL;
    /* Reused only when made with this row's settings: the defaults move
     * between builds, and a baseline row must be today's defaults. */
    cJSON *res = trainer_finished_run(dir, config, seed, 0);
    if (res || file_exists(path)) {
        cJSON_Delete(config);
        if (!res)
            user_error("remove that directory or give another --out", "protocol: %s was trained with other settings "
                       "or files than row %s has now (the defaults or an init changed?), or is damaged", dir, owner->name);
        return res;
    }
    fprintf(stderr, "protocol: %s, %s seed %ld\n", row->name, t->name, seed);
    TrainerOptions to = {.task = t, .ops = ops, .config = config, .seed = (uint64_t)seed, .threads = o->threads,
                         .out_dir = dir, .data_root = task_data_root(), .command = o->command,
                         .resume = trainer_can_resume(dir, config, (uint64_t)seed, 0), .show_progress = 1};
    char stage[4200];
    intermediate_shared_dir(&to, o->root, stage, sizeof stage);   /* one per stage config and seed, for every row */
    int rc = intermediate_run(&to, stage[0] ? stage : NULL, &res);
    cJSON_Delete(config);
    return rc == 0 ? res : NULL;
}

/* A fine-tune's score: the mean of its task metrics on the selection split
 * at the best epoch; the metrics are added into sums. NAN when missing. */
static double protocol_score(const Task *t, const cJSON *res, cJSON *sums) {
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    const TaskSplit *split[4];
    int n = task_dev_splits(t, split, 4);   /* the first labelled dev split selects */
    const cJSON *dev = n > 0 ? cJSON_GetObjectItemCaseSensitive(best, split[0]->name) : NULL;
    protocol_add_metrics(sums, dev);
    return dev ? evaluate_score(t, dev) : NAN;
}

double protocol_add_metrics(cJSON *sums, const cJSON *dev) {
    double sum = 0;
    int n = 0;
    for (const cJSON *m = dev ? dev->child : NULL; m; m = m->next) {
        if (!cJSON_IsNumber(m)) continue;
        sum += m->valuedouble;
        n++;
        cJSON *acc = cJSON_GetObjectItemCaseSensitive(sums, m->string);
        if (acc) cJSON_SetNumberValue(acc, acc->valuedouble + m->valuedouble);
        else cJSON_AddNumberToObject(sums, m->string, m->valuedouble);
    }
    return n ? sum / n : NAN;
}

cJSON *protocol_task_cell(cJSON *tasks, const char *task, cJSON *sums, cJSON *scores, const double *s, int n,
                          double *mean) {
    for (cJSON *m = sums->child; m; m = m->next) cJSON_SetNumberValue(m, m->valuedouble / n);
    Summary sm = summarize(s, n);
    cJSON *tj = cJSON_AddObjectToObject(tasks, task);
    cJSON_AddItemToObject(tj, "metrics", sums);
    cJSON_AddItemToObject(tj, "seed_scores", scores);
    cJSON_AddNumberToObject(tj, "score", sm.mean);
    cJSON_AddNumberToObject(tj, "std", n > 1 ? sm.std : 0.0);
    *mean = sm.mean;
    return tj;
}

/* 1 when the table shows a macro-F1 column for t: a classification task
 * whose score is another metric (CoLA's MCC, SST-2's accuracy; GoEmotions'
 * score is macro-F1 already). */
static int protocol_shows_macro_f1(const Task *t) {
    return (t->multi_label || t->num_labels >= 2) && t->metrics[0] != METRIC_MACRO_F1;
}

/* A fine-tune's macro-F1 on its selection split at the best epoch, from the
 * per-label averages the trainer keeps in results.json ("details"); NAN when
 * they are not there (a run resumed past its best epoch by an older build
 * kept none). */
static double protocol_macro_f1(const cJSON *res) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "details"), "macro_f1");
    if (cJSON_IsNumber(v)) return v->valuedouble;
    return NAN;
}

/* The seed mean and spread of a task's macro-F1 into tj (nothing when a
 * seed lacks it: a partial mean would not compare). */
static void protocol_add_macro_f1(cJSON *tj, const double *f1, int n) {
    for (int k = 0; k < n; k++)
        if (!isfinite(f1[k])) return;
    Summary sm = summarize(f1, n);
    cJSON_AddNumberToObject(tj, "macro_f1", sm.mean);
    cJSON_AddNumberToObject(tj, "macro_f1_std", n > 1 ? sm.std : 0.0);
}

/* One row of the table: every task x seed. NULL after a message. */
static cJSON *protocol_row(const ProtocolOptions *o, const ProtocolRow *row) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", row->name);
    cJSON *sets = cJSON_AddArrayToObject(j, "settings");
    for (int i = 0; i < row->n_sets; i++) {   /* paths under the home directory written ~ */
        char setting[4200];
        file_portable_setting(row->sets[i], setting, sizeof setting);
        cJSON_AddItemToArray(sets, cJSON_CreateString(setting));
    }
    cJSON *tasks = cJSON_AddObjectToObject(j, "tasks");
    double per_seed[PROTOCOL_MAX_SEEDS] = {0}, total = 0;
    for (int i = 0; i < o->n_tasks; i++) {
        const Task *t = task_find(o->tasks[i]);
        cJSON *sums = cJSON_CreateObject(), *scores = cJSON_CreateArray();
        double s[PROTOCOL_MAX_SEEDS], f1[PROTOCOL_MAX_SEEDS];
        for (int k = 0; k < o->n_seeds; k++) {
            cJSON *res = protocol_finetune(o, row, t, o->seeds[k]);
            s[k] = res ? protocol_score(t, res, sums) : NAN;
            f1[k] = protocol_macro_f1(res);
            cJSON_Delete(res);
            if (!isfinite(s[k])) {
                if (res) user_error(NULL, "%s/%s/%s-seed%ld: its dev metric is missing or not a number", o->root,
                                    row->name, t->name, o->seeds[k]);
                cJSON_Delete(sums);
                cJSON_Delete(scores);
                cJSON_Delete(j);
                return NULL;
            }
            cJSON_AddItemToArray(scores, cJSON_CreateNumber(s[k]));
            per_seed[k] += s[k] / o->n_tasks;
        }
        double mean;
        cJSON *tj = protocol_task_cell(tasks, t->name, sums, scores, s, o->n_seeds, &mean);
        if (protocol_shows_macro_f1(t)) protocol_add_macro_f1(tj, f1, o->n_seeds);
        total += mean / o->n_tasks;
    }
    /* The spread of the row: over seeds, of each seed's mean over the tasks. */
    Summary sr = summarize(per_seed, o->n_seeds);
    cJSON_AddNumberToObject(j, "score", total);
    cJSON_AddNumberToObject(j, "std", o->n_seeds > 1 ? sr.std : 0.0);
    return j;
}

/* The Markdown twin of the table. */
static int protocol_write_md(const cJSON *table, const char *json_path) {
    char path[4200];
    file_md_twin(json_path, path, sizeof path);
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return -1;
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(table, "tasks");
    /* --set settings (named in the encoder line) are every row's, the baseline's too */
    int shared = strstr(cJSON_GetObjectItemCaseSensitive(table, "encoder")->valuestring, "; for every row: ") != NULL;
    fprintf(f, "# %s\n\nWritten by `glue protocol` (`%s`). Encoder: %s. Each cell: the mean over seeds", PROTOCOL_TITLE,
            cJSON_GetObjectItemCaseSensitive(table, "command")->valuestring,
            cJSON_GetObjectItemCaseSensitive(table, "encoder")->valuestring);
    for (const cJSON *s = cJSON_GetObjectItemCaseSensitive(table, "seeds")->child; s; s = s->next)
        fprintf(f, "%s%ld", s == cJSON_GetObjectItemCaseSensitive(table, "seeds")->child ? " " : ", ", (long)s->valuedouble);
    fprintf(f, " ± their standard deviation of the task's score (the mean of its metrics, ×100; a multi-label task's "
               "macro-F1) on its dev split at the best epoch; for a classification task whose metric is not "
               "macro-F1, also its macro-F1 (the mean of the labels' F1) on the same split and epoch. **The epoch is "
               "selected on dev**, as `glue finetune` does: the numbers are optimistic, alike for every row. Score: the mean over the tasks (± the spread over seeds of each "
               "seed's mean); Δ: against the baseline row (the default recipe%s). A setting `task.key=value` applies "
               "to that task only.\n\n| change | settings |", shared ? " with the settings for every row" : "");
    for (const cJSON *t = tasks->child; t; t = t->next) {
        const Task *task = task_find(t->valuestring);
        /* a multi-label task's score is its macro-F1 alone (evaluate_score): the header says so */
        fprintf(f, " %s%s |", task->display, task->metrics[0] == METRIC_MACRO_F1 ? " macro-F1" : "");
        if (protocol_shows_macro_f1(task)) fprintf(f, " %s macro-F1 |", task->display);
    }
    fprintf(f, " score | Δ |\n|---|---|");
    for (const cJSON *t = tasks->child; t; t = t->next)
        fprintf(f, protocol_shows_macro_f1(task_find(t->valuestring)) ? "---|---|" : "---|");
    fprintf(f, "---|---|\n");
    double base = NAN;
    for (const cJSON *r = cJSON_GetObjectItemCaseSensitive(table, "rows")->child; r; r = r->next) {
        double score = cJSON_GetObjectItemCaseSensitive(r, "score")->valuedouble;
        if (r == cJSON_GetObjectItemCaseSensitive(table, "rows")->child) base = score;
        fprintf(f, "| %s | ", cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring);
        const cJSON *sets = cJSON_GetObjectItemCaseSensitive(r, "settings");
        if (!sets->child) fprintf(f, shared ? "the settings for every row" : "defaults");
        for (const cJSON *s = sets->child; s; s = s->next) fprintf(f, "%s`%s`", s == sets->child ? "" : " ", s->valuestring);
        fprintf(f, " |");
        for (const cJSON *t = tasks->child; t; t = t->next) {
            const cJSON *tj = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "tasks"), t->valuestring);
            if (tj)
                fprintf(f, " %.2f ± %.2f |", cJSON_GetObjectItemCaseSensitive(tj, "score")->valuedouble,
                        cJSON_GetObjectItemCaseSensitive(tj, "std")->valuedouble);
            else fprintf(f, " - |");
            if (!protocol_shows_macro_f1(task_find(t->valuestring))) continue;
            const cJSON *mf = cJSON_GetObjectItemCaseSensitive(tj, "macro_f1");
            if (cJSON_IsNumber(mf))
                fprintf(f, " %.2f ± %.2f |", mf->valuedouble, run_config_number(tj, "macro_f1_std", 0));
            else fprintf(f, " - |");
        }
        fprintf(f, " **%.2f** ± %.2f | %+.2f |\n", score, cJSON_GetObjectItemCaseSensitive(r, "std")->valuedouble,
                score - base);
    }
    return atomic_commit(&out);
}

/* The table in o->results if it is one of ours with the same tasks, seeds
 * and encoder (rows of another setup would not compare); else a new one.
 * NULL after a message when o->results exists but cannot be read or is not
 * JSON: it is not written over, and no fine-tune starts. */
static cJSON *protocol_table(const ProtocolOptions *o, const char *encoder) {
    cJSON *t = file_exists(o->results) ? json_file_read(o->results, 1) : NULL;
    if (!t && file_exists(o->results)) return NULL;
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(t, "title");
    const cJSON *enc = cJSON_GetObjectItemCaseSensitive(t, "encoder");
    cJSON *tasks = cJSON_CreateArray(), *seeds = cJSON_CreateArray();
    for (int i = 0; i < o->n_tasks; i++) cJSON_AddItemToArray(tasks, cJSON_CreateString(o->tasks[i]));
    for (int k = 0; k < o->n_seeds; k++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)o->seeds[k]));
    int same = t && cJSON_IsString(title) && strcmp(title->valuestring, PROTOCOL_TITLE) == 0 && cJSON_IsString(enc) &&
               strcmp(enc->valuestring, encoder) == 0 &&
               cJSON_Compare(cJSON_GetObjectItemCaseSensitive(t, "tasks"), tasks, 1) &&
               cJSON_Compare(cJSON_GetObjectItemCaseSensitive(t, "seeds"), seeds, 1) &&
               cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(t, "rows"));
    if (t && !same)
        user_warning("%s holds another protocol (title, encoder, tasks or seeds differ): starting it anew", o->results);
    if (!same) {
        cJSON_Delete(t);
        t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "title", PROTOCOL_TITLE);
        cJSON_AddStringToObject(t, "encoder", encoder);
        cJSON_AddItemToObject(t, "tasks", tasks);
        cJSON_AddItemToObject(t, "seeds", seeds);
        cJSON_AddArrayToObject(t, "rows");
    } else {
        cJSON_Delete(tasks);
        cJSON_Delete(seeds);
    }
    return t;
}

int protocol_run(const ProtocolOptions *o) {
    if (!model_find(o->model)) {
        char known[256], hint[300];
        model_names(known, sizeof known);
        snprintf(hint, sizeof hint, "models built into this binary: %s", known);
        user_error(hint, "unknown model '%s'", o->model);
        return EXIT_USAGE;
    }
    for (int i = 0; i < o->n_tasks; i++)
        if (!task_find_or_report(o->tasks[i])) return EXIT_USAGE;
    if (protocol_check_sets(o, o->sets, o->n_sets, "--set")) return EXIT_USAGE;
    for (int r = 0; r < o->n_rows; r++) {
        if (protocol_check_sets(o, o->rows[r].sets, o->rows[r].n_sets, "--change")) return EXIT_USAGE;
        for (int q = 0; q < r; q++)
            if (strcmp(o->rows[q].name, o->rows[r].name) == 0) {
                user_error("give each --change its own name", "two rows are called '%s'", o->rows[r].name);
                return EXIT_USAGE;
            }
    }
    if (protocol_check_configs(o)) return EXIT_USAGE;
    /* Without --init, the encoder the model starts from by default (BERT: the
     * shipped one), named as its defaults name it. */
    const ModelOps *ops = model_find(o->model);
    cJSON *defaults = !o->init && ops && o->n_tasks > 0 ? ops->default_config(task_find(o->tasks[0])) : NULL;
    const char *init = o->init ? o->init : run_config_string(defaults, "init", "");
    char encoder[4200];
    int used = snprintf(encoder, sizeof encoder, "%s (model %s", *init ? init : "the model's default init", o->model);
    cJSON_Delete(defaults);
    for (int i = 0; i < o->n_sets && used > 0 && (size_t)used < sizeof encoder; i++)
        used += snprintf(encoder + used, sizeof encoder - (size_t)used, "%s%s", i ? ", " : "; for every row: ", o->sets[i]);
    if (used > 0 && (size_t)used < sizeof encoder - 1) snprintf(encoder + used, sizeof encoder - (size_t)used, ")");
    cJSON *table = protocol_table(o, encoder);
    if (!table) return 1;
    cJSON *rows = cJSON_GetObjectItemCaseSensitive(table, "rows");
    int rc = 0;
    for (int r = 0; r < o->n_rows && rc == 0; r++) {
        cJSON *row = protocol_row(o, &o->rows[r]);
        if (!row) {
            rc = 1;
            break;
        }
        int at = 0, found = -1;
        for (cJSON *x = rows->child; x; x = x->next, at++) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "name");
            if (cJSON_IsString(name) && strcmp(name->valuestring, o->rows[r].name) == 0) found = at;
        }
        /* the baseline stays first: Δ is against it */
        if (found >= 0) cJSON_ReplaceItemInArray(rows, found, row);
        else if (r == 0) cJSON_InsertItemInArray(rows, 0, row);
        else cJSON_AddItemToArray(rows, row);
        printf("%s: score %.2f\n", o->rows[r].name, cJSON_GetObjectItemCaseSensitive(row, "score")->valuedouble);
    }
    if (rc == 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(table, "command");
        cJSON_AddStringToObject(table, "command", o->command ? o->command : "");
        cJSON_DeleteItemFromObjectCaseSensitive(table, "provenance");
        cJSON_AddItemToObject(table, "provenance", provenance_json(o->threads, -1));
        char parent[4200];
        snprintf(parent, sizeof parent, "%s", o->results);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) *slash = '\0';
        if (slash && slash != parent && file_make_dir(parent)) rc = 1;
        if (rc == 0) rc = json_file_write(o->results, table) || protocol_write_md(table, o->results) ? 1 : 0;
        if (rc == 0) printf("wrote %s (and .md)\n", o->results);
    }
    cJSON_Delete(table);
    return rc;
}
