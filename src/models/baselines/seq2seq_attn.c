/* seq2seq_attn.c — the label decoder behind ModelOps: its settings, create,
 * load, the encoded splits (words, and each row's target label tokens), the
 * ops table. See seq2seq_attn.h for the model; the batch computation is in
 * seq2seq_attn_step.c, decoding in seq2seq_attn_beam.c. Checkpoints and the
 * --resume state are the word models' (word_model_io.h); the label order
 * (train's frequencies, which a loaded model cannot recount) is stored in the
 * saved config as "label_order". */
#include "models/baselines/seq2seq_attn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_memory.h"
#include "models/baselines/word_pair.h"
#include "models/run_config.h"

/* Defaults, from brightmart's a06_Seq2seqWithAttention (train script and
 * model): embed_size 100 (dim), hidden_size 100 per encoder direction (the
 * decoder's state 2H = 200, label embeddings embed_size*2 = 200), Adam at
 * learning rate 0.01 with its decay rate 1.0 (constant), gradient clipping at
 * 5, dropout keep 0.5 on the decoder output, 10 epochs, sequence_length 100
 * (max_len), decoder_sent_length 6 (max_labels 5 and _END). The attention
 * size A = 200 is the decoder state's, as in brightmart's attention over 2H
 * states. Not from there: batch 128 (brightmart's 512 was for a GPU; the
 * other word models here use 128), no L2 term (brightmart's 1e-4 is coupled
 * L2, not AdamW's decay), and the beam: brightmart decodes greedily; 3 keeps
 * the alternatives a label set of a few labels has. */
#define SA(field) offsetof(SaConfig, field)
static const SettingSpec SA_SETTINGS[] = {
    RUN_SETTING_EPOCHS(10),
    RUN_SETTING_LR(0.01),
    {"batch", SETTING_INT, SA(batch), 128, 1, 1 << 20, NULL, NULL},
    {"eval_batch", SETTING_INT, SA(eval_batch), 128, 1, 1 << 20, NULL, NULL},
    RUN_SETTING_SCHEDULE("constant"),
    RUN_SETTINGS_DECISION,
    {"weight_decay", SETTING_REAL, SA(weight_decay), 0.0, 0, 1, NULL, NULL},
    {"dim", SETTING_INT, SA(dim), 100, 1, 4096, NULL, NULL},
    {"hidden", SETTING_INT, SA(hidden), 100, 1, 4096, NULL, NULL},
    {"label_dim", SETTING_INT, SA(label_dim), 200, 1, 4096, NULL, NULL},
    {"attention", SETTING_INT, SA(attention), 200, 1, 4096, NULL, NULL},
    {"beam", SETTING_INT, SA(beam), 3, 1, 64, NULL, NULL},
    {"max_labels", SETTING_INT, SA(max_labels), 5, 1, TASK_MAX_LABELS, NULL, NULL},
    {"dropout", SETTING_FLOAT_BELOW, SA(dropout), 0.5, 0, 1, NULL, NULL},
    {"clip", SETTING_FLOAT, SA(clip), 5.0, 0, 1e6, NULL, NULL},
    {"min_count", SETTING_INT, SA(min_count), 1, 1, 1e9, NULL, NULL},
    {"max_len", SETTING_INT, SA(max_len), 100, 1, 100000, NULL, NULL},
};
#undef SA
#define NUM_SA_SETTINGS ((int)(sizeof SA_SETTINGS / sizeof SA_SETTINGS[0]))

static cJSON *sa_default_config(const Task *task) {
    return word_model_defaults(SA_SETTINGS, NUM_SA_SETTINGS, task, 0);
}

static const WordModelKind SA_KIND = {"seq2seq_attn", "seq2seq_attn"};

static void sa_free(Seq2SeqAttn *m) {
    if (!m) return;
    sa_work_free(&m->w);
    word_model_release(&m->base);
    free(m);
}

static const char *sa_cannot(const Task *task) {
    return task->num_labels < 2 ? "seq2seq_attn decodes labels, and a regression task has a score" : NULL;
}

/* A model with its config parsed and task facts set (NULL after a message). */
static Seq2SeqAttn *sa_new(const cJSON *config, const Task *task) {
    if (sa_cannot(task)) {
        user_error_usage("use another --model for a scored task", "%s: %s", task->name, sa_cannot(task));
        return NULL;
    }
    Seq2SeqAttn *m = xcalloc(1, sizeof *m);
    if (word_model_init(&m->base, &SA_KIND, config, task, SA_SETTINGS, NUM_SA_SETTINGS, &m->cfg) != 0) {
        sa_free(m);
        return NULL;
    }
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    m->Vo = m->K + 1;
    m->S = 2 * m->cfg.hidden;
    m->multi = task->multi_label;
    return m;
}

