/* translate.c — the translation training run (see translate.h), a client of
 * the training harness (loop.h, resume.h, run_dir.h).
 *
 * One run: settings -> vocabulary (given, or trained on the training data) ->
 * corpora -> model (fresh, or resumed) -> per epoch: the epoch's batches (a
 * function of seed and epoch), AdamW steps on the inverse-square-root
 * schedule, then dev loss and dev BLEU (detokenised output against the raw
 * references, sacreBLEU's definition), the best checkpoint kept by dev BLEU. */
#include "train/translate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "metrics/bleu.h"
#include "models/run_config.h"
#include "train/loop.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/run_txn.h"
#include "optim/clip.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "text/wordpiece_train.h"

#define S2S_VOCAB_FILE "vocab.txt"
#define S2S_RNG_BLOB "dropout_rng"
#define S2S_MAX_TOKENS_LIMIT (1 << 20)

/* ---- config ---- */

/* Settings the loop reads. */
typedef struct {
    int vocab_tokens, epochs, max_tokens, warmup, dev_beam, extra_len, eval_batch;
    long max_steps;         /* 0: none; else training ends after this many steps */
    int average_last;       /* 0, or average the weights of the last N epochs at the end */
    float lr, clip, alpha;
    double save_minutes, weight_decay, beta1, beta2, adam_eps;
    Optimizer opt;
} S2sSettings;

/* The run's settings beside the model's: defaults, checks and --help-settings
 * in one table. The defaults: the reported run's recipe (README). */
#define S2S(field) offsetof(S2sSettings, field)
#define S2S_TEXT(key, text) {key, SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, text, NULL}
static const SettingSpec S2S_SETTINGS[] = {
    S2S_TEXT("data_dir", "data/mt/multi30k/raw"), S2S_TEXT("src", "en"), S2S_TEXT("tgt", "de"),
    S2S_TEXT("train", "train"), S2S_TEXT("dev", "val"), S2S_TEXT("vocab", ""),
    {"vocab_tokens", SETTING_INT, S2S(vocab_tokens), 8000, 1, 1e7, NULL, NULL},
    {"epochs", SETTING_INT, S2S(epochs), 22, 1, 1e6, NULL, NULL},
    {"max_tokens", SETTING_INT, S2S(max_tokens), 2048, 8, S2S_MAX_TOKENS_LIMIT, NULL, NULL},
    {"lr", SETTING_FLOAT, S2S(lr), 1e-3, 1e-12, 10, NULL, NULL},
    {"warmup", SETTING_INT, S2S(warmup), 1000, 0, 1e9, NULL, NULL},
    {"beta1", SETTING_REAL_BELOW, S2S(beta1), 0.9, 0, 1, NULL, NULL},
    {"beta2", SETTING_REAL_BELOW, S2S(beta2), 0.98, 0, 1, NULL, NULL},
    {"adam_eps", SETTING_REAL, S2S(adam_eps), 1e-9, 1e-30, 1, NULL, NULL},
    {"weight_decay", SETTING_REAL, S2S(weight_decay), 0, 0, 1, NULL, NULL},
    {"clip", SETTING_FLOAT, S2S(clip), 0, 0, 1e9, NULL, NULL},
    {"dev_beam", SETTING_INT, S2S(dev_beam), 1, 1, 64, NULL, NULL},
    {"beam", SETTING_INT, SETTING_NO_FIELD, 5, 1, 64, NULL, NULL},
    {"alpha", SETTING_FLOAT, S2S(alpha), 0.6, 0, 100, NULL, NULL},
    {"extra_len", SETTING_INT, S2S(extra_len), 50, 1, 1e6, NULL, NULL},
    {"eval_batch", SETTING_INT, S2S(eval_batch), 64, 1, 1 << 20, NULL, NULL},
    {"save_minutes", SETTING_REAL, S2S(save_minutes), 10, 0, 1e9, NULL, NULL},
    {"max_steps", SETTING_LONG, S2S(max_steps), 0, 0, 1e15, NULL, NULL},
    {"average_last", SETTING_INT, S2S(average_last), 5, 0, 1e6, NULL, NULL},
};
enum { S2S_NUM_SETTINGS = sizeof S2S_SETTINGS / sizeof S2S_SETTINGS[0] };
#define S2S_HINT "glue translate --help-settings lists the settings"

