/* test_seq2seq_model.c — the translation model (models/seq2seq/seq2seq*.c) against a
 * PyTorch reference written from plain torch ops (tests/ref/seq2seq_ref.py):
 * one decoder layer alone (output, input, memory and weight gradients), and
 * the whole model's label-smoothed loss and EVERY parameter gradient on a
 * padded batch, for sinusoidal, learned and LPR positions; plus save/load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/seq2seq/seq2seq.h"
#include "tests/gradcheck.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/torchref.h"

enum { TV = 23, TB = 3, TS = 7, TT = 6, TMAXLEN = 16 };

/* [PAD] [UNK] [CLS] [SEP] [MASK] a .. r */
static Vocab *tiny_vocab(void) {
    static const char *const specials[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    char letters[TV][2];
    const char *toks[TV];
    for (int i = 0; i < TV; i++) {
        if (i < 5) { toks[i] = specials[i]; continue; }
        letters[i][0] = (char)('a' + i - 5);
        letters[i][1] = '\0';
        toks[i] = letters[i];
    }
    return vocab_from_tokens(toks, TV);
}

static S2sConfig tiny_config(S2sPos pos, int keys, int values) {
    S2sConfig c = s2s_config_default();
    c.vocab_size = TV;
    c.d_model = 16;
    c.heads = 2;
    c.ffn = 24;
    c.encoder_layers = 2;
    c.decoder_layers = 2;
    c.max_len = TMAXLEN;
    c.dropout = 0.1f;   /* not used: the tests pass no Rng */
    c.positions = pos;
    c.lpr_base = 2;
    c.lpr_keys = keys;
    c.lpr_values = values;
    c.label_smoothing = 0.1f;
    return c;
}

typedef struct {
    int src[TB * TS], src_len[TB], tgt_in[TB * TT], tgt_out[TB * TT], tgt_len[TB];
    S2sBatch b;
} TinyBatch;

/* Random pieces with [SEP] ending each source, [CLS]/[SEP] around the targets
 * and padding after: lengths {7, 4, 5} and {6, 3, 5}. */
static void tiny_batch(TinyBatch *t) {
    const int sl[TB] = {7, 4, 5}, tl[TB] = {6, 3, 5};
    Rng r;
    rng_seed(&r, 99);
    for (int b = 0; b < TB; b++) {
        t->src_len[b] = sl[b];
        t->tgt_len[b] = tl[b];
        for (int s = 0; s < TS; s++)
            t->src[b * TS + s] = s < sl[b] - 1 ? 5 + (int)rng_below(&r, TV - 5) : s == sl[b] - 1 ? 3 : 0;
        int y[TT];
        for (int i = 0; i < TT; i++) y[i] = 5 + (int)rng_below(&r, TV - 5);
        for (int i = 0; i < TT; i++) {
            t->tgt_in[b * TT + i] = i == 0 ? 2 : i < tl[b] ? y[i - 1] : 0;
            t->tgt_out[b * TT + i] = i < tl[b] - 1 ? y[i] : i == tl[b] - 1 ? 3 : -1;
        }
    }
    t->b = (S2sBatch){.B = TB, .S = TS, .T = TT, .src = t->src, .src_len = t->src_len, .tgt_in = t->tgt_in,
                      .tgt_out = t->tgt_out, .tgt_len = t->tgt_len};
}

static void ints_to_floats(float *f, const int *x, int n) {
    for (int i = 0; i < n; i++) f[i] = (float)x[i];
}

static char *ref_args(const char *mode, const S2sConfig *c) {
    static char buf[256];
    snprintf(buf, sizeof buf, "%s %d %d %d %d %d %d %d %d %d %d %d %g %g %d %d %d", mode, c->vocab_size, c->d_model,
             c->heads, c->ffn, c->encoder_layers, c->decoder_layers, c->max_len, (int)c->positions, c->lpr_base,
             c->lpr_keys, c->lpr_values, (double)c->label_smoothing, (double)c->layer_norm_eps, TB, TS, TT);
    return buf;
}

/* Relative error of a tensor: max |a - b| / max(max |b|, 1e-3). */
static double rel_err(const float *a, const float *b, long n) {
    double scale = 1e-3;
    for (long i = 0; i < n; i++) scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    return torchref_max_diff(a, b, n) / scale;
}

/* Every parameter (optionally only those starting with prefix) as inputs, and
 * "g.<name>" outputs for their gradients. Returns the counts. */
static int param_refs(const Seq2Seq *m, const char *prefix, RefTensor *in, RefTensor *out, char names[][PARAM_NAME_MAX + 2]) {
    int n = 0;
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        if (prefix && strncmp(t->name, prefix, strlen(prefix)) != 0) continue;
        snprintf(names[n], PARAM_NAME_MAX + 2, "g.%s", t->name);
        in[n] = (RefTensor){t->name, params_data(m->params, h), t->numel};
        out[n] = (RefTensor){names[n], malloc(sizeof(float) * (size_t)t->numel), t->numel};
        n++;
    }
    return n;
}

