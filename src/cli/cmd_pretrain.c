/* cmd_pretrain.c — `glue pretrain`: masked-LM pretraining of a BERT encoder
 * (pretrain/train.h), plus two sub-commands:
 *   glue pretrain prepare ...   tokenize the corpus into the token cache only
 *   glue pretrain eval --init CKPT ...   held-out MLM loss and accuracy
 *   glue pretrain screen RUN_DIR ...     runs judged by a fine-tuning proxy (experiments/screen.h) */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "models/run_config.h"
#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/dist.h"
#include "core/threads.h"
#include "train/run_dir.h"
#include "pretrain/mlm_eval.h"
#include "pretrain/pretrain_config.h"
#include "experiments/screen.h"
#include "pretrain/token_cache.h"
#include "pretrain/train.h"
#include "text/tokenizer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PRETRAIN_USAGE                                                                                  \
    "glue pretrain [--config FILE.json] [--corpus [FORMAT:]FILE ...] [--set key=value ...]\n"          \
    "       [--out DIR] [--resume] [--overwrite] [--stop-at STEP] [--cache DIR] [--threads N]\n"       \
    "   or: glue pretrain prepare [--config FILE.json] [--corpus FILE ...] [--cache DIR] [--json]\n"   \
    "   or: glue pretrain eval --init CKPT|DIR [--corpus [FORMAT:]FILE] [--batch N] [--seq-len N]\n"   \
    "       [--seed S] [--max-batches N] [--vocab FILE] [--cache DIR] [--threads N] [--json]\n"           \
    "   or: glue pretrain screen RUN_DIR... [--tasks sst2,cola,mrpc,stsb,rte] [--seeds 42]\n"            \
    "       [--set key=value ...] [--results FILE.json] [--threads N]\n"                                 \
    "   or: glue pretrain snapshot RUN_DIR OUT_DIR"
#define PRETRAIN_MAX_SETS 64
#define PRETRAIN_EVAL_BATCH 64
#define PRETRAIN_EVAL_SEQ_LEN 128

/* The options shared by training and prepare: the run's config. */
typedef struct CfgArgs {
    const char *config_file;
    const char *sets[PRETRAIN_MAX_SETS + 1];
    int nsets;
    const char *corpus[PRETRAIN_MAX_CORPUS + 1];
    int ncorpus;
} CfgArgs;

/* --config, --set, --corpus (repeated, or followed by more files). 0 ok. */
static int cfg_args_get(Args *a, CfgArgs *c) {
    c->config_file = args_str(a, "--config", NULL);
    c->nsets = args_strs(a, "--set", c->sets, PRETRAIN_MAX_SETS);
    c->ncorpus = args_strs(a, "--corpus", c->corpus, PRETRAIN_MAX_CORPUS);
    return 0;
}

/* Positional arguments after the sub-command are more corpus files ("--corpus a b"). */
static int cfg_args_positional(Args *a, CfgArgs *c, int skip) {
    const char *pos[PRETRAIN_MAX_CORPUS + 2];
    int n = args_positional(a, pos, PRETRAIN_MAX_CORPUS + 2);
    if (n > skip && c->ncorpus == 0) {
        user_error("corpus files follow --corpus", "unexpected argument '%s'", pos[skip]);
        return EXIT_USAGE;
    }
    for (int i = skip; i < n; i++) {
        if (c->ncorpus == PRETRAIN_MAX_CORPUS) {
            user_error(NULL, "at most %d corpus files", PRETRAIN_MAX_CORPUS);
            return EXIT_USAGE;
        }
        c->corpus[c->ncorpus++] = pos[i];
    }
    return 0;
}

/* --corpus is a shorthand for the "corpus" setting: with --set corpus=...
 * too the command line contradicts itself (a key --set twice: the later
 * wins). pc (zeroed
 * by the caller) is freed when the config is refused. */
static int cfg_build(const CfgArgs *c, PretrainConfig *pc) {
    const char *all[PRETRAIN_MAX_SETS + 2], *origin[PRETRAIN_MAX_SETS + 2];
    char corpus_set[4200];
    int n = 0;
    for (int i = 0; i < c->nsets; i++) all[n] = c->sets[i], origin[n++] = "--set";
    if (c->ncorpus > 0) {
        snprintf(corpus_set, sizeof corpus_set, "corpus=%s", c->corpus[0]);
        all[n] = corpus_set, origin[n++] = "--corpus";
    }
    int rc = run_config_conflicts(all, origin, n) != 0
                 ? EXIT_USAGE
                 : pretrain_config_build(pc, c->config_file, c->sets, NULL, c->nsets, c->corpus, c->ncorpus);
    if (rc) pretrain_config_free(pc);
    return rc;
}

