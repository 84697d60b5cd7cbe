/* bench_rnn.c — `glue bench rnn`: our recurrent layers (nn/lstm.h, nn/gru.h)
 * against PyTorch's nn.LSTM and nn.GRU (eval/bench/bench_rnn.py,
 * /usr/bin/python3, Debian python3-torch, fp32) on this machine, in one
 * invocation: bidirectional, the BiLSTM's default size (input 300, hidden 512
 * per direction, batch 64), full-length rows of 20 and 70 steps. Two
 * measurements per cell and length:
 *   train  zero the gradients, forward, backward (the gradients of the input
 *          and of every weight), as a training step runs the layer;
 *   infer  forward only.
 * Medians of --reps timed calls after one warm-up each side. For each cell
 * and length in turn, a PyTorch child (on the same threads: OMP_NUM_THREADS,
 * torch.set_num_threads) times that block, then ours does, so the two sides
 * of a ratio are measured minutes apart at most, not a whole run apart. The
 * ratio is PyTorch's median over ours (above 1: ours faster).
 * The load average at the start and end is recorded: numbers taken while
 * other jobs run say so. Results: bench/<cpu>/bench_rnn.json and its .md. */
#include "eval/bench/bench.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/kernels.h"
#include "core/provenance.h"
#include "core/rng.h"
#include "core/threads.h"
#include "nn/gru.h"
#include "nn/lstm.h"
#include "train/run_dir.h"

#define BENCH_RNN_USAGE                                                                               \
    "glue bench rnn [--reps 5] [--threads 2] [--batch 64] [--dim 300] [--hidden 512] [--lengths 20,70]\n" \
    "               [--python /usr/bin/python3] [--script eval/bench/bench_rnn.py] [--no-torch] [--json]"
#define BR_MAX_LENGTHS 8
enum { BR_LSTM, BR_GRU, BR_CELLS };
enum { BR_TRAIN, BR_INFER, BR_WHATS };
static const char *const BR_CELL_NAMES[BR_CELLS] = {"lstm", "gru"};
static const char *const BR_WHAT_NAMES[BR_WHATS] = {"train", "infer"};

typedef struct {
    int reps, threads, B, D, H, torch, json, n_len, lengths[BR_MAX_LENGTHS];
    const char *python, *script, *lengths_arg;
} RnnBench;

