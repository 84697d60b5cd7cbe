/* relpos.c — Shaw-style relative attention terms with log-bucketed distances
 * (see relpos.h).
 *
 * Every term goes through the bucket sums of a row instead of a per-(i, j)
 * gather of HS-vectors:
 *   keys:    Qa = Q a^K^T (R, NB), then S_ij += scale * Qa[i, s(i,j)]
 *   values:  Pb[i, b] = Σ_{j: s(i,j)=b} P'_ij (R, NB), then O += Pb a^V
 * with R = B*NH*Tq query rows of all heads stacked (the tables are shared by
 * the heads) and NB = 2S+1 buckets. The backward is the same two GEMMs
 * transposed plus the scatter/gather of the bucket sums. */
#include "nn/relpos.h"

#include <string.h>

#include "core/blas.h"
#include "core/common.h"

#define RELPOS_PARALLEL_MIN 32768  /* elements below which threads do not pay */

int relpos_bucket(int d, int base, int max_bucket) {
    if (d == 0 || base <= 1 || max_bucket <= 0) return 0;
    long a = d < 0 ? -(long)d : d, need = a + 1, pw = 1;
    int e = 0;
    while (pw < need && e < max_bucket) { pw *= base; e++; }   /* pw = base^e */
    return d < 0 ? -e : e;
}

int relpos_max_bucket(int max_dist, int base) {
    if (base <= 1) return 0;
    long need = (long)max_dist + 1, pw = 1;
    int e = 0;
    while (pw < need) { pw *= base; e++; }
    return e;
}

static long relpos_rows(AttnDims d) { return (long)d.B * d.NH * d.Tq; }
static int relpos_nb(AttnDims d) { return 2 * d.rel->max_bucket + 1; }

long relpos_scratch_size(AttnDims d) {
    /* Two (R, NB) buffers and the bucket table of Tq + Tk - 1 distances. */
    return 2 * relpos_rows(d) * relpos_nb(d) + d.Tq + d.Tk;
}

/* table[j - i + Tq - 1] = row of the bucket of key j for query i (position
 * i + Tk - Tq), for every distance that occurs. */
static const int *relpos_table(AttnDims d, float *scratch) {
    int *t = (int *)(scratch + 2 * relpos_rows(d) * relpos_nb(d));
    for (int x = 0; x < d.Tq + d.Tk - 1; x++)
        t[x] = relpos_bucket(x - (d.Tq - 1) - (d.Tk - d.Tq), d.rel->base, d.rel->max_bucket) + d.rel->max_bucket;
    return t;
}

/* x (R, Tk) += xb (R, NB) read at each position's bucket: the adjoint of
 * relpos_bucket_sums. */
static void relpos_bucket_spread(float *x, const float *xb, const int *tab, AttnDims d) {
    long R = relpos_rows(d);
    int NB = relpos_nb(d);
    #pragma omp parallel for if (R * d.Tk > RELPOS_PARALLEL_MIN)
    for (long r = 0; r < R; r++) {
        int i = (int)(r % d.Tq);
        float *row = x + r * d.Tk;
        const float *b = xb + r * NB;
        const int *t = tab + d.Tq - 1 - i;
        for (int j = 0; j < d.Tk; j++) row[j] += b[t[j]];
    }
}

void relpos_scores_forward(float *att, const float *qh, AttnDims d, float scale, float *scratch) {
    if (!d.rel->ak) return;
    long R = relpos_rows(d);
    int NB = relpos_nb(d);
    const int *tab = relpos_table(d, scratch);
    float *qa = scratch;   /* (R, NB) */
    matmul(qa, qh, d.rel->ak, (int)R, NB, d.HS, MAT_N, MAT_T, scale, 0.0f);
    relpos_bucket_spread(att, qa, tab, d);
}

/* pb (R, NB) = bucket sums of each row of p (R, Tk). */
static void relpos_bucket_sums(float *pb, const float *p, const int *tab, AttnDims d) {
    long R = relpos_rows(d);
    int NB = relpos_nb(d);
    #pragma omp parallel for if (R * d.Tk > RELPOS_PARALLEL_MIN)
    for (long r = 0; r < R; r++) {
        int i = (int)(r % d.Tq);
        float *o = pb + r * NB;
        const float *row = p + r * d.Tk;
        const int *t = tab + d.Tq - 1 - i;
        memset(o, 0, sizeof(float) * (size_t)NB);
        for (int j = 0; j < d.Tk; j++) o[t[j]] += row[j];
    }
}

void relpos_values_forward(float *oh, const float *p, AttnDims d, float *scratch) {
    if (!d.rel->av) return;
    long R = relpos_rows(d);
    int NB = relpos_nb(d);
    float *pb = scratch;
    relpos_bucket_sums(pb, p, relpos_table(d, scratch), d);
    matmul(oh, pb, d.rel->av, (int)R, d.HS, NB, MAT_N, MAT_N, 1.0f, 1.0f);
}

void relpos_values_backward(float *dp, const float *p, const float *doh, AttnDims d, float *scratch) {
    if (!d.rel->av) return;
    long R = relpos_rows(d);
    int NB = relpos_nb(d);
    const int *tab = relpos_table(d, scratch);
    float *pb = scratch, *dpb = scratch + R * NB;
    if (d.rel->dav) {
        relpos_bucket_sums(pb, p, tab, d);
        matmul(d.rel->dav, pb, doh, NB, d.HS, (int)R, MAT_T, MAT_N, 1.0f, 1.0f);
    }
    matmul(dpb, doh, d.rel->av, (int)R, NB, d.HS, MAT_N, MAT_T, 1.0f, 0.0f);
    relpos_bucket_spread(dp, dpb, tab, d);
}

void relpos_scores_backward(float *dqh, const float *ds, const float *qh, AttnDims d, float scale,
                            float *scratch) {
    if (!d.rel->ak) return;
    long R = relpos_rows(d);
    int NB = relpos_nb(d);
    const int *tab = relpos_table(d, scratch);
    float *dqa = scratch;   /* (R, NB) = bucket sums of ds */
    relpos_bucket_sums(dqa, ds, tab, d);
    matmul(dqh, dqa, d.rel->ak, (int)R, d.HS, NB, MAT_N, MAT_N, scale, 1.0f);
    if (d.rel->dak) matmul(d.rel->dak, dqa, qh, NB, d.HS, (int)R, MAT_T, MAT_N, scale, 1.0f);
}
