/* seq2seq_train.c — the translation training run (see seq2seq_train.h).
 *
 * One run: settings -> vocabulary (given, or trained on the training data) ->
 * corpora -> model (fresh, or resumed from last.ckpt) -> per epoch: the
 * epoch's batches (a function of seed and epoch), AdamW steps on the
 * inverse-square-root schedule, then dev loss and dev BLEU (detokenised
 * output against the raw references, sacreBLEU's definition), the best
 * checkpoint kept by dev BLEU. */
#include "models/seq2seq/seq2seq_train.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "metrics/bleu.h"
#include "core/interrupt.h"
#include "core/progress.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "optim/clip.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "text/wordpiece_train.h"

#define S2S_VOCAB_FILE "vocab.txt"
#define S2S_PROGRESS_BLOB "progress"
#define S2S_RNG_BLOB "dropout_rng"
#define S2S_MAX_TOKENS_LIMIT (1 << 20)

/* ---- config ---- */

cJSON *s2s_run_config_default(void) {
    /* The recipe of the reported run (README): the model defaults with more
     * dropout for a 29k-pair corpus, 22 epochs (~2 CPU-hours), the mean of
     * the last 5 epochs' weights. */
    S2sConfig mc = s2s_config_default();
    mc.dropout = 0.2f;
    cJSON *j = s2s_config_to_json(&mc);
    cJSON_DeleteItemFromObjectCaseSensitive(j, "vocab_size");
    cJSON_AddStringToObject(j, "data_dir", "data/mt/multi30k/raw");
    cJSON_AddStringToObject(j, "src", "en");
    cJSON_AddStringToObject(j, "tgt", "de");
    cJSON_AddStringToObject(j, "train", "train");
    cJSON_AddStringToObject(j, "dev", "val");
    cJSON_AddStringToObject(j, "vocab", "");
    cJSON_AddNumberToObject(j, "vocab_tokens", 8000);
    cJSON_AddNumberToObject(j, "epochs", 22);
    cJSON_AddNumberToObject(j, "max_tokens", 2048);
    cJSON_AddNumberToObject(j, "lr", 1e-3);
    cJSON_AddNumberToObject(j, "warmup", 1000);
    cJSON_AddNumberToObject(j, "beta1", 0.9);
    cJSON_AddNumberToObject(j, "beta2", 0.98);
    cJSON_AddNumberToObject(j, "adam_eps", 1e-9);
    cJSON_AddNumberToObject(j, "weight_decay", 0.0);
    cJSON_AddNumberToObject(j, "clip", 0.0);
    cJSON_AddNumberToObject(j, "dev_beam", 1);
    cJSON_AddNumberToObject(j, "beam", 5);
    cJSON_AddNumberToObject(j, "alpha", 0.6);
    cJSON_AddNumberToObject(j, "extra_len", 50);
    cJSON_AddNumberToObject(j, "eval_batch", 64);
    cJSON_AddNumberToObject(j, "save_minutes", 10);
    cJSON_AddNumberToObject(j, "max_steps", 0);
    cJSON_AddNumberToObject(j, "average_last", 5);
    return j;
}

cJSON *s2s_run_config_build(const char *file, const char *const *sets, const char *const *origin, int nsets) {
    /* The generic defaults + file + --set merging of models/run_config.h. */
    return run_config_build(s2s_run_config_default(), file, sets, origin, nsets);
}

int s2s_decode_settings(const cJSON *run_config, const char *who, S2sDecodeOptions *dec) {
    SettingsReader r = settings_reader(run_config, who, "glue translate --help-settings lists the settings");
    *dec = (S2sDecodeOptions){.beam = (int)settings_int(&r, "beam", 5, 1, 64),
                              .alpha = (float)settings_real(&r, "alpha", 0.6, 0, 100),
                              .extra_len = (int)settings_int(&r, "extra_len", 50, 1, 1e6)};
    return r.failed ? EXIT_USAGE : 0;
}

/* Settings the loop reads. */
typedef struct {
    int epochs, max_tokens, warmup, dev_beam, extra_len, eval_batch;
    long max_steps;         /* 0: none; else training ends after this many steps */
    int average_last;       /* 0, or average the weights of the last N epochs at the end */
    float lr, clip, alpha;
    double save_minutes;
    Optimizer opt;
} S2sSettings;