static int bench_rnn_parse(int argc, char **argv, RnnBench *b) {
    Args a;
    args_init(&a, argc, argv);
    b->reps = (int)args_int(&a, "--reps", 5);
    b->threads = (int)args_threads(&a, 2);
    b->B = (int)args_int(&a, "--batch", 64);
    b->D = (int)args_int(&a, "--dim", 300);
    b->H = (int)args_int(&a, "--hidden", 512);
    b->lengths_arg = args_str(&a, "--lengths", "20,70");
    b->python = args_str(&a, "--python", "/usr/bin/python3");
    b->script = args_str(&a, "--script", "eval/bench/bench_rnn.py");
    b->torch = !args_flag(&a, "--no-torch");
    b->json = args_flag(&a, "--json");
    int rc = args_finish(&a, BENCH_RNN_USAGE);
    if (rc) return rc;
    b->n_len = 0;
    for (const char *p = b->lengths_arg; *p && b->n_len < BR_MAX_LENGTHS;) {
        char *end;
        long t = strtol(p, &end, 10);
        if (end == p || t < 1 || t > 4096 || (*end && *end != ',')) b->n_len = -1;
        if (b->n_len < 0) break;
        b->lengths[b->n_len++] = (int)t;
        p = *end ? end + 1 : end;
    }
    if (b->reps < 1 || b->reps > 100 || b->threads < 1 || b->B < 1 || b->D < 1 || b->H < 1 || b->n_len <= 0 ||
        (long)b->B * b->lengths[0] * b->H > 1L << 30) {
        user_error_usage(BENCH_RNN_USAGE, "glue bench rnn: --reps 1..100, --threads, --batch, --dim, --hidden "
                         "positive, --lengths a list of 1..4096");
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- ours ---- */

typedef struct {
    RnnDims d;
    float *x, *dx, *dh, *h, *gates, *state, *scratch, *w, *g;
    long nw;   /* floats of one direction's w_ih, w_hh, b_ih, b_hh */
} Ours;

static void ours_init(Ours *o, const RnnBench *b, int T) {
    RnnDims d = {.B = b->B, .T = T, .C = b->D, .H = b->H};
    long BT = (long)b->B * T, H = b->H, G = 4 * H;   /* sized for the LSTM, the larger */
    o->d = d;
    o->nw = G * b->D + G * H + 2 * G;
    o->x = xaligned_alloc(sizeof(float) * (size_t)(BT * b->D));
    o->dx = xaligned_alloc(sizeof(float) * (size_t)(BT * b->D));
    o->dh = xaligned_alloc(sizeof(float) * (size_t)(BT * 2 * H));
    o->h = xaligned_alloc(sizeof(float) * (size_t)(BT * 2 * H));
    o->gates = xaligned_alloc(sizeof(float) * (size_t)(2 * BT * G));
    o->state = xaligned_alloc(sizeof(float) * (size_t)(2 * BT * H));
    long sl = lstm_scratch_size(d), sg = gru_scratch_size(d);
    o->scratch = xaligned_alloc(sizeof(float) * (size_t)(sl > sg ? sl : sg));
    o->w = xaligned_alloc(sizeof(float) * (size_t)(2 * o->nw));
    o->g = xaligned_alloc(sizeof(float) * (size_t)(2 * o->nw));
    Rng r;
    rng_seed(&r, 1);
    float a = 1.0f / sqrtf((float)H);
    for (long i = 0; i < BT * b->D; i++) o->x[i] = rng_uniform(&r) * 2 - 1;
    for (long i = 0; i < BT * 2 * H; i++) o->dh[i] = rng_uniform(&r) * 2 - 1;
    for (long i = 0; i < 2 * o->nw; i++) o->w[i] = (rng_uniform(&r) * 2 - 1) * a;
}

static void ours_free(Ours *o) {
    void *all[] = {o->x, o->dx, o->dh, o->h, o->gates, o->state, o->scratch, o->w, o->g};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

/* One call of measurement `what` for `cell`. */
static void ours_call(Ours *o, int cell, int what) {
    long G = (cell == BR_LSTM ? 4L : 3L) * o->d.H, C = o->d.C, H = o->d.H;
    const float *wp[2][4];
    float *gp[2][4];
    for (int dir = 0; dir < 2; dir++) {
        const float *w = o->w + dir * o->nw;
        float *g = o->g + dir * o->nw;
        long off[4] = {0, G * C, G * C + G * H, G * C + G * H + G};
        for (int k = 0; k < 4; k++) { wp[dir][k] = w + off[k]; gp[dir][k] = g + off[k]; }
    }
    if (what == BR_TRAIN) {   /* a step starts with zeroed gradients */
        memset(o->g, 0, sizeof(float) * (size_t)(2 * o->nw));
        memset(o->dx, 0, sizeof(float) * (size_t)((long)o->d.B * o->d.T * C));
    }
    if (cell == BR_LSTM) {
        LstmWeights w[2] = {{wp[0][0], wp[0][1], wp[0][2], wp[0][3]}, {wp[1][0], wp[1][1], wp[1][2], wp[1][3]}};
        LstmGrads g[2] = {{gp[0][0], gp[0][1], gp[0][2], gp[0][3]}, {gp[1][0], gp[1][1], gp[1][2], gp[1][3]}};
        bilstm_forward(o->h, o->gates, o->state, o->x, NULL, w, o->d, o->scratch);
        if (what == BR_TRAIN)
            bilstm_backward(o->dx, g, o->dh, o->h, o->gates, o->state, o->x, NULL, w, o->d, o->scratch);
    } else {
        GruWeights w[2] = {{wp[0][0], wp[0][1], wp[0][2], wp[0][3]}, {wp[1][0], wp[1][1], wp[1][2], wp[1][3]}};
        GruGrads g[2] = {{gp[0][0], gp[0][1], gp[0][2], gp[0][3]}, {gp[1][0], gp[1][1], gp[1][2], gp[1][3]}};
        bigru_forward(o->h, o->gates, o->state, o->x, NULL, w, o->d, o->scratch);
        if (what == BR_TRAIN)
            bigru_backward(o->dx, g, o->dh, o->h, o->gates, o->state, o->x, NULL, w, o->d, o->scratch);
    }
}

/* ---- PyTorch ---- */

/* The child's JSON for one cell and length (NULL after a message). */
static cJSON *torch_run(const RnnBench *b, int cell, int T) {
    char dir[4096], outp[4200], errp[4200], a[5][24];
    if (bench_tmpdir_make("bench-rnn", dir, sizeof dir) != 0) return NULL;
    snprintf(outp, sizeof outp, "%s/out.json", dir);
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    int vals[5] = {b->B, b->D, b->H, b->threads, b->reps};
    for (int i = 0; i < 5; i++) snprintf(a[i], sizeof a[i], "%d", vals[i]);
    char len[16];
    snprintf(len, sizeof len, "%d", T);
    const char *argv[] = {b->python, b->script, a[0], a[1], a[2], a[3], a[4], len, BR_CELL_NAMES[cell], NULL};
    char omp[32];
    snprintf(omp, sizeof omp, "%d", b->threads);
    setenv("OMP_NUM_THREADS", omp, 1);
    int rc = bench_spawn(argv, outp, errp, NULL);
    cJSON *j = NULL;
    if (rc == 0) {
        char *text = file_read(outp, NULL);
        j = text ? cJSON_Parse(text) : NULL;
        free(text);
    }
    if (!j) {
        char *err = file_read(errp, NULL);
        user_error(rc == 77 ? "install python3-torch (apt-get install python3-torch), or use --no-torch"
                            : "give --python PATH and --script PATH, or --no-torch to time ours alone",
                   "the PyTorch side (%s %s) failed (status %d)%s%s", b->python, b->script, rc, err ? ": " : "",
                   err ? err : "");
        free(err);
    }
    file_remove_tree(dir);
    return j;
}

/* ---- the table ---- */

static Summary br_summary_of(const cJSON *arr) {
    double v[128];
    int n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, arr) if (n < 128 && cJSON_IsNumber(x)) v[n++] = x->valuedouble;
    return summarize(v, n);
}

/* One row: cell, length, measurement; ours (and PyTorch's) seconds per call. */
static cJSON *br_row(int cell, int T, int what, Summary ours, const cJSON *torch_times) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "cell", BR_CELL_NAMES[cell]);
    cJSON_AddNumberToObject(r, "length", T);
    cJSON_AddStringToObject(r, "what", BR_WHAT_NAMES[what]);
    cJSON_AddItemToObject(r, "ours_seconds", bench_stats_json(ours));
    if (torch_times) {
        Summary t = br_summary_of(torch_times);
        cJSON_AddItemToObject(r, "torch_seconds", bench_stats_json(t));
        cJSON_AddNumberToObject(r, "torch_over_ours", t.median / ours.median);
    }
    return r;
}

