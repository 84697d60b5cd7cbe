/* bert_task.c — BERT as a GLUE classifier/regressor behind ModelOps: the
 * fine-tuning recipe of the BERT miniatures (Turc et al. 2019: AdamW, warm-up
 * 10% then linear decay, batch 32, max_len 128, a few epochs), WordPiece pair
 * encoding "[CLS] a [SEP] b [SEP]", batches padded only to their longest row;
 * logits forward and backward for the harness's head (models/model.h), and
 * the update (clipping, AdamW). Checkpoints: bert_task_io.c. */
#include "models/bert/bert_task.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "models/bert/bert_hf.h"
#include "models/run_config.h"
#include "optim/clip.h"

/* Dropout draws from this stream of the seed (the trainer's shuffle and the
 * weight init use others). */
#define BERT_DROPOUT_STREAM 0xD40Full
/* Data parallel: rank r > 0 draws dropout from stream BERT_DROPOUT_STREAM_RANKS
 * + r of the run seed, re-seeded each step (see bert_step_rng). */
#define BERT_DROPOUT_STREAM_RANKS 0xD40F0000ull
#define BERT_PAIR_CROSS "cross"
#define BERT_PAIR_SIAMESE "siamese"
#define BERT_PAIR_FEATURES "features"             /* [u; v; |u-v|; u*v] (bert_pair_head.c) */
#define BERT_PAIR_CROSS_FEATURES "cross+features" /* [pooled [CLS]; u; v; |u-v|; u*v] */
/* Siamese scores are cosines in [-1, 1]; STS-B's targets, GLUE's only
 * regression task, are 0..5: the head divides targets by this and multiplies
 * scores (ModelOps.score_scale). */
#define BERT_SIAMESE_SCALE 5.0f

#define BERT_CONFIG_HINT "fix the setting (glue finetune ... --set key=value)"
/* bert_task.h's shipped encoder; --init none: random init. */
#define BERT_SHIPPED_ENCODER BERT_SHIPPED_ENCODER_DIR "/" MODEL_CKPT
#define BERT_INIT_NONE "none"
#define BERT_DEFAULT_CONFIG_NAME "tiny"

/* ---- settings ---- */

typedef struct {
    int max_len, batch, eval_batch;
    int pair;            /* index into BERT_PAIRS */
    int siamese;
    int pair_features;   /* 0, 4 (features) or 5 (cross+features): BertHeads.pair_features */
    double weight_decay, beta1, beta2, eps, clip, layer_decay;
} BertSettings;

static const char *const BERT_PAIRS[] = {BERT_PAIR_CROSS, BERT_PAIR_SIAMESE, BERT_PAIR_FEATURES,
                                         BERT_PAIR_CROSS_FEATURES, NULL};

#define BS(field) offsetof(BertSettings, field)
static const SettingSpec BERT_SETTINGS[] = {
    RUN_SETTING_EPOCHS(4),   /* SST-2 3; STS-B 10; CoLA 20 (bert_default_config) */
    RUN_SETTING_LR(3e-4),
    {"batch", SETTING_INT, BS(batch), 32, 1, 1 << 16, NULL, NULL},
    {"eval_batch", SETTING_INT, BS(eval_batch), 32, 1, 1 << 16, NULL, NULL},   /* = batch: one set of buffers */
    {"max_len", SETTING_INT, BS(max_len), 128, 3, 1 << 16, NULL, NULL},
    /* "[CLS] a [SEP] b [SEP]"; "siamese" (regression): the two texts encoded
     * apart and compared by cosine (bert_siamese.c: the tiny encoder's best
     * on STS-B); "features": [u; v; |u-v|; u*v] of the texts apart. */
    {"pair_encoding", SETTING_CHOICE, BS(pair), 0, 0, 0, BERT_PAIR_CROSS, BERT_PAIRS},
    RUN_SETTING_WARMUP(0.1),
    RUN_SETTING_SCHEDULE("linear"),
    RUN_SETTINGS_LOSS,
    RUN_SETTINGS_DECISION,
    /* mpirun: the gradient sum in buckets of this many MiB, each started as
     * soon as the backward has finished it (0: one sum after the backward) */
    RUN_SETTING_BUCKET_MB(2),
    RUN_SETTING_GROUP_BY_LENGTH(0),
    RUN_SETTING_PRECISION,
    {"weight_decay", SETTING_REAL, BS(weight_decay), 0.01, 0, 1, NULL, NULL},   /* not on biases and LayerNorm */
    {"beta1", SETTING_REAL, BS(beta1), 0.9, 0, 0.999999, NULL, NULL},
    {"beta2", SETTING_REAL, BS(beta2), 0.999, 0, 0.999999999, NULL, NULL},
    {"adam_eps", SETTING_REAL, BS(eps), 1e-6, 1e-30, 1, NULL, NULL},
    {"clip", SETTING_REAL, BS(clip), 1.0, 0, 1e9, NULL, NULL},
    /* Layer-wise learning-rate decay: layer i of L trains at lr *
     * layer_decay^(L - i), the embeddings at layer_decay^(L + 1), pooler and
     * head at lr; 1: one rate for all. 0.8 is ELECTRA's fine-tuning recipe; on
     * the tiny encoder it gained 0.39 over CoLA/MRPC/STS-B/RTE (5 seeds,
     * results/finetune_protocol.md), on the ELECTRA-mini encoder CoLA 13.34
     * against 8.80 (one seed, chosen on dev: models/electra-mini-wiki). */
    {"layer_decay", SETTING_REAL, BS(layer_decay), 0.8, 1e-3, 1, NULL, NULL},
    /* Train on both orders of a symmetric pair task (MRPC, STS-B, QQP; the trainer). */
    {"pair_swap", SETTING_BOOL, SETTING_NO_FIELD, 0, 0, 1, NULL, NULL},
    /* built-in name or config JSON, trained from random init (init "none") */
    {"bert", SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, BERT_DEFAULT_CONFIG_NAME, NULL},
    /* pretrained checkpoint, its directory, a HF model dir, or "none" (set below) */
    {"init", SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, BERT_INIT_NONE, NULL},
    {"vocab", SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, "", NULL},   /* "": the default vocabulary (tokenizer.h) */
    /* a task to fine-tune on first, then on this one from it (STILTs:
     * experiments/intermediate.h), e.g. mnli-9k before rte, or "multi"
     * (multi:A+B+...) a multi-task run; "none": straight */
    {INTERMEDIATE_KEY, SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, INTERMEDIATE_NONE, NULL},
};
#undef BS
#define NUM_BERT_SETTINGS ((int)(sizeof BERT_SETTINGS / sizeof BERT_SETTINGS[0]))