static int s2s_read_settings(const cJSON *c, S2sSettings *s) {
    SettingsReader r = settings_reader(c, "translate train", "glue translate --help-settings lists the settings");
    s->epochs = (int)settings_int(&r, "epochs", 22, 1, 1e6);
    s->max_tokens = (int)settings_int(&r, "max_tokens", 2048, 8, S2S_MAX_TOKENS_LIMIT);
    s->warmup = (int)settings_int(&r, "warmup", 0, 0, 1e9);
    s->dev_beam = (int)settings_int(&r, "dev_beam", 1, 1, 64);
    s->extra_len = (int)settings_int(&r, "extra_len", 50, 1, 1e6);
    s->eval_batch = (int)settings_int(&r, "eval_batch", 64, 1, 1 << 20);
    s->lr = (float)settings_real(&r, "lr", 1e-3, 1e-12, 10);
    s->clip = (float)settings_real(&r, "clip", 0, 0, 1e9);
    s->alpha = (float)settings_real(&r, "alpha", 0.6, 0, 100);
    s->save_minutes = settings_real(&r, "save_minutes", 10, 0, 1e9);
    s->max_steps = settings_int(&r, "max_steps", 0, 0, 1e15);
    s->average_last = (int)settings_int(&r, "average_last", 0, 0, 1e6);
    s->opt = optim_adamw(settings_real(&r, "weight_decay", 0, 0, 1));
    s->opt.beta1 = settings_real_below(&r, "beta1", 0.9, 0, 1);
    s->opt.beta2 = settings_real_below(&r, "beta2", 0.98, 0, 1);
    s->opt.eps = settings_real(&r, "adam_eps", 1e-9, 1e-30, 1);
    if (r.failed) return EXIT_USAGE;
    if (s->average_last > s->epochs) {
        user_error("glue translate --help-settings lists the settings", "translate train: average_last must be in [0, epochs]");
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- data and vocabulary ---- */

static void s2s_split_path(const cJSON *c, const char *split, const char *lang_key, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.%s", run_config_string(c, "data_dir", "."), run_config_string(c, split, split),
             run_config_string(c, lang_key, lang_key));
}

/* The vocabulary: the configured file, else <out>/vocab.txt (trained on the
 * training data if absent). NULL after a message. */
static Vocab *s2s_run_vocab(const cJSON *c, const char *out_dir) {
    const char *given = run_config_string(c, "vocab", "");
    char path[4096];
    if (*given) return vocab_load(given);
    run_file_path(out_dir, S2S_VOCAB_FILE, path, sizeof path);
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
        wordpiece_trainer_train(tr, (int)run_config_number(c, "vocab_tokens", 8000), 2);
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
    /* Progress: saved in last.ckpt. */
    int epoch, batch;       /* next batch to run */
    long step;
    double loss_sum, nll_sum, tokens, train_seconds;
    double cpu_before;      /* CPU seconds of earlier sessions of this run (resume) */
    double cpu_start;       /* this process's CPU seconds when the run started */
    cJSON *history, *best;
    cJSON *averaged;        /* the averaged weights' record (average_last), or NULL */
    double best_bleu;
} S2sRun;

/* User + system CPU seconds of this process so far (all threads). */
static double s2s_cpu_now(void) {
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

/* CPU seconds the whole run has used, across resumed sessions. */
static double s2s_run_cpu(const S2sRun *r) { return r->cpu_before + s2s_cpu_now() - r->cpu_start; }

static void s2s_run_path(const S2sRun *r, const char *file, char *out, size_t cap) {
    run_file_path(r->o->out_dir, file, out, cap);
}

static cJSON *s2s_progress_json(const S2sRun *r) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "epoch", r->epoch);
    cJSON_AddNumberToObject(j, "batch", r->batch);
    cJSON_AddNumberToObject(j, "step", (double)r->step);
    json_add_exact(j, "loss_sum", r->loss_sum);   /* bit for bit: see run_dir.h */
    json_add_exact(j, "nll_sum", r->nll_sum);
    json_add_exact(j, "tokens", r->tokens);
    json_add_exact(j, "best_bleu", r->best_bleu);
    cJSON_AddNumberToObject(j, "train_seconds", r->train_seconds);
    cJSON_AddNumberToObject(j, "cpu_seconds", s2s_run_cpu(r));
    cJSON_AddNumberToObject(j, "seed", (double)r->o->seed);
    cJSON_AddItemToObject(j, "config", cJSON_Duplicate(r->o->config, 1));
    cJSON_AddItemToObject(j, "history", cJSON_Duplicate(r->history, 1));
    if (r->best) cJSON_AddItemToObject(j, "best", cJSON_Duplicate(r->best, 1));
    return j;
}