const SettingSpec *s2s_run_settings(int *n) {
    *n = S2S_NUM_SETTINGS;
    return S2S_SETTINGS;
}

cJSON *s2s_run_config_default(void) {
    S2sConfig mc = s2s_config_default();
    mc.dropout = 0.2f;   /* more than the model's default: a 29k-pair corpus */
    cJSON *j = s2s_config_to_json(&mc);
    cJSON_DeleteItemFromObjectCaseSensitive(j, "vocab_size");
    settings_table_defaults(j, S2S_SETTINGS, S2S_NUM_SETTINGS);
    return j;
}

cJSON *s2s_run_config_build(const char *file, const char *const *sets, const char *const *origin, int nsets) {
    /* The generic defaults + file + --set merging of models/run_config.h. */
    return run_config_build(s2s_run_config_default(), file, sets, origin, nsets);
}

int s2s_decode_settings(const cJSON *run_config, const char *who, S2sDecodeOptions *dec) {
    SettingsReader r = settings_reader(run_config, who, S2S_HINT);
    *dec = (S2sDecodeOptions){.beam = (int)settings_int(&r, "beam", 5, 1, 64),
                              .alpha = (float)settings_real(&r, "alpha", 0.6, 0, 100),
                              .extra_len = (int)settings_int(&r, "extra_len", 50, 1, 1e6)};
    return r.failed ? EXIT_USAGE : 0;
}

static int s2s_read_settings(const cJSON *c, S2sSettings *s) {
    SettingsReader r = settings_reader(c, "translate train", S2S_HINT);
    settings_table_read(&r, S2S_SETTINGS, S2S_NUM_SETTINGS, s);
    if (r.failed) return EXIT_USAGE;
    if (s->average_last > s->epochs) {
        user_error(S2S_HINT, "translate train: average_last must be in [0, epochs]");
        return EXIT_USAGE;
    }
    s->opt = optim_adamw(s->weight_decay);
    s->opt.beta1 = s->beta1, s->opt.beta2 = s->beta2, s->opt.eps = s->adam_eps;
    return 0;
}

/* ---- data and vocabulary ---- */

static void s2s_split_path(const cJSON *c, const char *split, const char *lang_key, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.%s", run_config_string(c, "data_dir", "."), run_config_string(c, split, split),
             run_config_string(c, lang_key, lang_key));
}

/* The vocabulary: the configured file, else <out>/vocab.txt (trained on the
 * training data if absent). NULL after a message. */
static Vocab *s2s_run_vocab(const cJSON *c, int vocab_tokens, const char *out_dir) {
    const char *given = run_config_string(c, "vocab", "");
    char path[4096];
    if (*given) return vocab_load(given);
    file_join(out_dir, S2S_VOCAB_FILE, path, sizeof path);
    if (file_exists(path)) return vocab_load(path);
    WordpieceTrainer *tr = wordpiece_trainer_create();
    wordpiece_trainer_set_options(tr, 1, 1);
    int rc = 0;
    for (int side = 0; side < 2 && rc == 0; side++) {
        char file[4096];
        s2s_split_path(c, "train", side ? "tgt" : "src", file, sizeof file);
        long lines = 0;
        rc = wordpiece_trainer_add_file(tr, file, &lines);
    }
    if (rc == 0) {
        wordpiece_trainer_train(tr, vocab_tokens, 2);
        rc = wordpiece_trainer_save(tr, path) != 0;
    }
    wordpiece_trainer_free(tr);
    return rc ? NULL : vocab_load(path);
}

/* ---- evaluation ---- */

char **s2s_translate_corpus(Seq2Seq *m, const S2sCorpus *c, const S2sDecodeOptions *o, int batch_sents) {
    char **hyp = xcalloc((size_t)(c->n ? c->n : 1), sizeof(char *));
    S2sBatches bs;
    s2s_batches_make(&bs, c, S2S_MAX_TOKENS_LIMIT, INT32_MAX / 2, 0, 0, 0);   /* length order, none skipped */
    const int **src = xmalloc(sizeof(int *) * (size_t)batch_sents);
    int *len = xmalloc(sizeof(int) * (size_t)batch_sents), **out = xmalloc(sizeof(int *) * (size_t)batch_sents);
    int *out_len = xmalloc(sizeof(int) * (size_t)batch_sents);
    for (int lo = 0; lo < c->n; lo += batch_sents) {
        int n = c->n - lo < batch_sents ? c->n - lo : batch_sents;
        for (int i = 0; i < n; i++) {
            int k = bs.order[lo + i];
            src[i] = c->src[k];
            len[i] = c->src_len[k];
        }
        s2s_translate_batch(m, src, len, n, o, out, out_len);
        for (int i = 0; i < n; i++) {
            hyp[bs.order[lo + i]] = subword_decode(m->vocab, out[i], out_len[i]);
            free(out[i]);
        }
    }
    free(src); free(len); free(out); free(out_len);
    s2s_batches_free(&bs);
    return hyp;
}

