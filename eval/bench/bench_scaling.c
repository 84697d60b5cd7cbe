/* bench_scaling.c — `glue bench scaling`: data-parallel pretraining on this
 * machine. The same pretraining (a config's model, a real corpus) as one
 * process with all cores as threads, and as `mpirun -np R` ranks with the
 * cores split between them (the default: 1 rank x 2 threads against 2 ranks x
 * 1 thread), alternating A/B for --reps rounds so that other load on the
 * machine hits both alike. Per arrangement: tokens/s of the steady state (the
 * second half of the steps, from log.jsonl), and for the ranks the time per
 * step inside the gradient all-reduce, the time before it waiting for the
 * slower rank (a barrier), the bytes summed per step (summary.json
 * "allreduce"), and the AdamW state each rank keeps (--zero 1: the ranks
 * shard it, ZeRO-1). Writes
 * runs/results/bench_scaling.json naming the CPU. */
#include "eval/bench/bench.h"

#include "core/args.h"
#include "core/common.h"
#include "core/provenance.h"
#include "core/dist.h"
#include "core/files.h"
#include "core/lines.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCALING_USAGE                                                                                           \
    "glue bench scaling [--config tiny|mini|FILE.json ...] [--steps 20] [--reps 3] [--ranks 2]\n"       \
    "       [--threads 2] [--batch 64] [--zero 0|1] [--corpus FILE] [--out NAME.json (under runs/results/)]"

enum { SCALING_MAX_CONFIGS = 4, SCALING_MAX_REPS = 20 };

typedef struct {
    const char *config;      /* a pretrain config name (pretrain/<name>.json) or file */
    char config_path[4096];
    const char *corpus;
    long steps, batch;
    int threads, ranks, zero;
    char tmp[4096], self[4096], heldout[4200];
} Scaling;

/* One measurement of one arrangement. */
typedef struct {
    double tokens_per_sec, allreduce_s, wait_s, allreduce_bytes, state_bytes;
} Sample;

static cJSON *read_json(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return cJSON_Parse(buf);
}

/* tokens_per_sec of the last training line of dir/log.jsonl (0 if none). */
static double last_window_rate(const char *dir) {
    char path[4300];
    snprintf(path, sizeof path, "%s/log.jsonl", dir);
    LineReader lr;
    double rate = 0;
    if (lines_open(&lr, path) != LINES_OK) return 0;
    char *line;
    size_t len;
    while (lines_next(&lr, &line, &len) == 1) {
        cJSON *j = cJSON_ParseWithLength(line, len);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tokens_per_sec");
        if (cJSON_IsNumber(t) && cJSON_GetObjectItemCaseSensitive(j, "loss")) rate = t->valuedouble;
        cJSON_Delete(j);
    }
    lines_close(&lr);
    return rate;
}