/* The Markdown twin of the results; 0, or -1 after a message. */
static int br_write_md(const char *json_path, const cJSON *j, const RnnBench *b) {
    char md[4200];
    file_md_twin(json_path, md, sizeof md);
    AtomicFile a;
    FILE *f = atomic_open(&a, md);
    if (!f) return -1;
    const cJSON *m = cJSON_GetObjectItem(j, "machine");
    fprintf(f, "# glue bench rnn\n\nBidirectional, input %d, hidden %d per direction, batch %d, full-length rows; "
               "seconds per call (median of %d), %d threads, on %s; load average %.2f at the start, %.2f at the end.\n\n",
            b->D, b->H, b->B, b->reps, b->threads, cJSON_GetStringValue(cJSON_GetObjectItem(m, "cpu")),
            cJSON_GetNumberValue(cJSON_GetObjectItem(m, "load_start")), cJSON_GetNumberValue(cJSON_GetObjectItem(m, "load_end")));
    fprintf(f, "| cell | length | measurement | ours (s) | PyTorch (s) | PyTorch / ours |\n|---|---:|---|---:|---:|---:|\n");
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "results")) {
        const cJSON *t = cJSON_GetObjectItem(r, "torch_seconds");
        fprintf(f, "| %s | %d | %s | %.4f | ", cJSON_GetStringValue(cJSON_GetObjectItem(r, "cell")),
                (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "length")), cJSON_GetStringValue(cJSON_GetObjectItem(r, "what")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ours_seconds"), "median")));
        if (t) fprintf(f, "%.4f | %.2fx |\n", cJSON_GetNumberValue(cJSON_GetObjectItem(t, "median")),
                       cJSON_GetNumberValue(cJSON_GetObjectItem(r, "torch_over_ours")));
        else fprintf(f, "- | - |\n");
    }
    if (atomic_commit(&a) != 0) return -1;
    fprintf(stderr, "glue: wrote %s\n", md);
    return 0;
}