/* runs/pretrain/<config file name without .json, or the model name>. */
static void default_out_dir(const PretrainConfig *pc, const char *config_file, char *out, size_t cap) {
    char name[256];
    const char *base = config_file ? strrchr(config_file, '/') : NULL;
    base = base ? base + 1 : config_file ? config_file : pc->model;
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".json") == 0) *dot = '\0';
    run_dir_path("pretrain", name, out, cap);
}

static int pretrain_train_ranked(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    CfgArgs c = {0};
    int rc = cfg_args_get(&a, &c);
    const char *out = args_str(&a, "--out", NULL), *cache = args_str(&a, "--cache", NULL);
    int resume = args_flag(&a, "--resume"), overwrite = args_flag(&a, "--overwrite");
    long stop_at = args_int(&a, "--stop-at", 0), threads = args_threads(&a, 0);
    if (rc || (rc = cfg_args_positional(&a, &c, 0)) || (rc = args_finish(&a, PRETRAIN_USAGE))) return rc;
    if (stop_at < 0) {
        user_error(NULL, "--stop-at must not be negative");
        return EXIT_USAGE;
    }
    PretrainConfig pc = {0};
    if ((rc = cfg_build(&c, &pc))) return rc;
    char dir[4096];
    if (out) snprintf(dir, sizeof dir, "%s", out);
    else default_out_dir(&pc, c.config_file, dir, sizeof dir);
    char *command = cli_command_line(argc, argv);
    PretrainOptions o = {.cfg = &pc, .out_dir = dir, .cache_dir = cache, .command = command, .resume = resume,
                         .overwrite = overwrite, .stop_at = stop_at, .threads = threads_init((int)threads),
                         .show_progress = dist_rank() == 0};
    rc = pretrain_run(&o);
    if (rc == 0 && dist_rank() == 0 && (stop_at == 0 || stop_at >= pc.steps)) printf("pretraining done: %s\n", dir);
    free(command);
    pretrain_config_free(&pc);
    return rc;
}

static int pretrain_prepare(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    CfgArgs c = {0};
    int rc = cfg_args_get(&a, &c);
    const char *cache = args_str(&a, "--cache", NULL);
    int json = args_flag(&a, "--json");
    long threads = args_threads(&a, 0);
    if (rc || (rc = cfg_args_positional(&a, &c, 1)) || (rc = args_finish(&a, PRETRAIN_USAGE))) return rc;
    PretrainConfig pc = {0};
    if ((rc = cfg_build(&c, &pc))) return rc;
    threads_init((int)threads);
    Vocab *v = vocab_load(pc.vocab);
    TokenCacheBuild b = {.files = pc.corpus, .n_files = pc.n_corpus, .vocab = v,
                         .lowercase = 1, .show_progress = !json};
    TokenCache *tc = v ? token_cache_find(&b, cache ? cache : token_cache_default_dir()) : NULL;
    rc = tc ? 0 : 1;
    if (tc && json) {
        cJSON *j = cJSON_Duplicate(tc->meta, 1);
        cJSON_AddStringToObject(j, "path", tc->path);
        cJSON_AddNumberToObject(j, "shards", tc->n_shards);
        json_print_line(j);
        cJSON_Delete(j);
    } else if (tc) {
        const cJSON *secs = cJSON_GetObjectItemCaseSensitive(tc->meta, "seconds");
        printf("%s: %ld tokens, %ld documents, %d shards (tokenized in %.1f s)\n", tc->path, tc->n_tokens,
               tc->n_docs, tc->n_shards, cJSON_IsNumber(secs) ? secs->valuedouble : 0.0);
    }
    token_cache_close(tc);
    vocab_free(v);
    pretrain_config_free(&pc);
    return rc;
}

static void eval_print(const char *corpus, const MlmEvalResult *e, int T, int json) {
    if (json) {
        printf("{\"corpus\":\"%s\",\"loss\":%.6f,\"accuracy\":%.6f,\"masked\":%ld,\"sequences\":%ld,"
               "\"tokens\":%ld,\"seq_len\":%d,\"seconds\":%.3f}\n",
               corpus, e->loss, 100 * e->accuracy, e->masked, e->sequences, e->tokens, T, e->seconds);
        return;
    }
    printf("%s: MLM loss %.4f (perplexity %.1f), accuracy %.2f%% over %ld masked tokens\n"
           "  %ld sequences of up to %d tokens, %.1f s\n",
           corpus, e->loss, exp(e->loss), 100 * e->accuracy, e->masked, e->sequences, T, e->seconds);
}