/* Runs the pretraining once with `ranks` processes of `threads` threads. 0 ok. */
static int scaling_run(const Scaling *sc, int ranks, int threads, int k, Sample *out) {
    char dir[4200], log[4300], steps[64], every[64], batch[64], nthreads[16], nranks[16], eval[4300], zero[16];
    snprintf(dir, sizeof dir, "%s/run%d", sc->tmp, k);
    snprintf(log, sizeof log, "%s/stderr%d.txt", sc->tmp, k);
    snprintf(steps, sizeof steps, "steps=%ld", 2 * sc->steps);
    snprintf(every, sizeof every, "log_every=%ld", sc->steps);
    snprintf(batch, sizeof batch, "batch=%ld", sc->batch);
    snprintf(nthreads, sizeof nthreads, "%d", threads);
    snprintf(nranks, sizeof nranks, "%d", ranks);
    snprintf(eval, sizeof eval, "eval_corpus=text:%s", sc->heldout);
    snprintf(zero, sizeof zero, "zero=%d", sc->zero);
    const char *argv[48];
    int n = 0;
    if (ranks > 1) {
        argv[n++] = "/usr/bin/env";
        argv[n++] = "mpirun";
        if (geteuid() == 0) argv[n++] = "--allow-run-as-root";
        argv[n++] = "--oversubscribe";
        argv[n++] = "-np";
        argv[n++] = nranks;
    }
    const char *rest[] = {sc->self, "pretrain", "--config", sc->config_path, "--corpus", sc->corpus, "--set", steps,
                          "--set", every, "--set", batch, "--set", "eval_every=0", "--set", "checkpoint_every=0",
                          "--set", eval, "--set", "warmup=1", "--set", zero, "--threads", nthreads, "--out", dir, NULL};
    for (int i = 0; rest[i]; i++) argv[n++] = rest[i];
    argv[n] = NULL;
    int rc = bench_spawn(argv, NULL, log, NULL);
    if (rc != 0) {
        /* Its messages, before the temporary directory goes. */
        FILE *f = fopen(log, "r");
        char buf[4096];
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[n] = '\0';
        fputs(buf, stderr);
        user_error("see the pretraining's messages above", "bench scaling: %d rank(s) x %d thread(s) failed (exit %d)",
                   ranks, threads, rc);
        return -1;
    }
    *out = (Sample){.tokens_per_sec = last_window_rate(dir)};
    char path[4300];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *s = read_json(path);
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(s, "optimizer_state_bytes_per_rank");
    if (cJSON_IsNumber(state)) out->state_bytes = state->valuedouble;
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(s, "allreduce");
    if (ar) {
        out->allreduce_s = cJSON_GetObjectItemCaseSensitive(ar, "seconds_per_step")->valuedouble;
        out->allreduce_bytes = cJSON_GetObjectItemCaseSensitive(ar, "bytes_per_step")->valuedouble;
        out->wait_s = cJSON_GetObjectItemCaseSensitive(ar, "wait_seconds_per_step")->valuedouble;
    }
    cJSON_Delete(s);
    /* The run directory's files (checkpoints) go now; the tmp dir at the end. */
    file_remove_tree(dir);
    remove(log);
    return out->tokens_per_sec > 0 ? 0 : -1;
}

static cJSON *samples_json(const Sample *s, int n, int field) {
    double v[SCALING_MAX_REPS];
    for (int i = 0; i < n; i++)
        v[i] = field == 0   ? s[i].tokens_per_sec
               : field == 1 ? s[i].allreduce_s
               : field == 2 ? s[i].allreduce_bytes
               : field == 3 ? s[i].wait_s
                            : s[i].state_bytes;
    return bench_stats_json(summarize(v, n));
}

/* A/B rounds for one config; its JSON object. NULL after a message. */
static cJSON *scaling_config(Scaling *sc, int reps) {
    Sample one[SCALING_MAX_REPS], many[SCALING_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        if (scaling_run(sc, 1, sc->threads, 2 * r, &one[r]) ||
            scaling_run(sc, sc->ranks, sc->threads / sc->ranks, 2 * r + 1, &many[r]))
            return NULL;
        fprintf(stderr,
                "bench scaling %s rep %d: 1x%d %.0f tok/s, %dx%d %.0f tok/s (all-reduce %.1f ms/step, wait %.1f; "
                "AdamW state %.1f MB per rank, %.1f MB on 1)\n",
                sc->config, r + 1, sc->threads, one[r].tokens_per_sec, sc->ranks, sc->threads / sc->ranks,
                many[r].tokens_per_sec, 1e3 * many[r].allreduce_s, 1e3 * many[r].wait_s, 1e-6 * many[r].state_bytes,
                1e-6 * one[r].state_bytes);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "config", sc->config);
    cJSON_AddNumberToObject(j, "batch", (double)sc->batch);
    cJSON_AddNumberToObject(j, "measured_steps", (double)sc->steps);
    char key[64];
    snprintf(key, sizeof key, "ranks1_threads%d_tokens_per_sec", sc->threads);
    cJSON_AddItemToObject(j, key, samples_json(one, reps, 0));
    snprintf(key, sizeof key, "ranks%d_threads%d_tokens_per_sec", sc->ranks, sc->threads / sc->ranks);
    cJSON_AddItemToObject(j, key, samples_json(many, reps, 0));
    cJSON_AddItemToObject(j, "allreduce_seconds_per_step", samples_json(many, reps, 1));
    cJSON_AddItemToObject(j, "allreduce_bytes_per_step", samples_json(many, reps, 2));
    cJSON_AddItemToObject(j, "wait_for_slowest_rank_seconds_per_step", samples_json(many, reps, 3));
    cJSON_AddNumberToObject(j, "zero", sc->zero);
    cJSON_AddNumberToObject(j, "ranks1_optimizer_state_bytes", one[0].state_bytes);
    cJSON_AddNumberToObject(j, "ranks_optimizer_state_bytes_per_rank", many[0].state_bytes);
    double ratio[SCALING_MAX_REPS];
    for (int r = 0; r < reps; r++) ratio[r] = many[r].tokens_per_sec / one[r].tokens_per_sec;
    cJSON_AddItemToObject(j, "ranks_over_threads", bench_stats_json(summarize(ratio, reps)));
    return j;
}