/* Defaults, chosen on the 110M-token encoder (models/electra-mini-wiki) and
 * kept for the shipped one (BERT_SHIPPED_ENCODER_DIR). The learning rate: the top of the miniatures' grid {3e-4, 1e-4, 5e-5}; from random init
 * (tiny, 4 epochs, dev) 3e-4 gave STS-B Pearson 16.5 and CoLA MCC 12.9 where
 * 1e-4 gave 5.6 and 3.5. Larger encoders (base) want 2e-5..5e-5: --lr.
 * SST-2 is ~30x larger than the other small tasks: 3 epochs there (ELECTRA's
 * recipe; 82.73 over 5 seeds against 81.44 with 2, higher in every seed,
 * results/finetune_protocol_sst2_electra_mini.md), in batches grouped by
 * length (3.1x fewer padded token slots: make run stays under 8 minutes; on
 * the tiny encoder it cost 0.88 accuracy, standard error 0.59, over 3 seeds:
 * results/finetune_protocol_sst2.md). STS-B: the joined pair
 * ("cross") for 10 epochs, ELECTRA's recipe; on the ELECTRA-mini it scored
 * 77.61 over 5 seeds where the siamese head (the tiny encoder's best) scored
 * 70.71. MRPC: the features of the two texts apart, [u; v; |u-v|; u*v] (as
 * TextCNN and BiLSTM read pairs): 78.29 over 5 seeds against 75.75
 * on [CLS] of the joined pair. CoLA: 20 epochs (with 4 the best epoch was
 * the last in four of five seeds, with 10 the dev MCC still rose at the end;
 * 5 seeds against 17.72 with 10 and 15.88 with 4). RTE: fine-tuned on
 * MNLI-9k first (intermediate: each seed its own MNLI-9k run, ~3x the RTE
 * run's time), 58.27 over 5 seeds against 53.72 straight from the encoder
 * (on the tiny encoder it lost 1.5: --set rte.intermediate=none). GoEmotions:
 * 10 epochs (with 4, the GoEmotions paper's, the best epoch was the last in
 * all three seeds and dev macro-F1 still rose 1.3-2.1 in it; 10 scored 46.17
 * against 39.00 over 3 seeds, thresholds tuned on dev alike:
 * results/bert_goemotions_epochs.md). All in
 * models/electra-mini-wiki/README.md, results/finetune_protocol_electra_mini.md,
 * results/finetune_protocol_cola_electra_mini.md and
 * results/finetune_transfer_electra_mini.md. */