static int pretrain_eval(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *init = args_str(&a, "--init", NULL), *corpus = args_str(&a, "--corpus", PRETRAIN_DEFAULT_EVAL);
    const char *vocab_path = args_str(&a, "--vocab", NULL);
    const char *cache = args_str(&a, "--cache", NULL);
    long B = args_int(&a, "--batch", PRETRAIN_EVAL_BATCH), T = args_int(&a, "--seq-len", PRETRAIN_EVAL_SEQ_LEN);
    long seed = args_int(&a, "--seed", MLM_EVAL_SEED), max_batches = args_int(&a, "--max-batches", 0);
    long threads = args_threads(&a, 0);
    int json = args_flag(&a, "--json");
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, PRETRAIN_USAGE);
    if (rc) return rc;
    if (!init || npos != 1 || B < 1 || B > 65536 || T < 3 || T > MASKING_MAX_LEN || seed < 0 || max_batches < 0) {
        user_error("see glue pretrain --help",
                   "pretrain eval needs --init CKPT, --batch >= 1, --seq-len in [3, %d], --seed and --max-batches >= 0",
                   MASKING_MAX_LEN);
        return EXIT_USAGE;
    }
    threads_init((int)threads);
    MlmEvalRequest req = {.init = init, .corpus = corpus, .vocab = vocab_path, .cache = cache, .batch = (int)B,
                          .seq_len = (int)T, .seed = (uint64_t)seed, .max_batches = max_batches, .quiet = json};
    MlmEvalResult e;
    const char *corpus_path = corpus;
    rc = mlm_eval_checkpoint(&req, &e, &corpus_path);
    if (rc == 0) eval_print(corpus_path, &e, (int)T, json);
    return rc;
}


/* glue pretrain screen RUN_DIR... : the fine-tuning proxy table (experiments/screen.h). */
static int pretrain_screen_cmd(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    char tasks_buf[256], seeds_buf[256];
    snprintf(tasks_buf, sizeof tasks_buf, "%s", args_str(&a, "--tasks", "sst2,cola,mrpc,stsb,rte"));
    snprintf(seeds_buf, sizeof seeds_buf, "%s", args_str(&a, "--seeds", "42"));
    char results_default[4200];
    snprintf(results_default, sizeof results_default, "%s/pretrain_screen.json", run_results_root());
    const char *results = args_str(&a, "--results", results_default);
    long threads = args_threads(&a, 0);
    const char *sets[SCREEN_MAX_SETS + 1];
    int nsets = args_strs(&a, "--set", sets, SCREEN_MAX_SETS);
    const char *pos[SCREEN_MAX_RUNS + 2];
    int npos = args_positional(&a, pos, SCREEN_MAX_RUNS + 2);
    int rc = args_finish(&a, PRETRAIN_USAGE);
    if (rc) return rc;
    const char *tasks[SCREEN_MAX_TASKS];
    long seeds[SCREEN_MAX_SEEDS];
    int nt = cli_split_list(tasks_buf, tasks, SCREEN_MAX_TASKS), ns = cli_parse_seeds(seeds_buf, seeds, SCREEN_MAX_SEEDS);
    if (ns < 0 || (nt > 0 && cli_names_unique(tasks, nt, "--tasks"))) return EXIT_USAGE;
    if (npos < 2 || npos > SCREEN_MAX_RUNS + 1 || nt < 1 || ns < 1 || nsets > SCREEN_MAX_SETS) {
        user_error("e.g. glue pretrain screen runs/pretrain/a runs/pretrain/b --tasks sst2,cola --seeds 1,2",
                   "pretrain screen: give 1 to %d run directories, up to %d tasks and %d seeds (whole numbers >= 0)",
                   SCREEN_MAX_RUNS, SCREEN_MAX_TASKS, SCREEN_MAX_SEEDS);
        return EXIT_USAGE;
    }
    char *command = cli_command_line(argc, argv);
    ScreenOptions o = {.runs = pos + 1, .n_runs = npos - 1, .tasks = tasks, .n_tasks = nt, .seeds = seeds,
                       .n_seeds = ns, .sets = sets, .n_sets = nsets, .results = results, .command = command, .threads = threads_init((int)threads)};
    rc = pretrain_screen(&o);
    free(command);
    return rc;
}

/* Training is the one pretraining command that runs data-parallel under
 * mpirun (dist.h): every rank runs this. */
static int pretrain_train(int argc, char **argv) {
    int rc = dist_init(&argc, &argv);
    if (rc) return rc;
    return dist_finalize(pretrain_train_ranked(argc, argv));
}

int cmd_pretrain(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "screen") == 0) return pretrain_screen_cmd(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "snapshot") == 0) {
        if (argc != 4) {
            user_error("usage: glue pretrain snapshot RUN_DIR OUT_DIR", "pretrain snapshot takes a run directory and an output directory");
            return EXIT_USAGE;
        }
        return pretrain_snapshot(argv[2], argv[3]);
    }
    if (argc >= 2 && strcmp(argv[1], "prepare") == 0) return pretrain_prepare(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "eval") == 0) return pretrain_eval(argc, argv);
    return pretrain_train(argc, argv);
}
