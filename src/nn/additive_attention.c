/* additive_attention.c — Bahdanau attention, one step (see additive_attention.h). */
#include "nn/additive_attention.h"

#include <math.h>
#include <string.h>

#include "core/common.h"
#include "nn/softmax_xent.h"

static int addattn_len(const int *lengths, int b, int Tk) {
    int len = lengths[b];
    if (len < 1 || len > Tk) DIE("addattn: memory %d has length %d of %d", b, len, Tk);
    return len;
}

void addattn_forward(float *ctx, float *alpha, const float *q, const float *keys, const float *values, const float *v,
                     const int *lengths, const int *mem, AddAttnDims d) {
    int A = d.A, E = d.E, Tk = d.Tk;
    for (int r = 0; r < d.R; r++) {
        int b = mem ? mem[r] : r, len = addattn_len(lengths, b, Tk);
        const float *qr = q + (long)r * A, *K = keys + (long)b * Tk * A, *V = values + (long)b * Tk * E;
        float *al = alpha + (long)r * Tk, *c = ctx + (long)r * E;
        for (int j = 0; j < len; j++) {
            const float *k = K + (long)j * A;
            float e = 0;
            for (int a = 0; a < A; a++) e += v[a] * tanhf(qr[a] + k[a]);
            al[j] = e;
        }
        softmax_row(al, len);   /* over the valid positions only */
        for (int j = len; j < Tk; j++) al[j] = 0;
        memset(c, 0, sizeof(float) * (size_t)E);
        for (int j = 0; j < len; j++)
            for (int k = 0; k < E; k++) c[k] += al[j] * V[(long)j * E + k];
    }
}

long addattn_scratch_size(AddAttnDims d) { return d.Tk > 0 ? d.Tk : 1; }

void addattn_backward(float *dq, float *dkeys, float *dvalues, float *dv, const float *dctx, const float *alpha,
                      const float *q, const float *keys, const float *values, const float *v, const int *lengths,
                      const int *mem, AddAttnDims d, float *scratch) {
    int A = d.A, E = d.E, Tk = d.Tk;
    float *de = scratch;   /* (Tk) the scores' gradient */
    for (int r = 0; r < d.R; r++) {
        int b = mem ? mem[r] : r, len = addattn_len(lengths, b, Tk);
        const float *qr = q + (long)r * A, *K = keys + (long)b * Tk * A, *V = values + (long)b * Tk * E;
        const float *al = alpha + (long)r * Tk, *dc = dctx + (long)r * E;
        double dot = 0;
        for (int j = 0; j < len; j++) {   /* dalpha_j = dctx . h_j; softmax backward */
            float da = 0;
            for (int k = 0; k < E; k++) da += dc[k] * V[(long)j * E + k];
            de[j] = da;
            dot += (double)al[j] * da;
            if (dvalues)
                for (int k = 0; k < E; k++) dvalues[((long)b * Tk + j) * E + k] += al[j] * dc[k];
        }
        for (int j = 0; j < len; j++) {
            float g = al[j] * (de[j] - (float)dot);
            const float *k = K + (long)j * A;
            float *dk = dkeys ? dkeys + ((long)b * Tk + j) * A : NULL;
            for (int a = 0; a < A; a++) {
                float u = tanhf(qr[a] + k[a]), dpre = g * v[a] * (1.0f - u * u);
                if (dv) dv[a] += g * u;
                if (dq) dq[(long)r * A + a] += dpre;
                if (dk) dk[a] += dpre;
            }
        }
    }
}
