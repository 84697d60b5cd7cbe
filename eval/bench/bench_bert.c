/* bench_bert.c — `glue bench bert`: our BERT against the same model in PyTorch
 * (eval/bench/bench_bert.py, /usr/bin/python3, Debian python3-torch, fp32) on
 * this machine, in one invocation, alternating A/B over several repetitions
 * after a warm-up, so that the ratios survive a machine whose load changes
 * (issue 6). Three measurements:
 *   train    one pretraining step: zero grad, forward with dropout, MLM loss on
 *            the masked positions (gathered before the vocabulary projection),
 *            backward, AdamW — B = 32, T = 128, 15% of the positions masked;
 *            ours as `glue pretrain` runs it (bert_forward_rows: the last
 *            layer only at the masked rows), PyTorch computing every position
 *            as HF does;
 *   infer    classification forward (encoder + pooler + classifier), B = 32, T = 128,
 *            ours as `glue predict` runs it (bert_forward_pooled: the last
 *            layer only at [CLS]), PyTorch computing every position as HF does;
 *   latency  the same for one sentence, B = 1, T = 32;
 *   infer_bf16, latency_bf16   the same two as --bf16 runs them: our encoder's
 *            dense weights in bf16 (bert_use_bf16: AVX512-BF16 products, fp32
 *            sums) where the CPU has the bf16 dot product (kernel level
 *            avx512bf16), the fp32 path elsewhere; against PyTorch under
 *            torch.autocast("cpu", bfloat16).
 *   infer_int8, latency_int8   the same two as --int8 runs them: our encoder's
 *            dense layers through core/gemm_int8 (bert_use_int8: int8 weights
 *            per output row, activations quantized per row as they come, int32
 *            sums); against PyTorch's torch.quantization.quantize_dynamic(model,
 *            {nn.Linear}, dtype=torch.qint8) of its same model (fbgemm or onednn,
 *            whichever its build chose: also per-row dynamic activations). The
 *            rows also give the speed-up over our own fp32 (infer, latency).
 *   train_bf16  the training step with matmul's bf16 precision (core/blas.h:
 *            the dense layers' products from bf16-rounded operands, fp32 sums,
 *            everything else fp32) where the CPU has the bf16 dot product, the
 *            fp32 step elsewhere; against PyTorch's step under bf16 autocast.
 * Rows are full length on both sides (no padding). Each repetition also times
 * OpenBLAS sgemm alone on the step's own dense GEMMs (same shapes and
 * transposes, no attention, no element-wise work): the GFLOP/s a step made only
 * of those GEMMs would reach now, the ceiling that "fraction of sgemm" divides
 * by. FLOPs are counted analytically (bench_bert_flops). The PyTorch process
 * runs on the same 2 threads with OMP_WAIT_POLICY=PASSIVE (ours: a short spin,
 * core/threads.h); while one side runs the other waits on a pipe. */
#include "eval/bench/bench.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/args.h"
#include "core/blas.h"
#include "core/common.h"
#include "core/gemm_bf16.h"
#include "core/gemm_int8.h"
#include "core/kernels.h"
#include "core/provenance.h"
#include "core/sgemm.h"
#include "core/rng.h"
#include "core/threads.h"
#include "models/bert/bert.h"
#include "optim/optim.h"

#define BENCH_BERT_USAGE                                                                              \
    "glue bench bert [--config tiny|mini|small|...] [--reps 7] [--steps N] [--threads 2]\n"          \
    "                [--python /usr/bin/python3] [--script eval/bench/bench_bert.py] [--no-torch] [--json]"
#define BENCH_BERT_PYTHON "/usr/bin/python3"
#define BENCH_BERT_SCRIPT "eval/bench/bench_bert.py"
#define BENCH_BERT_MAX_REPS 100
enum { BB_B = 32, BB_T = 128, BB_LAT_T = 32, BB_LABELS = 2, BB_SEED = 1, BB_FIRST_ID = 1000 };
#define BB_MASK_FRAC 0.15

extern char **environ;
extern char *openblas_get_corename(void);

/* The three measurements. */
/* The *_bf16 measurements: ours with bf16 encoder weights (bert_use_bf16)
 * against PyTorch under bf16 autocast. */
enum { BB_TRAIN, BB_INFER, BB_LATENCY, BB_INFER_BF16, BB_LATENCY_BF16, BB_TRAIN_BF16, BB_INFER_INT8,
       BB_LATENCY_INT8, BB_NUM };