/* last.ckpt: weights, optimizer state, dropout RNG and progress in ONE file
 * written atomically, so it is always self-consistent. */
static int s2s_save_last(S2sRun *r) {
    char path[4096];
    s2s_run_path(r, RUN_LAST_CKPT, path, sizeof path);
    cJSON *cfg = cJSON_CreateObject();
    cJSON_AddStringToObject(cfg, "model", "seq2seq");
    cJSON_AddItemToObject(cfg, "config", s2s_config_to_json(&r->m->cfg));
    CkptWriter *w = checkpoint_rolling_open(path, cfg, -1);   /* keeps prev.ckpt */
    cJSON_Delete(cfg);
    if (!w) return 1;
    cJSON *p = s2s_progress_json(r);
    char *text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    int rc = checkpoint_write_blob(w, S2S_PROGRESS_BLOB, text, strlen(text));
    free(text);
    rc |= checkpoint_write_blob(w, S2S_RNG_BLOB, &r->m->rng, sizeof r->m->rng);
    rc |= checkpoint_write_params(w, r->m->params, CKPT_F32);
    rc |= optim_save(&r->s.opt, r->m->params, w);
    if (rc) { checkpoint_writer_abort(w); return 1; }
    return checkpoint_writer_commit(w) != 0;
}

static double s2s_json_num(const cJSON *j, const char *k) { return run_config_number(j, k, 0); }

/* Continues from last.ckpt: 0 (resumed, or nothing to resume) or 1. */
static int s2s_resume(S2sRun *r) {
    char path[4096];
    s2s_run_path(r, RUN_LAST_CKPT, path, sizeof path);
    if (!run_resume_available(path, r->o->out_dir)) return 0;
    Checkpoint *c = checkpoint_rolling_read(path);   /* or prev.ckpt */
    if (!c) return 1;
    int rc = 1;
    const CkptBlob *pb = checkpoint_find_blob(c, S2S_PROGRESS_BLOB), *rb = checkpoint_find_blob(c, S2S_RNG_BLOB);
    char *text = pb ? xstrndup((const char *)pb->data, pb->size) : NULL;
    cJSON *p = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!p || !rb || rb->size != sizeof r->m->rng) {
        user_error("delete it to start over", "%s: not a translation resume checkpoint", path);
    } else if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(p, "config"), r->o->config, 1) ||
               (uint64_t)s2s_json_num(p, "seed") != r->o->seed) {
        user_error("resume with the same settings and --seed, or drop --resume to start over",
                   "%s: the interrupted run used other settings", path);
    } else if (checkpoint_load_params(c, r->m->params) == 0 && optim_load(&r->s.opt, r->m->params, c) == 0) {
        memcpy(&r->m->rng, rb->data, sizeof r->m->rng);
        r->epoch = (int)s2s_json_num(p, "epoch");
        r->batch = (int)s2s_json_num(p, "batch");
        r->step = (long)s2s_json_num(p, "step");
        r->loss_sum = json_exact(p, "loss_sum", 0);
        r->nll_sum = json_exact(p, "nll_sum", 0);
        r->tokens = json_exact(p, "tokens", 0);
        r->train_seconds = s2s_json_num(p, "train_seconds");
        r->cpu_before = s2s_json_num(p, "cpu_seconds");
        cJSON *h = cJSON_DetachItemFromObjectCaseSensitive(p, "history");
        cJSON *b = cJSON_DetachItemFromObjectCaseSensitive(p, "best");
        if (cJSON_IsArray(h)) { cJSON_Delete(r->history); r->history = h; } else cJSON_Delete(h);
        if (cJSON_IsObject(b)) {
            r->best = b;
            r->best_bleu = json_exact(p, "best_bleu", s2s_json_num(b, "dev_bleu"));
        } else {
            cJSON_Delete(b);
        }
        if (r->o->show_progress)
            fprintf(stderr, "resuming %s at epoch %d, batch %d (step %ld)\n", r->o->out_dir, r->epoch + 1, r->batch,
                    r->step);
        rc = 0;
    }
    cJSON_Delete(p);
    checkpoint_free(c);
    return rc;
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
    s2s_run_path(r, name, out, cap);
}