static cJSON *bert_default_config(const Task *task) {
    cJSON *c = cJSON_CreateObject();
    settings_table_defaults(c, BERT_SETTINGS, NUM_BERT_SETTINGS);
    if (task && strcmp(task->name, "sst2") == 0) {
        cJSON_ReplaceItemInObjectCaseSensitive(c, "epochs", cJSON_CreateNumber(3));
        cJSON_ReplaceItemInObjectCaseSensitive(c, "group_by_length", cJSON_CreateBool(1));
    }
    if (task && strcmp(task->name, "stsb") == 0) cJSON_ReplaceItemInObjectCaseSensitive(c, "epochs", cJSON_CreateNumber(10));
    if (task && strcmp(task->name, "cola") == 0) cJSON_ReplaceItemInObjectCaseSensitive(c, "epochs", cJSON_CreateNumber(20));
    if (task && strcmp(task->name, "goemotions") == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(c, "epochs", cJSON_CreateNumber(10));
    if (task && strcmp(task->name, "mrpc") == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(c, "pair_encoding", cJSON_CreateString(BERT_PAIR_FEATURES));
    if (task && strcmp(task->name, "rte") == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(c, INTERMEDIATE_KEY, cJSON_CreateString("mnli-9k"));
    /* Always the shipped encoder, found or not: where it is missing (glue run
     * outside the repository's top folder) the run is refused with what to do
     * (bert_init_path), where it used to fall back to random weights without
     * a word and score like an untrained model. */
    cJSON_ReplaceItemInObjectCaseSensitive(c, "init", cJSON_CreateString(BERT_SHIPPED_ENCODER));
    return c;
}

static int bert_settings_read(const cJSON *j, BertSettings *s) {
    memset(s, 0, sizeof *s);
    SettingsReader r = settings_reader(j, "bert", BERT_CONFIG_HINT);
    settings_table_read(&r, BERT_SETTINGS, NUM_BERT_SETTINGS, s);
    if (r.failed) return -1;
    s->siamese = s->pair == 1;
    s->pair_features = s->pair == 2 ? 4 : s->pair == 3 ? 5 : 0;
    return 0;
}

/* ---- the model ---- */

/* Encoder rows one example takes: 2 (siamese, features: the texts apart), 3
 * (cross+features: the joined pair too) or 1. */
static int bert_rows_per_example(const BertTaskModel *m) {
    return m->pair_features == 5 ? 3 : m->siamese || m->pair_features == 4 ? 2 : 1;
}

void bert_task_model_free(BertTaskModel *m) {
    if (!m) return;
    if (!m->encoder_opt) bert_free(m->bert);   /* shared: the multi-task model's */
    tokenizer_free(m->tok);
    if (!m->encoder_opt) vocab_free(m->vocab);
    cJSON_Delete(m->config);
    free(m->ids); free(m->segments); free(m->lengths);
    free(m);
}

/* The pair encoding against the task. 0, or -1 after a usage error. */
static int bert_settings_check_task(const BertSettings *s, const Task *task) {
    int K = task->num_labels;
    if (s->siamese && K != 1) {
        user_error_usage(BERT_CONFIG_HINT, "bert: pair_encoding \"siamese\" scores similarity (regression); task %s has %d classes",
                   task->name, K);
        return -1;
    }
    if (s->pair_features && (K < 2 || task->splits[0].col_b < 0)) {
        user_error_usage(BERT_CONFIG_HINT, "bert: pair_encoding \"%s\" classifies pairs; task %s is not a pair "
                   "classification task", s->pair_features == 4 ? BERT_PAIR_FEATURES : BERT_PAIR_CROSS_FEATURES,
                   task->name);
        return -1;
    }
    return 0;
}

static BertTaskModel *bert_task_model_make(Bert *bert, Vocab *vocab, const cJSON *config, const Task *task,
                                           uint64_t seed, int train, BertTaskHead *head, Optimizer *encoder_opt) {
    BertTaskModel *m = xcalloc(1, sizeof *m);
    m->head = head;
    m->encoder_opt = encoder_opt;
    if (head) bert_attach_head(bert, head);
    m->bert = bert;
    m->vocab = vocab;
    m->task = task;
    m->K = task->num_labels;
    m->config = cJSON_Duplicate(config, 1);
    BertSettings s;
    if (bert_settings_read(config, &s) != 0) goto fail;
    if (vocab_size(vocab) != bert->cfg.vocab_size) {
        user_error("use the vocabulary the model was trained with (--set vocab=FILE)",
                   "bert: the vocabulary has %d tokens but the model's vocab_size is %d", vocab_size(vocab),
                   bert->cfg.vocab_size);
        goto fail;
    }
    if (s.max_len > bert->cfg.max_position) {
        user_error_usage(BERT_CONFIG_HINT, "bert: max_len %d exceeds the model's max_position_embeddings %d", s.max_len,
                   bert->cfg.max_position);
        goto fail;
    }
    if (bert->heads.num_labels != m->K) {
        user_error("fine-tune a model for this task", "bert: the model has %d outputs but task %s needs %d",
                   bert->heads.num_labels, task->name, m->K);
        goto fail;
    }
    if (bert_settings_check_task(&s, task) != 0) goto fail;
    if (s.pair_features != bert->heads.pair_features) {
        user_error(BERT_CONFIG_HINT, "bert: the model's classifier reads %d features, pair_encoding needs %d",
                   bert->heads.pair_features, s.pair_features);
        goto fail;
    }
    if (!(m->tok = tokenizer_create(vocab))) goto fail;
    m->max_len = s.max_len;
    m->siamese = s.siamese;
    m->pair_features = s.pair_features;
    m->pairs = s.batch > s.eval_batch ? s.batch : s.eval_batch;
    m->maxB = m->pairs * bert_rows_per_example(m);
    m->opt = optim_adamw(s.weight_decay);
    m->opt.beta1 = s.beta1;
    m->opt.beta2 = s.beta2;
    m->opt.eps = s.eps;
    m->clip = (float)s.clip;
    if (s.layer_decay != 1.0) bert_set_layer_decay(bert, s.layer_decay);
    rng_seed_stream(&m->rng, seed, BERT_DROPOUT_STREAM);
    long cells = (long)m->maxB * m->max_len;
    m->ids = xmalloc(sizeof(int) * (size_t)cells);
    m->segments = xmalloc(sizeof(int) * (size_t)cells);
    m->lengths = xmalloc(sizeof(int) * (size_t)m->maxB);
    bert_reserve(bert, m->maxB, m->max_len, 0, train);
    return m;
fail:
    bert_task_model_free(m);
    return NULL;
}

BertTaskModel *bert_task_model_new(Bert *bert, Vocab *vocab, const cJSON *config, const Task *task, uint64_t seed,
                                   int train) {
    return bert_task_model_make(bert, vocab, config, task, seed, train, NULL, NULL);
}

BertTaskModel *bert_task_model_shared(Bert *bert, Vocab *vocab, BertTaskHead *head, Optimizer *encoder_opt,
                                      const cJSON *config, const Task *task, uint64_t seed) {
    if (!head || !encoder_opt) DIE("bert_task_model_shared: no head or no encoder optimizer");
    return bert_task_model_make(bert, vocab, config, task, seed, 1, head, encoder_opt);
}

/* `init` names a checkpoint file, or a directory holding model.ckpt or
 * exactly one *.ckpt. 0 and the file in out, or -1 after a message. */
static int bert_init_path(const char *init, char *out, size_t cap) {
    struct stat st;
    char shipped[4200];
    const char *named = init;
    init = file_shipped(init, shipped, sizeof shipped);   /* from the repository, or as make install put it */
    if (stat(init, &st) != 0) {
        char cwd[4096];
        if (strcmp(named, BERT_SHIPPED_ENCODER) == 0)   /* the default, not a path the user gave */
            user_error_io("run glue from the repository's top folder (the shipped encoder's path is relative to it) "
                          "or install it (make install), or pass --init FILE, or --init none to train from random "
                          "weights",
                          "bert: the shipped encoder %s is not in the current directory (%s)", init,
                          getcwd(cwd, sizeof cwd) ? cwd : "unknown");
        else
            user_error_io("pass a glue BERT checkpoint (pretrain or finetune output) or its directory",
                          "--init %s: no such file or directory", init);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(out, cap, "%s", init);
        return 0;
    }
    file_join(init, MODEL_CKPT, out, cap);
    if (file_exists(out)) return 0;
    DIR *d = opendir(init);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".ckpt") == 0) {
            if (found++ == 0) file_join(init, e->d_name, out, cap);
        }
    }
    if (d) closedir(d);
    if (found == 1) return 0;
    user_error("name the checkpoint file itself", "--init %s: %s", init,
               found ? "the directory holds several .ckpt files" : "no model.ckpt or other .ckpt file in it");
    return -1;
}