static const char *const BB_NAMES[BB_NUM] = {"train",      "infer",      "latency",     "infer_bf16",
                                             "latency_bf16", "train_bf16", "infer_int8", "latency_int8"};

static int bb_is_train(int what) { return what == BB_TRAIN || what == BB_TRAIN_BF16; }

static int bb_is_latency(int what) { return what == BB_LATENCY || what == BB_LATENCY_BF16 || what == BB_LATENCY_INT8; }

static int bb_is_int8(int what) { return what == BB_INFER_INT8 || what == BB_LATENCY_INT8; }

typedef struct {
    BertConfig cfg;
    const char *config_name, *python, *script;
    int reps, threads, json, torch;
    int iters[BB_NUM];                 /* calls per timed block */
    int n_masked;
    pid_t pid;                         /* the PyTorch server, 0 = none */
    FILE *to_py, *from_py;
} BertBench;

/* ---- the PyTorch server ---- */

/* Reads one line from the server into buf; 0 ok, -1 when it died. */
static int bb_py_line(BertBench *b, char *buf, size_t cap) {
    if (!fgets(buf, (int)cap, b->from_py)) return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* Sends "cmd k", returns the first number it answers (wall seconds, MiB), or
 * -1; *second (may be NULL) gets the second (CPU seconds), if any. */
static double bb_py_ask(BertBench *b, const char *cmd, int k, double *second) {
    char line[256];
    if (k > 0) fprintf(b->to_py, "%s %d\n", cmd, k);
    else fprintf(b->to_py, "%s\n", cmd);
    fflush(b->to_py);
    if (bb_py_line(b, line, sizeof line) != 0) return -1.0;
    char *end, *end2;
    double v = strtod(line, &end);
    if (second) {
        *second = strtod(end, &end2);
        if (end2 == end) *second = 0.0;
    }
    return end == line ? -1.0 : v;
}

/* Starts the server with two pipes and waits for its "ready". */
static int bb_py_start(BertBench *b) {
    const BertConfig *c = &b->cfg;
    char a[11][24];
    int vals[11] = {c->vocab_size, c->hidden_size, c->num_layers, c->num_heads, c->intermediate_size,
                    c->max_position, BB_B, BB_T, b->n_masked, BB_LAT_T, b->threads};
    const char *argv[14] = {b->python, b->script};
    for (int i = 0; i < 11; i++) {
        snprintf(a[i], sizeof a[i], "%d", vals[i]);
        argv[2 + i] = a[i];
    }
    argv[13] = NULL;
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) DIE("pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    /* The environment: ours plus the threading the comparison prescribes
     * (without the GOMP_SPINCOUNT core/threads.c gave us: PyTorch's libgomp
     * would read it). */
    char omp_n[32];
    snprintf(omp_n, sizeof omp_n, "OMP_NUM_THREADS=%d", b->threads);
    int ne = 0;
    while (environ[ne]) ne++;
    const char **env = xmalloc(sizeof(char *) * (size_t)(ne + 4));
    int k = 0;
    for (int i = 0; i < ne; i++)
        if (strncmp(environ[i], "OMP_", 4) != 0 && strncmp(environ[i], "GOMP_", 5) != 0) env[k++] = environ[i];
    env[k++] = omp_n;
    env[k++] = "OMP_WAIT_POLICY=PASSIVE";
    env[k++] = "PYTHONDONTWRITEBYTECODE=1";
    env[k] = NULL;
    int rc = posix_spawn(&b->pid, b->python, &fa, NULL, (char *const *)argv, (char *const *)env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        b->pid = 0;
        user_error("give --python PATH, or --no-torch to time ours alone", "cannot run %s: %s", b->python,
                   strerror(rc));
        return -1;
    }
    b->to_py = fdopen(in[1], "w");
    b->from_py = fdopen(out[0], "r");
    char line[256] = "";
    if (bb_py_line(b, line, sizeof line) != 0 || strcmp(line, "ready") != 0) {
        user_error("install python3-torch (apt-get install python3-torch), or use --no-torch",
                   "the PyTorch side (%s %s) did not start%s", b->python, b->script,
                   strcmp(line, "no-torch") == 0 ? ": torch is not importable" : "");
        return -1;
    }
    return 0;
}

static void bb_py_stop(BertBench *b) {
    if (!b->pid) return;
    if (b->to_py) {
        fprintf(b->to_py, "quit\n");
        fclose(b->to_py);
    }
    if (b->from_py) fclose(b->from_py);
    int status;
    while (waitpid(b->pid, &status, 0) < 0 && errno == EINTR) {}
    b->pid = 0;
}

/* ---- our side ---- */

typedef struct {
    Bert *trainer, *classifier, *classifier_bf16;   /* the last: the same weights, bf16 inference */
    Bert *classifier_int8;                          /* the same weights, int8 inference */
    Optimizer opt;
    Rng drop;
    int *ids, *segments, *positions, *labels;   /* (B, T), (B, T), (n), (n) */
    float logits[BB_B * BB_LABELS];
    unsigned long timed_allocations;            /* x*alloc calls inside timed blocks (0 is the goal) */
} Ours;

static void ours_init(Ours *o, const BertBench *b) {
    memset(o, 0, sizeof *o);
    const BertConfig *c = &b->cfg;
    o->trainer = bert_create(c, &(BertHeads){.mlm = 1}, BB_SEED);
    bert_reserve(o->trainer, BB_B, BB_T, b->n_masked, 1);
    o->classifier = bert_create(c, &(BertHeads){.pooler = 1, .num_labels = BB_LABELS}, BB_SEED + 1);
    bert_reserve(o->classifier, BB_B, BB_T, 0, 0);
    o->classifier_bf16 = bert_create(c, &(BertHeads){.pooler = 1, .num_labels = BB_LABELS}, BB_SEED + 1);
    bert_reserve(o->classifier_bf16, BB_B, BB_T, 0, 0);
    /* What --bf16 runs (src/cli/cli_run.c): bf16 weights where the CPU has the
     * bf16 dot product, the fp32 path elsewhere. */
    if (gemm_bf16_native()) bert_use_bf16(o->classifier_bf16, 1);
    o->classifier_int8 = bert_create(c, &(BertHeads){.pooler = 1, .num_labels = BB_LABELS}, BB_SEED + 1);
    bert_reserve(o->classifier_int8, BB_B, BB_T, 0, 0);
    if (bert_use_int8(o->classifier_int8, 1) != 0) DIE("bench bert: a fresh model's weights are not finite");
    o->opt = optim_adamw(0.01);
    o->opt.eps = 1e-6;
    rng_seed(&o->drop, BB_SEED + 2);
    Rng r;
    rng_seed(&r, BB_SEED + 3);
    o->ids = xmalloc(sizeof(int) * BB_B * BB_T);
    o->segments = xcalloc(BB_B * BB_T, sizeof(int));
    /* Ids past the special tokens and [unused*] rows of a real vocabulary. */
    int lo = c->vocab_size > 2 * BB_FIRST_ID ? BB_FIRST_ID : 0;
    for (int i = 0; i < BB_B * BB_T; i++) o->ids[i] = lo + (int)rng_below(&r, (uint32_t)(c->vocab_size - lo));
    /* n_masked / B distinct positions per row, never [CLS]. */
    o->positions = xmalloc(sizeof(int) * (size_t)b->n_masked);
    o->labels = xmalloc(sizeof(int) * (size_t)b->n_masked);
    int per_row = b->n_masked / BB_B, perm[BB_T - 1];
    for (int row = 0; row < BB_B; row++) {
        for (int t = 0; t < BB_T - 1; t++) perm[t] = t + 1;
        rng_shuffle_int(&r, perm, BB_T - 1);
        for (int j = 0; j < per_row; j++) {
            o->positions[row * per_row + j] = row * BB_T + perm[j];
            o->labels[row * per_row + j] = o->ids[row * BB_T + perm[j]];
        }
    }
}

static void ours_free(Ours *o) {
    bert_free(o->trainer);
    bert_free(o->classifier);
    bert_free(o->classifier_bf16);
    bert_free(o->classifier_int8);
    free(o->ids); free(o->segments); free(o->positions); free(o->labels);
}

static void ours_train_step(Ours *o, int n_masked) {
    Bert *m = o->trainer;
    params_zero_grad(m->params);
    bert_forward_rows(m, &(BertBatch){BB_B, BB_T, o->ids, o->segments, NULL}, o->positions, n_masked, &o->drop);
    bert_mlm_loss(m, o->positions, o->labels, n_masked, 1, NULL);
    bert_backward(m);
    optim_step(&o->opt, m->params, 1e-4f);
}

/* As glue predict / eval run it: the last layer only at [CLS], the one row
 * the classifier reads (bert_forward_pooled). */
static void ours_classify(Ours *o, Bert *m, int B, int T) {
    bert_forward_pooled(m, &(BertBatch){B, T, o->ids, o->segments, NULL}, NULL);
    bert_head_forward(m, NULL, o->logits);
}


/* Wall seconds of k calls of measurement `what`; *cpu (may be NULL) = their CPU seconds. */
static double ours_time(Ours *o, const BertBench *b, int what, int k, double *cpu) {
    unsigned long a0 = xalloc_calls();
    double t0 = now_seconds(), c0 = cpu_seconds();
    for (int i = 0; i < k; i++) {
        if (bb_is_train(what)) {
            /* train_bf16: what `--set precision=bf16` runs (fp32 where the CPU cannot). */
            if (what == BB_TRAIN_BF16) matmul_set_precision(MATMUL_BF16);
            ours_train_step(o, b->n_masked);
            matmul_set_precision(MATMUL_FP32);
        } else {
            Bert *m = what == BB_INFER_BF16 || what == BB_LATENCY_BF16 ? o->classifier_bf16
                      : bb_is_int8(what)                              ? o->classifier_int8
                                                                      : o->classifier;
            ours_classify(o, m, bb_is_latency(what) ? 1 : BB_B, bb_is_latency(what) ? BB_LAT_T : BB_T);
        }
    }
    if (cpu) *cpu = cpu_seconds() - c0;
    if (cpu) o->timed_allocations += xalloc_calls() - a0;   /* not the warm-up (no cpu) */
    return now_seconds() - t0;
}

/* ---- FLOPs and the sgemm ceiling ---- */

/* One dense GEMM of the step: C (M, N) = op(A) (M, K) op(B) (K, N). */
typedef struct { int M, N, K; MatTrans ta, tb; } BbGemm;
enum { BB_MAX_GEMMS = 512 };

typedef struct {
    BbGemm g[BB_MAX_GEMMS];
    int n;
    double flops;        /* of the GEMMs in the list */
    double attn_flops;   /* the attention products (batched per head, not in the list) */
} BbGemms;

/* y (rows, out) = x (rows, in) W^T; backward: dx = dy W, dW += dy^T x. */
static void bb_linear(BbGemms *s, int rows, int out, int in, int train) {
    if (s->n + 3 > BB_MAX_GEMMS) DIE("bench bert: too many GEMMs");
    s->g[s->n++] = (BbGemm){rows, out, in, MAT_N, MAT_T};
    if (train) {
        s->g[s->n++] = (BbGemm){rows, in, out, MAT_N, MAT_N};
        s->g[s->n++] = (BbGemm){out, in, rows, MAT_T, MAT_N};
    }
    s->flops += 2.0 * rows * out * in * (train ? 3 : 1);
}

/* The GEMMs of one step of measurement `what`, as ours computes it: the
 * last layer only where the head reads it (B query rows at [CLS] for the
 * classification forwards, the n_masked rows for the training step; keys and
 * values for all N rows), so only those FLOPs are counted. */
static void bench_bert_flops(BbGemms *s, const BertConfig *c, int what, int n_masked) {
    memset(s, 0, sizeof *s);
    int train = bb_is_train(what), B = BB_B, T = bb_is_latency(what) ? BB_LAT_T : BB_T;
    if (bb_is_latency(what)) B = 1;
    int N = B * T, C = c->hidden_size;
    for (int l = 0; l < c->num_layers; l++) {
        /* Query rows of this layer. */
        int Q = l < c->num_layers - 1 ? N : train ? n_masked : B;
        if (Q == N) {
            bb_linear(s, N, 3 * C, C, train);
        } else {
            bb_linear(s, N, 2 * C, C, train);
            bb_linear(s, Q, C, C, train);
        }
        bb_linear(s, Q, C, C, train);
        bb_linear(s, Q, c->intermediate_size, C, train);
        bb_linear(s, Q, C, c->intermediate_size, train);
        /* q k^T and P v: 2 * B * NH * Tq * T * HS each; the backward has four. */
        s->attn_flops += 4.0 * Q * T * C * (train ? 3 : 1);
    }
    if (train) {
        bb_linear(s, n_masked, C, C, 1);
        bb_linear(s, n_masked, c->vocab_size, C, 1);
    } else {
        bb_linear(s, B, C, C, 0);
        bb_linear(s, B, BB_LABELS, C, 0);
    }
}

/* GFLOP/s of OpenBLAS sgemm running the list once (fresh buffers of normal
 * values, so no denormals). */
static double bb_sgemm_gflops(const BbGemms *s, float *buf, long cap) {
    double t0 = now_seconds();
    for (int i = 0; i < s->n; i++) {
        const BbGemm *g = &s->g[i];
        long na = (long)g->M * g->K, nb = (long)g->K * g->N, nc = (long)g->M * g->N;
        if (na + nb + nc > cap) DIE("bench bert: sgemm buffer too small");
        matmul(buf + na + nb, buf, buf + na, g->M, g->N, g->K, g->ta, g->tb, 1.0f, 0.0f);
    }
    return s->flops / (now_seconds() - t0) * 1e-9;
}

static long bb_sgemm_floats(const BbGemms *s) {
    long cap = 0;
    for (int i = 0; i < s->n; i++) {
        const BbGemm *g = &s->g[i];
        long need = (long)g->M * g->K + (long)g->K * g->N + (long)g->M * g->N;
        if (need > cap) cap = need;
    }
    return cap;
}

/* ---- the run ---- */

typedef struct {
    double ours[BENCH_BERT_MAX_REPS], torch[BENCH_BERT_MAX_REPS];   /* seconds per call */
    double ratio[BENCH_BERT_MAX_REPS];   /* torch time / our time: > 1 = we are faster */
    /* The same with CPU seconds (all threads) instead of wall time: work per
     * call, much less sensitive to what else the machine runs. */
    double cpu_ratio[BENCH_BERT_MAX_REPS];
    double gflops[BENCH_BERT_MAX_REPS], sgemm[BENCH_BERT_MAX_REPS], frac[BENCH_BERT_MAX_REPS];
} BbSeries;

static int bench_bert_parse(int argc, char **argv, BertBench *b) {
    Args a;
    args_init(&a, argc, argv);
    b->config_name = args_str(&a, "--config", "tiny");
    b->reps = (int)args_int(&a, "--reps", 7);
    int steps = (int)args_int(&a, "--steps", 0);
    b->threads = (int)args_threads(&a, 2);
    b->python = args_str(&a, "--python", BENCH_BERT_PYTHON);
    b->script = args_str(&a, "--script", BENCH_BERT_SCRIPT);
    b->torch = !args_flag(&a, "--no-torch");
    b->json = args_flag(&a, "--json");
    int rc = args_finish(&a, BENCH_BERT_USAGE);
    if (rc) return rc;
    if (b->reps < 1 || b->reps > BENCH_BERT_MAX_REPS || b->threads < 1 || steps < 0) {
        user_error(BENCH_BERT_USAGE, "bench bert: --reps 1..%d, --threads >= 1, --steps >= 0", BENCH_BERT_MAX_REPS);
        return EXIT_USAGE;
    }
    if (bert_config_resolve(b->config_name, &b->cfg) != 0) return EXIT_USAGE;
    if (b->cfg.max_position < BB_T) {
        user_error(NULL, "bench bert: the config has %d positions, the benchmark needs %d", b->cfg.max_position, BB_T);
        return EXIT_USAGE;
    }
    b->n_masked = BB_B * (int)(BB_MASK_FRAC * BB_T + 0.5);
    /* Blocks of about a second at the PyTorch speeds measured here (issue 6). */
    BbGemms s;
    bench_bert_flops(&s, &b->cfg, BB_TRAIN, b->n_masked);
    double step_gflop = (s.flops + s.attn_flops) * 1e-9;
    b->iters[BB_TRAIN] = steps ? steps : step_gflop < 30 ? 3 : step_gflop < 100 ? 2 : 1;
    b->iters[BB_INFER] = steps ? steps : step_gflop < 30 ? 6 : 2;
    b->iters[BB_LATENCY] = steps ? 10 * steps : step_gflop < 30 ? 100 : 20;
    b->iters[BB_INFER_BF16] = b->iters[BB_INFER];
    b->iters[BB_LATENCY_BF16] = b->iters[BB_LATENCY];
    b->iters[BB_TRAIN_BF16] = b->iters[BB_TRAIN];
    b->iters[BB_INFER_INT8] = b->iters[BB_INFER];
    b->iters[BB_LATENCY_INT8] = b->iters[BB_LATENCY];
    if (b->torch && access(b->script, R_OK) != 0) {
        user_error("run from the source tree, or give --script PATH", "bench bert: cannot read %s", b->script);
        return EXIT_USAGE;
    }
    return 0;
}

/* One repetition of measurement `what`: both sides, in an order that flips
 * from one repetition to the next, then the sgemm ceiling. */
static int bb_rep(BertBench *b, Ours *o, int what, int rep, BbSeries *s, const BbGemms *gm, float *buf,
                  long cap) {
    int k = b->iters[what];
    double tt = 0.0, tc = 0.0, oc = 0.0;
    for (int side = 0; side < 2; side++) {
        if ((side == 0) == (rep % 2 == 0)) {
            s->ours[rep] = ours_time(o, b, what, k, &oc) / k;
        } else if (b->torch) {
            tt = bb_py_ask(b, BB_NAMES[what], k, &tc);
            if (tt < 0) {
                user_error(NULL, "bench bert: the PyTorch side stopped answering");
                return -1;
            }
        }
    }
    s->torch[rep] = b->torch ? tt / k : 0.0;
    s->ratio[rep] = b->torch ? s->torch[rep] / s->ours[rep] : 0.0;
    s->cpu_ratio[rep] = b->torch && oc > 0.0 ? tc / oc : 0.0;
    s->gflops[rep] = (gm->flops + gm->attn_flops) / s->ours[rep] * 1e-9;
    s->sgemm[rep] = bb_is_latency(what) ? 0.0 : bb_sgemm_gflops(gm, buf, cap);
    s->frac[rep] = bb_is_latency(what) ? 0.0 : s->gflops[rep] / s->sgemm[rep];
    return 0;
}

static cJSON *bb_series_json(const BertBench *b, int what, const BbSeries *s, const BbGemms *gm) {
    int n = b->reps, T = bb_is_latency(what) ? BB_LAT_T : BB_T, B = bb_is_latency(what) ? 1 : BB_B;
    double ours_tok[BENCH_BERT_MAX_REPS], torch_tok[BENCH_BERT_MAX_REPS], ours_ms[BENCH_BERT_MAX_REPS],
        torch_ms[BENCH_BERT_MAX_REPS];
    for (int i = 0; i < n; i++) {
        ours_tok[i] = B * T / s->ours[i];
        torch_tok[i] = b->torch ? B * T / s->torch[i] : 0.0;
        ours_ms[i] = 1e3 * s->ours[i];
        torch_ms[i] = 1e3 * s->torch[i];
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "batch", B);
    cJSON_AddNumberToObject(j, "length", T);
    cJSON_AddNumberToObject(j, "calls_per_rep", b->iters[what]);
    cJSON_AddItemToObject(j, "ours_tokens_per_s", bench_stats_json(summarize(ours_tok, n)));
    cJSON_AddItemToObject(j, "ours_ms", bench_stats_json(summarize(ours_ms, n)));
    if (b->torch) {
        cJSON_AddItemToObject(j, "torch_tokens_per_s", bench_stats_json(summarize(torch_tok, n)));
        cJSON_AddItemToObject(j, "torch_ms", bench_stats_json(summarize(torch_ms, n)));
        cJSON_AddItemToObject(j, "speedup_vs_torch", bench_stats_json(summarize(s->ratio, n)));
        cJSON_AddItemToObject(j, "cpu_time_ratio_vs_torch", bench_stats_json(summarize(s->cpu_ratio, n)));
    }
    cJSON_AddNumberToObject(j, "gflop_per_call", (gm->flops + gm->attn_flops) * 1e-9);
    cJSON_AddItemToObject(j, "ours_gflops", bench_stats_json(summarize(s->gflops, n)));
    if (!bb_is_latency(what)) {
        cJSON_AddItemToObject(j, "sgemm_gflops", bench_stats_json(summarize(s->sgemm, n)));
        cJSON_AddItemToObject(j, "fraction_of_sgemm", bench_stats_json(summarize(s->frac, n)));
    }
    return j;
}

static void bb_print(const BertBench *b, int what, const BbSeries *s) {
    int n = b->reps, tok = (bb_is_latency(what) ? BB_LAT_T : BB_B * BB_T);
    double v[BENCH_BERT_MAX_REPS], w[BENCH_BERT_MAX_REPS];
    for (int i = 0; i < n; i++) {
        v[i] = bb_is_latency(what) ? 1e3 * s->ours[i] : tok / s->ours[i];
        w[i] = bb_is_latency(what) ? 1e3 * s->torch[i] : (b->torch ? tok / s->torch[i] : 0);
    }
    Summary so = summarize(v, n), st = summarize(w, n), r = summarize(s->ratio, n);
    Summary rc = summarize(s->cpu_ratio, n);
    const char *unit = bb_is_latency(what) ? "ms" : "tok/s";
    printf("%-12s ours %10.1f %-5s", BB_NAMES[what], so.median, unit);
    if (b->torch)
        printf("  torch %10.1f %-5s  ratio %.2fx (min %.2f, max %.2f; CPU time %.2fx)", st.median, unit, r.median, r.min,
               r.max, rc.median);
    if (!bb_is_latency(what)) {
        Summary g = summarize(s->gflops, n), sg = summarize(s->sgemm, n), f = summarize(s->frac, n);
        printf("  %.1f GFLOP/s = %.0f%% of sgemm %.1f", g.median, 100 * f.median, sg.median);
    }
    printf("\n");
    fflush(stdout);
}

/* Our int8 row against our fp32 row of the same shape: fp32 time / int8 time per repetition. */
static Summary bb_vs_fp32(const BertBench *b, const BbSeries *q, const BbSeries *f) {
    double r[BENCH_BERT_MAX_REPS];
    for (int i = 0; i < b->reps; i++) r[i] = f->ours[i] / q->ours[i];
    return summarize(r, b->reps);
}

static void bb_print_vs_fp32(const BertBench *b, const BbSeries *q, const BbSeries *f) {
    Summary r = bb_vs_fp32(b, q, f);
    printf("%-12s ours int8 vs ours fp32: %.2fx (min %.2f, max %.2f)\n", "", r.median, r.min, r.max);
    fflush(stdout);
}

static void bb_vs_fp32_json(const BertBench *b, cJSON *row, const BbSeries *q, const BbSeries *f) {
    cJSON_AddItemToObject(row, "speedup_vs_ours_fp32", bench_stats_json(bb_vs_fp32(b, q, f)));
}

static double bb_peak_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;   /* Linux: KiB */
}

