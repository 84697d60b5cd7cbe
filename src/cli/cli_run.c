/* cli_run.c — shared pieces of the model commands (see cli_run.h). */
#include "cli/cli_run.h"

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/editdist.h"
#include "core/files.h"
#include "core/gemm_bf16.h"
#include "core/kernels.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/run_txn.h"
#include "train/trainer.h"
#include "tasks/user_data.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const Task *cli_find_task(const char *name) {
    const Task *t = task_find(name);
    if (t) return t;
    char tail[96];
    user_error("'glue tasks' lists the tasks", "unknown task '%s'%s", name, str_did_you_mean(task_suggest(name), tail, sizeof tail));
    return NULL;
}

/* path is there and not a directory (a checkpoint, say, given as --run). */
static int cli_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

int cli_run_dataset(const char *run, const Task **out) {
    char path[4200];
    *out = NULL;
    if (access(run, F_OK) != 0) {   /* not "no task named", as if a run were there and said none */
        user_error_io("name a run directory (glue finetune --out DIR); --init takes a model.ckpt",
                      "%s: no such run (%s)", run, strerror(errno));
        return -1;
    }
    if (cli_is_file(run)) {   /* read as a folder, it failed with three odd messages */
        user_error_usage("name its run directory, or give a model.ckpt with --init", "--run %s is a file, not a run directory",
                         run);
        return -1;
    }
    file_join(run, USER_DATA_FILE, path, sizeof path);
    if (!file_exists(path)) {   /* a registry task's run: its results (or checkpoint) name it */
        file_join(run, RUN_RESULTS, path, sizeof path);
        /* A damaged results.json is refused (its message said, 65), not read
         * past: eval went on from the checkpoint after printing the error. */
        int there = file_exists(path);
        cJSON *res = there ? json_file_read(path, 0) : NULL;
        if (there && !res) return -1;
        if (!res) {
            file_join(run, RUN_CKPT, path, sizeof path);
            res = checkpoint_peek_config(path);
        }
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(res, "task");
        *out = cJSON_IsString(name) ? task_find(name->valuestring) : NULL;
        cJSON_Delete(res);
        return 0;
    }
    *out = user_data_load(path);
    return *out ? 0 : -1;
}

static int cli_find_dataset(const char *name, const char *model, char *out, size_t cap);

void cli_run_not_task(const char *run, const Task *t, const char *name) {
    user_error("drop the task name, or name the run of that task", "%s was trained on %s '%s', not '%s'", run,
               t->user ? "the dataset" : "the task", t->name, name);
}

const Task *cli_resolve_task(const char *name, const char *model, const char *run) {
    char path[4200];
    if (run) {
        const Task *t;
        if (cli_run_dataset(run, &t) != 0) return NULL;
        if (t) {
            if (name && strcmp(name, t->name) != 0 && task_find(name) != t) {
                cli_run_not_task(run, t, name);
                user_data_free(t);
                return NULL;
            }
            return t;
        }
    }
    if (!name && run) {
        user_error_io("name a run directory (glue finetune --out DIR), or the task: glue eval TASK --run DIR",
                      "%s says no task (no dataset.json, results.json or model.ckpt of a run there)", run);
        return NULL;
    }
    if (!name) {
        user_error("glue eval TASK, or --run DIR of a run trained with --train FILE", "no task named");
        return NULL;
    }
    const Task *t = task_find(name);
    if (t) return t;
    if (cli_find_dataset(name, model, path, sizeof path) == 0) return user_data_load(path);
    return cli_find_task(name);
}

/* runs/<name>/<model>/dataset.json, else that of any model's run of name.
 * 0 with the path, -1 when there is none. */
static int cli_find_dataset(const char *name, const char *model, char *out, size_t cap) {
    char dir[4096];
    run_dir_path(name, model ? model : "", dir, sizeof dir);
    file_join(dir, USER_DATA_FILE, out, cap);
    if (model && file_exists(out)) return 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = -1;
    while (d && rc != 0 && (e = readdir(d))) {
        char sub[4400];
        if (e->d_name[0] == '.') continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        file_join(sub, USER_DATA_FILE, out, cap);
        if (file_exists(out)) rc = 0;
    }
    if (d) closedir(d);
    return rc;
}

