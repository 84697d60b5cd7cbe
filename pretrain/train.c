/* train.c — the masked-LM pretraining loop with exact resume (see train.h). */
#include "pretrain/train.h"

#include "core/blas.h"
#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/dist.h"
#include "core/provenance.h"
#include "core/lines.h"
#include "models/run_config.h"
#include "train/loop.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/run_txn.h"
#include "optim/clip.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "pretrain/electra.h"
#include "pretrain/mlm_batch.h"
#include "pretrain/mlm_eval.h"
#include "pretrain/stream.h"
#include "pretrain/token_cache.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* RNG streams of the run seed. Data-parallel ranks draw dropout from
 * STREAM_DROPOUT_RANKS + rank, re-seeded each step (see run_step). */
enum { STREAM_MASK = 1, STREAM_DROPOUT = 2, STREAM_SAMPLE = 3, STREAM_DROPOUT_RANKS = 1024 };

/* In the resume point's last.state beside the optimizers' (host order). */
#define PRETRAIN_STATE_BLOB "pretrain.state"
typedef struct PretrainState {
    StreamPos pos;
    Rng mask_rng, drop_rng;
} PretrainState;

/* The step statistics, and their sums over a logging window. */
typedef struct StepStats {
    double loss, acc, grad_norm;
    double gen_loss, disc_loss, disc_acc, replaced;   /* ELECTRA */
    long tokens;
    float lr;
} StepStats;

typedef struct Window {
    StepStats sum;               /* loss, acc, ... and grad_norm summed over the steps */
    double t0;
    long steps;
} Window;

typedef struct Run {
    const PretrainOptions *o;    /* out_dir: where the run writes (a stage with --overwrite) */
    RunDirTxn txn;               /* the run directory: lock, stage (run_txn.h); rank 0's */
    const PretrainConfig *pc;
    Vocab *vocab;
    TokenCache *cache, *eval_cache;
    int eval_missing;            /* the held-out text is not there: warned once */
    MaskConfig mc, eval_mc;
    PretrainStreamConfig sc;
    PretrainStream stream;
    MlmBatch batch;
    Bert *m;                     /* the encoder: MLM model, or ELECTRA's discriminator */
    Electra electra;             /* ELECTRA's generator (electra.gen NULL for MLM) */
    Optimizer opt;
    Schedule sched;
    Rng mask_rng, drop_rng;
    TrainLoop loop;              /* one epoch of `steps` batches (loop.h): the step, the seconds */
    long tokens;
    long step0;                  /* the step this process started at */
    Window w;                    /* the steps since the last log line */
    char text[PROGRESS_TEXT_MAX];   /* the progress display's: the last log line's numbers */
    FILE *log;
    char path_model[4096], path_log[4096];
    /* Data parallel (dist.h): rank `rank` of `size` computes rows
     * [rank * rows, (rank + 1) * rows) of every micro-batch; rank 0 alone
     * writes. One process: rank 0 of 1, rows = batch. */
    int rank, size, rows;
    int *shard_pos;              /* (batch.max_masked) the shard's target positions */
    /* How the ranks sum each arena's gradient (0 the encoder, 1 ELECTRA's
     * generator): in buckets during the backward, or with ZeRO-1 (zero:
     * pc->zero on more than one rank) reduce-scattered after it, each rank
     * then updating its slice of the arena (params_set_shard). */
    DistBuckets *buckets[2];
    int zero;
} Run;

/* ---- data ---- */

static TokenCache *run_cache(Run *r, const CorpusFile *files, int n) {
    TokenCacheBuild b = {.files = files, .n_files = n, .vocab = r->vocab,
                         .lowercase = 1, .show_progress = r->o->show_progress};
    return token_cache_find(&b, r->o->cache_dir ? r->o->cache_dir : token_cache_default_dir());
}

/* The seed of the data order. A run carried on from a snapshot at init_step
 * starts its stream at the beginning (a snapshot keeps weights, not the
 * original run's place in its stream); with the run's own seed it would read
 * again, in the same order, the sequences the original run trained on in its
 * first steps, and the weights have just learnt those. Another seed per
 * init_step gives another order of the same corpus (the held-out stream does
 * not depend on it: corpus order). */
static uint64_t run_data_seed(const PretrainConfig *pc) {
    return pc->init_step > 0 ? pc->seed + 0x9E3779B97F4A7C15ULL * (uint64_t)pc->init_step : pc->seed;
}

static int run_setup_data(Run *r) {
    const PretrainConfig *pc = r->pc;
    r->vocab = vocab_load(pc->vocab);
    if (!r->vocab) return 1;
    if (vocab_size(r->vocab) != pc->bert.vocab_size) {
        user_error("use the vocabulary the model config was made for", "%s has %d tokens but model %s has vocab_size %d",
                   pc->vocab, vocab_size(r->vocab), pc->model, pc->bert.vocab_size);
        return EXIT_USAGE;
    }
    int eval_pred = mlm_eval_max_predictions(pc->seq_len);   /* as `glue pretrain eval` */
    if (masking_init(&r->mc, r->vocab, pc->mask_prob, pc->max_predictions, pc->whole_word) ||
        masking_init(&r->eval_mc, r->vocab, MLM_EVAL_MASK_PROB, eval_pred, 0))
        return 1;
    r->mc.mask_frac = pc->mask_token_prob;
    r->mc.random_frac = pc->random_token_prob;
    /* Rank 0 builds the token cache (if it is not there yet), then the others
     * open it: ranks on one machine must not write it at the same time. */
    if (r->rank == 0) r->cache = run_cache(r, pc->corpus, pc->n_corpus);
    if (!dist_bcast_int(r->rank == 0 && r->cache != NULL, 0)) return 1;
    if (r->rank != 0) r->cache = run_cache(r, pc->corpus, pc->n_corpus);
    if (!r->cache) return 1;
    const VocabSpecials *sp = vocab_specials(r->vocab);
    r->sc = (PretrainStreamConfig){.seq_len = pc->seq_len, .short_prob = (float)pc->short_seq_prob, .shuffle = 1,
                                   .seed = run_data_seed(pc), .cls_id = sp->cls, .sep_id = sp->sep,
                                   .is_cont = r->mc.is_cont};
    stream_init(&r->stream, r->cache, &r->sc);
    mlm_batch_init(&r->batch, pc->batch, pc->seq_len,
                   pc->max_predictions > eval_pred ? pc->max_predictions : eval_pred, sp->pad);
    r->shard_pos = xmalloc(sizeof(int) * (size_t)r->batch.max_masked);
    return 0;
}

