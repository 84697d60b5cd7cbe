/* embedding.c — gather forward, sparse scatter-add backward (see embedding.h). */
#include "nn/embedding.h"

#include <string.h>

#include "core/common.h"

/* An id outside the table is a bug upstream (tokenizer and model disagree on
 * the vocabulary size), never a user input error: the model checks that at load. */
static void embedding_check_id(int id, int V) {
    if (id < 0 || id >= V) DIE("embedding id %d outside the table [0, %d)", id, V);
}

void embedding_forward(float *out, const int *ids, const float *weight, int N, int V, int C) {
    for (int n = 0; n < N; n++) {
        embedding_check_id(ids[n], V);
        memcpy(out + (long)n * C, weight + (long)ids[n] * C, sizeof(float) * (size_t)C);
    }
}

void embedding_forward_add(float *out, const int *ids, const float *weight, int N, int V, int C) {
    #pragma omp parallel for if ((long)N * C > 65536)
    for (int n = 0; n < N; n++) {
        embedding_check_id(ids[n], V);
        const float *w = weight + (long)ids[n] * C;
        float *o = out + (long)n * C;
        for (int c = 0; c < C; c++) o[c] += w[c];
    }
}

int embedding_backward(float *dweight, int *touched_rows, unsigned char *seen,
                       const float *dout, const int *ids, int N, int V, int C) {
    /* Serial on purpose: repeated ids would race, and the work is O(N*C), far
     * below the matmuls around it. */
    int count = 0;
    for (int n = 0; n < N; n++) {
        embedding_check_id(ids[n], V);
        float *dw = dweight + (long)ids[n] * C;
        const float *d = dout + (long)n * C;
        for (int c = 0; c < C; c++) dw[c] += d[c];
        if (touched_rows && !seen[ids[n]]) {
            seen[ids[n]] = 1;
            touched_rows[count++] = ids[n];
        }
    }
    for (int i = 0; i < count; i++) seen[touched_rows[i]] = 0;
    return count;
}