static cJSON *bb_machine_json(const BertBench *b, double load0) {
    cJSON *j = cJSON_CreateObject();
    double load[1] = {0};
    getloadavg(load, 1);
    /* The CPU as /proc/cpuinfo and cpuid name it, and the kernels this run used
     * (core/kernels.h: the level chosen from the CPU, or forced by GLUE_KERNELS). */
    cJSON_AddStringToObject(j, "cpu", kernels_cpu_model());
    cJSON_AddStringToObject(j, "kernels", kernels_level_name(kernels_level()));
    cJSON_AddStringToObject(j, "kernels_cpu_max", kernels_level_name(kernels_cpu_level()));
    cJSON_AddStringToObject(j, "gemm", gemm_backend_describe());
    cJSON_AddStringToObject(j, "bf16_gemm", gemm_bf16_native() ? "avx512bf16 dot product"
                                                               : "none: --bf16 runs the fp32 path on this CPU");
    cJSON_AddStringToObject(j, "train_bf16", gemm_bf16_native() ? "bf16 products (matmul precision bf16)"
                                                                : "none: the fp32 step on this CPU");
    cJSON_AddStringToObject(j, "int8_gemm", gemm_int8_kernel());
    const char *forced_k = getenv("GLUE_KERNELS");
    if (forced_k && *forced_k) cJSON_AddStringToObject(j, "GLUE_KERNELS", forced_k);
    cJSON_AddNumberToObject(j, "cores", threads_default());
    cJSON_AddNumberToObject(j, "threads", b->threads);
    /* The sgemm kernels OpenBLAS runs (OPENBLAS_CORETYPE can force them). */
    cJSON_AddStringToObject(j, "openblas_core", openblas_get_corename());
    const char *forced = getenv("OPENBLAS_CORETYPE");
    if (forced) cJSON_AddStringToObject(j, "OPENBLAS_CORETYPE", forced);
    cJSON_AddNumberToObject(j, "load_start", load0);
    cJSON_AddNumberToObject(j, "load_end", load[0]);
    return j;
}