/* Dev loss and BLEU after an epoch; keeps the best checkpoint (and, for the
 * last average_last epochs, the epoch's weights). */
static int s2s_end_epoch(S2sRun *r, double epoch_seconds) {
    const S2sSettings *s = &r->s;
    double t0 = now_seconds();
    BleuScore bleu;
    S2sLoss dl = s2s_dev_eval(r, &bleu);
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "epoch", r->epoch + 1);
    cJSON_AddNumberToObject(rec, "step", (double)r->step);
    cJSON_AddNumberToObject(rec, "lr", schedule_lr(&r->sched, r->step > 0 ? r->step - 1 : 0));
    cJSON_AddNumberToObject(rec, "train_loss", r->tokens > 0 ? r->loss_sum / r->tokens : 0);
    cJSON_AddNumberToObject(rec, "train_ppl", r->tokens > 0 ? exp(r->nll_sum / r->tokens) : 0);
    cJSON_AddNumberToObject(rec, "dev_loss", dl.tokens ? dl.smoothed / dl.tokens : 0);
    cJSON_AddNumberToObject(rec, "dev_ppl", dl.tokens ? exp(dl.nll / dl.tokens) : 0);
    cJSON_AddNumberToObject(rec, "dev_bleu", bleu.bleu);
    cJSON_AddNumberToObject(rec, "seconds", epoch_seconds);
    cJSON_AddNumberToObject(rec, "eval_seconds", now_seconds() - t0);
    cJSON_AddNumberToObject(rec, "cpu_seconds", s2s_run_cpu(r));
    int is_best = !r->best || bleu.bleu > r->best_bleu;
    if (r->o->show_progress)
        fprintf(stderr, "epoch %d/%d  step %ld  train loss %.4f ppl %.2f  dev loss %.4f ppl %.2f  dev BLEU %.2f%s\n",
                r->epoch + 1, s->epochs, r->step, s2s_json_num(rec, "train_loss"), s2s_json_num(rec, "train_ppl"),
                s2s_json_num(rec, "dev_loss"), s2s_json_num(rec, "dev_ppl"), bleu.bleu, is_best ? "  (best)" : "");
    cJSON_AddItemToArray(r->history, rec);
    if (is_best) {
        cJSON_Delete(r->best);
        r->best = cJSON_Duplicate(rec, 1);
        r->best_bleu = bleu.bleu;
        char path[4096];
        s2s_run_path(r, RUN_CKPT, path, sizeof path);
        if (s2s_save(r->m, path, CKPT_F32) != 0) return 1;
    }
    if (s->average_last > 0 && r->epoch + 1 > s->epochs - s->average_last) {
        char path[4096];
        s2s_epoch_ckpt(r, r->epoch + 1, path, sizeof path);
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
        cJSON *rec = cJSON_CreateObject();
        cJSON_AddItemToObject(rec, "averaged_epochs", used);
        used = NULL;
        cJSON_AddNumberToObject(rec, "dev_loss", dl.tokens ? dl.smoothed / dl.tokens : 0);
        cJSON_AddNumberToObject(rec, "dev_ppl", dl.tokens ? exp(dl.nll / dl.tokens) : 0);
        cJSON_AddNumberToObject(rec, "dev_bleu", bleu.bleu);
        int is_best = bleu.bleu > r->best_bleu;
        if (r->o->show_progress)
            fprintf(stderr, "average of the last %d epochs: dev loss %.4f  dev BLEU %.2f%s\n", n,
                    s2s_json_num(rec, "dev_loss"), bleu.bleu, is_best ? "  (best)" : "");
        char path[4096];
        s2s_run_path(r, "averaged.ckpt", path, sizeof path);
        rc = s2s_save(r->m, path, CKPT_F32) != 0;
        if (rc == 0 && is_best) {
            s2s_run_path(r, RUN_CKPT, path, sizeof path);
            rc = s2s_save(r->m, path, CKPT_F32) != 0;
            cJSON_Delete(r->best);
            r->best = cJSON_Duplicate(rec, 1);
            r->best_bleu = bleu.bleu;
        }
        r->averaged = rec;
    }
    cJSON_Delete(used);
    free(acc);
    return rc;
}