int cli_record_dataset(const Task *t, const char *dir) {
    char path[4200];
    if (!t->user) return 0;
    if (file_make_dir(dir) != 0) return -1;
    file_join(dir, USER_DATA_FILE, path, sizeof path);
    return user_data_save(t, path);
}

void cli_task_free(const Task *t) { user_data_free(t); }

const ModelOps *cli_find_model(const char *name) {
    const ModelOps *ops = model_find(name);
    if (ops) return ops;
    char known[256], hint[300];
    model_names(known, sizeof known);
    snprintf(hint, sizeof hint, "models built into this binary: %s", known[0] ? known : "none");
    char tail[96];
    user_error(hint, "unknown model '%s'%s", name, str_did_you_mean(model_suggest(name), tail, sizeof tail));
    return NULL;
}

const Task *cli_run_task(const Task *t) {
    const Task *base = t->scored_with ? task_find(t->scored_with) : NULL;
    return base ? base : t;
}

/* --bf16 on a loaded model (ops has a bf16 path). */
static void cli_use_bf16(const ModelOps *ops, Model *m) {
    /* Without a fast bf16 dot product (no AVX512-BF16, or a vdpbf16ps slower
     * than fp32 FMAs: core/kernels.h), bf16 would only be slower: --bf16 is
     * fp32 there, and says so (issue 19: never slower). */
    if (gemm_bf16_native()) ops->use_bf16(m);
    else user_warning("no fast bf16 dot product here (kernels: %s): --bf16 runs the fp32 path, which is faster on "
                      "this CPU", kernels_level_name(kernels_level()));
}

void cli_finetune_hint(const Task *t, const ModelOps *ops, const char *dir, char *out, size_t cap) {
    /* A user's dataset has no name finetune knows: it is trained from its files. */
    if (t->user) snprintf(out, cap, "glue finetune --train FILE --dev FILE --model %s --out %s", ops->name, dir);
    else snprintf(out, cap, "glue finetune %s --model %s", t->name, ops->name);
}

/* The checkpoint a run directory or --init names, when it is glue's: out
 * (cap bytes) gets its path; 0 when there is none (an external model
 * directory, or nothing there yet). */
static int cli_run_checkpoint(const char *run, const char *init, char *out, size_t cap) {
    struct stat st;
    const char *where = run ? run : init;
    if (!where || stat(where, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) snprintf(out, cap, "%s", where);
    else file_join(where, RUN_CKPT, out, cap);
    return file_exists(out);
}

const ModelOps *cli_choose_model(const char *model, const char *run, const char *init, const char *def) {
    char ckpt[4200];
    cJSON *config = cli_run_checkpoint(run, init, ckpt, sizeof ckpt) ? checkpoint_peek_config(ckpt) : NULL;
    if (!config && run && !cli_is_file(run)) {   /* no checkpoint (yet): a run's results say which model it trained */
        file_join(run, RUN_RESULTS, ckpt, sizeof ckpt);
        config = json_file_read(ckpt, 0);
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(config, "model");
    const ModelOps *ops = NULL;
    if (!cJSON_IsString(kind)) {   /* not a glue checkpoint (or none yet): --model says, or the default */
        ops = model || def ? cli_find_model(model ? model : def) : NULL;
    } else if (!(ops = model_find(kind->valuestring))) {
        user_error_data("read it with the glue that trained it", "%s: trained with model '%s', which this glue does not have",
                        ckpt, kind->valuestring);
    } else if (model && strcmp(model, ops->name) != 0) {
        user_error_usage("drop --model: the run says which model it is", "--model %s contradicts %s: it holds a %s model",
                         model, run ? run : init, ops->name);
        ops = NULL;
    }
    cJSON_Delete(config);
    return ops;
}

/* Whether ops can run what prec (CLI_BF16 | CLI_INT8) asks; 0, or -1 after a message. */
static int cli_check_precision(const ModelOps *ops, int prec) {
    if ((prec & CLI_BF16) && (prec & CLI_INT8)) {
        user_error_usage("give one of them", "--bf16 and --int8 both set the inference weights");
        return -1;
    }
    if ((prec & CLI_BF16) && !ops->use_bf16) {
        user_error_usage("drop --bf16 for this model", "%s has no bf16 inference path (bert has)", ops->name);
        return -1;
    }
    if ((prec & CLI_INT8) && !ops->use_int8) {
        user_error_usage("drop --int8 for this model", "%s has no int8 inference path (bert has)", ops->name);
        return -1;
    }
    return 0;
}

/* m switched to what prec asks (checked by cli_check_precision); NULL (m freed) on failure. */
static Model *cli_use_precision(const ModelOps *ops, Model *m, int prec) {
    if (!m) return NULL;
    if (prec & CLI_BF16) cli_use_bf16(ops, m);
    if ((prec & CLI_INT8) && ops->use_int8(m) != 0) {
        ops->free(m);
        return NULL;
    }
    return m;
}

/* 1 after a usage error when dir is the folder of a --seeds run (seeds.json
 * beside a run per seed) rather than a run: it was "no trained bert model",
 * with the advice to train one. */
static int cli_refuse_seeds_folder(const char *dir) {
    char path[4200], first[256] = "";
    file_join(dir, CLI_SEEDS_FILE, path, sizeof path);
    if (!file_exists(path)) return 0;
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, CLI_SEED_RUN_PREFIX, strlen(CLI_SEED_RUN_PREFIX)) && (!n++ || strcmp(e->d_name, first) < 0))
            snprintf(first, sizeof first, "%s", e->d_name);
    if (d) closedir(d);
    char hint[4400];
    snprintf(hint, sizeof hint, "name one of them (--run %s/%s); their mean and spread are in %s", dir,
             first[0] ? first : CLI_SEED_RUN_PREFIX "S", path);
    user_error_usage(hint, "%s holds the runs of %d seeds (glue finetune --seeds), not one run", dir, n);
    return 1;
}