/* Held-out loss and accuracy (max_batches 0: all). 1 when done. */
static int run_eval(Run *r, long max_batches, MlmEvalResult *res) {
    if (r->eval_missing) return 0;
    if (!r->eval_cache) {
        char found[4096];
        if (lines_find(r->pc->eval_corpus.path, found, sizeof found) != 0) {
            user_warning("%s is missing: no held-out evaluation (glue data fetch pretrain gets it)",
                         r->pc->eval_corpus.path);
            r->eval_missing = 1;
            return 0;
        }
        r->eval_cache = run_cache(r, &r->pc->eval_corpus, 1);
        if (!r->eval_cache) { r->eval_missing = 1; return 0; }
    }
    /* ELECTRA: the generator is the run's masked LM. fp32 products whatever
     * the run's precision, so held-out losses compare across runs. */
    MatmulPrecision prec = matmul_precision();
    matmul_set_precision(MATMUL_FP32);
    int ok = mlm_eval_run(r->electra.gen ? r->electra.gen : r->m, r->eval_cache, &r->sc, &r->eval_mc, MLM_EVAL_SEED,
                          max_batches, &r->batch, r->pc->batch, res) == 0;
    matmul_set_precision(prec);
    return ok;
}

/* ---- model, optimizer, checkpoints ---- */

static BertHeads run_heads(const Run *r) {
    return pretrain_config_is_electra(r->pc) ? (BertHeads){.rtd = 1} : (BertHeads){.mlm = 1};
}

/* ZeRO-1: this rank's slice of the arena is the one it updates and keeps
 * AdamW's state for (params.h). */
static void run_shard(Params *p) {
    long lo, hi;
    dist_slice((long)p->total, dist_rank(), &lo, &hi);
    params_set_shard(p, (size_t)lo, (size_t)hi);
}

static void run_grad_ready(void *buckets, long lo) { dist_buckets_ready(buckets, lo); }

/* Data parallel: arena i of model m (reserved for training, its optimizer
 * state not loaded yet) is sharded (ZeRO-1), or summed in buckets that the
 * backward starts as it finishes them (bert.h grad_ready). */
static void run_dist_arena(Run *r, Bert *m, int i) {
    if (r->size == 1) return;
    Params *p = m->params;
    if (r->zero) {
        run_shard(p);
        return;
    }
    long floats = (long)(r->pc->bucket_mb * (double)(1 << 20) / sizeof(float));   /* 0: one bucket */
    r->buckets[i] = dist_buckets_create(p->grad, (long)p->total, floats);
    m->grad_ready = run_grad_ready;
    m->grad_ready_ctx = r->buckets[i];
}

/* The generator of an ELECTRA run, on the reserved discriminator. */
static void run_electra_init(Run *r) {
    const PretrainConfig *pc = r->pc;
    electra_init(&r->electra, &pc->generator, r->m, (float)pc->disc_weight, pc->batch, pc->seq_len,
                 r->batch.max_masked, pc->seed, STREAM_SAMPLE);
    r->electra.opt = r->opt;
    run_dist_arena(r, r->electra.gen, 1);
}

void pretrain_ckpt_path(const char *init, char *path, size_t cap) {
    struct stat st;
    if (stat(init, &st) == 0 && S_ISDIR(st.st_mode)) file_join(init, PRETRAIN_MODEL_CKPT, path, cap);
    else snprintf(path, cap, "%s", init);
}

/* pc->init's weights into the fresh models (a file, or a run directory's
 * model.ckpt): the encoder, and ELECTRA's generator when the file holds one.
 * 0, or 1 after a message. */
static int run_init_weights(Run *r) {
    char path[4200];
    pretrain_ckpt_path(r->pc->init, path, sizeof path);
    Checkpoint *c = checkpoint_read(path);
    int rc = c ? bert_init_from(r->m, c, r->pc->init_stack) : -1, gen = 0;
    if (rc == 0 && r->electra.gen) rc = gen = electra_init_from(r->electra.gen, c);
    checkpoint_free(c);
    if (rc < 0) return 1;
    if (r->o->show_progress) {
        fprintf(stderr, "starting from the weights of %s%s%s at step %ld of the schedule\n", path,
                gen ? " (encoder and generator)" : "", r->pc->init_stack ? ", its layers stacked" : "",
                r->pc->init_step);
        if (r->electra.gen && !gen)
            fprintf(stderr, "note: %s holds no ELECTRA generator (not a snapshot of an ELECTRA run, or one of an "
                            "older glue): the generator starts fresh\n", path);
    }
    return 0;
}

/* A new run: the models (reserved for training), the RNGs, and the weights of
 * pc->init when given. 0, or 1 after a message. */
static int run_fresh(Run *r) {
    const PretrainConfig *pc = r->pc;
    r->m = bert_create(&pc->bert, &(BertHeads[]){run_heads(r)}[0], pc->seed);
    bert_reserve(r->m, pc->batch, pc->seq_len, r->batch.max_masked, 1);
    run_dist_arena(r, r->m, 0);
    if (pretrain_config_is_electra(pc)) run_electra_init(r);
    rng_seed_stream(&r->mask_rng, pc->seed, STREAM_MASK);
    rng_seed_stream(&r->drop_rng, pc->seed, STREAM_DROPOUT);
    r->loop.step = r->loop.batch = pc->init_step;   /* 0 unless carried on from a snapshot */
    return pc->init[0] ? run_init_weights(r) : 0;
}

static cJSON *run_ckpt_config(const Run *r) {
    cJSON *c = bert_checkpoint_config(r->m);
    cJSON_AddItemToObject(c, "pretrain", cJSON_Duplicate(r->pc->json, 1));
    cJSON_AddNumberToObject(c, "step", (double)r->loop.step);
    return c;
}

