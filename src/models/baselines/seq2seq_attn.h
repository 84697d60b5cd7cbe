/* seq2seq_attn.h — the classifier as a decoder over labels (brightmart's
 * text_classification a06_Seq2seqWithAttention, after Bahdanau et al. 2015),
 * as a ModelOps shared between its files:
 *   seq2seq_attn.c        ModelOps: settings, create, load, encode, free
 *   seq2seq_attn_step.c   the teacher-forced forward, its loss and backward,
 *                         and the training step
 *   seq2seq_attn_beam.c   beam search over label sequences, and what the
 *                         model reports to evaluation
 * Outside code needs only SEQ2SEQ_ATTN_OPS (models/registry.c).
 *
 * The network, per row (words: models/baselines/word_features.h):
 *   encoder  word embedding (V, D) -> BiGRU (H per direction, nn/gru.h) ->
 *            memory h_1..h_m (2H); a pair's memory is text a's states then
 *            text b's (one encoder; the decoder attends over both); an empty
 *            text is one padding word;
 *   s_0      tanh(W_s h<-_1 + b_s) (S = 2H): the backward state at text a's
 *            first word (Bahdanau's initial state, as brightmart);
 *   step t   q = W_q s_{t-1}; ctx_t = additive attention over the memory
 *            (nn/additive_attention.h, keys U h_j + b, size A);
 *            s_t = GRU([E_y y_{t-1}; ctx_t], s_{t-1}) (nn/gru_cell.h);
 *            logits_t = W_o dropout(s_t) + b_o over the K labels and _END.
 * Label tokens: 0..K-1 the task's labels, K = _END (output) / _GO (input; the
 * input and output tables are separate). Targets: single-label rows
 * _GO L -> L _END; multi-label rows the set in order of the labels' frequency
 * in train (most frequent first; ties by id), at most max_labels of them,
 * then _END (an empty set is _GO -> _END). Loss: the mean cross-entropy over
 * the batch's target tokens. This model owns its loss (ModelOps.train_step:
 * the decoder's teacher-forced cross-entropy, not the harness's head).
 *
 * What it reports (ModelOps.predict), so that eval, predict and compare read
 * it as any classifier's:
 *   single-label  the first step's distribution over the K labels (its
 *                 softmax without _END, renormalised): arg-max = the decoded
 *                 label, the one a beam of any width finds (_END is forced
 *                 after one label);
 *   multi-label   each label's marginal under the beam: the finished
 *                 hypotheses' probabilities renormalised over the beam, summed
 *                 over the hypotheses that contain the label. The best
 *                 hypothesis's labels are the decoded set; threshold 0.5 keeps
 *                 a label most of the beam's mass agrees on.
 * Decoding emits a set: after label L only labels of lower train frequency
 * (or _END) may follow, so each set is one sequence, as trained.
 *
 * Shapes: n rows; Rs = n (2n for pairs) encoded texts of T words; Tm the
 * longest memory; Td decoder steps; Vo = K + 1 output tokens. */
#ifndef GLUE_SEQ2SEQ_ATTN_H
#define GLUE_SEQ2SEQ_ATTN_H

#include <stdint.h>

#include "models/model.h"
#include "models/baselines/word_features.h"
#include "models/baselines/word_model_io.h"

extern const ModelOps SEQ2SEQ_ATTN_OPS;

typedef struct SaConfig {
    int dim;              /* D word embedding */
    int hidden;           /* H per encoder direction; the decoder's S = 2H */
    int label_dim;        /* E label embedding */
    int attention;        /* A */
    int beam;             /* beam width */
    int max_labels;       /* labels decoded at most (multi-label) */
    int min_count, max_len, batch, eval_batch;
    float dropout;        /* on the decoder state before the output layer */
    float clip;           /* global gradient norm (0: none) */
    double weight_decay;
} SaConfig;

/* Parameter handles. */
typedef struct SaParams {
    int emb, w_ih[2], w_hh[2], b_ih[2], b_hh[2];   /* encoder */
    int init_w, init_b;                           /* (S, H), (S) */
    int att_q, att_k, att_b, att_v;               /* (A, S), (A, 2H), (A), (A) */
    int lab_emb;                                  /* (K + 1, E) */
    int d_ih, d_hh, d_bih, d_bhh;                 /* decoder GRU: (3S, E + 2H), (3S, S), (3S), (3S) */
    int out_w, out_b;                             /* (K + 1, S), (K + 1) */
} SaParams;