Model *cli_load_run(const ModelOps *ops, const Task *t, const char *dir, int prec) {
    char path[4096], hint[320];
    if (cli_check_precision(ops, prec) != 0) return NULL;
    file_join(dir, RUN_CKPT, path, sizeof path);
    char how[256];
    cli_finetune_hint(t, ops, dir, how, sizeof how);
    snprintf(hint, sizeof hint, "train it first: %s", how);
    if (!file_exists(path)) {
        if (!cli_refuse_seeds_folder(dir))
            user_error_io(hint, "no trained %s model for %s: %s does not exist", ops->name, t->display, path);
        return NULL;
    }
    if (run_dir_check_labels(dir, t) != 0 || model_check_memory_load(ops, path) != 0) return NULL;
    Model *m = ops->load(path, t);
    /* The model said what is wrong with the file; say what to do about it. */
    if (!m) fprintf(stderr, "  hint: the checkpoint is unusable; retrain with: %s\n", how);
    return cli_use_precision(ops, m, prec);
}

Model *cli_load_model(const ModelOps *ops, const Task *t, const char *run, const char *init, int prec, char *dir,
                      size_t cap) {
    struct stat st;
    dir[0] = '\0';
    if (run && init) {
        user_error_usage("give one of them", "--run %s and --init %s both name the model to score", run, init);
        return NULL;
    }
    if (!run && !init) {
        run_dir_path(t->name, ops->name, dir, cap);
        return cli_load_run(ops, t, dir, prec);
    }
    const char *where = run ? run : init;
    if (stat(where, &st) != 0) {
        user_error_io("name a run directory (glue finetune --out), a model.ckpt, or a model directory",
                   "%s: no such file or directory", where);
        return NULL;
    }
    char ckpt[4200];
    file_join(where, RUN_CKPT, ckpt, sizeof ckpt);
    if (run || (S_ISDIR(st.st_mode) && file_exists(ckpt))) {   /* a glue run directory */
        snprintf(dir, cap, "%s", where);
        return cli_load_run(ops, t, dir, prec);
    }
    if (cli_check_precision(ops, prec) != 0) return NULL;
    Model *m = NULL;
    if (!S_ISDIR(st.st_mode)) {
        if (model_check_memory_load(ops, init) != 0) return NULL;
        m = ops->load(init, t);   /* a checkpoint file */
    } else if (ops->load_external) {
        m = ops->load_external(init, t);
    } else {
        user_error_usage("name a glue run directory or its model.ckpt", "--init %s: %s reads no models made elsewhere",
                   init, ops->name);
        return NULL;
    }
    return cli_use_precision(ops, m, prec);
}