int bench_scaling(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *configs[SCALING_MAX_CONFIGS];
    int nc = args_strs(&a, "--config", configs, SCALING_MAX_CONFIGS);
    Scaling sc = {.corpus = args_str(&a, "--corpus", "data/pretrain/brown/brown_tagged.txt.gz"),
                  .steps = args_int(&a, "--steps", 20), .batch = args_int(&a, "--batch", 64),
                  .threads = (int)args_threads(&a, 2), .ranks = (int)args_int(&a, "--ranks", 2),
                  .zero = (int)args_int(&a, "--zero", 0)};
    long reps = args_int(&a, "--reps", 3);
    const char *out = args_str(&a, "--out", "bench_scaling.json");
    int rc = args_finish(&a, SCALING_USAGE);
    if (rc) return rc;
    if (nc == 0) configs[nc++] = "tiny";
    if (!dist_available()) {
        user_error("apt-get install libopenmpi-dev openmpi-bin, then make clean && make",
                   "bench scaling: this glue was built without MPI");
        return 1;
    }
    if (sc.steps < 1 || sc.batch < 1 || reps < 1 || reps > SCALING_MAX_REPS || sc.ranks < 2 || sc.threads < sc.ranks ||
        sc.threads % sc.ranks || sc.batch % sc.ranks || sc.zero < 0 || sc.zero > 1) {
        user_error(SCALING_USAGE, "bench scaling: need --steps, --batch >= 1, --reps 1..%d, --ranks >= 2 dividing "
                   "--threads and --batch, --zero 0 or 1", SCALING_MAX_REPS);
        return EXIT_USAGE;
    }
    ssize_t len = readlink("/proc/self/exe", sc.self, sizeof sc.self - 1);
    if (len <= 0) {
        user_error(NULL, "bench scaling: cannot find the glue binary (/proc/self/exe)");
        return 1;
    }
    sc.self[len] = '\0';
    if (bench_tmpdir_make("scaling", sc.tmp, sizeof sc.tmp)) return 1;
    /* A one-line held-out text: the final evaluation is not what is measured. */
    snprintf(sc.heldout, sizeof sc.heldout, "%s/heldout.txt", sc.tmp);
    FILE *f = fopen(sc.heldout, "w");
    if (f) fputs("the cat sat on the mat and the dog ran to the house .\n", f);
    if (!f || fclose(f)) {
        user_error_io(NULL, "cannot write %s", sc.heldout);
        file_remove_tree(sc.tmp);
        return 1;
    }
    cJSON *j = cJSON_CreateObject();
    char cpu[256];
    provenance_cpu(cpu, sizeof cpu);
    cJSON_AddStringToObject(j, "cpu", cpu);
    cJSON_AddItemToObject(j, "provenance", provenance_json(sc.threads, -1));
    cJSON_AddNumberToObject(j, "cores_used", sc.threads);
    cJSON_AddNumberToObject(j, "reps", (double)reps);
    cJSON_AddStringToObject(j, "corpus", sc.corpus);
    cJSON *list = cJSON_AddArrayToObject(j, "configs");
    int fail = 0;
    for (int c = 0; c < nc && !fail; c++) {
        sc.config = configs[c];
        if (strchr(sc.config, '/') || strstr(sc.config, ".json"))
            snprintf(sc.config_path, sizeof sc.config_path, "%s", sc.config);
        else
            snprintf(sc.config_path, sizeof sc.config_path, "pretrain/%s.json", sc.config);
        cJSON *cj = scaling_config(&sc, (int)reps);
        if (cj) cJSON_AddItemToArray(list, cj);
        else fail = 1;
    }
    file_remove_tree(sc.tmp);
    if (!fail) {
        char *s = cJSON_Print(j);
        printf("%s\n", s);
        free(s);
        fail = bench_write_results(out, j) != 0;
    }
    cJSON_Delete(j);
    return fail;
}
