/* han.c — HAN (Yang et al. 2016, "Hierarchical Attention Networks for
 * Document Classification") as the encoder of the TextRNN network
 * (textrnn.h): each sentence's words through a BiGRU (nn/gru.h) and attention
 *   u_it = tanh(W_w h_it + b_w), alpha_it = softmax_t(u_it . u_w),
 *   s_i = sum_t alpha_it h_it                           (nn/seqpool.h),
 * then the text's sentence vectors through a second BiGRU and attention (W_s,
 * b_s, u_s) into the document vector u (P = 2H). The pair features and the
 * output layer are the network's.
 *
 * Sentences come from text/sentences.h at encoding time: a HanSeqs is the
 * word ids of the other word models plus each text's sentence lengths in words.
 * GLUE's texts are mostly one sentence: there HAN is a BiGRU with word
 * attention, and the sentence level sees a sequence of one.
 *
 * The batch's sentences are a batch of their own (RS sentences of up to Tw
 * words); their buffers grow when a batch needs more (han_reserve), never
 * inside the recurrences. */
#include "models/baselines/textrnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_sentences.h"
#include "nn/activation.h"
#include "nn/gru.h"
#include "nn/linear.h"
#include "nn/seqpool.h"
#include "text/basic_tokenizer.h"
#include "text/sentences.h"

/* ---- encoded splits: words and sentences ---- */

typedef struct { int32_t *v; long n, cap; } HanList;

static void han_push(HanList *l, int32_t x) {
    if (l->n == l->cap) {
        l->cap = 2 * l->cap + 256;
        l->v = xrealloc(l->v, sizeof(int32_t) * (size_t)l->cap);
    }
    l->v[l->n++] = x;
}

/* Appends the word counts of text's sentences, cut so that they sum to its
 * len encoded words; returns how many. A sentence is tokenized on its own,
 * which gives the words of the whole text since sentences end at whitespace. */
static int han_text_sentences(HanList *out, BasicTokenizer *bt, const char *text, int len, size_t **ends, int *cap) {
    if (!text || len == 0) return 0;
    size_t n = strlen(text);
    int ns = sentence_split(text, n, *ends, *cap);
    if (ns > *cap) {
        *cap = ns;
        *ends = xrealloc(*ends, sizeof(size_t) * (size_t)ns);
        sentence_split(text, n, *ends, *cap);
    }
    int left = len, count = 0;
    size_t start = 0;
    for (int i = 0; i < ns && left > 0; i++) {
        int w = basic_tokenize(bt, text + start, (*ends)[i] - start);
        start = (*ends)[i];
        if (w > left) w = left;
        if (w == 0) continue;
        han_push(out, w);
        left -= w;
        count++;
    }
    if (left > 0) {   /* defensive: words the pieces did not account for join the last sentence */
        if (count == 0) {
            han_push(out, left);
            count = 1;
        } else {
            out->v[out->n - 1] += left;
        }
    }
    return count;
}

Encoded *han_encode(Model *model, const Dataset *d) {
    const WordModelBase *base = (const WordModelBase *)model;
    WordSeqs *w = word_seqs_encode(&base->vocab, d, base->max_len);
    HanSeqs *h = xcalloc(1, sizeof *h);
    h->w = *w;
    free(w);   /* its arrays now h->w's */
    h->soff = xmalloc(sizeof(int64_t) * ((size_t)d->n + 1));
    h->ns_a = xmalloc(sizeof(int32_t) * ((size_t)d->n + 1));
    HanList l = {0};
    BasicTokenizer bt;
    basic_tokenizer_init(&bt, 1);
    int cap = 16;
    size_t *ends = xmalloc(sizeof(size_t) * (size_t)cap);
    h->soff[0] = 0;
    for (int r = 0; r < d->n; r++) {
        h->ns_a[r] = han_text_sentences(&l, &bt, d->ex[r].a, h->w.len_a[r], &ends, &cap);
        han_text_sentences(&l, &bt, d->ex[r].b, h->w.len_b[r], &ends, &cap);
        h->soff[r + 1] = l.n;
    }
    free(ends);
    basic_tokenizer_free(&bt);
    h->sents = l.v ? l.v : xmalloc(sizeof(int32_t));
    return (Encoded *)h;
}

void han_encoded_free(Encoded *e) {
    HanSeqs *h = (HanSeqs *)e;
    if (!h) return;
    free(h->sents);
    free(h->soff);
    free(h->ns_a);
    word_seqs_free(&h->w);   /* its arrays, and h itself (its first member) */
}

/* ---- parameters ---- */