/* The resume point's files (train.h): last.ckpt a model, last.state the rest. */
static int run_write_files(void *ctx, const ResumeFiles *f) {
    Run *r = ctx;
    cJSON *cfg = run_ckpt_config(r);
    CkptWriter *w = checkpoint_writer_open(f->ckpt, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return 1;
    const Bert *gen = r->electra.gen;
    if (bert_write(r->m, w, r->vocab, CKPT_F32) || (gen && electra_save_weights(gen, w, CKPT_F32))) {
        checkpoint_writer_abort(w);
        return 1;
    }
    if (checkpoint_writer_commit(w)) return 1;
    PretrainState st = {.pos = stream_tell(&r->stream), .mask_rng = r->mask_rng, .drop_rng = r->drop_rng};
    if (!(w = checkpoint_writer_open(f->state, NULL, -1))) return 1;
    if (optim_save(&r->opt, r->m->params, w) || checkpoint_write_blob(w, PRETRAIN_STATE_BLOB, &st, sizeof st) ||
        (r->electra.gen && electra_save_state(&r->electra, w))) {
        checkpoint_writer_abort(w);
        return 1;
    }
    return checkpoint_writer_commit(w) ? 1 : 0;
}

/* The resume point and model.ckpt beside it (rank 0). 0 ok. */
static int run_write(Run *r) {
    if (r->rank != 0) return 0;   /* the ranks hold the same state; one writes it */
    cJSON *pos = train_loop_position(&r->loop);
    cJSON_AddNumberToObject(pos, "tokens", (double)r->tokens);
    int rc = resume_write(r->o->out_dir, pos, run_write_files, r);
    cJSON_Delete(pos);
    if (rc) return rc;
    cJSON *extra = cJSON_CreateObject();   /* which step these weights are (pretrain snapshot says it) */
    cJSON_AddNumberToObject(extra, "step", (double)r->loop.step);
    rc = bert_save_with(r->m, r->path_model, extra, r->vocab);
    cJSON_Delete(extra);
    return rc;
}

/* ZeRO-1: rank 0's arenas get the whole optimizer state (every rank's
 * slice), for a checkpoint that any number of ranks can resume; the
 * others send theirs. Every rank calls it. */
static void run_gather_state(Run *r) {
    Params *arenas[2] = {r->m->params, r->electra.gen ? r->electra.gen->params : NULL};
    for (int i = 0; i < 2 && arenas[i]; i++) {
        Params *p = arenas[i];
        long lo, hi;
        dist_slice((long)p->total, r->rank, &lo, &hi);
        if (r->rank == 0) params_set_shard(p, 0, p->total);   /* its slice stays where it was */
        for (int k = 0; k < PARAM_MAX_STATES; k++)
            if (p->state[k])   /* allocated on every rank alike (by the first step) */
                dist_gather_floats(r->rank == 0 ? p->state[k] + lo : p->state[k], r->rank == 0 ? p->state[k] : NULL,
                                   (long)p->total, 0);
    }
}

/* The checkpoints: every rank calls it, rank 0 writes. 0 ok. */
static int run_save(void *ctx, TrainLoop *L) {
    Run *r = ctx;
    if (r->zero) run_gather_state(r);
    int rc = run_write(r);
    if (r->zero && r->rank == 0) {   /* back to its slice */
        run_shard(r->m->params);
        if (r->electra.gen) run_shard(r->electra.gen->params);
    }
    return rc;
}

/* A resumed run may be given another `steps`: the schedule's end moves, so the
 * learning rate from the checkpoint's step on follows the new length (a long
 * run shortened to fit its budget, or a finished one carried further). It must
 * end after the step the run is at. 0 ok, else an exit code. */
static int run_resume_steps(const Run *r, const cJSON *stored, long at) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(stored, "steps");
    long was = cJSON_IsNumber(s) ? (long)s->valuedouble : r->pc->steps;
    if (was == r->pc->steps) return 0;
    if (r->pc->steps <= at) {
        user_error("give steps larger than the step the run is at, or leave it as it was",
                   "%s: the run is at step %ld; steps=%ld would end it before that", r->o->out_dir, at, r->pc->steps);
        return EXIT_USAGE;
    }
    Schedule before = r->sched;
    before.total = was;
    if (r->rank == 0)
        fprintf(stderr, "%s: steps %ld -> %ld: the schedule now ends at step %ld; the learning rate from step %ld on "
                "is %.3g (it would have been %.3g)\n", r->o->out_dir, was, r->pc->steps, r->pc->steps, at,
                schedule_lr(&r->sched, at), schedule_lr(&before, at));
    return 0;
}

/* The models, gone (a resume point failed to load: the one before it is tried next). */
static void run_models_free(Run *r) {
    for (int i = 0; i < 2; i++) dist_buckets_free(r->buckets[i]), r->buckets[i] = NULL;
    if (r->electra.gen) electra_free(&r->electra);
    bert_free(r->m);
    r->m = NULL;
}