static int s2s_out_of_steps(const S2sRun *r) { return r->s.max_steps > 0 && r->step >= r->s.max_steps; }

/* One epoch from batch r->batch on (or until max_steps). 0, or 1 on
 * divergence / a failed save. */
static int s2s_train_epoch(S2sRun *r, S2sBatchBuf *buf) {
    const S2sSettings *s = &r->s;
    S2sBatches bs;
    s2s_batches_make(&bs, &r->train, s->max_tokens, r->max_len, r->o->seed, r->epoch, 1);
    char label[64];
    snprintf(label, sizeof label, "epoch %d/%d", r->epoch + 1, s->epochs);
    Progress bar;
    progress_start(&bar, label, bs.n, r->o->show_progress ? PROGRESS_AUTO : PROGRESS_QUIET);
    double t0 = now_seconds(), last_save = t0;
    int rc = 0;
    int sig = 0;
    for (; r->batch < bs.n && !s2s_out_of_steps(r); r->batch++) {
        sig = interrupt_pending();
        if (sig || (r->o->stop_at > 0 && r->step >= r->o->stop_at)) { rc = S2S_TRAIN_STOPPED; break; }
        S2sBatch b = s2s_batch_fill(buf, &r->train, vocab_specials(r->m->vocab), bs.order + bs.start[r->batch],
                                    bs.count[r->batch]);
        params_zero_grad(r->m->params);
        S2sLoss l = s2s_forward_backward(r->m, &b, &r->m->rng, 1);
        if (!isfinite(l.smoothed)) {
            user_error("lower lr or raise warmup", "training diverged: loss %g at step %ld", l.smoothed, r->step);
            rc = 1;
            break;
        }
        if (s->clip > 0) clip_grad_norm(r->m->params, s->clip);
        optim_step(&r->s.opt, r->m->params, schedule_lr(&r->sched, r->step));
        r->step++;
        r->loss_sum += l.smoothed;
        r->nll_sum += l.nll;
        r->tokens += (double)l.tokens;
        progress_update(&bar, r->batch + 1, "loss %.3f ppl %.2f", r->loss_sum / r->tokens, exp(r->nll_sum / r->tokens));
        double now = now_seconds();
        int due = (s->save_minutes > 0 && now - last_save > 60 * s->save_minutes) ||
                  (r->o->checkpoint_every > 0 && r->step % r->o->checkpoint_every == 0);
        if (due && r->batch + 1 < bs.n) {   /* the epoch's end saves its own */
            r->batch++;   /* the position to resume from */
            r->train_seconds += now - t0;
            t0 = now;
            rc = s2s_save_last(r);
            r->batch--;
            last_save = now;
            if (rc) break;
        }
    }
    progress_finish(&bar, "loss %.3f ppl %.2f", r->tokens ? r->loss_sum / r->tokens : 0,
                    r->tokens ? exp(r->nll_sum / r->tokens) : 0);
    r->train_seconds += now_seconds() - t0;
    if (rc == S2S_TRAIN_STOPPED) {
        s2s_batches_free(&bs);
        if (s2s_save_last(r) != 0) return 1;
        if (r->o->show_progress || sig)
            fprintf(stderr, "%s at step %ld (epoch %d, batch %d); saved %s/%s; continue with the same command and "
                    "--resume\n", sig ? interrupt_name(sig) : "stopped", r->step, r->epoch + 1, r->batch,
                    r->o->out_dir, RUN_LAST_CKPT);
        return sig ? 128 + sig : S2S_TRAIN_STOPPED;
    }
    double seconds = now_seconds() - bar.start;
    s2s_batches_free(&bs);
    if (rc == 0) rc = s2s_end_epoch(r, seconds);
    return rc;
}

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
        user_error("fetch the data: glue data fetch mt", "the training or dev corpus is empty");
        return 1;
    }
    return 0;
}