S2sLoss s2s_corpus_loss(Seq2Seq *m, const S2sCorpus *c, int max_tokens) {
    S2sBatches bs;
    s2s_batches_make(&bs, c, max_tokens, s2s_reserved_len(m), 0, 0, 0);
    S2sBatchBuf buf;
    s2s_batch_buf_init(&buf, max_tokens);
    S2sLoss total = {0};
    for (int b = 0; b < bs.n; b++) {
        S2sBatch batch = s2s_batch_fill(&buf, c, vocab_specials(m->vocab), bs.order + bs.start[b], bs.count[b]);
        S2sLoss l = s2s_forward_backward(m, &batch, NULL, 0);
        total.smoothed += l.smoothed;
        total.nll += l.nll;
        total.tokens += l.tokens;
    }
    s2s_batch_buf_free(&buf);
    s2s_batches_free(&bs);
    return total;
}

/* ---- the run ---- */

typedef struct {
    const S2sTrainOptions *o;
    S2sSettings s;
    Seq2Seq *m;
    S2sCorpus train, dev;
    int max_len;            /* longest training sequence with its special token */
    Schedule sched;
    TrainLoop loop;         /* where the run is, the epoch records (loop.h) */
    S2sBatches bs;          /* the epoch's batches */
    S2sBatchBuf buf;
    double loss_sum, nll_sum, tokens;   /* the epoch's so far: saved in the resume point */
    double cpu_before;      /* CPU seconds of earlier sessions of this run (resume) */
    double cpu_start;       /* this process's CPU seconds when the run started */
    cJSON *averaged;        /* the averaged weights' record (average_last), or NULL */
} S2sRun;

/* CPU seconds the whole run has used, across resumed sessions. */
static double s2s_run_cpu(const S2sRun *r) { return r->cpu_before + cpu_seconds() - r->cpu_start; }

/* ---- the resume point (resume.h, translate.h) ---- */

static int s2s_write_files(void *ctx, const ResumeFiles *f) {
    S2sRun *r = ctx;
    if (s2s_save(r->m, f->ckpt, CKPT_F32) != 0) return 1;
    CkptWriter *w = checkpoint_writer_open(f->state, NULL, -1);
    if (!w) return 1;
    if (checkpoint_write_blob(w, S2S_RNG_BLOB, &r->m->rng, sizeof r->m->rng) ||
        optim_save(&r->s.opt, r->m->params, w)) {
        checkpoint_writer_abort(w);
        return 1;
    }
    return checkpoint_writer_commit(w) != 0;
}

static int s2s_save_last(void *ctx, TrainLoop *L) {
    S2sRun *r = ctx;
    cJSON *j = train_loop_position(L);
    json_add_exact(j, "loss_sum", r->loss_sum);   /* bit for bit: see run_dir.h */
    json_add_exact(j, "nll_sum", r->nll_sum);
    json_add_exact(j, "tokens", r->tokens);
    cJSON_AddNumberToObject(j, "cpu_seconds", s2s_run_cpu(r));
    int rc = resume_write(r->o->out_dir, j, s2s_write_files, r);
    cJSON_Delete(j);
    return rc;
}