static Vocab *bert_vocab_setting(const cJSON *config) {
    const char *v = run_config_string(config, "vocab", "");
    return vocab_load(*v ? v : tokenizer_default_vocab_path());
}

/* The pretrained encoder to start from, or NULL for random init. An encoder
 * brings its own config, so naming another config with it is refused rather
 * than silently ignored. */
static int bert_init_setting(const cJSON *config, const char **init) {
    const char *s = run_config_string(config, "init", "");
    const char *name = run_config_string(config, "bert", BERT_DEFAULT_CONFIG_NAME);
    *init = *s && strcmp(s, BERT_INIT_NONE) != 0 ? s : NULL;
    if (!*init || strcmp(name, BERT_DEFAULT_CONFIG_NAME) == 0) return 0;
    user_error_usage("add --init none to train that configuration from random initialisation",
               "bert: --set bert=%s conflicts with init %s, which brings its own config", name, *init);
    return -1;
}

/* The vocabulary of an init checkpoint (NULL: it has none, the setting or
 * the default serves); a different `vocab` setting beside it is refused. */
static Vocab *bert_init_vocab(const Checkpoint *c, const cJSON *config, const char *init) {
    Vocab *v = bert_checkpoint_vocab(c);
    const char *setting = run_config_string(config, "vocab", "");
    if (!v || !*setting) return v ? v : bert_vocab_setting(config);
    vocab_free(v);
    user_error_usage("drop --set vocab (the checkpoint's vocabulary is used), or add --init none",
               "bert: --set vocab=%s conflicts with init %s, which stores its own vocabulary", setting, init);
    return NULL;
}

