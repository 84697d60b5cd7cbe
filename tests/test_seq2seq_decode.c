/* test_seq2seq_decode.c — decoding of the translation model: a tiny model
 * trained for a few hundred steps to copy letter sequences (the training
 * step, AdamW and label smoothing end to end) then
 *   - greedy decoding copies held-out sequences;
 *   - incremental decoding with cached keys/values gives the same tokens as
 *     recomputing the whole prefix through the training path at every step,
 *     for each position kind (sinusoid, learned, LPR);
 *   - beam search with beam 1 equals greedy; beam 4 is deterministic and its
 *     hypotheses score at least as well as greedy's under the model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "models/seq2seq/seq2seq.h"
#include "optim/optim.h"
#include "tests/test.h"

enum { DV = 13, DMAX = 8, DB = 16, DLEN = 16 };   /* letters a..h; sequences of 2..DMAX */

static Vocab *dec_vocab(void) {
    static const char *const toks[DV] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d",
                                         "e",     "f",     "g",     "h"};
    return vocab_from_tokens(toks, DV);
}

/* A random sequence of letters (ids 5..12). */
static int rand_seq(Rng *r, int *x) {
    int n = 2 + (int)rng_below(r, DMAX - 1);
    for (int i = 0; i < n; i++) x[i] = 5 + (int)rng_below(r, DV - 5);
    return n;
}

typedef struct {
    int src[DB * DLEN], src_len[DB], tgt_in[DB * DLEN], tgt_out[DB * DLEN], tgt_len[DB];
    S2sBatch b;
} CopyBatch;

static void copy_batch(CopyBatch *t, Rng *r) {
    int S = 0, T = 0, x[DLEN], n[DB], seq[DB][DLEN];
    for (int b = 0; b < DB; b++) {
        n[b] = rand_seq(r, x);
        memcpy(seq[b], x, sizeof x);
        S = n[b] + 1 > S ? n[b] + 1 : S;
        T = S;
    }
    for (int b = 0; b < DB; b++) {
        t->src_len[b] = t->tgt_len[b] = n[b] + 1;
        for (int s = 0; s < S; s++) t->src[b * S + s] = s < n[b] ? seq[b][s] : s == n[b] ? 3 : 0;
        for (int s = 0; s < T; s++) {
            t->tgt_in[b * T + s] = s == 0 ? 2 : s <= n[b] ? seq[b][s - 1] : 0;
            t->tgt_out[b * T + s] = s < n[b] ? seq[b][s] : s == n[b] ? 3 : -1;
        }
    }
    t->b = (S2sBatch){.B = DB, .S = S, .T = T, .src = t->src, .src_len = t->src_len, .tgt_in = t->tgt_in,
                      .tgt_out = t->tgt_out, .tgt_len = t->tgt_len};
}

/* A small model trained to copy; returns the final mean loss. */
static Seq2Seq *train_copier(S2sPos pos, int steps, float *final_loss) {
    S2sConfig c = s2s_config_default();
    c.vocab_size = DV;
    c.d_model = 32;
    c.heads = 4;
    c.ffn = 64;
    c.encoder_layers = 2;
    c.decoder_layers = 2;
    c.max_len = DLEN;
    c.dropout = 0.0f;
    c.positions = pos;
    c.lpr_base = 2;
    c.label_smoothing = 0.0f;   /* a sharper fit in few steps */
    Seq2Seq *m = s2s_create(&c, dec_vocab(), 3);
    s2s_reserve(m, DB * DLEN, DLEN);
    Optimizer opt = optim_adamw(0.0);
    opt.beta2 = 0.98;
    Rng r;
    rng_seed(&r, 17);
    float loss = 0;
    for (int s = 0; s < steps; s++) {
        CopyBatch t;
        copy_batch(&t, &r);
        params_zero_grad(m->params);
        S2sLoss l = s2s_forward_backward(m, &t.b, &m->rng, 1);
        loss = (float)(l.nll / l.tokens);
        /* Warm-up, then linear decay over the second half: a constant rate left the
         * copier oscillating (8 of 12 copied with one CPU's BLAS kernels, 12 with another's). */
        float lr = 5e-3f * (s < 30 ? (s + 1) / 30.0f : 1.0f) * (s < steps / 2 ? 1.0f : 2.0f * (steps - s) / steps);
        optim_step(&opt, m->params, lr);
    }
    *final_loss = loss;
    return m;
}

/* Greedy decoding by the training path: the whole prefix again at each step. */
static int greedy_full(Seq2Seq *m, const int *src, int n, int *out) {
    int V = m->cfg.vocab_size, C = m->cfg.d_model, maxout = n + 4 < DLEN - 1 ? n + 4 : DLEN - 1;
    int s[DLEN], tin[DLEN], tout[DLEN], sl = n + 1, len = 0;
    for (int i = 0; i < n; i++) s[i] = src[i];
    s[n] = 3;
    tin[0] = 2;
    float logits[DV];
    for (int t = 0; t < maxout; t++) {
        int tl = t + 1;
        for (int i = 0; i < tl; i++) tout[i] = -1;
        S2sBatch b = {.B = 1, .S = sl, .T = tl, .src = s, .src_len = &sl, .tgt_in = tin, .tgt_out = tout,
                      .tgt_len = &tl};
        const float *h = s2s_forward_hidden(m, &b);
        matmul(logits, h + (long)t * C, m->w.embed, 1, V, C, MAT_N, MAT_T, 1.0f, 0.0f);
        int best = 0;
        for (int v = 1; v < V; v++) best = logits[v] > logits[best] ? v : best;
        if (best == 3 || t + 1 >= maxout) break;
        out[len++] = best;
        tin[t + 1] = best;
    }
    return len;
}