/* Everything the resume point in dir holds (resume.h), position its trainer.json. */
static int run_read_point(void *ctx, const ResumeFiles *f, const cJSON *position) {
    Run *r = ctx;
    char diff[2048];
    const cJSON *stored = cJSON_GetObjectItemCaseSensitive(position, "config");
    if (!cJSON_IsObject(stored)) {
        user_error("pass the --out of a glue pretrain run", "%s: not a pretraining resume point", f->dir);
        return RESUME_OTHER;
    }
    cJSON *defaults = pretrain_config_defaults();   /* a key the run predates: its default */
    int differ = run_config_diff(stored, r->pc->json, defaults, PRETRAIN_FREE_KEYS, diff, sizeof diff);
    cJSON_Delete(defaults);
    if (differ) {
        user_error("resume with the settings the run started with (its config.json), or use another --out",
                   "%s: settings differ from the interrupted run: %s", r->o->out_dir, diff);
        return RESUME_OTHER;
    }
    if (run_resume_steps(r, stored, (long)run_config_number(position, "step", 0))) return RESUME_OTHER;
    Checkpoint *c = checkpoint_read(f->ckpt), *st = c ? checkpoint_read(f->state) : NULL;
    const CkptBlob *b = st ? checkpoint_find_blob(st, PRETRAIN_STATE_BLOB) : NULL;
    int rc = 1;
    if (st && (!b || b->size != sizeof(PretrainState))) {
        user_error_data("pass the --out of a glue pretrain run", "%s: not a pretraining resume point", f->state);
    } else if (b && (r->m = bert_from_checkpoint(c, NULL, 0, r->pc->seed))) {
        bert_reserve(r->m, r->pc->batch, r->pc->seq_len, r->batch.max_masked, 1);
        run_dist_arena(r, r->m, 0);
        if (pretrain_config_is_electra(r->pc)) run_electra_init(r);
        PretrainState ps;
        memcpy(&ps, b->data, sizeof ps);
        rc = optim_load(&r->opt, r->m->params, st) ||   /* a sharded arena keeps its slice */
             (r->electra.gen && (electra_load_weights(r->electra.gen, c) || electra_load_state(&r->electra, st))) ||
             stream_seek(&r->stream, ps.pos);
        r->mask_rng = ps.mask_rng;
        r->drop_rng = ps.drop_rng;
    }
    checkpoint_free(c);
    checkpoint_free(st);
    if (rc) {
        run_models_free(r);
        return 1;
    }
    double tokens = run_config_number(position, "tokens", 0);
    if (!(tokens >= 0 && tokens < 9e18) || train_loop_restore(&r->loop, position) != 0) {
        user_error_data("delete it to start over", "%s: a resume position out of range (damaged)", r->o->out_dir);
        run_models_free(r);
        return 1;
    }
    r->tokens = (long)tokens;
    return 0;
}

/* The log keeps only lines up to `step` (later ones are computed again), then
 * is opened for appending. 0 ok. */
static int run_open_log(Run *r, long step) {
    AtomicFile kept;
    FILE *out = atomic_open(&kept, r->path_log);
    if (!out) return -1;
    LineReader lr;
    /* A run continued from a snapshot (init_step) starts past step 0 with no
     * log yet: lines_open fails, and lines_close still frees its buffers. */
    if (step > 0) {
        if (lines_open(&lr, r->path_log) == LINES_OK) {
            char *line;
            size_t len;
            while (lines_next(&lr, &line, &len) == 1) {
                cJSON *j = cJSON_ParseWithLength(line, len);
                const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "step");
                if (cJSON_IsNumber(s) && s->valuedouble <= (double)step) fprintf(out, "%s\n", line);
                cJSON_Delete(j);
            }
        }
        lines_close(&lr);
    }
    if (atomic_commit(&kept)) return -1;
    r->log = fopen(r->path_log, "a");
    return r->log ? 0 : -1;
}

/* ---- the step ---- */

/* One micro-batch's forward and backward (data-parallel: of this rank's rows;
 * its losses are then its share of the whole batch's means); adds to s. */
static void run_micro_batch(Run *r, MlmBatch *all, StepStats *s) {
    double w = 1.0 / r->pc->accumulate;
    MlmBatch shard, *b = all;
    if (r->size > 1) {
        mlm_batch_shard(&shard, all, r->rank * r->rows, (r->rank + 1) * r->rows, r->shard_pos);
        b = &shard;
    }
    if (r->electra.gen) {
        ElectraStats es;
        s->loss += w * electra_forward_backward(&r->electra, r->m, b, &r->drop_rng, &es);
        s->gen_loss += w * es.gen_loss;
        s->acc += w * es.gen_acc;
        s->disc_loss += w * es.disc_loss;
        s->disc_acc += w * es.disc_acc;
        s->replaced += w * es.replaced_frac;
    } else {
        /* The MLM reads the masked rows only: the last layer runs there. */
        bert_forward_rows(r->m, &(BertBatch){b->B, b->T, b->ids, NULL, b->lengths}, b->positions, b->n_masked,
                          &r->drop_rng);
        r->m->loss_count = mlm_batch_all_masked(b);   /* the whole batch's (its own when whole) */
        float acc = 0, loss = bert_mlm_loss(r->m, b->positions, b->labels, b->n_masked, 1, &acc);
        r->m->loss_count = 0;
        bert_backward(r->m);
        s->loss += w * loss;
        s->acc += w * acc;
    }
    s->tokens += all->tokens;
}

/* Data parallel: the ranks' gradients (each its rows' share of the mean) sum
 * to the whole batch's, and so do their loss and accuracy shares. Most
 * buckets of each arena were started during the last backward; here the
 * rest start and all are waited for (ZeRO-1: one reduce-scatter per arena,
 * after which each rank has the sum of its slice only). Then every rank
 * clips and steps identically. The barrier first costs one latency and
 * tells waiting for the slowest rank apart from the sum itself
 * (summary.json); the buckets in flight progress during it. */
static void run_sum_over_ranks(Run *r, Params *const *arenas, int n_arenas, StepStats *s) {
    if (r->size == 1) return;
    dist_barrier();
    for (int i = 0; i < n_arenas; i++)
        if (r->zero) dist_reduce_scatter_floats(arenas[i]->grad, (long)arenas[i]->total);
        else dist_buckets_finish(r->buckets[i]);
    double v[6] = {s->loss, s->acc, s->gen_loss, s->disc_loss, s->disc_acc, s->replaced};
    dist_allreduce_doubles(v, 6);
    s->loss = v[0], s->acc = v[1], s->gen_loss = v[2], s->disc_loss = v[3], s->disc_acc = v[4], s->replaced = v[5];
}

/* Scales every gradient of p (the mean over micro-batches). */
static void run_scale_grads(Params *p, float scale) {
    float *g = p->grad;
    long total = (long)p->total;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < total; i++) g[i] *= scale;
}

/* One optimizer step over `accumulate` micro-batches. 0 ok (diverged: no
 * update, the loss or gradient norm not finite), 1 on a read error. */