int cli_check_text(const char *s, size_t len, const char *origin) {
    const char *nul = memchr(s, '\0', len);
    if (nul) {   /* the text would end there, silently */
        user_error_data("give the text as UTF-8 without NUL bytes", "%s: NUL byte at byte %zu", origin,
                        (size_t)(nul - s) + 1);
        return -1;
    }
    if (utf8_valid(s, len)) return 0;
    size_t at = 0, next = 0;   /* the first invalid byte, for the message */
    while (next < len && !(utf8_decode(s, len, &next) == UTF8_REPLACEMENT && next == at + 1)) at = next;
    user_error_data("give the text as UTF-8", "%s: invalid UTF-8 at byte %zu", origin, at + 1);
    return -1;
}

void cli_metric_text(const cJSON *v, char *out, size_t cap) {
    metric_text(cJSON_IsNumber(v) ? v->valuedouble : NAN, out, (unsigned)cap);
}

void cli_print_splits(const cJSON *splits, const char *after) {
    for (const cJSON *s = splits ? splits->child : NULL; s; s = s->next) {
        if (!cJSON_IsObject(s)) continue;
        printf("  %s", s->string);
        for (const cJSON *m = s->child; m; m = m->next) {
            char v[32];
            cli_metric_text(m, v, sizeof v);
            printf(" %s %s", m->string, v);
        }
        fputs(after, stdout);
    }
}

int cli_train_sets(Args *a, CliSets *s) {
    s->n = args_strs(a, "--set", s->sets, CLI_MAX_SETS);
    for (int i = 0; i < s->n; i++) s->origin[i] = "--set";
    static const char *const OPT[CLI_SHORTHANDS] = {"--epochs", "--lr", "--batch", "--max-len", "--init"};
    static const char *const KEY[CLI_SHORTHANDS] = {"epochs", "lr", "batch", "max_len", "init"};
    for (int k = 0; k < CLI_SHORTHANDS; k++) {
        const char *v = args_str(a, OPT[k], NULL);
        if (!v) continue;
        snprintf(s->shorthand[k], sizeof s->shorthand[k], "%s=%s", KEY[k], v);
        s->origin[s->n] = OPT[k];
        s->sets[s->n++] = s->shorthand[k];
    }
    return 0;
}

int cli_nan_metric(const cJSON *splits, char *what, size_t cap) {
    for (const cJSON *s = splits ? splits->child : NULL; s; s = s->next) {
        if (!cJSON_IsObject(s)) continue;
        for (const cJSON *m = s->child; m; m = m->next)
            if (m->string && metric_from_name(m->string) != METRIC_NONE &&
                !(cJSON_IsNumber(m) && !isnan(m->valuedouble))) {
                snprintf(what, cap, "%s %s", s->string, m->string);
                return 1;
            }
    }
    return 0;
}

/* Characters that make the shell split or expand a word. */
static int needs_quotes(const char *s) {
    if (!*s) return 1;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:+@%", *s)) return 1;
    return 0;
}


char *cli_command_line(int argc, char **argv) {
    size_t cap = 16;
    for (int i = 0; i < argc; i++) cap += 4 * strlen(argv[i]) + 3;
    char *out = xmalloc(cap);
    size_t n = (size_t)snprintf(out, cap, "glue");
    /* The home directory is written ~ (no machine's paths in results files);
     * a shell expands it again where it is not quoted. */
    const char *home = getenv("HOME");
    size_t hl = home && home[0] == '/' && home[1] ? strlen(home) : 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        out[n++] = ' ';
        int quote = needs_quotes(arg);
        if (quote) out[n++] = '\'';   /* single quotes; a quote inside becomes '\'' */
        for (const char *s = arg; *s; s++) {
            int at_start = s == arg || s[-1] == '=' || s[-1] == ':';
            if (hl && at_start && strncmp(s, home, hl) == 0 && s[hl] == '/') {
                if (quote) { memcpy(out + n, "'~'", 3); n += 3; }   /* ~ outside the quotes */
                else out[n++] = '~';
                s += hl - 1;
            } else if (*s == '\'' && quote) {
                memcpy(out + n, "'\\''", 4);
                n += 4;
            } else {
                out[n++] = *s;
            }
        }
        if (quote) out[n++] = '\'';
    }
    out[n] = '\0';
    return out;
}