/* After the embedding and the word level's BiGRU (declared with TextRNN's,
 * named han.word.gru.*): the word attention, the sentence BiGRU, the sentence
 * attention. PyTorch's U(-1/sqrt(fan), 1/sqrt(fan)). */
void han_declare(TextRnn *m) {
    Params *p = m->base.params;
    int H = m->cfg.hidden, A = m->cfg.attention;
    static const char *const suffix[2] = {"", "_reverse"}, *const level[2] = {"word", "sent"};
    float aa = 1.0f / sqrtf(2.0f * H), au = 1.0f / sqrtf((float)A);
    char name[64];
    for (int l = 0; l < 2; l++) {
        for (int dir = 0; l == 1 && dir < 2; dir++)
            word_model_declare_rnn(p, "han.sent.gru", suffix[dir], 3, 2 * H, H, &m->p.s_ih[dir], &m->p.s_hh[dir],
                                   &m->p.s_bih[dir], &m->p.s_bhh[dir]);
        snprintf(name, sizeof name, "han.%s.att.w", level[l]);
        m->p.att_w[l] = params_declare(p, name, PARAM_SHAPE(A, 2 * H), PARAM_INIT_UNIFORM(aa), 0);
        snprintf(name, sizeof name, "han.%s.att.b", level[l]);
        m->p.att_b[l] = params_declare(p, name, PARAM_SHAPE(A), PARAM_INIT_UNIFORM(aa), PARAM_NO_DECAY);
        snprintf(name, sizeof name, "han.%s.att.u", level[l]);
        m->p.att_u[l] = params_declare(p, name, PARAM_SHAPE(A), PARAM_INIT_UNIFORM(au), 0);
    }
}

/* ---- buffers ---- */

/* Per level (0 words: RS sentences of Tw steps; 1 sentences: R texts of L). */
typedef struct HanLevel {
    int B, T;                  /* sequences and steps of this batch */
    int *len;                  /* (B) */
    float *x, *h, *gates, *hn; /* (B, T, C), (B, T, 2H), (2, B, T, 3H), (2, B, T, H) */
    float *keys, *alpha, *out; /* (B, T, A), (B, T), (B, 2H) */
    float *dx, *dh, *dkeys;    /* training */
} HanLevel;

typedef struct HanBuffers {
    long cap_cells[2], cap_seqs[2];  /* B * T and B the buffers hold, per level */
    int train;                       /* the d* buffers exist */
    HanLevel lv[2];
    int *sent_seq, *sent_start;      /* (RS) each sentence's text and first word */
    long cap_sent;
    float *scratch;                  /* gru scratch, the larger level's */
    long cap_scratch;
} HanBuffers;

void han_buffers_free(HanBuffers *h) {
    if (!h) return;
    for (int l = 0; l < 2; l++) {
        HanLevel *v = &h->lv[l];
        void *all[] = {v->len, v->x, v->h, v->gates, v->hn, v->keys, v->alpha, v->out, v->dx, v->dh, v->dkeys};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    }
    free(h->sent_seq);
    free(h->sent_start);
    free(h->scratch);
    free(h);
}

static float *han_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }

/* Level l's buffers for B sequences of T steps of C inputs (grown, not shrunk). */
static void han_level_reserve(HanBuffers *hb, int l, int B, int T, int C, int H, int A, int train) {
    HanLevel *v = &hb->lv[l];
    long cells = (long)B * T;
    if (cells > hb->cap_cells[l] || B > hb->cap_seqs[l] || (train && !hb->train)) {
        long nc = cells > hb->cap_cells[l] ? cells : hb->cap_cells[l], nb = B > hb->cap_seqs[l] ? B : hb->cap_seqs[l];
        void *all[] = {v->len, v->x, v->h, v->gates, v->hn, v->keys, v->alpha, v->out, v->dx, v->dh, v->dkeys};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
        memset(v, 0, sizeof *v);
        v->len = xmalloc(sizeof(int) * (size_t)(nb + 1));
        v->x = han_floats(nc * C);
        v->h = han_floats(nc * 2 * H);
        v->gates = han_floats(2 * nc * 3 * H);
        v->hn = han_floats(2 * nc * H);
        v->keys = han_floats(nc * A);
        v->alpha = han_floats(nc);
        v->out = han_floats(nb * 2 * H);
        if (train || hb->train) {
            v->dx = han_floats(nc * C);
            v->dh = han_floats(nc * 2 * H);
            v->dkeys = han_floats(nc * A);
        }
        hb->cap_cells[l] = nc;
        hb->cap_seqs[l] = nb;
    }
    v->B = B;
    v->T = T;
}

/* ---- the batch's sentences ---- */