static int run_step(Run *r, StepStats *s) {
    const PretrainConfig *pc = r->pc;
    /* ELECTRA trains two arenas as one model: one clip, the same schedule. */
    Params *arenas[2] = {r->m->params, r->electra.gen ? r->electra.gen->params : NULL};
    int n_arenas = r->electra.gen ? 2 : 1;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n_arenas; i++) params_zero_grad(arenas[i]);
    /* Data parallel: each rank's dropout from the seed, its rank and the step,
     * so a checkpoint needs no per-rank state and resumes exactly with any N. */
    if (r->size > 1)
        rng_seed_stream(&r->drop_rng, pc->seed + 0x9E3779B97F4A7C15ULL * (uint64_t)r->loop.step,
                        STREAM_DROPOUT_RANKS + (uint64_t)r->rank);
    for (int a = 0; a < pc->accumulate; a++) {
        MlmBatch *b = &r->batch;
        if (mlm_batch_fill(b, &r->stream, &r->mc, &r->mask_rng, pc->batch) != pc->batch) return 1;
        if (a == pc->accumulate - 1)   /* the backward that completes the gradients starts their sums */
            for (int i = 0; i < n_arenas; i++)
                if (r->buckets[i]) dist_buckets_begin(r->buckets[i]);
        run_micro_batch(r, b, s);
    }
    run_sum_over_ranks(r, arenas, n_arenas, s);
    if (pc->accumulate > 1)   /* the gradient of the mean over micro-batches */
        for (int i = 0; i < n_arenas; i++) run_scale_grads(arenas[i], 1.0f / (float)pc->accumulate);
    /* The global norm: with ZeRO-1, of every rank's slice. */
    double sumsq = clip_sumsq_many(arenas, n_arenas);
    if (r->zero) dist_allreduce_doubles(&sumsq, 1);
    s->grad_norm = sqrt(sumsq);
    clip_scale_many(arenas, n_arenas, (float)pc->clip, s->grad_norm);
    if (!isfinite(s->loss) || !isfinite(s->grad_norm)) return 0;   /* diverged: the loop stops */
    s->lr = schedule_lr(&r->sched, r->loop.step);
    optim_step(&r->opt, arenas[0], s->lr);
    if (r->electra.gen) optim_step(&r->electra.opt, arenas[1], s->lr);
    if (r->zero)   /* each rank updated its slice: every rank gets all of them */
        for (int i = 0; i < n_arenas; i++) dist_allgather_floats(arenas[i]->data, (long)arenas[i]->total);
    r->tokens += s->tokens;
    return 0;
}

/* ---- logging ---- */

static void window_add(Window *w, const StepStats *s) {
    StepStats *a = &w->sum;
    a->loss += s->loss, a->acc += s->acc, a->grad_norm += s->grad_norm;
    a->gen_loss += s->gen_loss, a->disc_loss += s->disc_loss, a->disc_acc += s->disc_acc;
    a->replaced += s->replaced;
    a->tokens += s->tokens;
    a->lr = s->lr;
    w->steps++;
}

/* One line appended to the log; -1 after a message when it could not be
 * written (a full disk): the run stops there, where it went on with a log
 * that lacked lines (a resume cuts the log back to its resume point). */
static int run_log_line(Run *r, const char *line) {
    errno = 0;
    if (fprintf(r->log, "%s\n", line) >= 0 && fflush(r->log) == 0 && !ferror(r->log)) return 0;
    user_error_io("check free disk space; --resume continues from the last resume point", "%s: cannot write: %s",
                  r->path_log, strerror(errno ? errno : EIO));
    return -1;
}

static int run_log_window(Run *r, Window *w, long step) {
    double now = now_seconds(), secs = now - w->t0;
    if (!r->log) {   /* a data-parallel rank other than 0 */
        memset(w, 0, sizeof *w);
        w->t0 = now;
        return 0;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "step", (double)step);
    cJSON_AddNumberToObject(j, "epoch", (double)stream_tell(&r->stream).epoch);
    double n = (double)w->steps;
    const StepStats *a = &w->sum;
    cJSON_AddNumberToObject(j, "loss", a->loss / n);
    cJSON_AddNumberToObject(j, "mlm_acc", a->acc / n);
    if (r->electra.gen) {
        cJSON_AddNumberToObject(j, "gen_loss", a->gen_loss / n);
        cJSON_AddNumberToObject(j, "disc_loss", a->disc_loss / n);
        cJSON_AddNumberToObject(j, "disc_acc", a->disc_acc / n);
        cJSON_AddNumberToObject(j, "replaced", a->replaced / n);
    }
    cJSON_AddNumberToObject(j, "lr", a->lr);
    cJSON_AddNumberToObject(j, "grad_norm", a->grad_norm / n);
    cJSON_AddNumberToObject(j, "tokens", (double)r->tokens);
    cJSON_AddNumberToObject(j, "tokens_per_sec", secs > 0 ? (double)a->tokens / secs : 0);
    cJSON_AddNumberToObject(j, "elapsed", train_loop_seconds(&r->loop));
    char *s = cJSON_PrintUnformatted(j);
    int rc = run_log_line(r, s);
    free(s);
    cJSON_Delete(j);
    memset(w, 0, sizeof *w);
    w->t0 = now;
    return rc;
}

static int run_log_eval(Run *r, const MlmEvalResult *e, long step) {
    char line[256];
    snprintf(line, sizeof line, "{\"step\":%ld,\"eval_loss\":%.6f,\"eval_acc\":%.6f,\"eval_masked\":%ld}", step,
             e->loss, e->accuracy, e->masked);
    if (r->o->show_progress)
        fprintf(stderr, "step %ld: held-out MLM loss %.4f, accuracy %.2f%% (%ld masked tokens)\n", step, e->loss,
                100 * e->accuracy, e->masked);
    return run_log_line(r, line);
}

/* Bytes of AdamW state (m and v) this rank keeps: over its shard of each
 * arena, or with whole = 1 over the whole arenas (every rank without ZeRO-1). */
static double run_state_bytes(const Run *r, int whole) {
    const Params *arenas[2] = {r->m->params, r->electra.gen ? r->electra.gen->params : NULL};
    double floats = 0;
    for (int i = 0; i < 2 && arenas[i]; i++)
        floats += whole ? (double)arenas[i]->total : (double)(arenas[i]->shard_hi - arenas[i]->shard_lo);
    return 2.0 * sizeof(float) * floats;
}