/* The model's log-probability of out as the full translation of src. */
static double seq_logprob(Seq2Seq *m, const int *src, int n, const int *out, int len) {
    int V = m->cfg.vocab_size, C = m->cfg.d_model, s[DLEN], tin[DLEN], tout[DLEN], sl = n + 1, tl = len + 1;
    for (int i = 0; i < n; i++) s[i] = src[i];
    s[n] = 3;
    tin[0] = 2;
    for (int i = 0; i < len; i++) tin[i + 1] = out[i];
    for (int i = 0; i < tl; i++) tout[i] = -1;
    S2sBatch b = {.B = 1, .S = sl, .T = tl, .src = s, .src_len = &sl, .tgt_in = tin, .tgt_out = tout, .tgt_len = &tl};
    const float *h = s2s_forward_hidden(m, &b);
    double lp = 0;
    float logits[DV];
    for (int t = 0; t < tl; t++) {
        matmul(logits, h + (long)t * C, m->w.embed, 1, V, C, MAT_N, MAT_T, 1.0f, 0.0f);
        float mx = logits[0];
        for (int v = 1; v < V; v++) mx = logits[v] > mx ? logits[v] : mx;
        double sum = 0;
        for (int v = 0; v < V; v++) sum += exp(logits[v] - mx);
        int y = t < len ? out[t] : 3;
        lp += logits[y] - mx - log(sum);
    }
    return lp;
}

enum { NTEST = 12 };

static void check_decoding(S2sPos pos, const char *what) {
    float loss;
    Seq2Seq *m = train_copier(pos, 600, &loss);
    CHECK_MSG(loss < 0.3f, "%s: copying not learned, loss %g", what, loss);
    Rng r;
    rng_seed(&r, 1234);
    int src[NTEST][DLEN], len[NTEST];
    const int *srcp[NTEST];
    for (int i = 0; i < NTEST; i++) { len[i] = rand_seq(&r, src[i]); srcp[i] = src[i]; }
    int *g[NTEST], gl[NTEST], *b1[NTEST], b1l[NTEST], *b4[NTEST], b4l[NTEST], *b4b[NTEST], b4bl[NTEST];
    S2sDecodeOptions greedy = {.beam = 1, .extra_len = 4};
    S2sDecodeOptions beam1 = {.beam = 1, .extra_len = 4, .force_beam = 1, .alpha = 0.6f};
    S2sDecodeOptions beam4 = {.beam = 4, .extra_len = 4, .alpha = 0.0f};
    s2s_translate_batch(m, srcp, len, NTEST, &greedy, g, gl);
    s2s_translate_batch(m, srcp, len, NTEST, &beam1, b1, b1l);
    s2s_translate_batch(m, srcp, len, NTEST, &beam4, b4, b4l);
    s2s_translate_batch(m, srcp, len, NTEST, &beam4, b4b, b4bl);
    int copied = 0;
    for (int i = 0; i < NTEST; i++) {
        int full[DLEN], fl = greedy_full(m, src[i], len[i], full);
        CHECK_MSG(fl == gl[i] && memcmp(full, g[i], sizeof(int) * (size_t)fl) == 0,
                  "%s: sentence %d incremental greedy differs from full recomputation", what, i);
        CHECK_MSG(b1l[i] == gl[i] && memcmp(b1[i], g[i], sizeof(int) * (size_t)gl[i]) == 0,
                  "%s: sentence %d beam 1 differs from greedy", what, i);
        CHECK_MSG(b4l[i] == b4bl[i] && memcmp(b4[i], b4b[i], sizeof(int) * (size_t)b4l[i]) == 0,
                  "%s: sentence %d beam search not deterministic", what, i);
        double lg = seq_logprob(m, src[i], len[i], g[i], gl[i]), lb = seq_logprob(m, src[i], len[i], b4[i], b4l[i]);
        CHECK_MSG(lb >= lg - 1e-4, "%s: sentence %d beam 4 log-prob %g below greedy's %g", what, i, lb, lg);
        int ok = gl[i] == len[i];
        for (int k = 0; ok && k < len[i]; k++) ok = g[i][k] == src[i][k];
        copied += ok;
        free(g[i]); free(b1[i]); free(b4[i]); free(b4b[i]);
    }
    CHECK_MSG(copied >= NTEST - 3, "%s: only %d of %d copied", what, copied, NTEST);
    s2s_free(m);
}

TEST(seq2seq_decode_sinusoid) { check_decoding(S2S_POS_SINUSOID, "sinusoid"); }
TEST(seq2seq_decode_learned) { check_decoding(S2S_POS_LEARNED, "learned"); }
TEST(seq2seq_decode_lpr) { check_decoding(S2S_POS_LPR, "lpr"); }
