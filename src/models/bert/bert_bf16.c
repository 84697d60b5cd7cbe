/* bert_bf16.c — BERT inference with bf16 weights (see bert_use_bf16 in bert.h):
 * the encoder's dense layers are nearly all of a forward's FLOPs and of the
 * memory it streams; core/gemm_bf16 runs them at up to twice sgemm's rate on
 * CPUs with AVX512-BF16. The packed copies hang off the layer structs the
 * transformer sublayers read (BlockAttnParams / BlockFfnParams bf16_* fields). */
#include <stdlib.h>

#include "core/common.h"
#include "core/gemm_bf16.h"
#include "models/bert/bert.h"

enum { BF16_PER_LAYER = 4 };

void bert_use_bf16(Bert *m, int on) {
    int L = m->cfg.num_layers, C = m->cfg.hidden_size, FF = m->cfg.intermediate_size;
    if (m->bf16) {   /* off, or re-pack from the current weights */
        for (int i = 0; i < BF16_PER_LAYER * L; i++) bf16_weights_free(&m->bf16[i]);
        free(m->bf16);
        m->bf16 = NULL;
        for (int l = 0; l < L; l++) {
            BertLayer *ly = &m->w.layers[l];
            ly->attn.bf16_qkv = ly->attn.bf16_o = NULL;
            ly->ffn.bf16_in = ly->ffn.bf16_out = NULL;
        }
    }
    if (!on) return;
    m->bf16 = xcalloc((size_t)(BF16_PER_LAYER * L), sizeof *m->bf16);
    for (int l = 0; l < L; l++) {
        BertLayer *ly = &m->w.layers[l];
        Bf16Weights *p = &m->bf16[BF16_PER_LAYER * l];
        bf16_weights_pack(&p[0], ly->attn.w_qkv, 3 * C, C);
        bf16_weights_pack(&p[1], ly->attn.w_o, C, C);
        bf16_weights_pack(&p[2], ly->ffn.w_in, FF, C);
        bf16_weights_pack(&p[3], ly->ffn.w_out, C, FF);
        ly->attn.bf16_qkv = &p[0];
        ly->attn.bf16_o = &p[1];
        ly->ffn.bf16_in = &p[2];
        ly->ffn.bf16_out = &p[3];
    }
}