/* From the forward's rows: the sentence table (level 0's sequences) and each
 * text's sentence count (level 1's lengths). */
static void han_batch(TextRnn *m, int R, int train) {
    TrBuffers *b = &m->buf;
    const HanSeqs *s = (const HanSeqs *)b->seqs;
    int n = m->base.pair ? R / 2 : R, RS = 0, Tw = 1, L = 1;
    for (int r = 0; r < R; r++) {
        int row = b->rows[r % n], na = s->ns_a[row];
        int ns = r < n ? na : (int)(s->soff[row + 1] - s->soff[row]) - na;
        RS += ns;
        L = ns > L ? ns : L;
        const int32_t *w = s->sents + s->soff[row] + (r < n ? 0 : na);
        for (int k = 0; k < ns; k++) Tw = w[k] > Tw ? w[k] : Tw;
    }
    if (!b->han) b->han = xcalloc(1, sizeof *b->han);
    HanBuffers *hb = b->han;
    int D = m->cfg.dim, H = m->cfg.hidden, A = m->cfg.attention;
    han_level_reserve(hb, 0, RS, Tw, D, H, A, train);
    han_level_reserve(hb, 1, R, L, 2 * H, H, A, train);
    if (train) hb->train = 1;
    if (RS > hb->cap_sent || !hb->sent_seq) {
        free(hb->sent_seq);
        free(hb->sent_start);
        hb->cap_sent = RS;
        hb->sent_seq = xmalloc(sizeof(int) * (size_t)(RS + 1));
        hb->sent_start = xmalloc(sizeof(int) * (size_t)(RS + 1));
    }
    long need = gru_scratch_size((RnnDims){.B = RS, .T = Tw, .C = D, .H = H});
    long need1 = gru_scratch_size((RnnDims){.B = R, .T = L, .C = 2 * H, .H = H});
    need = need > need1 ? need : need1;
    if (need > hb->cap_scratch) {
        free(hb->scratch);
        hb->scratch = han_floats(need);
        hb->cap_scratch = need;
    }
    int k = 0;
    for (int r = 0; r < R; r++) {
        int row = b->rows[r % n], na = s->ns_a[row];
        int ns = r < n ? na : (int)(s->soff[row + 1] - s->soff[row]) - na;
        const int32_t *w = s->sents + s->soff[row] + (r < n ? 0 : na);
        hb->lv[1].len[r] = ns;
        for (int i = 0, start = 0; i < ns; i++, k++) {
            hb->sent_seq[k] = r;
            hb->sent_start[k] = start;
            hb->lv[0].len[k] = w[i];
            start += w[i];
        }
    }
}

/* ---- forward and backward ---- */

static void han_gru(const TextRnn *m, int l, int grad, GruWeights w[2], GruGrads g[2]) {
    Params *p = m->base.params;
    for (int dir = 0; dir < 2; dir++) {
        int h[4] = {m->p.w_ih[dir], m->p.w_hh[dir], m->p.b_ih[dir], m->p.b_hh[dir]};
        if (l == 1) {
            h[0] = m->p.s_ih[dir]; h[1] = m->p.s_hh[dir]; h[2] = m->p.s_bih[dir]; h[3] = m->p.s_bhh[dir];
        }
        w[dir] = (GruWeights){params_data(p, h[0]), params_data(p, h[1]), params_data(p, h[2]), params_data(p, h[3])};
        if (grad)
            g[dir] = (GruGrads){params_grad(p, h[0]), params_grad(p, h[1]), params_grad(p, h[2]), params_grad(p, h[3])};
    }
}

/* Level l: its BiGRU over v->x, u = tanh(W h + b), out = attention over h. */
static void han_level_forward(TextRnn *m, int l) {
    HanBuffers *hb = m->buf.han;
    HanLevel *v = &hb->lv[l];
    Params *p = m->base.params;
    int H = m->cfg.hidden, A = m->cfg.attention, C = l ? 2 * H : m->cfg.dim;
    long cells = (long)v->B * v->T;
    GruWeights w[2];
    han_gru(m, l, 0, w, NULL);
    bigru_forward(v->h, v->gates, v->hn, v->x, v->len, w, (RnnDims){.B = v->B, .T = v->T, .C = C, .H = H}, hb->scratch);
    linear_forward(v->keys, v->h, params_data(p, m->p.att_w[l]), params_data(p, m->p.att_b[l]), (int)cells, 2 * H, A);
    tanh_forward(v->keys, v->keys, cells * A);
    attnpool_forward(v->out, v->alpha, v->keys, v->h, params_data(p, m->p.att_u[l]), v->len, v->B, v->T, A, 2 * H);
}