/* order: labels by count in train, most frequent first, ties by id. */
static void sa_order_from_train(Seq2SeqAttn *m, const Dataset *train) {
    long count[TASK_MAX_LABELS] = {0};
    for (int i = 0; i < train->n; i++) {
        const Example *e = &train->ex[i];
        if (m->multi)
            for (int k = 0; k < e->nlabels; k++) count[e->labels[k]]++;
        else if (e->label >= 0 && e->label < m->K)
            count[e->label]++;
    }
    for (int k = 0; k < m->K; k++) m->order[k] = k;
    for (int i = 1; i < m->K; i++)   /* insertion sort: stable, so ties keep id order */
        for (int j = i; j > 0 && count[m->order[j]] > count[m->order[j - 1]]; j--) {
            int t = m->order[j];
            m->order[j] = m->order[j - 1];
            m->order[j - 1] = t;
        }
}

/* rank from order, after checking order is a permutation (a loaded file's). */
static int sa_order_set(Seq2SeqAttn *m) {
    for (int k = 0; k < m->K; k++) m->rank[k] = -1;
    for (int r = 0; r < m->K; r++) {
        int k = m->order[r];
        if (k < 0 || k >= m->K || m->rank[k] >= 0) return -1;
        m->rank[k] = r;
    }
    return 0;
}

static int sa_linear(Params *p, const char *name, int out, int in, int flags) {
    return params_declare(p, name, PARAM_SHAPE(out, in), PARAM_INIT_UNIFORM(1.0f / sqrtf((float)in)), flags);
}

static int sa_bias(Params *p, const char *name, int out, int fan_in) {
    return params_declare(p, name, PARAM_SHAPE(out), PARAM_INIT_UNIFORM(1.0f / sqrtf((float)fan_in)), PARAM_NO_DECAY);
}

/* Kim's U(-0.25, 0.25) word vectors as the other word models; PyTorch's
 * Linear / GRU inits; the label embeddings N(0, 1) as nn.Embedding. */
static void sa_build(Seq2SeqAttn *m, uint64_t seed) {
    const SaConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), D = c->dim, H = c->hidden, S = m->S, A = c->attention, E = c->label_dim;
    m->base.seed = seed;
    Params *p = m->base.params = params_create();
    SaParams *h = &m->p;
    h->emb = params_declare(p, "emb", PARAM_SHAPE(V, D), PARAM_INIT_UNIFORM(0.25f), PARAM_SPARSE_ROWS);
    word_model_declare_rnn(p, "enc.fwd", "", 3, D, H, &h->w_ih[0], &h->w_hh[0], &h->b_ih[0], &h->b_hh[0]);
    word_model_declare_rnn(p, "enc.bwd", "", 3, D, H, &h->w_ih[1], &h->w_hh[1], &h->b_ih[1], &h->b_hh[1]);
    h->init_w = sa_linear(p, "init.w", S, H, 0);
    h->init_b = sa_bias(p, "init.b", S, H);
    h->att_q = sa_linear(p, "att.q", A, S, 0);
    h->att_k = sa_linear(p, "att.k", A, 2 * H, 0);
    h->att_b = sa_bias(p, "att.b", A, 2 * H);
    h->att_v = sa_bias(p, "att.v", A, A);   /* a vector: uniform as a bias, but decayed like weights */
    h->lab_emb = params_declare(p, "label_emb", PARAM_SHAPE(m->Vo, E), PARAM_INIT_NORMAL(1.0f), 0);
    word_model_declare_rnn(p, "dec", "", 3, E + 2 * H, S, &h->d_ih, &h->d_hh, &h->d_bih, &h->d_bhh);
    h->out_w = sa_linear(p, "out.w", m->Vo, S, 0);
    h->out_b = sa_bias(p, "out.b", m->Vo, S);
    word_model_allocate(&m->base, h->emb, D, optim_adamw(c->weight_decay));
}

static void sa_config_store_order(Seq2SeqAttn *m) {
    cJSON_DeleteItemFromObjectCaseSensitive(m->base.config, "label_order");
    cJSON_AddItemToObject(m->base.config, "label_order", cJSON_CreateIntArray(m->order, m->K));
}