/* summary.json at the end. 0 ok. */
static int run_summary(Run *r, const MlmEvalResult *e, int have_eval) {
    cJSON *j = run_results_head(r->o->command, r->pc->seed, r->o->threads, NULL);
    cJSON_AddNumberToObject(j, "ranks", r->size);   /* data-parallel processes, each with `threads` */
    cJSON_AddNumberToObject(j, "zero", r->zero);
    cJSON_AddNumberToObject(j, "optimizer_state_bytes_per_rank", run_state_bytes(r, 0));
    long step = r->loop.step;
    double secs = r->loop.seconds;
    if (r->size > 1 && step > r->step0) {
        /* The gradient sums of this process (`glue bench scaling` reads them):
         * the sums' time, and before them the wait for the slowest rank. */
        DistStats ds = dist_stats();
        double steps = (double)(step - r->step0);
        cJSON *ar = cJSON_AddObjectToObject(j, "allreduce");
        cJSON_AddNumberToObject(ar, "steps", steps);
        cJSON_AddNumberToObject(ar, "seconds_per_step", ds.seconds / steps);
        cJSON_AddNumberToObject(ar, "wait_seconds_per_step", ds.wait_seconds / steps);
        cJSON_AddNumberToObject(ar, "bytes_per_step", ds.bytes / steps);
    }
    char cpu[256];
    provenance_cpu(cpu, sizeof cpu);
    cJSON_AddStringToObject(j, "cpu", cpu);
    cJSON_AddNumberToObject(j, "steps", (double)step);
    cJSON_AddNumberToObject(j, "tokens", (double)r->tokens);
    cJSON_AddNumberToObject(j, "train_seconds", secs);
    cJSON_AddNumberToObject(j, "tokens_per_sec", secs > 0 ? (double)r->tokens / secs : 0);
    cJSON_AddStringToObject(j, "objective", r->pc->objective);
    /* What ran (the last segment of a resumed run): precision=bf16 runs fp32 without a fast bf16 dot product. */
    cJSON_AddStringToObject(j, "precision", MATMUL_PRECISION_NAMES[matmul_precision()]);
    cJSON_AddNumberToObject(j, "num_params", (double)bert_num_params(r->m));
    if (r->electra.gen) cJSON_AddNumberToObject(j, "generator_params", (double)bert_num_params(r->electra.gen));
    cJSON_AddNumberToObject(j, "cache_tokens", (double)r->cache->n_tokens);
    cJSON_AddNumberToObject(j, "epochs", (double)r->tokens / (double)r->cache->n_tokens);
    if (have_eval) {
        cJSON *ev = cJSON_AddObjectToObject(j, "eval");
        cJSON_AddStringToObject(ev, "corpus", r->pc->eval_corpus.path);
        cJSON_AddNumberToObject(ev, "loss", e->loss);
        cJSON_AddNumberToObject(ev, "accuracy", e->accuracy);
        cJSON_AddNumberToObject(ev, "masked", (double)e->masked);
    }
    int rc = run_dir_finish(r->o->out_dir, PRETRAIN_SUMMARY, j, 1);   /* the resume point stays: see train.h */
    cJSON_Delete(j);
    return rc;
}

/* ---- the run ---- */

/* Data parallel: every rank must train the same run from the same point on
 * the same data; a rank that differs ends the job here, not in a hang or a
 * silently different model. */
static int run_check_ranks(const Run *r) {
    char *cfg = cJSON_PrintUnformatted(r->pc->json);
    uint64_t h = dist_hash(DIST_HASH_INIT, cfg, strlen(cfg));
    free(cfg);
    long facts[3] = {r->cache->n_tokens, r->loop.step, r->tokens};
    h = dist_hash(h, facts, sizeof facts);
    return dist_check_same(h, "the run (config, corpus size, or the step resumed from)");
}

/* A pretraining run's directory (run_txn.h): a finished run keeps its resume point. */
static const RunKind PRETRAIN_RUN_KIND = {.results = PRETRAIN_SUMMARY, .keeps_resume = 1, .early = PRETRAIN_LOG,
                                          .finished = "--resume carries it further (with a larger steps)"};

/* The directory, before anything is written: locked, a run in it refused
 * unless asked, a stage for --overwrite (rank 0; the others learn where the
 * run works, and the outcome). r->o->out_dir becomes where the run writes. */
static int run_open_dir(Run *r) {
    PretrainOptions *o = (PretrainOptions *)r->o;   /* pretrain_run's own copy */
    int rc = 0;
    r->txn.kind = &PRETRAIN_RUN_KIND;
    if (r->rank == 0) rc = run_dir_enter(&r->txn, o->out_dir, o->resume, o->overwrite);
    else run_dir_work(o->out_dir, &PRETRAIN_RUN_KIND, o->resume, r->txn.work, sizeof r->txn.work);
    if (r->size > 1) rc = dist_max_int(rc);
    if (rc == 0) o->out_dir = r->loop.out_dir = r->txn.work;
    return rc;
}

