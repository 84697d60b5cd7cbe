/* test_bert_bf16.c — bert_use_bf16 (AVX512-BF16 only; skipped elsewhere): with
 * bf16 encoder weights the forwards (full and [CLS]-only, with and without
 * ALiBi) give the fp32 logits up to bf16's rounding; switching it off gives the
 * fp32 numbers back bit for bit (the packed copies never touch the weights). */
#include <math.h>
#include <string.h>

#include "core/gemm_bf16.h"
#include "core/rng.h"
#include "models/bert/bert.h"
#include "tests/test.h"

enum { BB_B = 3, BB_T = 10, BB_K = 4, BB_C = 64 };

static double max_abs(const float *a, long n) {
    double w = 0;
    for (long i = 0; i < n; i++) w = fmax(w, fabs(a[i]));
    return w;
}

static double max_diff(const float *a, const float *b, long n) {
    double w = 0;
    for (long i = 0; i < n; i++) w = fmax(w, fabs((double)a[i] - b[i]));
    return w;
}

/* The pooled vectors (B, C) of the full forward (pooled_path 0) or the [CLS]-only one. */
static void pooled(Bert *m, const BertBatch *b, int pooled_path, float *out) {
    if (pooled_path) bert_forward_pooled(m, b, NULL);
    else bert_forward(m, b, NULL);
    memcpy(out, bert_pooled(m), sizeof(float) * BB_B * BB_C);
}

static void check_bf16(int alibi, int pooled_path) {
    BertConfig c = {.vocab_size = 101, .hidden_size = BB_C, .num_layers = 2, .num_heads = 4, .intermediate_size = 96,
                    .max_position = 16, .type_vocab_size = 2, .hidden_dropout = 0.1f, .attention_dropout = 0.1f,
                    .layer_norm_eps = 1e-12f, .alibi = alibi};
    Bert *m = bert_create(&c, &(BertHeads){.pooler = 1, .num_labels = BB_K}, 5);
    bert_reserve(m, BB_B, BB_T, 0, 0);
    /* Weights 4x the 0.02 init (0.08, about what fine-tuned encoders hold), so the
     * encoder is far from linear; much larger ones make attention so peaked that
     * any rounding flips it. */
    for (size_t i = 0; i < m->params->total; i++) m->params->data[i] *= 4.0f;
    Rng r;
    rng_seed(&r, 11);
    int ids[BB_B * BB_T], seg[BB_B * BB_T] = {0}, len[BB_B] = {10, 6, 3};
    for (int i = 0; i < BB_B * BB_T; i++) ids[i] = (int)rng_below(&r, 101);
    BertBatch b = {BB_B, BB_T, ids, seg, len};
    float fp32[BB_B * BB_C], native[BB_B * BB_C], again[BB_B * BB_C];
    pooled(m, &b, pooled_path, fp32);
    bert_use_bf16(m, 1);
    pooled(m, &b, pooled_path, native);
    bert_use_bf16(m, 0);
    pooled(m, &b, pooled_path, again);
    double scale = max_abs(fp32, BB_B * BB_C), d = max_diff(fp32, native, BB_B * BB_C);
    CHECK_MSG(d > 0 && d < 0.05 * scale, "alibi %d pooled %d: bf16 moved the pooled vectors by %g (scale %g)", alibi,
              pooled_path, d, scale);
    CHECK_MSG(memcmp(fp32, again, sizeof fp32) == 0, "alibi %d pooled %d: fp32 not restored", alibi, pooled_path);
    CHECK(m->bf16 == NULL && m->w.layers[0].attn.bf16_qkv == NULL && m->w.layers[1].ffn.bf16_out == NULL);
    bert_use_bf16(m, 1);   /* left on: bert_free releases the packed copies */
    bert_free(m);
}

TEST(bert_bf16_inference_close_to_fp32) {
    if (!gemm_bf16_available()) {
        test_skip("no AVX512-BF16 on this CPU (--bf16 runs the fp32 path here)");
        return;
    }
    check_bf16(0, 0);
    check_bf16(0, 1);
    check_bf16(1, 1);
}
