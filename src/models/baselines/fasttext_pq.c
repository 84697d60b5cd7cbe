/* fasttext_pq.c — product quantization (fasttext_pq.h): k-means per subspace,
 * encoding rows as centroid indices, decoding them, and a matrix quantized
 * with or without its norms apart. */
#include "models/baselines/fasttext_pq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/rng.h"

/* Points per centroid the training samples at most, and the nudge that splits
 * a populous centroid in two to fill an empty one (the reference's values). */
#define FT_PQ_POINTS_PER_CENTROID 256
#define FT_PQ_EPS 1e-7f

int ft_pq_ksub(long n) { return n >= FT_PQ_KSUB ? FT_PQ_KSUB : n < 1 ? 1 : (int)n; }

void ft_pq_init(FtPQ *pq, int dim, int dsub, int ksub) {
    pq->dim = dim;
    pq->dsub = dsub < dim ? dsub : dim;
    pq->nsub = dim / pq->dsub;
    pq->lastdsub = dim % pq->dsub;
    if (pq->lastdsub == 0) pq->lastdsub = pq->dsub;
    else pq->nsub++;
    pq->ksub = ksub;
    pq->centroids = xcalloc((size_t)ksub * (size_t)dim, sizeof *pq->centroids);
}

void ft_pq_free(FtPQ *pq) {
    free(pq->centroids);
    pq->centroids = NULL;
}

static int pq_d(const FtPQ *pq, int m) { return m == pq->nsub - 1 ? pq->lastdsub : pq->dsub; }

const float *ft_pq_centroid(const FtPQ *pq, int m, int i) {
    return pq->centroids + (size_t)m * (size_t)pq->ksub * (size_t)pq->dsub + (size_t)i * (size_t)pq_d(pq, m);
}

static float pq_dist(const float *x, const float *y, int d) {
    float s = 0.0f;
    for (int i = 0; i < d; i++) {
        float t = x[i] - y[i];
        s += t * t;
    }
    return s;
}

/* The nearest of ksub centroids c (ksub, d) to x; ties go to the lowest index. */
static int pq_nearest(const float *x, const float *c, int d, int ksub) {
    int best = 0;
    float bd = pq_dist(x, c, d);
    for (int j = 1; j < ksub; j++) {
        float dj = pq_dist(x, c + (size_t)j * d, d);
        if (dj < bd) {
            bd = dj;
            best = j;
        }
    }
    return best;
}

/* Centroids = the means of their points; an empty one takes half of a
 * populous cluster (picked at random in proportion to its size), the two
 * pushed eps apart so that the next assignment splits them. */
static void pq_mstep(const float *x, long n, int d, int ksub, const uint8_t *codes, float *c, long *count, Rng *rng) {
    memset(c, 0, (size_t)ksub * (size_t)d * sizeof *c);
    memset(count, 0, (size_t)ksub * sizeof *count);
    for (long i = 0; i < n; i++) {
        float *ci = c + (size_t)codes[i] * d;
        for (int j = 0; j < d; j++) ci[j] += x[(size_t)i * d + j];
        count[codes[i]]++;
    }
    for (int k = 0; k < ksub; k++)
        if (count[k])
            for (int j = 0; j < d; j++) c[(size_t)k * d + j] /= (float)count[k];
    for (int k = 0; k < ksub; k++) {
        if (count[k]) continue;
        int m = 0;
        while (rng_uniform(rng) * (float)(n - ksub) >= (float)(count[m] - 1)) m = (m + 1) % ksub;
        memcpy(c + (size_t)k * d, c + (size_t)m * d, (size_t)d * sizeof *c);
        for (int j = 0; j < d; j++) {
            float sign = (float)((j % 2) * 2 - 1);
            c[(size_t)k * d + j] += sign * FT_PQ_EPS;
            c[(size_t)m * d + j] -= sign * FT_PQ_EPS;
        }
        count[k] = count[m] / 2;
        count[m] -= count[k];
    }
}