Bert *bert_task_encoder(const cJSON *config, const BertHeads *want, uint64_t seed, Vocab **vocab_out) {
    const char *init;
    *vocab_out = NULL;
    if (bert_init_setting(config, &init) != 0) return NULL;
    BertHeads heads = *want;
    Vocab *vocab = NULL;
    Bert *bert = NULL;
    if (init) {
        char path[4096];
        Checkpoint *c = NULL;
        if (bert_hf_is_dir(init)) c = bert_hf_read(init);   /* a Hugging Face model directory */
        else if (bert_init_path(init, path, sizeof path) == 0) c = checkpoint_read(path);
        if (!c) return NULL;
        /* Encoder (and pooler) from the checkpoint, a fresh task head. */
        bert = bert_from_checkpoint(c, &heads, 0, seed);
        vocab = bert ? bert_init_vocab(c, config, init) : NULL;
        checkpoint_free(c);
    } else {
        BertConfig cfg;
        if (bert_config_resolve(run_config_string(config, "bert", BERT_DEFAULT_CONFIG_NAME), &cfg) != 0) return NULL;
        vocab = bert_vocab_setting(config);
        if (vocab) {
            cfg.vocab_size = vocab_size(vocab);
            bert = bert_create(&cfg, &heads, seed);
        }
    }
    if (!vocab || !bert) {
        bert_free(bert);
        vocab_free(vocab);
        return NULL;
    }
    *vocab_out = vocab;
    return bert;
}

/* A fresh model: the pretrained encoder (init) with a new task head, or the
 * named config (or file) sized to the vocabulary, from random init. */
static Model *bert_ops_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    (void)train;
    BertSettings s;
    if (bert_settings_read(config, &s) != 0) return NULL;
    BertHeads heads = {.pooler = 1, .num_labels = task->num_labels, .pair_features = s.pair_features};
    Vocab *vocab;
    Bert *bert = bert_task_encoder(config, &heads, seed, &vocab);
    return bert ? (Model *)bert_task_model_new(bert, vocab, config, task, seed, 1) : NULL;
}

static int bert_check_config(const cJSON *config, const Task *task) {
    BertSettings s;
    return bert_settings_read(config, &s) != 0 || bert_settings_check_task(&s, task) != 0 ? -1 : 0;
}

int bert_task_pair_features(const cJSON *config) {
    BertSettings s;
    return bert_settings_read(config, &s) != 0 ? -1 : s.pair_features;
}

/* ---- features ---- */

static void bert_encoded_free(Encoded *e) {
    if (!e) return;
    free(e->off); free(e->ids); free(e->seg_start);
    free(e);
}

static Encoded *bert_encode(Model *model, const Dataset *d) {
    BertTaskModel *m = (BertTaskModel *)model;
    Encoded *e = xcalloc(1, sizeof *e);
    e->n = d->n;
    e->off = xmalloc(sizeof(long) * (size_t)(d->n + 1));
    e->seg_start = xmalloc(sizeof(int) * (size_t)(d->n ? d->n : 1));
    long cap = 1024, used = 0;
    e->ids = xmalloc(sizeof(int) * (size_t)cap);
    int *row = xmalloc(sizeof(int) * (size_t)m->max_len), *seg = xmalloc(sizeof(int) * (size_t)m->max_len);
    int *row2 = xmalloc(sizeof(int) * (size_t)m->max_len);
    long cut = 0, longest = 0;   /* rows truncated to max_len, and the longest's tokens */
    for (int i = 0; i < d->n; i++) {
        const Example *x = &d->ex[i];
        int T, s = 0, full;
        if (m->siamese) {   /* "[CLS] a [SEP]" then "[CLS] b [SEP]" */
            const char *b = x->b ? x->b : "";
            s = tokenizer_encode(m->tok, x->a, strlen(x->a), NULL, 0, m->max_len, row, seg);
            full = m->tok->last_len > s ? m->tok->last_len : 0;
            T = s + tokenizer_encode(m->tok, b, strlen(b), NULL, 0, m->max_len, row2, seg);
            if (m->tok->last_len > T - s && m->tok->last_len > full) full = m->tok->last_len;
        } else {
            T = tokenizer_encode(m->tok, x->a, strlen(x->a), x->b, x->b ? strlen(x->b) : 0, m->max_len, row, seg);
            full = m->tok->last_len > T ? m->tok->last_len : 0;
            while (s < T && seg[s] == 0) s++;
        }
        cut += full > 0;
        if (full > longest) longest = full;
        if (used + T > cap) {
            while (used + T > cap) cap *= 2;
            e->ids = xrealloc(e->ids, sizeof(int) * (size_t)cap);
        }
        memcpy(e->ids + used, row, sizeof(int) * (size_t)(m->siamese ? s : T));
        if (m->siamese) memcpy(e->ids + used + s, row2, sizeof(int) * (size_t)(T - s));
        e->off[i] = used;
        e->seg_start[i] = s;
        used += T;
    }
    e->off[d->n] = used;
    dataset_report_truncated(d, cut, m->max_len, "tokens", longest);
    free(row2);
    free(row);
    free(seg);
    return e;
}

