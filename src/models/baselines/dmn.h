/* dmn.h — the Dynamic Memory Network (Kumar et al. 2016, "Ask Me Anything:
 * Dynamic Memory Networks for Natural Language Processing") as a ModelOps
 * classifier, shared between its files:
 *   dmn.c        ModelOps: settings, create, load, free
 *   dmn_step.c   forward / backward over a batch, the ops' forward, backward, update
 * Outside code needs only DMN_OPS (models/registry.c).
 *
 * The model, per row (Shapes: D embedding, H hidden, A the gate's hidden
 * layer, P passes, K outputs):
 *   input module: text a's words (embedding, V x D) through a GRU (nn/gru.h);
 *     the facts c_1..c_N are its states at the end of each sentence (the
 *     paper's end-of-sentence states, word_sentences.h), or at every word
 *     when the text is one sentence (most of GLUE);
 *   question q (H): for a single text a learned vector (the task's query);
 *     for pairs the same GRU's last state over text b (the paper's question
 *     module shares the embedding; here the GRU too);
 *   episodic memory (nn/episodic.h): m_0 = q; pass i = 1..P gates each fact,
 *     g_t = sigmoid(W2 tanh(W1 [c*q; c*m; |c-q|; |c-m|] + b1) + b2) with
 *     m = m_{i-1}, runs the episode h_t = g_t GRU_e(c_t, h_{t-1}) + (1 - g_t)
 *     h_{t-1} from h_0 = 0, e_i = h_N, and updates m_i = GRU_m(e_i, m_{i-1})
 *     (nn/gru_cell.h); the gate and both GRUs are shared by the passes;
 *   answer: dropout -> linear on [m_P; q]: K logits for the harness's head,
 *     or 1 score (the paper's answer module is a GRU started at m that reads
 *     q; one label needs no decoder, so the layer reads both directly).
 * An empty text a is one padding word (its embedding row is zero); an empty
 * text b gives q = 0.
 *
 * The input GRU runs over the batch at once; the episodes run row by row
 * (their facts' gates and input projections as GEMMs), so a row's result
 * never depends on the rest of its batch. */
#ifndef GLUE_DMN_H
#define GLUE_DMN_H

#include <stdint.h>

#include "models/baselines/word_model_io.h"
#include "models/baselines/word_sentences.h"
#include "models/model.h"

extern const ModelOps DMN_OPS;

typedef struct DmnConfig {
    int dim, hidden, attention, passes;   /* D, H, A, P */
    float dropout, clip;
    int min_count, max_len, batch, eval_batch;
    double weight_decay;
} DmnConfig;

/* GRU parameter handles: w_ih (3H, C), w_hh (3H, H), b_ih, b_hh (3H). */
typedef struct DmnGru { int w_ih, w_hh, b_ih, b_hh; } DmnGru;

/* A batch's activations, grown when a batch needs more (never inside the
 * recurrences). Facts are counted over the batch: NF = sum of the rows'. */
typedef struct DmnWork {
    int n, R, T, dropped;           /* rows, sequences (n or 2n), steps; dropout applied */
    long cap_rt, cap_r, cap_f, cap_n;   /* capacities: cells (R T), sequences (R), facts, rows */
    int *ids, *lens, *touched;      /* (R T), (R), (R T) */
    unsigned char *seen;            /* (V) zeroed, for embedding_backward */
    float *x, *dx, *hs, *dhs;       /* (R T D) x2, (R T H) x2 */
    float *gates, *hn, *scratch;    /* (R T 3H), (R T H), the input GRU's */
    int *foff;                      /* (n + 1) row r's facts [foff[r], foff[r+1]) */
    int *fpos;                      /* (NF) each fact's state row in hs */
    float *c, *dc, *xpe, *dxpe;     /* (NF H) x2, (NF 3H) x2: the facts, the episode's input projection */
    float *z, *t, *g, *dg;          /* per pass: (P NF 4H), (P NF A), (P NF), (NF) */
    float *eh, *ehc, *egates, *ehn; /* per pass: (P NF H), (P NF H), (P NF 3H), (P NF H) */
    float *q, *dq;                  /* (n H) */
    float *m, *mgates, *mhn, *xpm;  /* (n (P+1) H), (n P 3H), (n P H), (n P 3H) */
    float *feat, *drop, *dfeat, *ddrop; /* (n 2H) */
    unsigned char *mask;
    float *logits, *dlogits;        /* (n K) */
    float *tmp;                     /* op scratch */
} DmnWork;

typedef struct Dmn {
    WordModelBase base;             /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    DmnConfig cfg;
    int K;
    int h_emb, h_query, h_w1, h_b1, h_w2, h_b2, h_out_w, h_out_b;   /* h_query -1 for pairs */
    DmnGru in, ep, mem;
    DmnWork w;
} Dmn;

/* dmn_step.c */
void dmn_work_free(DmnWork *w);
/* Forward of rows[0..n) of s (logits in w.logits; dropout when train), and
 * the backward that ADDS every parameter's gradient given w.dlogits. */
void dmn_batch_forward(Dmn *m, const HanSeqs *s, const int *rows, int n, int train);
void dmn_batch_backward(Dmn *m);
void dmn_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void dmn_backward_ops(Model *m, const float *dlogits);
int dmn_update_ops(Model *m, const TrainState *st);

#endif