static int s2s_read_point(void *ctx, const ResumeFiles *f, const cJSON *p) {
    S2sRun *r = ctx;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(p, "seed");
    if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(p, "config"), r->o->config, 1) || !cJSON_IsNumber(seed) ||
        (uint64_t)seed->valuedouble != r->o->seed) {
        user_error("resume with the same settings and --seed, or drop --resume to start over",
                   "%s: the interrupted run used other settings", f->dir);
        return RESUME_OTHER;
    }
    if (s2s_load_weights(r->m, f->ckpt) != 0) return 1;
    Checkpoint *c = checkpoint_read(f->state);
    const CkptBlob *rb = c ? checkpoint_find_blob(c, S2S_RNG_BLOB) : NULL;
    int rc = 1;
    if (c && (!rb || rb->size != sizeof r->m->rng))
        user_error_data("delete it to start over", "%s: not a translation resume point", f->state);
    else if (rb && optim_load(&r->s.opt, r->m->params, c) == 0)
        rc = 0;
    if (rc == 0) memcpy(&r->m->rng, rb->data, sizeof r->m->rng);
    checkpoint_free(c);
    if (rc) return 1;
    if (train_loop_restore(&r->loop, p) != 0) {
        user_error_data("delete it to start over", "%s/%s: a position out of range (damaged)", f->dir,
                        RUN_TRAINER_STATE);
        return 1;
    }
    r->loss_sum = json_exact(p, "loss_sum", 0);
    r->nll_sum = json_exact(p, "nll_sum", 0);
    r->tokens = json_exact(p, "tokens", 0);
    r->cpu_before = run_config_number(p, "cpu_seconds", 0);
    return 0;
}

/* Dev loss and BLEU (dev_beam decoding) of the current weights. */
static S2sLoss s2s_dev_eval(S2sRun *r, BleuScore *bleu) {
    const S2sSettings *s = &r->s;
    S2sLoss dl = s2s_corpus_loss(r->m, &r->dev, s->max_tokens);
    S2sDecodeOptions dec = {.beam = s->dev_beam, .alpha = s->alpha, .extra_len = s->extra_len};
    char **hyp = s2s_translate_corpus(r->m, &r->dev, &dec, s->eval_batch);
    BleuOptions bo = {.lowercase = 0, .tokenize = BLEU_TOKENIZE_13A};
    bleu_corpus((const char *const *)hyp, (const char *const *)r->dev.tgt_text, r->dev.n, &bo, bleu);
    for (int i = 0; i < r->dev.n; i++) free(hyp[i]);
    free(hyp);
    return dl;
}

/* "epoch<N>.ckpt": the weights after epoch N, kept for averaging. */
static void s2s_epoch_ckpt(const S2sRun *r, int epoch, char *out, size_t cap) {
    char name[64];
    snprintf(name, sizeof name, "epoch%d.ckpt", epoch);
    file_join(r->o->out_dir, name, out, cap);
}

/* The weights as <out>/name (the best: RUN_CKPT). 0 or 1. */
static int s2s_save_as(const S2sRun *r, const char *name) {
    char path[4200];
    file_join(r->o->out_dir, name, path, sizeof path);
    return s2s_save(r->m, path, CKPT_F32) != 0;
}

/* Dev loss and BLEU after an epoch; keeps the best checkpoint (and, for the
 * last average_last epochs, the epoch's weights). */
static int s2s_end_epoch(void *ctx, TrainLoop *L, double epoch_seconds) {
    S2sRun *r = ctx;
    const S2sSettings *s = &r->s;
    double t0 = now_seconds();
    BleuScore bleu;
    S2sLoss dl = s2s_dev_eval(r, &bleu);
    double loss = r->tokens > 0 ? r->loss_sum / r->tokens : 0, ppl = r->tokens > 0 ? exp(r->nll_sum / r->tokens) : 0;
    double dev_loss = dl.tokens ? dl.smoothed / dl.tokens : 0, dev_ppl = dl.tokens ? exp(dl.nll / dl.tokens) : 0;
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "epoch", L->epoch + 1);
    cJSON_AddNumberToObject(rec, "step", (double)L->step);
    cJSON_AddNumberToObject(rec, "lr", schedule_lr(&r->sched, L->step > 0 ? L->step - 1 : 0));
    cJSON_AddNumberToObject(rec, "train_loss", loss);
    cJSON_AddNumberToObject(rec, "train_ppl", ppl);
    cJSON_AddNumberToObject(rec, "dev_loss", dev_loss);
    cJSON_AddNumberToObject(rec, "dev_ppl", dev_ppl);
    cJSON_AddNumberToObject(rec, "dev_bleu", bleu.bleu);
    cJSON_AddNumberToObject(rec, "seconds", epoch_seconds);
    cJSON_AddNumberToObject(rec, "eval_seconds", now_seconds() - t0);
    cJSON_AddNumberToObject(rec, "cpu_seconds", s2s_run_cpu(r));
    r->loss_sum = r->nll_sum = r->tokens = 0;   /* the next epoch's */
    int is_best = train_loop_record(L, rec, bleu.bleu);
    if (r->o->show_progress)
        fprintf(stderr, "epoch %d/%d  step %ld  train loss %.4f ppl %.2f  dev loss %.4f ppl %.2f  dev BLEU %.2f%s\n",
                L->epoch + 1, s->epochs, L->step, loss, ppl, dev_loss, dev_ppl, bleu.bleu, is_best ? "  (best)" : "");
    if (is_best && s2s_save_as(r, RUN_CKPT)) return 1;
    if (s->average_last > 0 && L->epoch + 1 > s->epochs - s->average_last) {
        char path[4096];
        s2s_epoch_ckpt(r, L->epoch + 1, path, sizeof path);
        if (s2s_save(r->m, path, CKPT_F32) != 0) return 1;
    }
    return 0;
}