static void check_grads(const Seq2Seq *m, RefTensor *out, int n, const char *what, double tol) {
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < n; i++) {
        int h = params_find(m->params, out[i].name + 2);
        double e = rel_err(params_grad(m->params, h), out[i].data, out[i].n);
        if (e > worst) { worst = e; worst_name = out[i].name; }
        CHECK_MSG(e < tol, "%s %s: relative error %g", what, out[i].name, e);
    }
    if (getenv("GLUE_TEST_VERBOSE")) fprintf(stderr, "%s: worst gradient %s %g\n", what, worst_name, worst);
}

static void model_vs_torch(const char *what, S2sPos pos, int keys, int values) {
    S2sConfig c = tiny_config(pos, keys, values);
    Seq2Seq *m = s2s_create(&c, tiny_vocab(), 5);
    CHECK(m != NULL);
    if (!m) return;
    s2s_reserve(m, TB * TMAXLEN, TMAXLEN);
    params_zero_grad(m->params);
    TinyBatch t;
    tiny_batch(&t);
    S2sLoss loss = s2s_forward_backward(m, &t.b, NULL, 1);
    int np = params_num_tensors(m->params);
    RefTensor *in = calloc((size_t)np + 5, sizeof *in), *out = calloc((size_t)np + 2, sizeof *out);
    char (*names)[PARAM_NAME_MAX + 2] = calloc((size_t)np, sizeof *names);
    int n = param_refs(m, NULL, in, out + 2, names);
    float fsrc[TB * TS], fsl[TB], fti[TB * TT], fto[TB * TT], ftl[TB], rloss, rnll;
    ints_to_floats(fsrc, t.src, TB * TS); ints_to_floats(fsl, t.src_len, TB);
    ints_to_floats(fti, t.tgt_in, TB * TT); ints_to_floats(fto, t.tgt_out, TB * TT); ints_to_floats(ftl, t.tgt_len, TB);
    in[n] = (RefTensor){"src", fsrc, TB * TS};
    in[n + 1] = (RefTensor){"src_len", fsl, TB};
    in[n + 2] = (RefTensor){"tgt_in", fti, TB * TT};
    in[n + 3] = (RefTensor){"tgt_out", fto, TB * TT};
    in[n + 4] = (RefTensor){"tgt_len", ftl, TB};
    out[0] = (RefTensor){"loss", &rloss, 1};
    out[1] = (RefTensor){"nll", &rnll, 1};
    if (torchref_run("seq2seq_ref.py", ref_args("model", &c), in, n + 5, out, n + 2) == 1) {
        CHECK_EQ_INT(loss.tokens, 6 + 3 + 5);
        CHECK_NEAR(loss.smoothed / loss.tokens, rloss, 2e-6 * fabs(rloss));
        CHECK_NEAR(loss.nll, rnll, 2e-6 * fabs(rnll));
        check_grads(m, out + 2, n, what, 1e-4);
    }
    for (int i = 0; i < n; i++) free(out[i + 2].data);
    free(in); free(out); free(names);
    s2s_free(m);
}

TEST(seq2seq_model_matches_torch) {
    model_vs_torch("sinusoid", S2S_POS_SINUSOID, 1, 1);
    model_vs_torch("learned", S2S_POS_LEARNED, 1, 1);
    model_vs_torch("lpr", S2S_POS_LPR, 1, 1);
    model_vs_torch("lpr keys only", S2S_POS_LPR, 1, 0);
}