void ft_pq_kmeans(const float *x, long n, int d, int ksub, float *c, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    int *perm = xmalloc((size_t)n * sizeof *perm);
    for (long i = 0; i < n; i++) perm[i] = (int)i;
    rng_shuffle_int(&rng, perm, (int)n);
    for (int k = 0; k < ksub; k++) memcpy(c + (size_t)k * d, x + (size_t)perm[k] * d, (size_t)d * sizeof *c);
    free(perm);
    uint8_t *codes = xmalloc((size_t)n);
    long *count = xmalloc((size_t)ksub * sizeof *count);
    for (int it = 0; it < FT_PQ_NITER; it++) {
        for (long i = 0; i < n; i++) codes[i] = (uint8_t)pq_nearest(x + (size_t)i * d, c, d, ksub);
        pq_mstep(x, n, d, ksub, codes, c, count, &rng);
    }
    free(codes);
    free(count);
}

void ft_pq_train(FtPQ *pq, const float *x, long n, uint64_t seed) {
    long np = (long)pq->ksub * FT_PQ_POINTS_PER_CENTROID;
    if (np > n) np = n;
    int *perm = xmalloc((size_t)n * sizeof *perm);
    for (long i = 0; i < n; i++) perm[i] = (int)i;
    float *slice = xmalloc((size_t)np * (size_t)pq->dsub * sizeof *slice);
    for (int m = 0; m < pq->nsub; m++) {
        int d = pq_d(pq, m);
        Rng rng;
        rng_seed_stream(&rng, seed, (uint64_t)m);
        if (np != n) rng_shuffle_int(&rng, perm, (int)n);   /* a fresh sample per subspace */
        for (long j = 0; j < np; j++)
            memcpy(slice + (size_t)j * d, x + (size_t)perm[j] * pq->dim + (size_t)m * pq->dsub, (size_t)d * sizeof *slice);
        ft_pq_kmeans(slice, np, d, pq->ksub, (float *)ft_pq_centroid(pq, m, 0), rng_u64(&rng));
    }
    free(slice);
    free(perm);
}

void ft_pq_encode(const FtPQ *pq, const float *x, long n, uint8_t *codes) {
    for (long i = 0; i < n; i++)
        for (int m = 0; m < pq->nsub; m++)
            codes[(size_t)i * pq->nsub + m] = (uint8_t)pq_nearest(x + (size_t)i * pq->dim + (size_t)m * pq->dsub,
                                                                  ft_pq_centroid(pq, m, 0), pq_d(pq, m), pq->ksub);
}

void ft_pq_decode(const FtPQ *pq, const uint8_t *code, float alpha, float *out) {
    for (int m = 0; m < pq->nsub; m++) {
        const float *c = ft_pq_centroid(pq, m, code[m]);
        for (int j = 0; j < pq_d(pq, m); j++) out[m * pq->dsub + j] = alpha * c[j];
    }
}

/* ---- a quantized matrix ---- */

void ft_qmatrix_build(FtQMatrix *q, float *x, long rows, int dim, int dsub, int qnorm, uint64_t seed) {
    memset(q, 0, sizeof *q);
    q->rows = rows;
    q->qnorm = qnorm;
    if (qnorm) {
        float *norm = xmalloc((size_t)rows * sizeof *norm);
        for (long r = 0; r < rows; r++) {
            float *row = x + (size_t)r * dim;
            double s = 0;
            for (int j = 0; j < dim; j++) s += (double)row[j] * row[j];
            norm[r] = (float)sqrt(s);
            if (norm[r] > 0)
                for (int j = 0; j < dim; j++) row[j] /= norm[r];
        }
        ft_pq_init(&q->npq, 1, 1, ft_pq_ksub(rows));
        ft_pq_train(&q->npq, norm, rows, seed ^ 0x6e6f726dULL);
        q->norm_codes = xmalloc((size_t)rows);
        ft_pq_encode(&q->npq, norm, rows, q->norm_codes);
        free(norm);
    }
    ft_pq_init(&q->pq, dim, dsub, ft_pq_ksub(rows));
    ft_pq_train(&q->pq, x, rows, seed);
    q->codes = xmalloc((size_t)rows * (size_t)q->pq.nsub);
    ft_pq_encode(&q->pq, x, rows, q->codes);
}

void ft_qmatrix_row(const FtQMatrix *q, long r, float *out) {
    float norm = q->qnorm ? ft_pq_centroid(&q->npq, 0, q->norm_codes[r])[0] : 1.0f;
    ft_pq_decode(&q->pq, q->codes + (size_t)r * q->pq.nsub, norm, out);
}

void ft_qmatrix_free(FtQMatrix *q) {
    ft_pq_free(&q->pq);
    ft_pq_free(&q->npq);
    free(q->codes);
    free(q->norm_codes);
    memset(q, 0, sizeof *q);
}