/* The mean of the kept epoch weights (Vaswani et al. average the last
 * checkpoints): scored on dev like an epoch, written to averaged.ckpt, and
 * made model.ckpt when its dev BLEU is the best. 0 or 1. */
static int s2s_average(S2sRun *r) {
    const Params *p = r->m->params;
    float *acc = xcalloc(p->total, sizeof(float));
    cJSON *used = cJSON_CreateArray();
    int n = 0, rc = 0;
    for (int e = r->s.epochs - r->s.average_last + 1; e <= r->s.epochs && rc == 0; e++) {
        char path[4096];
        s2s_epoch_ckpt(r, e, path, sizeof path);
        if (!file_exists(path)) continue;   /* max_steps ended the run earlier */
        rc = s2s_load_weights(r->m, path) != 0;
        for (size_t i = 0; rc == 0 && i < p->total; i++) acc[i] += p->data[i];
        cJSON_AddItemToArray(used, cJSON_CreateNumber(e));
        n += rc == 0;
    }
    if (rc == 0 && n > 0) {
        for (size_t i = 0; i < p->total; i++) p->data[i] = acc[i] / (float)n;
        BleuScore bleu;
        S2sLoss dl = s2s_dev_eval(r, &bleu);
        double dev_loss = dl.tokens ? dl.smoothed / dl.tokens : 0;
        cJSON *rec = cJSON_CreateObject();
        cJSON_AddItemToObject(rec, "averaged_epochs", used);
        used = NULL;
        cJSON_AddNumberToObject(rec, "dev_loss", dev_loss);
        cJSON_AddNumberToObject(rec, "dev_ppl", dl.tokens ? exp(dl.nll / dl.tokens) : 0);
        cJSON_AddNumberToObject(rec, "dev_bleu", bleu.bleu);
        int is_best = bleu.bleu > r->loop.best_score;   /* it becomes the best, not an epoch */
        if (is_best) cJSON_Delete(r->loop.best), r->loop.best = cJSON_Duplicate(rec, 1), r->loop.best_score = bleu.bleu;
        if (r->o->show_progress)
            fprintf(stderr, "average of the last %d epochs: dev loss %.4f  dev BLEU %.2f%s\n", n, dev_loss, bleu.bleu,
                    is_best ? "  (best)" : "");
        rc = s2s_save_as(r, "averaged.ckpt") || (is_best && s2s_save_as(r, RUN_CKPT));
        r->averaged = rec;
    }
    cJSON_Delete(used);
    free(acc);
    return rc;
}

/* ---- the loop's client (loop.h): an epoch is s2s_batches_make's batches ---- */

static long s2s_begin(void *ctx, TrainLoop *L) {
    S2sRun *r = ctx;
    s2s_batches_free(&r->bs);
    s2s_batches_make(&r->bs, &r->train, r->s.max_tokens, r->max_len, r->o->seed, L->epoch, 1);
    return r->bs.n;
}

static int s2s_step(void *ctx, TrainLoop *L, double *loss) {
    S2sRun *r = ctx;
    const S2sBatches *bs = &r->bs;
    S2sBatch b = s2s_batch_fill(&r->buf, &r->train, vocab_specials(r->m->vocab), bs->order + bs->start[L->batch],
                                bs->count[L->batch]);
    params_zero_grad(r->m->params);
    S2sLoss l = s2s_forward_backward(r->m, &b, &r->m->rng, 1);
    if (!isfinite(*loss = l.smoothed)) return 0;   /* diverged: the loop stops */
    if (r->s.clip > 0) clip_grad_norm(r->m->params, r->s.clip);
    optim_step(&r->s.opt, r->m->params, schedule_lr(&r->sched, L->step));
    r->loss_sum += l.smoothed;
    r->nll_sum += l.nll;
    r->tokens += (double)l.tokens;
    return 0;
}

