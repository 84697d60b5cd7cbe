/* test_bert_pooled.c — bert_forward_pooled (the last layer at [CLS] only)
 * gives the pooled vectors and head logits of the full evaluation forward, for
 * one and several layers (and with ALiBi), with padded rows, batches smaller than reserved, and
 * the model's other entry points still right afterwards. */
#include <stdlib.h>

#include "core/rng.h"
#include "models/bert/bert.h"
#include "tests/test.h"

enum { TP_B = 5, TP_T = 11, TP_K = 3 };

static double tp_max_diff(const float *a, const float *b, long n) {
    double w = 0;
    for (long i = 0; i < n; i++) w = fmax(w, fabs((double)a[i] - b[i]));
    return w;
}

static void tp_check(int L, int alibi) {
    BertConfig c = {.vocab_size = 97, .hidden_size = 32, .num_layers = L, .num_heads = 4, .intermediate_size = 64,
                    .max_position = 16, .type_vocab_size = 2, .hidden_dropout = 0.1f, .attention_dropout = 0.1f,
                    .layer_norm_eps = 1e-12f, .alibi = alibi};
    Bert *m = bert_create(&c, &(BertHeads){.pooler = 1, .num_labels = TP_K}, 3);
    bert_reserve(m, TP_B, TP_T, 0, 0);
    Rng r;
    rng_seed(&r, 9);
    int ids[TP_B * TP_T], seg[TP_B * TP_T], len[TP_B] = {11, 4, 1, 9, 7};
    for (int i = 0; i < TP_B * TP_T; i++) {
        ids[i] = (int)rng_below(&r, 97);
        seg[i] = (i % TP_T) > 5;
    }
    for (int B = TP_B; B >= 2; B -= 3) {   /* the reserved batch, then a smaller one */
        BertBatch batch = {B, TP_T, ids, seg, len};
        float full[TP_B * TP_K], cls[TP_B * TP_K], pooled[TP_B * 32];
        bert_forward(m, &batch, NULL);
        bert_head_forward(m, NULL, full);
        const float *p = bert_pooled(m);
        for (int i = 0; i < B * 32; i++) pooled[i] = p[i];
        bert_forward_pooled(m, &batch, NULL);
        bert_head_forward(m, NULL, cls);
        CHECK_MSG(tp_max_diff(pooled, bert_pooled(m), (long)B * 32) < 2e-6, "L%d B%d pooled differ by %g", L, B,
                  tp_max_diff(pooled, bert_pooled(m), (long)B * 32));
        CHECK_MSG(tp_max_diff(full, cls, (long)B * TP_K) < 2e-6, "L%d B%d logits differ by %g", L, B,
                  tp_max_diff(full, cls, (long)B * TP_K));
    }
    /* A full forward afterwards is whole again. */
    bert_forward(m, &(BertBatch){TP_B, TP_T, ids, seg, len}, NULL);
    CHECK(bert_hidden(m) != NULL);
    bert_free(m);
}

TEST(bert_forward_pooled_matches_full_forward) {
    tp_check(1, 0);
    tp_check(3, 0);
    tp_check(2, 1);   /* ALiBi: the pooled entry point must keep the penalty */
}