/* Split features: the words, and each row's target tokens (training). */
typedef struct SaEncoded {
    WordSeqs *words;
    int *tgt;             /* (n, max_labels + 1) labels in order then _END */
    int *tgt_len;         /* (n) tokens of tgt, 0 for an unlabelled row */
} SaEncoded;

/* A batch's activations, grown as needed. */
typedef struct SaWork {
    long cap[36];         /* elements each buffer holds (sa_grow) */
    int n, Rs, T, Tm, Td, train;
    int *ids, *lens;      /* (Rs, T), (Rs) */
    int *mem_len;         /* (n) */
    int *y_in, *y_out;    /* (Td, n) decoder input tokens, targets (-1: none) */
    int *touched;         /* (Rs * T) */
    unsigned char *seen;  /* (V) zero */
    float *x, *dx;        /* (Rs, T, D) */
    float *h, *dh;        /* (Rs, T, 2H) */
    float *gates, *hn;    /* (2, Rs, T, 3H), (2, Rs, T, H) */
    float *rnn_scratch;
    float *mem, *dmem;    /* (n, Tm, 2H) */
    float *keys, *dkeys;  /* (n, Tm, A) */
    float *s, *ds;        /* (Td + 1, n, S) states s_0..s_Td; gradient */
    float *pre0;          /* (n, H) h<-_1 of each row */
    float *q, *dq;        /* (Td, n, A) */
    float *alpha;         /* (Td, n, Tm) */
    float *in, *din;      /* (Td, n, E + 2H) [E_y y; ctx] */
    float *dgates, *dhn;  /* (Td, n, 3S), (Td, n, S) decoder GRU saves */
    float *drop;          /* (Td, n, S) s_t after dropout */
    unsigned char *mask;  /* (Td, n, S) */
    float *ctx, *dctx;    /* (n, 2H) one step's context */
    float *dpre0;         /* (n, H) */
    float *ddrop;         /* (Td, n, S) */
    float *logits, *dlogits;  /* (Td, n, Vo) */
    float *scratch;       /* cell and attention scratch */
} SaWork;

typedef struct Seq2SeqAttn {
    WordModelBase base;   /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    SaConfig cfg;
    int K, Vo, S, multi;
    int order[TASK_MAX_LABELS];   /* labels by train frequency, most frequent first */
    int rank[TASK_MAX_LABELS];    /* order's inverse */
    SaParams p;
    SaWork w;
} Seq2SeqAttn;

/* seq2seq_attn_step.c */
/* Teacher-forced forward of rows[0..n) with targets tgt (n, ld) of lengths
 * tgt_len (0: the row contributes no loss; decoded for Td = the longest):
 * w.logits (Td, n, Vo). train: dropout on. Returns the mean cross-entropy
 * over the target tokens (0 with none), and with grad its gradient is ADDED
 * to the parameters' (zero them first). */
float sa_forward_backward(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n, const int *tgt, int ld,
                          const int *tgt_len, int train, int grad);
/* The encoder and s_0 for rows[0..n) into the workspace (evaluation), the
 * first part of the forward above. */
void sa_encode_batch(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n);
/* s_0 (n, S) = tanh(W_s h<-_1 + b_s) of the last sa_encode_batch into dst. */
void sa_initial_state(Seq2SeqAttn *m, float *dst);
/* One decoder step for R hypotheses: hypothesis r reads memory mem[r] (a row
 * of the last sa_encode_batch), from state s_prev (R, S) and input token
 * y (R); writes s_next (R, S) and logits (R, Vo). No dropout. */
void sa_decode_step(Seq2SeqAttn *m, int R, const int *mem, const float *s_prev, const int *y, float *s_next,
                    float *logits, float *work);
/* Floats of `work` sa_decode_step needs for R hypotheses. */
long sa_decode_work_size(const Seq2SeqAttn *m, int R);
void sa_work_free(SaWork *w);
float sa_train_step_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st);

/* seq2seq_attn_beam.c */
/* The best label set of each of rows[0..n) by beam search of width beam, and
 * out (n, K) what predict reports (above). best (n, K) 0/1 may be NULL. */
void sa_decode(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n, int beam, float *out, unsigned char *best);
void sa_predict_ops(Model *m, const Encoded *e, const int *rows, int n, float *out);

#endif