TEST(seq2seq_decoder_layer_matches_torch) {
    S2sConfig c = tiny_config(S2S_POS_LPR, 1, 1);
    Seq2Seq *m = s2s_create(&c, tiny_vocab(), 6);
    if (!CHECK(m != NULL)) return;
    s2s_reserve(m, TB * TMAXLEN, TMAXLEN);
    params_zero_grad(m->params);
    TinyBatch t;
    tiny_batch(&t);
    long ny = (long)TB * TT * c.d_model, nm = (long)TB * TS * c.d_model;
    float *y = malloc(4 * ny), *mem = malloc(4 * nm), *r = malloc(4 * ny), *dy = malloc(4 * ny);
    float *ro = malloc(4 * ny), *rdy = malloc(4 * ny), *rdm = malloc(4 * nm);
    gradcheck_fill(y, ny, -2, 2, 11);
    gradcheck_fill(mem, nm, -2, 2, 12);
    gradcheck_fill(r, ny, -1, 1, 13);
    const float *o = s2s_dec_layer_forward(m, 0, y, mem, &t.b, NULL);
    float *dmem = s2s_work_dmem(m->work);
    memset(dmem, 0, 4 * nm);
    s2s_dec_layer_backward(m, 0, dy, r, y, mem, &t.b, 0);
    int np = params_num_tensors(m->params);
    RefTensor *in = calloc((size_t)np + 5, sizeof *in), *out = calloc((size_t)np + 3, sizeof *out);
    char (*names)[PARAM_NAME_MAX + 2] = calloc((size_t)np, sizeof *names);
    int n = param_refs(m, "dec.0.", in, out + 3, names);
    float fsl[TB], ftl[TB];
    ints_to_floats(fsl, t.src_len, TB); ints_to_floats(ftl, t.tgt_len, TB);
    in[n] = (RefTensor){"y", y, ny};
    in[n + 1] = (RefTensor){"mem", mem, nm};
    in[n + 2] = (RefTensor){"r", r, ny};
    in[n + 3] = (RefTensor){"src_len", fsl, TB};
    in[n + 4] = (RefTensor){"tgt_len", ftl, TB};
    out[0] = (RefTensor){"out", ro, ny};
    out[1] = (RefTensor){"dy", rdy, ny};
    out[2] = (RefTensor){"dmem", rdm, nm};
    if (torchref_run("seq2seq_ref.py", ref_args("declayer", &c), in, n + 5, out, n + 3) == 1) {
        CHECK_MSG(rel_err(o, ro, ny) < 1e-5, "decoder layer output: %g", rel_err(o, ro, ny));
        CHECK_MSG(rel_err(dy, rdy, ny) < 1e-4, "decoder layer dy: %g", rel_err(dy, rdy, ny));
        CHECK_MSG(rel_err(dmem, rdm, nm) < 1e-4, "decoder layer dmem: %g", rel_err(dmem, rdm, nm));
        check_grads(m, out + 3, n, "decoder layer", 1e-4);
    }
    for (int i = 0; i < n; i++) free(out[i + 3].data);
    free(in); free(out); free(names);
    free(y); free(mem); free(r); free(dy); free(ro); free(rdy); free(rdm);
    s2s_free(m);
}

TEST(seq2seq_save_load_roundtrip) {
    S2sConfig c = tiny_config(S2S_POS_LEARNED, 1, 1);
    Seq2Seq *m = s2s_create(&c, tiny_vocab(), 7);
    if (!CHECK(m != NULL)) return;
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("s2s", path, sizeof path);
    CHECK(fd >= 0);
    CHECK_EQ_INT(s2s_save(m, path, CKPT_F32), 0);
    Seq2Seq *l = s2s_load(path);
    if (CHECK(l != NULL)) {
        CHECK_EQ_INT(l->cfg.positions, S2S_POS_LEARNED);
        CHECK_EQ_INT(vocab_size(l->vocab), TV);
        CHECK(strcmp(vocab_token(l->vocab, 7), "c") == 0);
        CHECK(l->params->total == m->params->total);
        CHECK(memcmp(l->params->data, m->params->data, sizeof(float) * m->params->total) == 0);
        s2s_free(l);
    }
    /* A checkpoint of another config is refused by s2s_load_weights. */
    S2sConfig c2 = tiny_config(S2S_POS_SINUSOID, 1, 1);
    Seq2Seq *o = s2s_create(&c2, tiny_vocab(), 7);
    CHECK(s2s_load_weights(o, path) != 0);
    s2s_free(o);
    unlink(path);
    remove(path);
    s2s_free(m);
}
