/* fasttext_hs.c — hierarchical softmax for fastText: a Huffman tree over the label
 * counts (frequent labels get short paths), one logistic regression per internal
 * node. Built like the reference (word2vec's two-queue construction over the
 * leaves sorted by decreasing count), so paths and codes match it. */
#include "models/baselines/fasttext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* Larger than any total count: marks nodes not built yet. */
#define TREE_NO_COUNT ((int64_t)1 << 60)
/* The reference adds this inside its logs so an update never sees log(0). */
#define HS_LOG_EPS 1e-5f

typedef struct { int64_t count; int label; } LeafCount;

static int by_count_desc(const void *a, const void *b) {
    const LeafCount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->label - y->label;
}

void ft_tree_build(FtTree *t, const int64_t *label_count, int K) {
    CHECK_OR_DIE(K >= 2);
    int N = 2 * K - 1;   /* K leaves, K - 1 internal nodes */
    LeafCount *leaf = xmalloc((size_t)K * sizeof *leaf);
    for (int y = 0; y < K; y++) leaf[y] = (LeafCount){label_count[y], y};
    qsort(leaf, (size_t)K, sizeof *leaf, by_count_desc);
    int64_t *count = xmalloc((size_t)N * sizeof *count);
    int *parent = xmalloc((size_t)N * sizeof *parent);
    uint8_t *binary = xcalloc((size_t)N, 1);
    for (int i = 0; i < N; i++) {
        count[i] = i < K ? leaf[i].count : TREE_NO_COUNT;
        parent[i] = -1;
    }
    /* Leaves from the rarest up and built nodes in creation order are both sorted
     * queues: merging the two smallest heads gives the Huffman tree in O(K). */
    int next_leaf = K - 1, next_node = K;
    for (int i = K; i < N; i++) {
        int pick[2];
        for (int j = 0; j < 2; j++)
            pick[j] = (next_leaf >= 0 && count[next_leaf] < count[next_node]) ? next_leaf-- : next_node++;
        count[i] = count[pick[0]] + count[pick[1]];
        parent[pick[0]] = parent[pick[1]] = i;
        binary[pick[1]] = 1;
    }
    t->K = K;
    t->depth = xcalloc((size_t)K, sizeof *t->depth);
    t->node = xmalloc((size_t)K * (size_t)(K - 1) * sizeof *t->node);
    t->code = xmalloc((size_t)K * (size_t)(K - 1));
    for (int p = 0; p < K; p++) {
        int y = leaf[p].label, d = 0;
        for (int j = p; parent[j] != -1; j = parent[j], d++) {
            t->node[y * (K - 1) + d] = parent[j] - K;   /* internal node i is output row i - K */
            t->code[y * (K - 1) + d] = binary[j];
        }
        t->depth[y] = d;
    }
    free(leaf);
    free(count);
    free(parent);
    free(binary);
}

void ft_tree_free(FtTree *t) {
    free(t->depth);
    free(t->node);
    free(t->code);
    memset(t, 0, sizeof *t);
}

static inline float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

float ft_hs_update(const FtTree *t, float *wo, const float *h, float *grad, int C, int y, float lr) {
    float loss = 0.0f;
    const int32_t *node = t->node + y * (t->K - 1);
    const uint8_t *code = t->code + y * (t->K - 1);
    for (int d = 0; d < t->depth[y]; d++) {
        float *w = wo + (size_t)node[d] * C;   /* (C) this node's classifier */
        float s = sigmoidf(vec_dot(w, h, C));
        if (lr > 0.0f) {
            float alpha = lr * ((float)code[d] - s);
            vec_axpy(grad, alpha, w, C);   /* before w moves, as the reference */
            vec_axpy(w, alpha, h, C);
        }
        loss -= logf((code[d] ? s : 1.0f - s) + HS_LOG_EPS);
    }
    return loss;
}

void ft_hs_probs(const FtTree *t, const float *wo, const float *h, int C, float *probs) {
    for (int y = 0; y < t->K; y++) {
        const int32_t *node = t->node + y * (t->K - 1);
        const uint8_t *code = t->code + y * (t->K - 1);
        float p = 1.0f;
        for (int d = 0; d < t->depth[y]; d++) {
            float s = sigmoidf(vec_dot(wo + (size_t)node[d] * C, h, C));
            p *= code[d] ? s : 1.0f - s;
        }
        probs[y] = p;
    }
}