static int bert_length(const Encoded *e, int row) { return (int)(e->off[row + 1] - e->off[row]); }

/* Siamese: example rows[i]'s first text into batch row i, its second into row
 * n + i (segments 0), padded to the longest; returns T. */
static int bert_fill_siamese(BertTaskModel *m, const Encoded *e, const int *rows, int n) {
    int T = 1, pad = m->tok->sp.pad >= 0 ? m->tok->sp.pad : 0;
    for (int i = 0; i < n; i++) {
        int len = bert_length(e, rows[i]), s = e->seg_start[rows[i]];
        if (s > T) T = s;
        if (len - s > T) T = len - s;
    }
    for (int i = 0; i < n; i++) {
        int r = rows[i], s = e->seg_start[r], len = bert_length(e, r);
        const int *src[2] = {e->ids + e->off[r], e->ids + e->off[r] + s};
        int lens[2] = {s, len - s};
        for (int half = 0; half < 2; half++) {
            int row = half * n + i, *ids = m->ids + (long)row * T;
            memcpy(ids, src[half], sizeof(int) * (size_t)lens[half]);
            for (int t = lens[half]; t < T; t++) ids[t] = pad;
            memset(m->segments + (long)row * T, 0, sizeof(int) * (size_t)T);
            m->lengths[row] = lens[half];
        }
    }
    return T;
}

/* Pair features: from each joined pair "[CLS] a [SEP] b [SEP]", its first
 * text "[CLS] a [SEP]" (the pair's first segment) into row first + i and its
 * second "[CLS] b [SEP]" into row first + n + i (segments 0); the joined
 * pairs themselves are rows [0, n) when first = n. Padded to T. */
static void bert_fill_texts(BertTaskModel *m, const Encoded *e, const int *rows, int n, int first, int T) {
    int pad = m->tok->sp.pad >= 0 ? m->tok->sp.pad : 0;
    for (int i = 0; i < n; i++) {
        int r = rows[i], s = e->seg_start[r], len = bert_length(e, r);
        const int *src = e->ids + e->off[r];
        int *a = m->ids + (long)(first + i) * T, *b = m->ids + (long)(first + n + i) * T;
        memcpy(a, src, sizeof(int) * (size_t)s);
        b[0] = src[0];   /* [CLS] */
        memcpy(b + 1, src + s, sizeof(int) * (size_t)(len - s));
        m->lengths[first + i] = s;
        m->lengths[first + n + i] = len - s + 1;
        for (int t = s; t < T; t++) a[t] = pad;
        for (int t = len - s + 1; t < T; t++) b[t] = pad;
        memset(m->segments + (long)(first + i) * T, 0, sizeof(int) * (size_t)T);
        memset(m->segments + (long)(first + n + i) * T, 0, sizeof(int) * (size_t)T);
    }
}

/* rows[0..n) of e into the batch buffers, padded to the longest row; returns T. */
static int bert_fill_batch(BertTaskModel *m, const Encoded *e, const int *rows, int n) {
    if (m->siamese) return bert_fill_siamese(m, e, rows, n);
    if (m->pair_features == 4) {
        int T = 1;
        for (int i = 0; i < n; i++) {
            int s = e->seg_start[rows[i]], rest = bert_length(e, rows[i]) - s + 1;
            T = s > T ? s : T;
            T = rest > T ? rest : T;
        }
        bert_fill_texts(m, e, rows, n, 0, T);
        return T;
    }
    int T = 1, pad = m->tok->sp.pad >= 0 ? m->tok->sp.pad : 0;
    for (int i = 0; i < n; i++) T = bert_length(e, rows[i]) > T ? bert_length(e, rows[i]) : T;
    for (int i = 0; i < n; i++) {
        int r = rows[i], len = bert_length(e, r);
        int *ids = m->ids + (long)i * T, *seg = m->segments + (long)i * T;
        memcpy(ids, e->ids + e->off[r], sizeof(int) * (size_t)len);
        for (int t = len; t < T; t++) ids[t] = pad;
        for (int t = 0; t < T; t++) seg[t] = t >= e->seg_start[r] && t < len;
        m->lengths[i] = len;
    }
    if (m->pair_features == 5) bert_fill_texts(m, e, rows, n, n, T);   /* each part is no longer than the pair */
    return T;
}