/* Model (fresh or resumed), corpora, workspace. */
static int s2s_prepare(S2sRun *r) {
    const cJSON *c = r->o->config;
    if (file_make_dir(r->o->out_dir) != 0) return 1;
    Vocab *v = s2s_run_vocab(c, r->o->out_dir);
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
    if (r->o->resume && s2s_resume(r) != 0) return 1;
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
    cJSON_AddNumberToObject(j, "steps", (double)r->step);
    cJSON_AddNumberToObject(j, "train_seconds", r->train_seconds);
    cJSON_AddNumberToObject(j, "cpu_seconds", s2s_run_cpu(r));
    cJSON_AddStringToObject(j, "selection", "dev BLEU (sacreBLEU 13a, cased, detokenised)");
    cJSON_AddItemToObject(j, "epochs", cJSON_Duplicate(r->history, 1));
    cJSON_AddItemToObject(j, "best", cJSON_Duplicate(r->best, 1));
    if (r->averaged) cJSON_AddItemToObject(j, "averaged", cJSON_Duplicate(r->averaged, 1));
    char path[4096];
    s2s_run_path(r, RUN_RESULTS, path, sizeof path);
    int rc = json_file_write(path, j);
    cJSON_Delete(j);
    if (rc == 0) {
        s2s_run_path(r, RUN_LAST_CKPT, path, sizeof path);
        checkpoint_rolling_remove(path);
    }
    return rc ? 1 : 0;
}

int s2s_snapshot(const char *run_dir, const char *out_dir) {
    char path[4200], out[4200];
    run_file_path(run_dir, RUN_CKPT, path, sizeof path);
    Seq2Seq *m = s2s_load(path);
    int rc = m && file_make_dir(out_dir) == 0 ? 0 : 1;
    if (rc == 0) {
        run_file_path(out_dir, RUN_CKPT, out, sizeof out);
        rc = s2s_save(m, out, CKPT_F16) ? 1 : 0;
    }
    /* The run's settings (decoding reads them) and what it measured, with
     * paths under the home directory written ~. */
    static const char *const FILES[] = {RUN_CONFIG, RUN_RESULTS};
    for (int i = 0; i < 2 && rc == 0; i++) {
        run_file_path(run_dir, FILES[i], path, sizeof path);
        run_file_path(out_dir, FILES[i], out, sizeof out);
        rc = json_file_copy_portable(path, out) ? 1 : 0;
    }
    if (rc == 0) printf("snapshot of %s in %s: %s (float16), %s, %s\n", run_dir, out_dir, RUN_CKPT, RUN_CONFIG, RUN_RESULTS);
    s2s_free(m);
    return rc;
}

int s2s_train(const S2sTrainOptions *o) {
    S2sRun r = {.o = o, .history = cJSON_CreateArray(), .best_bleu = -1, .cpu_start = s2s_cpu_now()};
    int rc = s2s_read_settings(o->config, &r.s);
    if (rc == 0) rc = s2s_prepare(&r);
    if (rc == 0) {
        char path[4096];
        s2s_run_path(&r, RUN_RESULTS, path, sizeof path);
        unlink(path);   /* a stale one would look finished */
        s2s_run_path(&r, RUN_CONFIG, path, sizeof path);
        rc = json_file_write(path, o->config) ? 1 : 0;
    }
    S2sBatchBuf buf;
    s2s_batch_buf_init(&buf, r.s.max_tokens > 0 ? r.s.max_tokens : 1);
    interrupt_begin();
    for (; rc == 0 && r.epoch < r.s.epochs; r.epoch++) {
        rc = s2s_train_epoch(&r, &buf);
        if (rc) break;
        r.batch = 0;
        r.loss_sum = r.nll_sum = r.tokens = 0;
        if (s2s_out_of_steps(&r)) { r.epoch++; break; }
        if (r.epoch + 1 < r.s.epochs) {
            r.epoch++;
            rc = s2s_save_last(&r);
            r.epoch--;
        }
    }
    interrupt_end();
    if (rc == 0 && r.s.average_last > 0) rc = s2s_average(&r);
    if (rc == 0) rc = s2s_write_results(&r);
    s2s_batch_buf_free(&buf);
    s2s_corpus_free(&r.train);
    s2s_corpus_free(&r.dev);
    s2s_free(r.m);
    cJSON_Delete(r.history);
    cJSON_Delete(r.best);
    cJSON_Delete(r.averaged);
    return rc;
}