int bench_rnn(int argc, char **argv) {
    RnnBench b = {0};
    int rc = bench_rnn_parse(argc, argv, &b);
    if (rc) return rc;
    threads_init(b.threads);
    double load0 = 0, load1 = 0;
    getloadavg(&load0, 1);
    cJSON *j = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddItemToObject(j, "provenance", provenance_json(b.threads, 1));
    for (int cell = 0; cell < BR_CELLS; cell++)
        for (int li = 0; li < b.n_len; li++) {
            int T = b.lengths[li];
            cJSON *torch = b.torch ? torch_run(&b, cell, T) : NULL;
            if (b.torch && !torch) {
                cJSON_Delete(j);
                cJSON_Delete(rows);
                return 1;
            }
            Ours o;
            ours_init(&o, &b, T);
            for (int what = 0; what < BR_WHATS; what++) {
                double v[100];
                ours_call(&o, cell, what);   /* warm-up */
                for (int r = 0; r < b.reps; r++) {
                    double t0 = now_seconds();
                    ours_call(&o, cell, what);
                    v[r] = now_seconds() - t0;
                }
                char key[16];
                snprintf(key, sizeof key, "%d", T);
                const cJSON *tt = torch ? cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(torch, BR_CELL_NAMES[cell]), key),
                                                              BR_WHAT_NAMES[what])
                                        : NULL;
                Summary s = summarize(v, b.reps);
                cJSON_AddItemToArray(rows, br_row(cell, T, what, s, tt));
                fprintf(stderr, "%-4s T=%-3d %-5s ours %.4f s", BR_CELL_NAMES[cell], T, BR_WHAT_NAMES[what], s.median);
                if (tt) fprintf(stderr, "  PyTorch %.4f s  (%.2fx)", br_summary_of(tt).median, br_summary_of(tt).median / s.median);
                fprintf(stderr, "\n");
            }
            ours_free(&o);
            cJSON_Delete(torch);
        }
    getloadavg(&load1, 1);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "cpu", kernels_cpu_model());
    cJSON_AddNumberToObject(m, "cores", threads_default());
    cJSON_AddNumberToObject(m, "threads", b.threads);
    cJSON_AddNumberToObject(m, "load_start", load0);
    cJSON_AddNumberToObject(m, "load_end", load1);
    cJSON_AddItemToObject(j, "machine", m);
    cJSON *cfg = cJSON_CreateObject();
    cJSON_AddNumberToObject(cfg, "batch", b.B);
    cJSON_AddNumberToObject(cfg, "dim", b.D);
    cJSON_AddNumberToObject(cfg, "hidden", b.H);
    cJSON_AddNumberToObject(cfg, "reps", b.reps);
    cJSON_AddItemToObject(j, "config", cfg);
    cJSON_AddItemToObject(j, "results", rows);
    if (b.json) json_print_line(j);
    char name[512], dir[256], path[4200];
    bench_cpu_dir(dir, sizeof dir);
    snprintf(name, sizeof name, "%s/bench_rnn.json", dir);
    int fail = bench_write_results(name, j) != 0;
    if (!fail) {
        file_join(run_results_root(), name, path, sizeof path);
        fail = br_write_md(path, j, &b) != 0;
    }
    cJSON_Delete(j);
    return fail;
}