int cli_parse_seeds(const char *list, long *out, int max) {
    int n = 0;
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || (*end && *end != ',') || n == max) {
            user_error("e.g. --seeds 1,2,3,4,5", "--seeds %s: expected up to %d comma-separated whole numbers >= 0",
                       list, max);
            return -1;
        }
        for (int k = 0; k < n; k++)
            if (out[k] == v) {
                user_error("each seed once: a mean over repeated runs of one seed is no spread",
                           "--seeds %s: seed %ld is given twice", list, v);
                return -1;
            }
        out[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0) user_error("e.g. --seeds 1,2,3,4,5", "--seeds: no seed given");
    return n ? n : -1;
}

int cli_split_list(char *buf, const char **out, int max) {
    int n = 0;
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        if (n == max) return -1;
        out[n++] = p;
    }
    return n;
}

int cli_names_unique(const char *const *names, int n, const char *option) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0) {
                user_error_usage("name each once", "%s: '%s' is given twice", option, names[i]);
                return EXIT_USAGE;
            }
    return 0;
}

void cli_compare_dir(const char *task, const char *model, const char *tag, long seed, char *out, size_t cap) {
    if (snprintf(out, cap, "%s/compare/%s/%s%s-seed%ld", run_root(), task, model, tag, seed) >= (int)cap)
        DIE("cli_compare_dir: the path does not fit");
}

/* 1 when name is "<model>-seed<S>" or "<model>-<8 hex digits>-seed<S>". */
static int compare_dir_name_is(const char *name, const char *model, long seed) {
    size_t n = strlen(model);
    char tail[40];
    snprintf(tail, sizeof tail, "-seed%ld", seed);
    if (strncmp(name, model, n) != 0) return 0;
    const char *rest = name + n;
    if (strcmp(rest, tail) == 0) return 1;
    if (rest[0] != '-' || strspn(rest + 1, "0123456789abcdef") != 8) return 0;
    return strcmp(rest + 9, tail) == 0;
}

cJSON *cli_compare_find(const char *task, const char *model, long seed, const cJSON *config, char *dir, size_t cap) {
    char parent[4096];
    if (snprintf(parent, sizeof parent, "%s/compare/%s", run_root(), task) >= (int)sizeof parent) return NULL;
    DIR *d = opendir(parent);
    struct dirent *e;
    cJSON *res = NULL;
    while (d && !res && (e = readdir(d))) {
        if (!compare_dir_name_is(e->d_name, model, seed)) continue;
        if (snprintf(dir, cap, "%s/%s", parent, e->d_name) >= (int)cap) continue;
        res = trainer_finished_run(dir, config, seed, 0);
    }
    if (d) closedir(d);
    return res;
}

int cli_compare_finished(const Task *t, const ModelOps *ops, long seed, char *dir, size_t cap) {
    cJSON *config = run_config_build(ops->default_config(t), NULL, NULL, NULL, 0);
    if (!config) return -1;
    run_dir_path(t->name, ops->name, dir, cap);
    cJSON *res = trainer_finished_run(dir, config, seed, 0);
    if (!res) {
        cli_compare_dir(t->name, ops->name, "", seed, dir, cap);
        res = trainer_finished_run(dir, config, seed, 0);
    }
    cJSON_Delete(config);
    if (res) {
        cJSON_Delete(res);
        return 0;
    }
    char hint[512];
    snprintf(hint, sizeof hint, "train it first: glue compare %s --models %s --seeds %ld", t->name, ops->name, seed);
    user_error_usage(hint, "no finished %s run of %s with its default settings and seed %ld", ops->name, t->display,
                     seed);
    return -1;
}