static Model *sa_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    Seq2SeqAttn *m = sa_new(config, task);
    if (!m) return NULL;
    m->base.pair = word_pair_task(train);
    if (word_vocab_build(&m->base.vocab, train, m->cfg.min_count) != 0) {
        sa_free(m);
        return NULL;
    }
    m->cfg.eval_batch = word_memory_rows_cap(m->cfg.eval_batch, train);
    sa_order_from_train(m, train);
    sa_order_set(m);
    sa_config_store_order(m);
    sa_build(m, seed);
    return (Model *)m;
}

/* The label order of a loaded file's config; -1 after a message. */
static int sa_order_load(Seq2SeqAttn *m, const cJSON *config, const char *path) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(config, "label_order");
    int ok = cJSON_IsArray(a) && cJSON_GetArraySize(a) == m->K;
    for (int r = 0; ok && r < m->K; r++) {
        const cJSON *v = cJSON_GetArrayItem(a, r);
        ok = cJSON_IsNumber(v);
        m->order[r] = ok ? v->valueint : -1;
    }
    if (!ok || sa_order_set(m) != 0) {
        word_model_bad(&SA_KIND, path, "no valid label_order in its config");
        return -1;
    }
    return 0;
}

static Model *sa_load(const char *path, const Task *task) {
    WordModelHead head;
    Checkpoint *c = word_model_read(&SA_KIND, task, path, &head);
    if (!c) return NULL;
    Seq2SeqAttn *m = sa_new(head.config, task);
    if (m) {
        m->base.pair = head.pair;
        m->base.vocab = head.vocab;
        if (sa_order_load(m, head.config, path) != 0) {
            sa_free(m);
            m = NULL;
        } else {
            sa_build(m, head.seed);
        }
    } else {
        word_vocab_free(&head.vocab);
    }
    if (m && checkpoint_load_params(c, m->base.params) != 0) {
        sa_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return (Model *)m;
}

/* The words, and each labelled row's target: its label (single-label), or
 * its set in the model's label order cut at max_labels; then _END. */
static Encoded *sa_encode(Model *model, const Dataset *d) {
    Seq2SeqAttn *m = (Seq2SeqAttn *)model;
    SaEncoded *e = xcalloc(1, sizeof *e);
    e->words = word_seqs_encode(&m->base.vocab, d, m->base.max_len);
    int ld = m->cfg.max_labels + 1;
    e->tgt = xcalloc((size_t)(d->n > 0 ? d->n : 1) * ld, sizeof(int));
    e->tgt_len = xcalloc((size_t)(d->n > 0 ? d->n : 1), sizeof(int));
    for (int i = 0; i < d->n; i++) {
        const Example *x = &d->ex[i];
        int *t = e->tgt + (long)i * ld, n = 0;
        if (m->multi) {
            unsigned char in[TASK_MAX_LABELS] = {0};
            for (int k = 0; k < x->nlabels; k++)
                if (x->labels[k] >= 0 && x->labels[k] < m->K) in[x->labels[k]] = 1;
            for (int r = 0; r < m->K && n < m->cfg.max_labels; r++)
                if (in[m->order[r]]) t[n++] = m->order[r];
        } else if (x->label >= 0 && x->label < m->K) {
            t[n++] = x->label;
        } else {
            continue;   /* unlabelled: no target */
        }
        t[n++] = m->K;   /* _END */
        e->tgt_len[i] = n;
    }
    return (Encoded *)e;
}

static void sa_encoded_free(Encoded *enc) {
    SaEncoded *e = (SaEncoded *)enc;
    if (!e) return;
    word_seqs_free(e->words);
    free(e->tgt);
    free(e->tgt_len);
    free(e);
}

/* The memory's length: both texts' words. */
static int sa_length(const Encoded *enc, int row) {
    const WordSeqs *s = ((const SaEncoded *)enc)->words;
    return s->len_a[row] + s->len_b[row];
}

static void sa_free_ops(Model *m) { sa_free((Seq2SeqAttn *)m); }

const ModelOps SEQ2SEQ_ATTN_OPS = {
    .name = "seq2seq_attn",
    .default_config = sa_default_config,
    .create = sa_create,
    .memory_bytes = seq2seq_attn_memory_bytes,
    .encode = sa_encode,
    .encoded_free = sa_encoded_free,
    .train_step = sa_train_step_ops,
    .predict = sa_predict_ops,
    .load = sa_load,
    .free = sa_free_ops,
    .length = sa_length,
    WORD_MODEL_FILE_OPS,
    .settings = SA_SETTINGS,
    .num_settings = NUM_SA_SETTINGS,
    .cannot = sa_cannot,
};
