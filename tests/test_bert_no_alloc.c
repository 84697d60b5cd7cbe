/* test_bert_no_alloc.c — the steps the benchmark times allocate nothing
 * (issue 6): once bert_reserve has sized the workspace and one warm-up step
 * has created the optimizer state, a pretraining step (forward with dropout,
 * MLM loss on gathered positions, backward, AdamW), a classification forward
 * (full and [CLS]-only) and a forward with a smaller batch make no x*alloc
 * call. Every allocation of ours goes through core/common.h's x*alloc
 * (checked by grep in the code review, counted here). */
#include "core/common.h"
#include "core/rng.h"
#include "models/bert/bert.h"
#include "optim/optim.h"
#include "tests/test.h"

enum { NA_B = 4, NA_T = 12, NA_MASKED = 6, NA_K = 3, NA_V = 101 };

static void na_train_step(Bert *m, Optimizer *o, const BertBatch *b, const int *pos, const int *lab, Rng *drop) {
    params_zero_grad(m->params);
    bert_forward(m, b, drop);
    bert_mlm_loss(m, pos, lab, NA_MASKED, 1, NULL);
    bert_backward(m);
    optim_step(o, m->params, 1e-3f);
}

TEST(bert_steps_allocate_nothing) {
    BertConfig c = {.vocab_size = NA_V, .hidden_size = 32, .num_layers = 2, .num_heads = 2, .intermediate_size = 64,
                    .max_position = 16, .type_vocab_size = 2, .hidden_dropout = 0.1f, .attention_dropout = 0.1f,
                    .layer_norm_eps = 1e-12f, .alibi = 1};
    Bert *trainer = bert_create(&c, &(BertHeads){.mlm = 1}, 3);
    bert_reserve(trainer, NA_B, NA_T, NA_MASKED, 1);
    Bert *classifier = bert_create(&c, &(BertHeads){.pooler = 1, .num_labels = NA_K}, 4);
    bert_reserve(classifier, NA_B, NA_T, 0, 0);
    Rng r, drop;
    rng_seed(&r, 5);
    rng_seed(&drop, 6);
    int ids[NA_B * NA_T], seg[NA_B * NA_T] = {0}, pos[NA_MASKED], lab[NA_MASKED], len[NA_B] = {12, 7, 12, 3};
    for (int i = 0; i < NA_B * NA_T; i++) ids[i] = (int)rng_below(&r, NA_V);
    for (int j = 0; j < NA_MASKED; j++) {
        pos[j] = (j % NA_B) * NA_T + 1 + j;
        lab[j] = (int)rng_below(&r, NA_V);
    }
    Optimizer o = optim_adamw(0.01);
    BertBatch full = {NA_B, NA_T, ids, seg, NULL}, padded = {NA_B, NA_T, ids, seg, len}, small = {2, 9, ids, seg, NULL};
    float logits[NA_B * NA_K];
    na_train_step(trainer, &o, &full, pos, lab, &drop);   /* warm-up: AdamW's moments */
    bert_forward(classifier, &full, NULL);
    unsigned long before = xalloc_calls();
    for (int step = 0; step < 3; step++) na_train_step(trainer, &o, &full, pos, lab, &drop);
    bert_forward(classifier, &padded, NULL);
    bert_head_forward(classifier, NULL, logits);
    bert_forward_pooled(classifier, &padded, NULL);
    bert_head_forward(classifier, NULL, logits);
    bert_forward_pooled(classifier, &small, NULL);
    bert_head_forward(classifier, NULL, logits);
    CHECK_MSG(xalloc_calls() == before, "%lu allocations in the timed steps", xalloc_calls() - before);
    /* The counter does count: creating a model allocates. */
    Bert *other = bert_create(&c, &(BertHeads){.num_labels = 2}, 7);
    CHECK(xalloc_calls() > before);
    bert_free(other);
    bert_free(trainer);
    bert_free(classifier);
}