/* ---- logits for the harness's head ---- */

/* The dropout stream of a training step. Data parallel: rank 0 keeps the
 * model's stream (a one-process run is unchanged); rank r > 0 draws from the
 * run seed, its rank and the step, so the resume point needs no per-rank
 * state and continues with any N. */
static Rng *bert_step_rng(BertTaskModel *m, const TrainState *st, Rng *rank_rng) {
    if (st->rank == 0) return &m->rng;
    rng_seed_stream(rank_rng, st->seed + 0x9E3779B97F4A7C15ull * (uint64_t)st->step,
                    BERT_DROPOUT_STREAM_RANKS + (uint64_t)st->rank);
    return rank_rng;
}

/* Logits (n, K) of rows[0..n) (at most m->pairs), dropout from rng (NULL:
 * none). Heads on the pooled [CLS] vector: the last layer at [CLS] only;
 * every text in full where the head pools over tokens. */
static void bert_batch_logits(BertTaskModel *m, const Encoded *e, const int *rows, int n, Rng *rng, float *logits) {
    int T = bert_fill_batch(m, e, rows, n);
    BertBatch batch = {n * bert_rows_per_example(m), T, m->ids, m->segments, m->lengths};
    if (m->siamese || m->pair_features) bert_forward(m->bert, &batch, rng);
    else bert_forward_pooled(m->bert, &batch, rng);
    if (m->siamese) bert_siamese_forward(m->bert, logits);
    else if (m->pair_features) bert_pair_features_forward(m->bert, n, rng, logits);
    else bert_head_forward(m->bert, rng, logits);
}

static void bert_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st,
                             float *logits) {
    BertTaskModel *m = (BertTaskModel *)model;
    Bert *b = m->bert;
    if (m->head) bert_attach_head(b, m->head);   /* multi-task: this task's turn on the shared encoder */
    if (m->head && st) params_zero_grad(m->head->params);
    if (!st) {   /* evaluation: in forwards of at most m->pairs examples */
        for (int i = 0; i < n; i += m->pairs)
            bert_batch_logits(m, e, rows + i, n - i < m->pairs ? n - i : m->pairs, NULL, logits + (long)i * m->K);
        return;
    }
    if (n > m->pairs) DIE("bert: a batch of %d examples, %d reserved", n, m->pairs);
    bert_reserve(b, m->maxB, m->max_len, 0, 1);   /* no-op after create or load_state */
    params_zero_grad(b->params);
    m->step_n = n;
    if (n == 0) return;   /* a rank given no rows of a short last batch adds a zero gradient */
    Rng rank_rng;
    bert_batch_logits(m, e, rows, n, bert_step_rng(m, st, &rank_rng), logits);
}

/* The heads' gradients are final before bert_backward (data parallel: its
 * first grad_ready covers them), then the pooler's and each layer's. */
static void bert_backward_ops(Model *model, const float *dlogits) {
    BertTaskModel *m = (BertTaskModel *)model;
    if (m->step_n == 0) return;
    if (m->pair_features) bert_pair_features_backward(m->bert, dlogits);
    else if (m->siamese) bert_siamese_backward(m->bert, dlogits);
    else bert_head_backward(m->bert, dlogits);
    bert_backward(m->bert);
}

static int bert_update_ops(Model *model, const TrainState *st) {
    BertTaskModel *m = (BertTaskModel *)model;
    if (m->encoder_opt) {   /* multi-task: the shared encoder and this task's head, one norm for both */
        Params *ps[2] = {m->bert->params, m->head->params};
        if (!isfinite(clip_grad_norm_many(ps, 2, m->clip))) return -1;
        optim_step(m->encoder_opt, m->bert->params, st->lr);
        optim_step(&m->opt, m->head->params, st->lr);
        return 0;
    }
    double norm = clip_grad_norm(m->bert->params, m->clip);
    if (!isfinite(norm)) return -1;
    optim_step(&m->opt, m->bert->params, st->lr);
    return 0;
}

static float *bert_data_parallel_ops(Model *model, long *n, void (*ready)(void *ctx, long lo), void *ctx) {
    if (((BertTaskModel *)model)->head) DIE("bert: multi-task models do not train data-parallel");
    Bert *b = ((BertTaskModel *)model)->bert;
    b->grad_ready = ready;
    b->grad_ready_ctx = ctx;
    *n = (long)b->params->total;
    return b->params->grad;
}

static float bert_score_scale_ops(const Model *model) {
    return ((const BertTaskModel *)model)->siamese ? BERT_SIAMESE_SCALE : 1.0f;
}

/* ---- ModelOps ---- */

