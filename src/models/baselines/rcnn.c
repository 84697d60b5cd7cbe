/* rcnn.c — RCNN (Lai et al. 2015, "Recurrent Convolutional Neural Networks for
 * Text Classification") as the encoder of the TextRNN network (textrnn.h):
 * per word the left and right recurrent contexts (nn/ctxrnn.h, the paper's
 * eq. 1-2, not a BiLSTM stand-in)
 *   c_l(w_i) = tanh(W_l c_l(w_{i-1}) + W_sl e(w_{i-1})), c_r(w_i) mirrored,
 * x_i = [c_l(w_i); e(w_i); c_r(w_i)], the latent semantic vector
 * y_i = tanh(W x_i + b) (H), and u = max over the words of y_i (P = H). The
 * pair features and the output layer are the network's. */
#include "models/baselines/textrnn.h"

#include <math.h>
#include <string.h>

#include "core/common.h"
#include "nn/activation.h"
#include "nn/ctxrnn.h"
#include "nn/linear.h"
#include "nn/maxpool.h"

static int rcnn_width(const TextRnn *m) { return 2 * m->cfg.context + m->cfg.dim; }

static RnnDims rcnn_dims(const TextRnn *m, int R, int T, int reverse) {
    return (RnnDims){.B = R, .T = T, .C = m->cfg.dim, .H = m->cfg.context, .reverse = reverse, .ldh = rcnn_width(m)};
}

/* After the embedding, in this order (the checkpoint's names); PyTorch's
 * U(-1/sqrt(fan), 1/sqrt(fan)) initialisation, the initial contexts too. */
void rcnn_declare(TextRnn *m) {
    Params *p = m->base.params;
    int D = m->cfg.dim, Hc = m->cfg.context, H = m->cfg.hidden, W = rcnn_width(m);
    static const char *const side[2] = {"left", "right"};
    float a = 1.0f / sqrtf((float)Hc);
    for (int dir = 0; dir < 2; dir++) {
        char name[64];
        snprintf(name, sizeof name, "rcnn.%s.w_s", side[dir]);
        m->p.ctx_ws[dir] = params_declare(p, name, PARAM_SHAPE(Hc, D), PARAM_INIT_UNIFORM(a), 0);
        snprintf(name, sizeof name, "rcnn.%s.w", side[dir]);
        m->p.ctx_w[dir] = params_declare(p, name, PARAM_SHAPE(Hc, Hc), PARAM_INIT_UNIFORM(a), 0);
        snprintf(name, sizeof name, "rcnn.%s.c0", side[dir]);
        m->p.ctx_c0[dir] = params_declare(p, name, PARAM_SHAPE(Hc), PARAM_INIT_UNIFORM(a), PARAM_NO_DECAY);
    }
    float b = 1.0f / sqrtf((float)W);
    m->p.y_w = params_declare(p, "rcnn.y.w", PARAM_SHAPE(H, W), PARAM_INIT_UNIFORM(b), 0);
    m->p.y_b = params_declare(p, "rcnn.y.b", PARAM_SHAPE(H), PARAM_INIT_UNIFORM(b), PARAM_NO_DECAY);
}

void rcnn_buffers_alloc(TextRnn *m, long RT) {
    m->buf.cat = xaligned_alloc(sizeof(float) * (size_t)(RT * rcnn_width(m) + 1));
    m->buf.ctx_hs = xaligned_alloc(sizeof(float) * (size_t)(2 * RT * m->cfg.context + 1));
}

void rcnn_train_alloc(TextRnn *m, long RT) {
    m->buf.dcat = xaligned_alloc(sizeof(float) * (size_t)(RT * rcnn_width(m) + 1));
}

long rcnn_scratch_size(const TextRnn *m, int R, int T) { return ctxrnn_scratch_size(rcnn_dims(m, R, T, 0)); }

static CtxRnnWeights rcnn_weights(const TextRnn *m, int dir) {
    Params *p = m->base.params;
    return (CtxRnnWeights){params_data(p, m->p.ctx_ws[dir]), params_data(p, m->p.ctx_w[dir]),
                           params_data(p, m->p.ctx_c0[dir])};
}

void rcnn_encode_forward(TextRnn *m, int R, int T) {
    TrBuffers *b = &m->buf;
    Params *p = m->base.params;
    int D = m->cfg.dim, Hc = m->cfg.context, H = m->cfg.hidden, W = rcnn_width(m);
    long RT = (long)R * T;
    /* Padded rows stay 0: they go through the linear layer with the rest. */
    memset(b->cat, 0, sizeof(float) * (size_t)(RT * W));
    for (int dir = 0; dir < 2; dir++)
        ctxrnn_forward(b->cat + (dir ? Hc + D : 0), b->ctx_hs + dir * RT * Hc, b->x, b->lengths, rcnn_weights(m, dir),
                       rcnn_dims(m, R, T, dir), b->rnn_scratch);
    for (int r = 0; r < R; r++)
        for (int t = 0; t < b->lengths[r]; t++) {
            long bt = (long)r * T + t;
            memcpy(b->cat + bt * W + Hc, b->x + bt * D, sizeof(float) * (size_t)D);
        }
    linear_forward(b->h, b->cat, params_data(p, m->p.y_w), params_data(p, m->p.y_b), (int)RT, W, H);
    tanh_forward(b->h, b->h, RT * H);
    maxpool_time_forward(b->pooled, b->argmax, b->h, b->lengths, R, T, H);
}

void rcnn_encode_backward(TextRnn *m, int R, int T) {
    TrBuffers *b = &m->buf;
    Params *p = m->base.params;
    int D = m->cfg.dim, Hc = m->cfg.context, H = m->cfg.hidden, W = rcnn_width(m);
    long RT = (long)R * T;
    memset(b->dh, 0, sizeof(float) * (size_t)(RT * H));
    maxpool_time_backward(b->dh, b->dpooled, b->argmax, R, T, H);
    for (long i = 0; i < RT * H; i++) b->dh[i] *= 1.0f - b->h[i] * b->h[i];   /* through y's tanh */
    memset(b->dcat, 0, sizeof(float) * (size_t)(RT * W));
    linear_backward(b->dcat, params_grad(p, m->p.y_w), params_grad(p, m->p.y_b), b->dh, b->cat,
                    params_data(p, m->p.y_w), (int)RT, W, H);
    memset(b->dx, 0, sizeof(float) * (size_t)(RT * D));
    for (int r = 0; r < R; r++)
        for (int t = 0; t < b->lengths[r]; t++) {
            long bt = (long)r * T + t;
            const float *src = b->dcat + bt * W + Hc;
            float *dst = b->dx + bt * D;
            for (int j = 0; j < D; j++) dst[j] += src[j];
        }
    for (int dir = 0; dir < 2; dir++) {
        CtxRnnGrads g = {params_grad(p, m->p.ctx_ws[dir]), params_grad(p, m->p.ctx_w[dir]), params_grad(p, m->p.ctx_c0[dir])};
        ctxrnn_backward(b->dx, g, b->dcat + (dir ? Hc + D : 0), b->ctx_hs + dir * RT * Hc, b->x, b->lengths,
                        rcnn_weights(m, dir), rcnn_dims(m, R, T, dir), b->rnn_scratch);
    }
}