int bench_bert(int argc, char **argv) {
    BertBench b = {0};
    int rc = bench_bert_parse(argc, argv, &b);
    if (rc) return rc;
    threads_init(b.threads);
    /* A PyTorch side that dies must give an error message, not kill us on write. */
    signal(SIGPIPE, SIG_IGN);
    double load0 = 0;
    getloadavg(&load0, 1);
    if (b.torch && bb_py_start(&b) != 0) {
        bb_py_stop(&b);
        return 1;
    }
    Ours o;
    ours_init(&o, &b);
    BbGemms gm[BB_NUM];
    long cap = 0;
    for (int w = 0; w < BB_NUM; w++) {
        bench_bert_flops(&gm[w], &b.cfg, w, b.n_masked);
        long c = bb_sgemm_floats(&gm[w]);
        cap = c > cap ? c : cap;
    }
    float *buf = xaligned_alloc(sizeof(float) * (size_t)cap);
    Rng r;
    rng_seed(&r, BB_SEED + 4);
    for (long i = 0; i < cap; i++) buf[i] = rng_normal(&r);
    fprintf(stderr, "glue: bench bert --config %s: %d reps of %d/%d/%d calls, %d threads, OpenBLAS %s kernels, "
                    "our kernels %s, load %.1f\n  cpu: %s\n",
            b.config_name, b.reps, b.iters[0], b.iters[1], b.iters[2], b.threads, openblas_get_corename(),
            kernels_level_name(kernels_level()), load0, kernels_cpu_model());
    BbSeries *s = xcalloc(BB_NUM, sizeof *s);
    int fail = 0;
    for (int w = 0; w < BB_NUM && !fail; w++) {
        /* Warm-up: page in the buffers, start the thread pools, settle caches. */
        ours_time(&o, &b, w, 1, NULL);
        if (b.torch && bb_py_ask(&b, BB_NAMES[w], bb_is_latency(w) ? 5 : 1, NULL) < 0) fail = 1;
        bb_sgemm_gflops(&gm[w], buf, cap);
        for (int rep = 0; rep < b.reps && !fail; rep++)
            fail = bb_rep(&b, &o, w, rep, &s[w], &gm[w], buf, cap) != 0;
        if (!fail) bb_print(&b, w, &s[w]);
        if (!fail && bb_is_int8(w)) bb_print_vs_fp32(&b, &s[w], &s[w == BB_INFER_INT8 ? BB_INFER : BB_LATENCY]);
    }
    double torch_mib = b.torch && !fail ? bb_py_ask(&b, "mem", 0, NULL) : 0.0, ours_mib = bb_peak_mib();
    bb_py_stop(&b);
    if (!fail) {
        printf("peak memory: ours %.0f MiB (both models)", ours_mib);
        if (b.torch) printf(", torch %.0f MiB", torch_mib);
        printf("; allocations in our timed calls: %lu\n", o.timed_allocations);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "benchmark", "bert");
        cJSON_AddStringToObject(j, "config", b.config_name);
        cJSON_AddItemToObject(j, "model", bert_config_to_json(&b.cfg));
        cJSON_AddItemToObject(j, "machine", bb_machine_json(&b, load0));
        cJSON_AddItemToObject(j, "provenance", provenance_json(b.threads, -1));   /* the build measured */
        cJSON_AddNumberToObject(j, "reps", b.reps);
        cJSON_AddNumberToObject(j, "masked_positions", b.n_masked);
        for (int w = 0; w < BB_NUM; w++) {
            cJSON *row = bb_series_json(&b, w, &s[w], &gm[w]);
            if (bb_is_int8(w)) bb_vs_fp32_json(&b, row, &s[w], &s[w == BB_INFER_INT8 ? BB_INFER : BB_LATENCY]);
            cJSON_AddItemToObject(j, BB_NAMES[w], row);
        }
        cJSON_AddNumberToObject(j, "ours_peak_mib", ours_mib);
        cJSON_AddNumberToObject(j, "ours_allocations_in_timed_calls", (double)o.timed_allocations);
        if (b.torch) cJSON_AddNumberToObject(j, "torch_peak_mib", torch_mib);
        if (b.json) {
            char *text = cJSON_Print(j);
            printf("%s\n", text);
            free(text);
        }
        /* A config given as a file is named by its base name. */
        const char *base = strrchr(b.config_name, '/');
        base = base ? base + 1 : b.config_name;
        char name[512], dir[256];
        bench_cpu_dir(dir, sizeof dir);
        snprintf(name, sizeof name, "%s/bench_bert_%.*s.json", dir, (int)strcspn(base, "."), base);
        if (bench_write_results(name, j) != 0) fail = 1;
        cJSON_Delete(j);
    }
    free(s);
    free(buf);
    ours_free(&o);
    return fail ? 1 : 0;
}
