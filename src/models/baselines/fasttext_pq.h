/* fasttext_pq.h — product quantization of a matrix, as fastText's `quantize`
 * (Joulin et al. 2016, "FastText.zip"; Jégou et al. 2011): each row is cut into
 * nsub sub-vectors of dsub values (the last one holds dim % dsub when that is
 * not 0), and each sub-vector is stored as the one-byte index of its nearest
 * centroid among ksub learnt by k-means on that subspace. With qnorm, rows are
 * divided by their L2 norm first and the norms are quantized on their own
 * (a 1-dimensional quantizer), so the direction and the size are coded apart.
 *
 * As the reference: 256 centroids, 25 k-means iterations, at most 256 points
 * per centroid sampled for training, centroids initialised on a random sample
 * of the rows, an empty cluster re-seeded by splitting a populous one.
 * Unlike it: a matrix of fewer than 256 rows gets ksub = rows centroids (it
 * is then coded exactly) instead of an error, so `qout` works for 2 classes. */
#ifndef GLUE_FASTTEXT_PQ_H
#define GLUE_FASTTEXT_PQ_H

#include <stdint.h>

#define FT_PQ_KSUB 256
#define FT_PQ_NITER 25

typedef struct FtPQ {
    int dim, dsub, nsub, lastdsub, ksub;
    float *centroids;   /* (ksub * dim): subspace m < nsub - 1 at m*ksub*dsub, entry i * dsub; the last at i * lastdsub */
} FtPQ;

/* A quantized (rows, dim) matrix. */
typedef struct FtQMatrix {
    long rows;
    FtPQ pq;
    uint8_t *codes;       /* (rows, pq.nsub) */
    int qnorm;
    FtPQ npq;             /* qnorm: dim 1, dsub 1 */
    uint8_t *norm_codes;  /* qnorm: (rows) */
} FtQMatrix;

/* ksub for a matrix of n rows: min(256, n), at least 1. */
int ft_pq_ksub(long n);
/* Sets the shape and allocates zero centroids (dsub >= 1, dim >= 1). */
void ft_pq_init(FtPQ *pq, int dim, int dsub, int ksub);
void ft_pq_free(FtPQ *pq);
/* Centroid i of subspace m. */
const float *ft_pq_centroid(const FtPQ *pq, int m, int i);
/* Learns the centroids on x (n, dim), n >= ksub; deterministic for seed. */
void ft_pq_train(FtPQ *pq, const float *x, long n, uint64_t seed);
/* codes (n, nsub): each sub-vector's nearest centroid. */
void ft_pq_encode(const FtPQ *pq, const float *x, long n, uint8_t *codes);
/* out (dim) = alpha * the vector that code (nsub) stands for. */
void ft_pq_decode(const FtPQ *pq, const uint8_t *code, float alpha, float *out);
/* The k-means of one subspace (exposed for its test): c (ksub, d) from x (n, d). */
void ft_pq_kmeans(const float *x, long n, int d, int ksub, float *c, uint64_t seed);

/* Quantizes x (rows, dim) with dsub and qnorm into q; x is left divided by its
 * row norms when qnorm. rows >= 1. */
void ft_qmatrix_build(FtQMatrix *q, float *x, long rows, int dim, int dsub, int qnorm, uint64_t seed);
/* out (dim) = row r as the codes give it back. */
void ft_qmatrix_row(const FtQMatrix *q, long r, float *out);
void ft_qmatrix_free(FtQMatrix *q);

#endif