/* Given dout (B, 2H): the level's parameter gradients and v->dx. */
static void han_level_backward(TextRnn *m, int l, const float *dout) {
    HanBuffers *hb = m->buf.han;
    HanLevel *v = &hb->lv[l];
    Params *p = m->base.params;
    int H = m->cfg.hidden, A = m->cfg.attention, C = l ? 2 * H : m->cfg.dim;
    long cells = (long)v->B * v->T;
    memset(v->dh, 0, sizeof(float) * (size_t)(cells * 2 * H));
    memset(v->dkeys, 0, sizeof(float) * (size_t)(cells * A));
    attnpool_backward(v->dkeys, v->dh, params_grad(p, m->p.att_u[l]), dout, v->alpha, v->keys, v->h,
                      params_data(p, m->p.att_u[l]), v->len, v->B, v->T, A, 2 * H);
    for (long i = 0; i < cells * A; i++) v->dkeys[i] *= 1.0f - v->keys[i] * v->keys[i];
    linear_backward(v->dh, params_grad(p, m->p.att_w[l]), params_grad(p, m->p.att_b[l]), v->dkeys, v->h,
                    params_data(p, m->p.att_w[l]), (int)cells, 2 * H, A);
    GruWeights w[2];
    GruGrads g[2];
    han_gru(m, l, 1, w, g);
    memset(v->dx, 0, sizeof(float) * (size_t)(cells * C));
    bigru_backward(v->dx, g, v->dh, v->h, v->gates, v->hn, v->x, v->len, w,
                   (RnnDims){.B = v->B, .T = v->T, .C = C, .H = H}, hb->scratch);
}

/* Row of level 1's x (R, L, 2H) that sentence k's vector goes to. */
static long han_sent_cell(const HanBuffers *hb, int k) {
    int r = hb->sent_seq[k], i = 0;
    for (int j = k - 1; j >= 0 && hb->sent_seq[j] == r; j--) i++;
    return (long)r * hb->lv[1].T + i;
}

void han_encode_forward(TextRnn *m, int R, int T, int train) {
    TrBuffers *b = &m->buf;
    han_batch(m, R, train);
    HanBuffers *hb = b->han;
    HanLevel *w = &hb->lv[0], *s = &hb->lv[1];
    int D = m->cfg.dim, H2 = 2 * m->cfg.hidden;
    for (int k = 0; k < w->B; k++)   /* each sentence's words: level 0's sequences */
        memcpy(w->x + (long)k * w->T * D, b->x + ((long)hb->sent_seq[k] * T + hb->sent_start[k]) * D,
               sizeof(float) * (size_t)w->len[k] * (size_t)D);
    han_level_forward(m, 0);
    for (int k = 0; k < w->B; k++)   /* the sentence vectors: level 1's steps */
        memcpy(s->x + han_sent_cell(hb, k) * H2, w->out + (long)k * H2, sizeof(float) * (size_t)H2);
    han_level_forward(m, 1);
    memcpy(b->pooled, s->out, sizeof(float) * (size_t)R * (size_t)H2);
}

void han_encode_backward(TextRnn *m, int R, int T) {
    TrBuffers *b = &m->buf;
    HanBuffers *hb = b->han;
    HanLevel *w = &hb->lv[0], *s = &hb->lv[1];
    int D = m->cfg.dim, H2 = 2 * m->cfg.hidden;
    han_level_backward(m, 1, b->dpooled);
    float *dsent = w->out;   /* the sentence vectors' gradient, in place of the vectors (not needed again) */
    for (int k = 0; k < w->B; k++)
        memcpy(dsent + (long)k * H2, s->dx + han_sent_cell(hb, k) * H2, sizeof(float) * (size_t)H2);
    han_level_backward(m, 0, dsent);
    memset(b->dx, 0, sizeof(float) * (size_t)R * T * (size_t)D);
    for (int k = 0; k < w->B; k++) {
        const float *src = w->dx + (long)k * w->T * D;
        float *dst = b->dx + ((long)hb->sent_seq[k] * T + hb->sent_start[k]) * D;
        for (long i = 0; i < (long)w->len[k] * D; i++) dst[i] += src[i];
    }
}

int han_batch_sentences(const TextRnn *m, int *lens, int *counts) {
    const HanBuffers *hb = m->buf.han;
    if (!hb) return 0;
    for (int k = 0; lens && k < hb->lv[0].B; k++) lens[k] = hb->lv[0].len[k];
    for (int r = 0; counts && r < hb->lv[1].B; r++) counts[r] = hb->lv[1].len[r];
    return hb->lv[0].B;
}