static void s2s_describe(void *ctx, const TrainLoop *L, char *text, size_t cap) {
    const S2sRun *r = ctx;
    snprintf(text, cap, "loss %.3f ppl %.2f", r->tokens ? r->loss_sum / r->tokens : 0,
             r->tokens ? exp(r->nll_sum / r->tokens) : 0);
}

static const TrainLoopOps S2S_LOOP = {.begin = s2s_begin, .step = s2s_step, .describe = s2s_describe,
                                      .end = s2s_end_epoch, .save = s2s_save_last};

static int s2s_load_corpora(S2sRun *r, SubwordTokenizer *tok) {
    const cJSON *c = r->o->config;
    char src[4096], tgt[4096];
    s2s_split_path(c, "train", "src", src, sizeof src);
    s2s_split_path(c, "train", "tgt", tgt, sizeof tgt);
    if (s2s_corpus_load(&r->train, src, tgt, tok, 0) != 0) return 1;
    s2s_split_path(c, "dev", "src", src, sizeof src);
    s2s_split_path(c, "dev", "tgt", tgt, sizeof tgt);
    if (s2s_corpus_load(&r->dev, src, tgt, tok, 1) != 0) return 1;
    if (r->train.n == 0 || r->dev.n == 0) {
        user_error_data("fetch the data: glue data fetch mt", "the training or dev corpus is empty");
        return 1;
    }
    return 0;
}

/* Model (fresh or resumed), corpora, workspace. */
static int s2s_prepare(S2sRun *r) {
    const cJSON *c = r->o->config;
    if (file_make_dir(r->o->out_dir) != 0) return 1;
    Vocab *v = s2s_run_vocab(c, r->s.vocab_tokens, r->o->out_dir);
    if (!v) return 1;
    SubwordTokenizer *tok = subword_create(v);
    int rc = tok ? s2s_load_corpora(r, tok) : 1;
    subword_free(tok);
    S2sConfig mc = s2s_config_default();
    if (rc == 0 && s2s_config_from_json(&mc, c) != 0) rc = EXIT_USAGE;
    mc.vocab_size = vocab_size(v);
    if (rc == 0 && !(r->m = s2s_create(&mc, v, r->o->seed))) rc = EXIT_USAGE;
    if (!r->m) { vocab_free(v); return rc ? rc : 1; }
    S2sBatches probe;
    s2s_batches_make(&probe, &r->train, r->s.max_tokens, mc.max_len, r->o->seed, 0, 0);
    r->max_len = probe.max_len;
    if (probe.skipped > 0)
        user_warning("%d training pairs longer than max_len %d or max_tokens %d are left out", probe.skipped, mc.max_len,
                     r->s.max_tokens);
    s2s_batches_free(&probe);
    /* Dev pairs may be longer than any training pair: room for the longest. */
    int need = r->max_len;
    for (int i = 0; i < r->dev.n; i++) {
        int l = (r->dev.src_len[i] > r->dev.tgt_len[i] ? r->dev.src_len[i] : r->dev.tgt_len[i]) + 1;
        need = l > need && l <= mc.max_len ? l : need;
    }
    s2s_reserve(r->m, r->s.max_tokens, need);
    r->sched = (Schedule){.kind = SCHEDULE_INV_SQRT, .lr = r->s.lr, .warmup = r->s.warmup};
    if (r->o->resume && (rc = resume_read(r->o->out_dir, s2s_read_point, r)) != 0 && rc != RESUME_NONE) return rc;
    if (r->o->show_progress)
        fprintf(stderr, "translate: %d training pairs, %d dev pairs, vocabulary %d, %ld parameters, positions %s\n",
                r->train.n, r->dev.n, mc.vocab_size, params_count(r->m->params), s2s_pos_name(mc.positions));
    return 0;
}

