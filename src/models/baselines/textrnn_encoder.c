/* textrnn_encoder.c — TextRNN's encoder (see textrnn.h): the bidirectional
 * LSTM or GRU over the batch's embeddings (nn/lstm.h, nn/gru.h) and the
 * pooling of its outputs into one vector per text: max (nn/maxpool.h), mean,
 * the last step of each direction, or Zhou et al.'s attention (nn/seqpool.h)
 *   M = tanh(H), alpha = softmax(w^T M), u = tanh(H alpha). */
#include "models/baselines/textrnn.h"

#include <math.h>
#include <string.h>

#include "nn/gru.h"
#include "nn/lstm.h"
#include "nn/maxpool.h"
#include "nn/seqpool.h"

static RnnDims tr_dims(const TextRnn *m, int R, int T) {
    return (RnnDims){.B = R, .T = T, .C = m->cfg.dim, .H = m->cfg.hidden};
}

long tr_rnn_scratch_size(const TextRnn *m, int R, int T) {
    if (m->enc == TR_ENC_RCNN) return rcnn_scratch_size(m, R, T);
    if (m->enc == TR_ENC_HAN) return 1;   /* its buffers are its own */
    return m->cfg.cell == TR_CELL_GRU ? gru_scratch_size(tr_dims(m, R, T)) : lstm_scratch_size(tr_dims(m, R, T));
}

/* The two directions' weights (w) or gradients (grad: 1) as the op takes them. */
static void tr_weights(const TextRnn *m, int grad, const float *out[2][4]) {
    Params *p = m->base.params;
    for (int dir = 0; dir < 2; dir++) {
        const int h[4] = {m->p.w_ih[dir], m->p.w_hh[dir], m->p.b_ih[dir], m->p.b_hh[dir]};
        for (int k = 0; k < 4; k++) out[dir][k] = grad ? params_grad(p, h[k]) : params_data(p, h[k]);
    }
}

static void tr_rnn_forward(TextRnn *m, int R, int T) {
    TrBuffers *b = &m->buf;
    const float *w[2][4];
    tr_weights(m, 0, w);
    if (m->cfg.cell == TR_CELL_GRU) {
        GruWeights gw[2] = {{w[0][0], w[0][1], w[0][2], w[0][3]}, {w[1][0], w[1][1], w[1][2], w[1][3]}};
        bigru_forward(b->h, b->gates, b->state, b->x, b->lengths, gw, tr_dims(m, R, T), b->rnn_scratch);
    } else {
        LstmWeights lw[2] = {{w[0][0], w[0][1], w[0][2], w[0][3]}, {w[1][0], w[1][1], w[1][2], w[1][3]}};
        bilstm_forward(b->h, b->gates, b->state, b->x, b->lengths, lw, tr_dims(m, R, T), b->rnn_scratch);
    }
}

static void tr_rnn_backward(TextRnn *m, int R, int T) {
    TrBuffers *b = &m->buf;
    const float *w[2][4], *g[2][4];
    tr_weights(m, 0, w);
    tr_weights(m, 1, g);
    float *G[2][4];
    for (int dir = 0; dir < 2; dir++)
        for (int k = 0; k < 4; k++) G[dir][k] = (float *)g[dir][k];
    if (m->cfg.cell == TR_CELL_GRU) {
        GruWeights gw[2] = {{w[0][0], w[0][1], w[0][2], w[0][3]}, {w[1][0], w[1][1], w[1][2], w[1][3]}};
        GruGrads gg[2] = {{G[0][0], G[0][1], G[0][2], G[0][3]}, {G[1][0], G[1][1], G[1][2], G[1][3]}};
        bigru_backward(b->dx, gg, b->dh, b->h, b->gates, b->state, b->x, b->lengths, gw, tr_dims(m, R, T),
                       b->rnn_scratch);
    } else {
        LstmWeights lw[2] = {{w[0][0], w[0][1], w[0][2], w[0][3]}, {w[1][0], w[1][1], w[1][2], w[1][3]}};
        LstmGrads lg[2] = {{G[0][0], G[0][1], G[0][2], G[0][3]}, {G[1][0], G[1][1], G[1][2], G[1][3]}};
        bilstm_backward(b->dx, lg, b->dh, b->h, b->gates, b->state, b->x, b->lengths, lw, tr_dims(m, R, T),
                        b->rnn_scratch);
    }
}

void tr_encode_forward(TextRnn *m, int R, int T, int train) {
    if (m->enc == TR_ENC_RCNN) {
        rcnn_encode_forward(m, R, T);
        return;
    }
    if (m->enc == TR_ENC_HAN) {
        han_encode_forward(m, R, T, train);
        return;
    }
    TrBuffers *b = &m->buf;
    int H = m->cfg.hidden;
    long n = (long)R * T * 2 * H;
    tr_rnn_forward(m, R, T);
    switch (m->cfg.pool) {
    case TR_POOL_MAX:   /* over the valid steps only: padding never wins (an empty text pools to 0) */
        maxpool_time_forward(b->pooled, b->argmax, b->h, b->lengths, R, T, 2 * H);
        break;
    case TR_POOL_MEAN: meanpool_time_forward(b->pooled, b->h, b->lengths, R, T, 2 * H); break;
    case TR_POOL_LAST: lastpool_bi_forward(b->pooled, b->h, b->lengths, R, T, H); break;
    case TR_POOL_ATTENTION:
        for (long i = 0; i < n; i++) b->keys[i] = tanhf(b->h[i]);
        attnpool_forward(b->pooled, b->alpha, b->keys, b->h, params_data(m->base.params, m->p.attn), b->lengths, R,
                         T, 2 * H, 2 * H);
        for (long i = 0; i < (long)R * 2 * H; i++) b->pooled[i] = tanhf(b->pooled[i]);
        break;
    }
}

void tr_encode_backward(TextRnn *m, int R, int T) {
    if (m->enc == TR_ENC_RCNN) {
        rcnn_encode_backward(m, R, T);
        return;
    }
    if (m->enc == TR_ENC_HAN) {
        han_encode_backward(m, R, T);
        return;
    }
    TrBuffers *b = &m->buf;
    int H = m->cfg.hidden;
    long n = (long)R * T * 2 * H;
    memset(b->dh, 0, sizeof(float) * (size_t)n);
    switch (m->cfg.pool) {
    case TR_POOL_MAX: maxpool_time_backward(b->dh, b->dpooled, b->argmax, R, T, 2 * H); break;
    case TR_POOL_MEAN: meanpool_time_backward(b->dh, b->dpooled, b->lengths, R, T, 2 * H); break;
    case TR_POOL_LAST: lastpool_bi_backward(b->dh, b->dpooled, b->lengths, R, T, H); break;
    case TR_POOL_ATTENTION: {
        Params *p = m->base.params;
        for (long i = 0; i < (long)R * 2 * H; i++) b->dpooled[i] *= 1.0f - b->pooled[i] * b->pooled[i];
        memset(b->dkeys, 0, sizeof(float) * (size_t)n);
        attnpool_backward(b->dkeys, b->dh, params_grad(p, m->p.attn), b->dpooled, b->alpha, b->keys, b->h,
                          params_data(p, m->p.attn), b->lengths, R, T, 2 * H, 2 * H);
        for (long i = 0; i < n; i++) b->dh[i] += b->dkeys[i] * (1.0f - b->keys[i] * b->keys[i]);
        break;
    }
    }
    memset(b->dx, 0, sizeof(float) * (size_t)R * T * (size_t)m->cfg.dim);
    tr_rnn_backward(m, R, T);
}