static int run_prepare(Run *r) {
    const PretrainOptions *o = r->o;
    const PretrainConfig *pc = r->pc;
    if (pc->batch % r->size != 0) {
        if (r->rank == 0)
            user_error("launch a number of ranks that divides batch (each rank computes batch / N rows of every "
                       "micro-batch; raise accumulate to keep the global batch with a smaller batch)",
                       "batch %d cannot be split over %d ranks", pc->batch, r->size);
        return EXIT_USAGE;
    }
    r->rows = pc->batch / r->size;
    int rc = run_open_dir(r);
    if (rc) return rc;
    file_join(o->out_dir, PRETRAIN_MODEL_CKPT, r->path_model, sizeof r->path_model);
    file_join(o->out_dir, PRETRAIN_LOG, r->path_log, sizeof r->path_log);
    rc = run_setup_data(r);
    if (rc) return rc;
    r->opt = optim_adamw(pc->weight_decay);
    r->opt.beta1 = pc->beta1;
    r->opt.beta2 = pc->beta2;
    r->opt.eps = pc->adam_eps;
    ScheduleKind kind;
    schedule_parse(pc->schedule, &kind);
    /* rewarm: a fresh AdamW's moments are empty (pretrain_config.h) */
    r->sched = (Schedule){.kind = kind, .lr = (float)pc->lr, .warmup = pc->warmup, .total = pc->steps,
                          .rewarm_from = pc->init_step, .rewarm = pc->rewarm};
    rc = o->resume ? resume_read(o->out_dir, run_read_point, r) : RESUME_NONE;
    if (rc == RESUME_NONE) rc = run_fresh(r);
    if (rc) return rc;
    if (run_check_ranks(r)) return EXIT_USAGE;
    matmul_set_precision(matmul_training_precision((MatmulPrecision)pc->precision, r->rank == 0));
    r->step0 = r->loop.step;
    if (r->rank == 0 && r->size > 1 && o->show_progress) {
        double mib = 1.0 / (1 << 20);
        if (r->zero)
            fprintf(stderr, "data parallel: %d ranks, ZeRO-1: AdamW state %.2f MiB per rank (%.2f MiB without)\n",
                    r->size, mib * run_state_bytes(r, 0), mib * run_state_bytes(r, 1));
        else if (pc->bucket_mb > 0)
            fprintf(stderr, "data parallel: %d ranks, gradients summed in buckets of %g MiB during the backward; "
                    "AdamW state %.2f MiB per rank (zero=1 shards it)\n",
                    r->size, pc->bucket_mb, mib * run_state_bytes(r, 0));
        else
            fprintf(stderr, "data parallel: %d ranks, gradients summed after the backward; AdamW state %.2f MiB per "
                    "rank (zero=1 shards it)\n", r->size, mib * run_state_bytes(r, 0));
    }
    r->w.t0 = now_seconds();
    if (r->rank != 0) return 0;   /* writes nothing */
    cJSON *cfg = cJSON_Duplicate(pc->json, 1);
    cJSON_AddItemToObject(cfg, "bert", bert_config_to_json(&pc->bert));
    rc = run_dir_begin(o->out_dir, PRETRAIN_SUMMARY, cfg);
    cJSON_Delete(cfg);
    return rc || run_open_log(r, r->loop.step) ? 1 : 0;
}

static void run_free(Run *r) {
    if (r->log) fclose(r->log);
    run_models_free(r);
    train_loop_free(&r->loop);
    mlm_batch_free(&r->batch);
    free(r->shard_pos);
    if (r->cache) stream_free(&r->stream);
    token_cache_close(r->cache);
    token_cache_close(r->eval_cache);
    masking_free(&r->mc);
    masking_free(&r->eval_mc);
    vocab_free(r->vocab);
}

/* ---- the loop's client (loop.h): one epoch of `steps` batches ---- */

static long run_begin(void *ctx, TrainLoop *L) { return ((Run *)ctx)->pc->steps; }

/* One step; then, every log_every steps, a log line (and the progress
 * display's numbers), every eval_every a held-out evaluation. */
static int run_loop_step(void *ctx, TrainLoop *L, double *loss) {
    Run *r = ctx;
    const PretrainConfig *pc = r->pc;
    StepStats s;
    if (run_step(r, &s)) return 1;
    if (!isfinite(*loss = isfinite(s.grad_norm) ? s.loss : s.grad_norm)) return 0;   /* diverged: the loop stops */
    window_add(&r->w, &s);
    long step = L->step + 1;   /* the step just taken, counted by the loop on return */
    if (step % pc->log_every == 0 || step == pc->steps) {
        const Window *w = &r->w;
        const StepStats *a = &w->sum;
        double secs = now_seconds() - w->t0, tok_s = secs > 0 ? a->tokens / secs : 0.0;
        if (r->electra.gen)
            snprintf(r->text, sizeof r->text, "step %ld gen %.3f (%.1f%%) disc %.4f (%.1f%%) lr %.2e %.0f tok/s",
                     step, a->gen_loss / w->steps, 100 * a->acc / w->steps, a->disc_loss / w->steps,
                     100 * a->disc_acc / w->steps, a->lr, tok_s);
        else
            snprintf(r->text, sizeof r->text, "step %ld loss %.3f acc %.1f%% lr %.2e %.0f tok/s", step,
                     a->loss / w->steps, 100 * a->acc / w->steps, a->lr, tok_s);
        if (run_log_window(r, &r->w, step)) return 1;
    }
    if (r->rank == 0 && pc->eval_every > 0 && step % pc->eval_every == 0 && step < pc->steps) {
        MlmEvalResult e;
        if (run_eval(r, pc->eval_batches, &e) && run_log_eval(r, &e, step)) return 1;
    }
    return 0;
}

static void run_describe(void *ctx, const TrainLoop *L, char *text, size_t cap) {
    snprintf(text, cap, "%s", ((const Run *)ctx)->text);
}

/* The end: the resume point (kept: see train.h), the held-out evaluation and summary.json. */
static int run_end(void *ctx, TrainLoop *L, double seconds) {
    Run *r = ctx;
    if (run_save(r, L)) return 1;
    if (r->rank != 0) return 0;
    MlmEvalResult e;
    int have = run_eval(r, 0, &e);
    if (have && run_log_eval(r, &e, L->step)) return 1;
    return run_summary(r, &e, have) ? 1 : 0;
}

static const TrainLoopOps RUN_LOOP = {.begin = run_begin, .step = run_loop_step, .describe = run_describe,
                                      .end = run_end, .save = run_save};

int pretrain_run(const PretrainOptions *opt) {
    PretrainOptions own = *opt;
    const PretrainOptions *o = &own;
    Run r = {.o = o, .pc = o->cfg, .rank = dist_rank(), .size = dist_size()};
    r.zero = o->cfg->zero && r.size > 1;
    TrainLoop *L = &r.loop;
    train_loop_init(L, &RUN_LOOP, &r, o->out_dir, o->cfg->json, o->cfg->seed);
    L->epochs = 1, L->stop_at = o->stop_at, L->checkpoint_every = o->cfg->checkpoint_every;
    L->show_progress = o->show_progress, L->rank = r.rank, L->label = "pretrain", L->unit = "steps";
    int rc = run_prepare(&r);
    if (rc == 0) rc = train_loop_run(L);
    /* Finished (not stopped at stop_at): a stage is swapped in. */
    if (rc == 0 && r.rank == 0) rc = run_dir_commit(&r.txn);
    run_dir_close(&r.txn, rc == 0);
    run_free(&r);
    matmul_set_precision(MATMUL_FP32);
    return rc == TRAIN_STOPPED ? 0 : rc;
}

