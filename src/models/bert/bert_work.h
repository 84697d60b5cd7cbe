/* bert_work.h — the BERT model's activations, gradients of activations and
 * scratch (private to the bert*.c files; users see only bert.h).
 *
 * Everything is sized once by bert_reserve for the largest batch (maxB, maxT)
 * and MLM call (max_masked); a call with a smaller (B, T) uses the front of
 * each buffer, laid out contiguously for its own (B, T). N = B * T rows. */
#ifndef GLUE_BERT_WORK_H
#define GLUE_BERT_WORK_H

#include "models/bert/bert.h"

struct BertWork {
    int maxB, maxT, max_masked, train;   /* train: gradient buffers exist */
    int maxF;              /* the classifier inputs the head buffers hold, in units of C (an attached
                            * head may need more than the model's own: bert_attach_head) */

    /* The last bert_forward. */
    int B, T;
    int dropout_on;        /* it had an Rng */
    BlockDims dims;           /* its shape, for the sublayers */
    int *ids, *segments;   /* (B, T) copies: the embedding backward needs them */
    int *pos_ids;          /* (B, T) t of each row */
    int *lengths;          /* (B) */

    /* Embeddings: e = word + position + type; h0 = dropout(LN(e)), then
     * projected E -> C when E != C (h0 = emb_ln W_p^T + b_p). */
    float *emb;            /* (N, E) e, the LayerNorm input */
    float *emb_mean, *emb_rstd;   /* (N) */
    float *emb_ln;         /* (N, E) dropout(LN(e)) when E != C, else NULL (h0 is it) */
    float *h0;             /* (N, C) */
    unsigned char *emb_mask;      /* (N, E) */
    float *demb1, *demb2;  /* (N, E) embedding backward buffers when E != C (train) */

    /* pre_ln: the final LayerNorm over the last layer's output. */
    float *final_out;      /* (N, C) the encoder output when pre_ln, else NULL */
    float *final_mean, *final_rstd;   /* (N) */

    BlockAttnActs *attn;      /* (L) */
    BlockFfnActs *ffn;        /* (L); ffn[L-1].out is the encoder output */
    /* The last layer at chosen rows only (bert_forward_rows, and
     * bert_forward_pooled at [CLS]): cross-attention from those rows to the
     * whole previous layer, then the FFN on those rows. Sequence b's rows are
     * slots [b*rows_T, (b+1)*rows_T) (padded with position 0). */
    int rows_only;         /* the last forward computed the last layer at rows only */
    int rows_max;          /* slots per sequence reserved (0: no rows path) */
    int rows_T;            /* slots per sequence of the last forward */
    int rows_n;            /* the rows asked for */
    int *rows_asked;       /* (rows_max_n) the flat positions asked for, in order */
    int *rows_slot;        /* (rows_max_n) their slots */
    int *rows_pos;         /* (B, rows_T) the position t of each slot (ALiBi) */
    int *rows_flat;        /* (B, rows_T) the same as flat rows b * T + t (gathering) */
    float *rows_in;        /* (B, rows_T, C) the last layer's input at the slots */
    BlockAttnActs rows_attn;  /* queries (B, rows_T), keys/values (B, T) */
    BlockFfnActs rows_ffn;    /* .out: the last hidden state at the slots */
    float *drows, *drows2;    /* (B, rows_T, C) train: heads add into drows; the backward's
                               * second buffer */
    int pooled_ok;         /* the pooler ran in the last forward */
    float *scratch;        /* (block_scratch_floats, and the embedding backward's) */

    /* Pooler: pooled = tanh(cls_x W_p^T + b_p). */
    float *cls_x;          /* (B, C) hidden rows of [CLS] */
    float *pooled;         /* (B, C) */

    /* Pair-features head (bert_pair_head.c): f (n, F C) before dropout, its
     * gradient, and the pairs of the last forward. */
    float *pair_f, *pair_df;
    int pair_n;

    /* Classification / regression head (and the pair-features head's dropout). */
    float *head_in;        /* (B, C) dropout(pooled) */
    unsigned char *head_mask;     /* (B, C) */
    int head_dropped;      /* the last head forward applied dropout (head_in is dropout(input)) */

    /* MLM head on n gathered rows (the transform maps C -> E). */
    int mlm_n;
    float *mlm_x;          /* (n, C) gathered hidden rows */
    float *mlm_pre;        /* (n, E) dense output (GELU input) */
    float *mlm_act;        /* (n, E) GELU output (LayerNorm input) */
    float *mlm_mean, *mlm_rstd;   /* (n) */
    float *mlm_out;        /* (n, E) transform output */
    float *mlm_logits;     /* (n, V) */
    float *mlm_dlogits;    /* (n, V) */
    float *mlm_d1, *mlm_d2;       /* (n, max(C, E)) gradient scratch */
    double *mlm_row_loss;  /* (n) */

    /* Replaced-token detection head on every row (bert_rtd.c). */
    int rtd_done;          /* bert_rtd_loss ran since the forward */
    float *rtd_pre;        /* (N, C) dense output (GELU input) */
    float *rtd_act;        /* (N, C) GELU output */
    float *rtd_logits;     /* (N) */
    float *rtd_dlogits;    /* (N) (train) */
    float *rtd_d1, *rtd_d2;       /* (N, C) gradient scratch (train) */

    /* Gradients of activations (train only). */
    float *dhidden;        /* (N, C) dL/d(encoder output): heads add, backward consumes */
    float *dpooled;        /* (B, C) dL/d(pooled): classification heads add */
    int pooled_grad;       /* a head added into dpooled since the forward */
    float *dbuf;           /* (N, C) the other gradient buffer of the layer chain */
    float *dhead;          /* (B, C) head scratch */
};

/* bert_forward.c: dst row i = src row rows[i] (n rows of C), and its
 * backward, src row i added into dst row rows[i] (serially: rows may repeat). */
void bert_gather_rows(float *dst, const float *src, const int *rows, int n, int C);
void bert_scatter_add_rows(float *dst, const float *src, const int *rows, int n, int C);

#endif
