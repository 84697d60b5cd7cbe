/* report_inputs.h — what `glue report` reads, found and told apart by shape.
 *
 * From the results directory (results/ or --results) and its subdirectories
 * (results/bench/<cpu>/): every *.json, each recognised by its fields as one
 * of the files glue writes — `glue compare` (compare.json), `glue eval all`
 * and the TF-IDF baseline (glue*.json, tfidf_lr.json), `glue finetune
 * --seeds` (seeds*.json), a run's results.json copied there, `glue protocol`
 * (finetune_protocol*.json and the like), `glue pretrain screen`
 * (pretrain_screen.json), translation.json, `glue bench` (bench_fasttext.json,
 * bench/<cpu>/bench_bert_*.json, bench_scaling.json), `make bench-serve` and
 * `make soak-serve` (bench/<cpu>/serve_bench.json, serve_soak.json), `glue quantize
 * --results` (int8_accuracy.json) and `make fuzz` /
 * `make fuzz-campaign` (fuzz.json, fuzz_campaign.json).
 * From the runs directory (runs/ or --runs), walked a few levels deep: every
 * run directory with results.json (fine-tuning or translation), seeds.json,
 * and pretraining runs (log.jsonl or log.jsonl.gz); plus the encoders named
 * with --pretrain (by default the shipped encoder's, BERT_SHIPPED_ENCODER_LINEAGE).
 * Anything unreadable, corrupt or unfinished becomes a "missing" note of the
 * page instead of an error: the report shows what there is. */
#ifndef GLUE_REPORT_INPUTS_H
#define GLUE_REPORT_INPUTS_H

#include "eval/report_page.h"

typedef enum {
    REPORT_IN_COMPARE,        /* {"models": [{"model", "tasks", "glue"}, ...]} */
    REPORT_IN_EVAL_ALL,       /* {"model", "tasks": {"cola": {"dev": {...}}}, "glue"?} */
    REPORT_IN_SEEDS,          /* {"task", "model", "runs": [...], "summary": {"dev": {...}}} */
    REPORT_IN_RUN,            /* a run's results.json: {"task", "epochs": [...], "best"} */
    REPORT_IN_TRANSLATION,    /* {"task": "translation", "runs": [...]} */
    REPORT_IN_BENCH_BERT,     /* {"benchmark": "bert", ...} */
    REPORT_IN_BENCH_FASTTEXT, /* {"official": {...}, "ours": {...}} */
    REPORT_IN_PRETRAIN,       /* a pretraining run directory; path is its log */
    REPORT_IN_PROTOCOL,       /* {"rows": [{"name", "settings", "tasks", "score", "std"}], "seeds"} */
    REPORT_IN_SCREEN,         /* {"runs": [{"run", "proxy_score", ...}], "proxy": {...}} */
    REPORT_IN_BENCH_SCALING,  /* {"configs": [{"config", "ranks_over_threads", ...}]} */
    REPORT_IN_FUZZ,           /* {"harnesses": [{"harness", "executions", ...}]} */
    REPORT_IN_BENCH_RNN,      /* {"machine": {...}, "config": {...}, "results": [{"cell", "length", "what", ...}]} */
    REPORT_IN_QUANTIZED,      /* {"command", "rows": [{"run", "task", "model", "fp32", "int8", ...}]} */
    REPORT_IN_ANALYSIS,       /* {"analysis": TITLE, "tables": [{"title", "columns", "rows"}]} (a script's) */
    REPORT_IN_BENCH_SERVE,    /* {"benchmark": "serve", "levels": [...]} or {"benchmark": "serve_soak", ...} */
} ReportInputKind;

typedef struct ReportInput {
    ReportInputKind kind;
    char *path;       /* the JSON file (PRETRAIN: the log.jsonl[.gz]) */
    char *dir;        /* the run directory (runs, seeds, pretraining), else NULL */
    char *name;       /* a label: the file's stem (with its subdirectory), or the run directory */
    cJSON *json;      /* parsed (PRETRAIN: its config.json or summary.json, may be NULL) */
    int source;       /* footnote number on the page */
    int from_runs;    /* found under the runs directory (1) or in results/ (0) */
} ReportInput;

typedef struct ReportInputs {
    ReportInput *in;
    int n, cap;
} ReportInputs;

/* Loads everything; never fails (what cannot be read is noted on p). */
void report_inputs_load(ReportInputs *r, ReportPage *p, const char *results_dir, const char *runs_dir,
                        const char *const *pretrain_dirs, int npretrain);
void report_inputs_free(ReportInputs *r);
/* How many inputs of a kind. */
int report_inputs_count(const ReportInputs *r, ReportInputKind kind);

/* Parse a JSON file; NULL with a one-line reason in why (cap bytes): missing,
 * unreadable, or "not valid JSON at line L". */
cJSON *report_json_file(const char *path, char *why, size_t cap);

#endif