/* The generator of an ELECTRA run's checkpoint c (discriminator m): its
 * shape by the one rule (pretrain_generator_config) from the recipe c
 * records, its weights from c. 0 with *gen NULL for an MLM run; 1 after a
 * message. */
static int snapshot_generator(const Checkpoint *c, const cJSON *recipe, const Bert *m, Bert **gen) {
    PretrainConfig pc;
    *gen = NULL;
    if (pretrain_config_read_settings(recipe, c->path, &pc)) return 1;
    if (!pretrain_config_is_electra(&pc)) return 0;
    pc.bert = m->cfg;
    BertConfig g;
    if (pretrain_generator_config(&pc, &g)) return 1;
    *gen = bert_create_sharing(&g, &(BertHeads){.mlm = 1}, 0, m);
    return electra_load_weights(*gen, c) ? 1 : 0;
}

/* OUT_DIR/model.ckpt: the encoder (with its vocabulary) and the generator
 * (gen may be NULL) in half precision, the step in the config record. 0, or 1
 * after a message. */
static int snapshot_write(const char *out_dir, const Bert *m, const Bert *gen, const Vocab *v, long step) {
    char path[4200];
    if (file_make_dir(out_dir)) return 1;
    file_join(out_dir, PRETRAIN_MODEL_CKPT, path, sizeof path);
    cJSON *cfg = bert_checkpoint_config(m);
    cJSON_AddNumberToObject(cfg, "step", (double)step);   /* the init_step of a continuation */
    if (gen) cJSON_AddItemToObject(cfg, ELECTRA_GEN_CONFIG, bert_config_to_json(&gen->cfg));
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return 1;
    if (bert_write(m, w, v, CKPT_F16) || (gen && electra_save_weights(gen, w, CKPT_F16))) {
        checkpoint_writer_abort(w);
        return 1;
    }
    return checkpoint_writer_commit(w) ? 1 : 0;
}

/* The run's config (paths under the home directory written ~) and log beside
 * the weights (the model card reads them). 0, or 1 after a message. */
static int snapshot_copy_files(const char *run_dir, const char *out_dir) {
    char path[4200], out[4200];
    file_join(run_dir, PRETRAIN_CONFIG, path, sizeof path);
    file_join(out_dir, "pretrain_config.json", out, sizeof out);
    if (json_file_copy_portable(path, out)) return 1;
    size_t len;
    file_join(run_dir, PRETRAIN_LOG, path, sizeof path);
    char *text = file_read(path, &len);
    if (!text) {
        user_error_io(NULL, "cannot read %s", path);
        return 1;
    }
    file_join(out_dir, PRETRAIN_LOG, out, sizeof out);
    int rc = atomic_write(out, text, len) ? 1 : 0;
    free(text);
    return rc;
}

/* The weights of a resume point in dir. */
static int snapshot_take(void *ctx, const ResumeFiles *f, const cJSON *position) {
    return (*(Checkpoint **)ctx = checkpoint_read(f->ckpt)) ? 0 : 1;
}

int pretrain_snapshot(const char *run_dir, const char *out_dir) {
    /* Everything from the resume point's weights (or an older glue's one
     * file): encoder, generator and step of one moment, which model.ckpt and
     * the resume point of a running run need not be. */
    char old[4200], there[4200];
    Checkpoint *c = NULL;
    /* OUT_DIR is a snapshot's folder, written over on purpose each time; a
     * run's own model.ckpt (RUN_DIR itself, or another run) is not one: it
     * was replaced by half-precision weights, its log.jsonl by another's. */
    file_join(out_dir, PRETRAIN_SUMMARY, there, sizeof there);
    int out_is_run = resume_exists(out_dir) || resume_is_old(out_dir, old, sizeof old) || file_exists(there);
    file_join(out_dir, RUN_RESULTS, there, sizeof there);
    if (out_is_run || file_exists(there)) {
        user_error_usage("name a folder of its own for the snapshot, e.g. models/NAME", "%s holds a run: a snapshot "
                         "there would replace its model.ckpt and log.jsonl", out_dir);
        return EXIT_USAGE;
    }
    if (resume_is_old(run_dir, old, sizeof old)) c = checkpoint_read(old);
    else if (!file_exists(run_dir))
        user_error_io("pass the --out of a glue pretrain run", "%s: no such run directory", run_dir);
    else if (!resume_exists(run_dir))
        user_error("pass the --out of a glue pretrain run", "%s holds no pretraining run (no %s/)", run_dir,
                   RUN_RESUME_DIR);
    else if (resume_read(run_dir, snapshot_take, &c) != 0)
        c = NULL;
    if (!c) return 1;
    const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(c->config, "pretrain");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(c->config, "step");
    Bert *m = NULL, *gen = NULL;
    Vocab *v = NULL;
    int rc = 1;
    if (!cJSON_IsObject(recipe) || !cJSON_IsNumber(step)) {
        user_error_data("pass the --out of a glue pretrain run", "%s: not a pretraining checkpoint", c->path);
    } else if ((m = bert_from_checkpoint(c, NULL, 1, 0)) && snapshot_generator(c, recipe, m, &gen) == 0) {
        v = bert_checkpoint_vocab(c);
        if (!v) user_error_data("pass the --out of a glue pretrain run", "%s: holds no vocabulary", c->path);
        else rc = snapshot_write(out_dir, m, gen, v, (long)step->valuedouble) || snapshot_copy_files(run_dir, out_dir);
    }
    if (rc == 0) {
        long at = (long)step->valuedouble;
        printf("snapshot of %s (step %ld) in %s: model.ckpt (float16: the encoder%s), pretrain_config.json, "
               "log.jsonl\n"
               "continue the run from it (a fresh optimizer; the step, schedule and end are the run's):\n"
               "  glue pretrain --config CONFIG --set init=%s --set init_step=%ld --set rewarm=200 --out RUN --resume\n"
               "  (CONFIG: the run's config file; pretrain_config.json has its settings)\n",
               run_dir, at, out_dir, gen ? " and ELECTRA's generator" : "", out_dir, at);
    }
    vocab_free(v);
    bert_free(gen);   /* before m: it reads m's embeddings */
    bert_free(m);
    checkpoint_free(c);
    return rc;
}