static int s2s_write_results(S2sRun *r) {
    cJSON *j = run_results_head(r->o->command, r->o->seed, r->o->threads, r->o->config);
    cJSON_AddStringToObject(j, "task", "translation");
    cJSON_AddNumberToObject(j, "vocab_size", r->m->cfg.vocab_size);
    cJSON_AddNumberToObject(j, "num_params", (double)params_count(r->m->params));
    cJSON_AddNumberToObject(j, "train_pairs", r->train.n);
    cJSON_AddNumberToObject(j, "steps", (double)r->loop.step);
    cJSON_AddNumberToObject(j, "train_seconds", r->loop.seconds);
    cJSON_AddNumberToObject(j, "cpu_seconds", s2s_run_cpu(r));
    cJSON_AddStringToObject(j, "selection", "dev BLEU (sacreBLEU 13a, cased, detokenised)");
    cJSON_AddItemToObject(j, "epochs", cJSON_Duplicate(r->loop.history, 1));
    cJSON_AddItemToObject(j, "best", cJSON_Duplicate(r->loop.best, 1));
    if (r->averaged) cJSON_AddItemToObject(j, "averaged", cJSON_Duplicate(r->averaged, 1));
    int rc = run_dir_finish(r->o->out_dir, RUN_RESULTS, j, 0);
    cJSON_Delete(j);
    return rc;
}

int s2s_snapshot(const char *run_dir, const char *out_dir) {
    char path[4200], out[4200];
    file_join(run_dir, RUN_CKPT, path, sizeof path);
    Seq2Seq *m = s2s_load(path);
    int rc = m && file_make_dir(out_dir) == 0 ? 0 : 1;
    if (rc == 0) {
        file_join(out_dir, RUN_CKPT, out, sizeof out);
        rc = s2s_save(m, out, CKPT_F16) ? 1 : 0;
    }
    /* The run's settings (decoding reads them) and what it measured, with
     * paths under the home directory written ~. */
    static const char *const FILES[] = {RUN_CONFIG, RUN_RESULTS};
    for (int i = 0; i < 2 && rc == 0; i++) {
        file_join(run_dir, FILES[i], path, sizeof path);
        file_join(out_dir, FILES[i], out, sizeof out);
        rc = json_file_copy_portable(path, out) ? 1 : 0;
    }
    if (rc == 0) printf("snapshot of %s in %s: %s (float16), %s, %s\n", run_dir, out_dir, RUN_CKPT, RUN_CONFIG, RUN_RESULTS);
    s2s_free(m);
    return rc;
}

/* A translation run's directory (run_txn.h). */
static const RunKind S2S_RUN_KIND = {.results = RUN_RESULTS, .finished = "glue translate eval --model DIR scores it"};

int s2s_train(const S2sTrainOptions *opt) {
    S2sTrainOptions own = *opt;   /* out_dir: where this run writes (a stage with --overwrite) */
    const S2sTrainOptions *o = &own;
    S2sRun r = {.o = o, .cpu_start = cpu_seconds()};
    RunDirTxn txn = {.kind = &S2S_RUN_KIND};
    TrainLoop *L = &r.loop;
    train_loop_init(L, &S2S_LOOP, &r, o->out_dir, o->config, o->seed);
    L->stop_at = o->stop_at, L->checkpoint_every = o->checkpoint_every, L->show_progress = o->show_progress;
    int rc = s2s_read_settings(o->config, &r.s);
    L->epochs = r.s.epochs, L->max_steps = r.s.max_steps, L->save_minutes = r.s.save_minutes;
    /* Settings errors first; then the directory, before anything is written. */
    if (rc == 0) rc = run_dir_enter(&txn, opt->out_dir, o->resume, o->overwrite);
    if (rc == 0) own.out_dir = L->out_dir = txn.work;
    if (rc == 0) rc = s2s_prepare(&r);
    if (rc == 0) rc = run_dir_begin(o->out_dir, RUN_RESULTS, o->config);
    s2s_batch_buf_init(&r.buf, r.s.max_tokens > 0 ? r.s.max_tokens : 1);
    if (rc == 0) rc = train_loop_run(L);
    if (rc == 0 && r.s.average_last > 0) rc = s2s_average(&r);
    if (rc == 0) rc = s2s_write_results(&r);
    if (rc == 0) rc = run_dir_commit(&txn);
    run_dir_close(&txn, rc == 0);
    s2s_batch_buf_free(&r.buf);
    s2s_batches_free(&r.bs);
    s2s_corpus_free(&r.train);
    s2s_corpus_free(&r.dev);
    s2s_free(r.m);
    train_loop_free(L);
    cJSON_Delete(r.averaged);
    return rc;
}