static int bert_save_ops(const Model *m, const char *path) { return bert_task_save((const BertTaskModel *)m, path); }
static Model *bert_load_ops(const char *path, const Task *task) { return (Model *)bert_task_load(path, task); }
static int bert_save_state_ops(const Model *m, const char *path) {
    return bert_task_save_state((const BertTaskModel *)m, path);
}
static int bert_load_state_ops(Model *m, const char *path) { return bert_task_load_state((BertTaskModel *)m, path); }
static long bert_num_params_ops(const Model *m) { return bert_num_params(((const BertTaskModel *)m)->bert); }
static void bert_free_ops(Model *m) { bert_task_model_free((BertTaskModel *)m); }
static void bert_use_bf16_ops(Model *m) { bert_use_bf16(((BertTaskModel *)m)->bert, 1); }
static int bert_use_int8_ops(Model *m) { return bert_use_int8(((BertTaskModel *)m)->bert, 1); }
static int bert_calibrate_int8_ops(Model *m, int on, long examples) {
    return bert_int8_calibrate(((BertTaskModel *)m)->bert, on, examples);
}
static int bert_save_int8_ops(const Model *m, const char *path) {
    return bert_task_save_int8((const BertTaskModel *)m, path);
}

/* Parameters P = V C + positions x C + L (4 C^2 + 2 C FF) at 4 floats each
 * (weights, gradients, AdamW's moments); per batch of n = max(batch,
 * eval_batch) rows (x2 or x3 encodings for the siamese and feature pair
 * encodings) and T = max_len tokens, each layer keeps about 12 C + 2 FF
 * floats per token and NH x T attention weights per token (their gradients
 * reuse buffers: measured 352 MiB peak for the 7M-parameter shipped encoder
 * at batch 32, estimated 500). The dimensions are the init checkpoint's (its config
 * only), else the named configuration's ("bert": tiny .. base); a Hugging
 * Face directory or a config file counts as tiny. */
static void bert_memory_config(const cJSON *config, BertConfig *c) {
    const char *init = run_config_string(config, "init", BERT_INIT_NONE);
    const char *name = run_config_string(config, "bert", BERT_DEFAULT_CONFIG_NAME);
    char path[4096];
    cJSON *stored = NULL;
    if (strcmp(init, BERT_INIT_NONE) != 0) {   /* an encoder file's own sizes (its config only is read) */
        if (file_exists(init)) snprintf(path, sizeof path, "%s", init);
        else file_join(init, MODEL_CKPT, path, sizeof path);
        stored = file_exists(path) ? checkpoint_peek_config(path) : NULL;
    }
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(stored, "bert");
    int ok = b && bert_config_from_json(b, path, c) == 0;
    cJSON_Delete(stored);
    if (!ok && bert_config_named(name, c) != 0) bert_config_named(BERT_DEFAULT_CONFIG_NAME, c);
}

static double bert_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting) {
    (void)train;
    BertConfig c;
    bert_memory_config(config, &c);
    double C = c.hidden_size, FF = c.intermediate_size, L = c.num_layers, NH = c.num_heads;
    double T = run_config_number(config, "max_len", 128), b = run_config_number(config, "batch", 32);
    double e = run_config_number(config, "eval_batch", 32);
    const char *pair = run_config_string(config, "pair_encoding", BERT_PAIR_CROSS);
    double per = strcmp(pair, BERT_PAIR_CROSS) == 0 ? 1 : strcmp(pair, BERT_PAIR_CROSS_FEATURES) == 0 ? 3 : 2;
    double params = 16.0 * (c.vocab_size * C + c.max_position * C + L * (4 * C * C + 2 * C * FF) +
                            8 * C * task->num_labels);
    double acts = 4.0 * (b > e ? b : e) * per * T * L * (12 * C + 2 * FF + NH * T);
    *setting = acts <= params ? "bert" : T > 128 ? "max_len" : b >= e ? "batch" : "eval_batch";
    return params + acts;
}

const ModelOps BERT_OPS = {
    .memory_bytes = bert_memory_bytes,
    .check_config = bert_check_config,
    .name = "bert",
    .default_config = bert_default_config,
    .create = bert_ops_create,
    .encode = bert_encode,
    .encoded_free = bert_encoded_free,
    .forward = bert_forward_ops,
    .backward = bert_backward_ops,
    .update = bert_update_ops,
    .save = bert_save_ops,
    .load = bert_load_ops,
    .num_params = bert_num_params_ops,
    .free = bert_free_ops,
    .length = bert_length,
    .save_state = bert_save_state_ops,
    .load_state = bert_load_state_ops,
    .use_bf16 = bert_use_bf16_ops,
    .use_int8 = bert_use_int8_ops,
    .save_int8 = bert_save_int8_ops,
    .calibrate_int8 = bert_calibrate_int8_ops,
    .load_external = bert_hf_classifier_load,
    .settings = BERT_SETTINGS,
    .num_settings = NUM_BERT_SETTINGS,
    .score_scale = bert_score_scale_ops,
    .data_parallel = bert_data_parallel_ops,
};
