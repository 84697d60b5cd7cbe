/* test_rnn_kernels.c — the vectorised pieces of the recurrent layers, at every
 * kernel level this CPU runs (portable, AVX2, AVX-512; tests/test_older_cpus.c
 * runs this file under emulated AVX2-only and SSE4.2-only CPUs too):
 *   - core/fastmath.h's sigmoid and tanh, as core/kernels' sigmoid/tanh, over a
 *     dense sweep of [-100, 100], a log sweep of |x| from 1e-38 to 100, and
 *     +-0, +-inf, NaN: relative error against the double-precision functions
 *     below 4e-7 (glibc's expf and tanhf are within 1 ulp, 6e-8, of them, so
 *     against those: below 5e-7), tanh exactly odd;
 *   - core/kernels' lstm_cell and gru_cell: bit for bit the portable build's at
 *     every level (-std=c11: no FMA contraction, so the same operations), and
 *     within 1e-6 of the cell computed in double with libm's functions;
 *   - core/blas' matmul_packed_b (a B packed once): bit for bit sgemm_own's
 *     product on the unpacked B, whole and by column blocks;
 *   - the LSTM and GRU forwards on two threads (blocks of sequences): bit for
 *     bit the one-thread forwards. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/kernels.h"
#include "core/rng.h"
#include "core/sgemm.h"
#include "nn/gru.h"
#include "nn/lstm.h"
#include "tests/test.h"

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Worst relative error of k's sigmoid (which 0) or tanh (1) over xs (n). */
static double worst_rel(const ElemKernels *k, int which, const float *xs, long n, float *y) {
    (which ? k->tanh : k->sigmoid)(y, xs, n);
    double worst = 0.0;
    for (long i = 0; i < n; i++) {
        double x = xs[i], want = which ? tanh(x) : ref_sigmoid(x);
        if (!which && x < -87.0) continue;   /* the clamped tail: checked apart */
        double e = want == 0.0 ? fabs((double)y[i]) : fabs(((double)y[i] - want) / want);
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

TEST(kernels_sigmoid_tanh_accuracy) {
    enum { DENSE = 204801, LOG = 2 * 80 * 40 };
    long n = DENSE + LOG;
    float *xs = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    for (long i = 0; i < DENSE; i++) xs[i] = -100.0f + (float)i / 1024.0f;
    long m = DENSE;
    for (int e = 0; e < 80 * 40; e++) {   /* |x| = 10^(-38 + e/40): 40 points per decade */
        float v = (float)pow(10.0, -38.0 + e / 40.0);
        if (v > 100.0f) break;
        xs[m++] = v;
        xs[m++] = -v;
    }
    n = m;
    for (int l = KERN_PORTABLE; l <= (int)KERN_AVX512; l++) {
        const ElemKernels *k = kernels_at((KernLevel)l);
        if (!k) continue;
        double ws = worst_rel(k, 0, xs, n, y), wt = worst_rel(k, 1, xs, n, y);
        CHECK_MSG(ws < 4e-7, "%s sigmoid: worst relative error %.3g", k->name, ws);
        CHECK_MSG(wt < 4e-7, "%s tanh: worst relative error %.3g", k->name, wt);
        printf("  %s: sigmoid %.3g, tanh %.3g worst relative error over %ld points\n", k->name, ws, wt, n);
        /* against glibc's float functions, as the scalar code had them */
        k->tanh(y, xs, n);
        double wg = 0.0;
        for (long i = 0; i < n; i++) {
            float want = tanhf(xs[i]);
            double e = want == 0.0f ? fabsf(y[i]) : fabs(((double)y[i] - want) / want);
            wg = e > wg ? e : wg;
        }
        CHECK_MSG(wg < 5e-7, "%s tanh against tanhf: %.3g", k->name, wg);
        k->sigmoid(y, xs, n);
        wg = 0.0;
        for (long i = 0; i < n; i++) {
            if (xs[i] < -87.0f) {   /* true value < 1.7e-38: stays tiny, never negative */
                CHECK_MSG(y[i] >= 0.0f && y[i] < 2e-38f, "%s sigmoid(%g) = %g", k->name, xs[i], y[i]);
                continue;
            }
            float want = 1.0f / (1.0f + expf(-xs[i]));
            double e = fabs(((double)y[i] - want) / want);
            wg = e > wg ? e : wg;
        }
        CHECK_MSG(wg < 5e-7, "%s sigmoid against expf: %.3g", k->name, wg);
        /* tanh exactly odd */
        float *yn = malloc(sizeof(float) * (size_t)n), *xn = malloc(sizeof(float) * (size_t)n);
        for (long i = 0; i < n; i++) xn[i] = -xs[i];
        k->tanh(y, xs, n);
        k->tanh(yn, xn, n);
        long odd = 0;
        for (long i = 0; i < n; i++) odd += y[i] != -yn[i];
        CHECK_MSG(odd == 0, "%s tanh: %ld points where tanh(-x) != -tanh(x)", k->name, odd);
        free(yn);
        free(xn);
        /* special values */
        float sx[6] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f}, st[6], ss[6];
        k->tanh(st, sx, 6);
        k->sigmoid(ss, sx, 6);
        CHECK_MSG(st[0] == 0.0f && st[1] == 0.0f && st[2] == 1.0f && st[3] == -1.0f && isnan(st[4]) && st[5] == 1e-45f,
                  "%s tanh(0, -0, inf, -inf, nan, 1e-45) = %g %g %g %g %g %g", k->name, st[0], st[1], st[2], st[3],
                  st[4], st[5]);
        CHECK_MSG(ss[0] == 0.5f && ss[1] == 0.5f && ss[2] == 1.0f && ss[3] >= 0.0f && ss[3] < 2e-38f && isnan(ss[4]),
                  "%s sigmoid(0, -0, inf, -inf, nan) = %g %g %g %g %g", k->name, ss[0], ss[1], ss[2], ss[3], ss[4]);
    }
    free(xs);
    free(y);
}

/* The LSTM and GRU cells in double with libm, for one row (the kernels' contract in core/kernels.h). */
static void ref_lstm(double *g, double *c, double *h, const float *g0, const float *cp, const float *b, const float *r,
                     int H) {
    for (int j = 0; j < 4 * H; j++) g[j] = (double)g0[j] + b[j] + (r ? r[j] : 0.0);
    for (int j = 0; j < H; j++) {
        double i = ref_sigmoid(g[j]), f = ref_sigmoid(g[H + j]), gg = tanh(g[2 * H + j]), o = ref_sigmoid(g[3 * H + j]);
        c[j] = i * gg + (cp ? f * cp[j] : 0.0);
        h[j] = o * tanh(c[j]);
        g[j] = i; g[H + j] = f; g[2 * H + j] = gg; g[3 * H + j] = o;
    }
}

static void ref_gru(double *g, double *hn, double *h, const float *g0, const float *hp, const float *b, const float *r,
                    int H) {
    for (int j = 0; j < H; j++) {
        double rg = ref_sigmoid((double)g0[j] + b[j] + (r ? r[j] : 0.0));
        double zg = ref_sigmoid((double)g0[H + j] + b[H + j] + (r ? r[H + j] : 0.0));
        hn[j] = (double)b[2 * H + j] + (r ? r[2 * H + j] : 0.0);
        double ng = tanh(g0[2 * H + j] + rg * hn[j]);
        h[j] = (1.0 - zg) * ng + (hp ? zg * hp[j] : 0.0);
        g[j] = rg; g[H + j] = zg; g[2 * H + j] = ng;
    }
}

static double max_dev(const float *a, const double *b, int n) {
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        m = d > m || isnan(d) ? d : m;
    }
    return m;
}

/* One cell (lstm: 1, gru: 0) at level k against portable and double, with and without the recurrent part. */
static void check_cell(const ElemKernels *k, const ElemKernels *p, int lstm, int H, Rng *rng) {
    int G = (lstm ? 4 : 3) * H;
    float *g0 = malloc(sizeof(float) * (size_t)G), *b = malloc(sizeof(float) * (size_t)G);
    float *r = malloc(sizeof(float) * (size_t)G), *prev = malloc(sizeof(float) * (size_t)H);
    float *ga = malloc(sizeof(float) * (size_t)G), *gb = malloc(sizeof(float) * (size_t)G);
    float *sa = malloc(sizeof(float) * 4 * (size_t)H), *sb = sa + H, *ha = sa + 2 * H, *hb = sa + 3 * H;
    double *gd = malloc(sizeof(double) * (size_t)(G + 2 * H)), *sd = gd + G, *hd = sd + H;
    for (int j = 0; j < G; j++) { g0[j] = 4.0f * rng_normal(rng); b[j] = rng_normal(rng); r[j] = 2.0f * rng_normal(rng); }
    for (int j = 0; j < H; j++) prev[j] = rng_normal(rng);
    g0[0] = 60.0f;   /* saturated gates */
    g0[G - 1] = -60.0f;
    for (int first = 0; first < 2; first++) {
        const float *rr = first ? NULL : r, *pp = first ? NULL : prev;
        memcpy(ga, g0, sizeof(float) * (size_t)G);
        memcpy(gb, g0, sizeof(float) * (size_t)G);
        if (lstm) {
            k->lstm_cell(ga, sa, ha, pp, b, rr, H);
            p->lstm_cell(gb, sb, hb, pp, b, rr, H);
            ref_lstm(gd, sd, hd, g0, pp, b, rr, H);
        } else {
            k->gru_cell(ga, sa, ha, pp, b, rr, H);
            p->gru_cell(gb, sb, hb, pp, b, rr, H);
            ref_gru(gd, sd, hd, g0, pp, b, rr, H);
        }
        const char *what = lstm ? "lstm_cell" : "gru_cell";
        CHECK_MSG(memcmp(ga, gb, sizeof(float) * (size_t)G) == 0 && memcmp(sa, sb, sizeof(float) * (size_t)H) == 0 &&
                      memcmp(ha, hb, sizeof(float) * (size_t)H) == 0,
                  "%s at %s, H %d%s: differs from portable", what, k->name, H, first ? " (first step)" : "");
        double d = fmax(max_dev(ga, gd, G), fmax(max_dev(sa, sd, H), max_dev(ha, hd, H)));
        CHECK_MSG(d < 1e-6, "%s at %s, H %d%s: %.3g from the double-precision cell", what, k->name, H,
                  first ? " (first step)" : "", d);
    }
    free(g0); free(b); free(r); free(prev); free(ga); free(gb); free(sa); free(gd);
}

TEST(kernels_rnn_cells_every_level) {
    static const int HS[] = {1, 3, 16, 17, 64, 100};
    const ElemKernels *p = kernels_at(KERN_PORTABLE);
    Rng rng;
    rng_seed(&rng, 44);
    for (int l = KERN_PORTABLE; l <= (int)KERN_AVX512; l++) {
        const ElemKernels *k = kernels_at((KernLevel)l);
        if (!k) continue;
        for (size_t i = 0; i < sizeof HS / sizeof HS[0]; i++) {
            check_cell(k, p, 1, HS[i], &rng);
            check_cell(k, p, 0, HS[i], &rng);
        }
    }
}

/* matmul_packed_b against sgemm_own at every level: the same sums, so equal. */
TEST(sgemm_packed_b_equals_sgemm_own) {
    static const int SHAPES[][3] = {{64, 544, 300}, {13, 70, 300}, {1, 5, 3}, {40, 96, 257}, {7, 33, 600}};
    KernLevel prev = kernels_level();
    Rng r;
    rng_seed(&r, 45);
    for (int level = KERN_PORTABLE; level <= (int)kernels_cpu_level() && level <= KERN_AVX512; level++) {
        kernels_force((KernLevel)level);
        for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++)
            for (int t = 0; t < 4; t++) {
                int M = SHAPES[s][0], N = SHAPES[s][1], K = SHAPES[s][2], ta = t & 1, tb = t >> 1;
                float *A = malloc(sizeof(float) * (size_t)M * K), *B = malloc(sizeof(float) * (size_t)K * N);
                float *want = malloc(sizeof(float) * (size_t)M * N), *got = malloc(sizeof(float) * (size_t)M * N);
                float *buf = malloc(sizeof(float) * (size_t)MATMUL_PACKED_B_FLOATS(K, N));
                for (long i = 0; i < (long)M * K; i++) A[i] = rng_normal(&r);
                for (long i = 0; i < (long)K * N; i++) B[i] = rng_normal(&r);
                for (long i = 0; i < (long)M * N; i++) want[i] = got[i] = rng_normal(&r);
                sgemm_own(ta, tb, M, N, K, 0.5f, A, ta ? M : K, B, tb ? K : N, 0.25f, want, N);
                float *bp = matmul_pack_b(buf + 1, B, K, N, tb ? MAT_T : MAT_N);   /* unaligned buffer */
                CHECK(((uintptr_t)bp & 63) == 0);
                matmul_packed_b(got, A, bp, M, N, K, ta ? MAT_T : MAT_N, 0.5f, 0.25f);
                CHECK_MSG(memcmp(got, want, sizeof(float) * (size_t)M * N) == 0,
                          "%s: M%d N%d K%d ta%d tb%d: matmul_packed_b differs from sgemm_own",
                          kernels_level_name((KernLevel)level), M, N, K, ta, tb);
                /* by column blocks of one panel, as threads split it; beta 0 over NaN never read */
                int NR = kernels()->sgemm_nr;
                for (long i = 0; i < (long)M * N; i++) got[i] = NAN;
                sgemm_own(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, want, N);
                for (int j0 = 0; j0 < N; j0 += NR)
                    sgemm_own_packed_b(ta, M, N, K, 1.0f, A, ta ? M : K, bp, 0.0f, got, N, j0, j0 + NR < N ? j0 + NR : N);
                CHECK_MSG(memcmp(got, want, sizeof(float) * (size_t)M * N) == 0,
                          "%s: M%d N%d K%d ta%d tb%d: by column blocks, differs from sgemm_own",
                          kernels_level_name((KernLevel)level), M, N, K, ta, tb);
                free(A); free(B); free(want); free(got); free(buf);
            }
    }
    kernels_force(prev);
}

/* The forwards' steps split over threads by blocks of sequences (nn/rnn_pack.h's
 * rnn_row_team) give the one-thread numbers bit for bit: variable lengths
 * (one empty), both directions, an odd batch; sizes past the threshold where a
 * second thread is used. */
TEST(nn_rnn_forward_threads_agree) {
    enum { B = 9, T = 6, C = 20, H = 256 };
    int lengths[B] = {6, 1, 0, 4, 6, 3, 5, 2, 6};
    RnnDims d = {.B = B, .T = T, .C = C, .H = H};
    long G = 4 * H, nw = G * C + G * H + 2 * G;
    long scr = lstm_scratch_size(d) > gru_scratch_size(d) ? lstm_scratch_size(d) : gru_scratch_size(d);
    float *x = malloc(sizeof(float) * B * T * C), *w = malloc(sizeof(float) * 2 * nw);
    float *s = malloc(sizeof(float) * (size_t)scr), *h[2], *gates[2], *state[2];
    Rng r;
    rng_seed(&r, 46);
    for (long i = 0; i < (long)B * T * C; i++) x[i] = rng_normal(&r);
    for (long i = 0; i < 2 * nw; i++) w[i] = 0.06f * rng_normal(&r);
    int prev = omp_get_max_threads();
    for (int cell = 0; cell < 2; cell++) {
        long g = cell ? 3L * H : 4L * H, off[4] = {0, g * C, g * C + g * H, g * C + g * H + g};
        for (int run = 0; run < 2; run++) {
            h[run] = malloc(sizeof(float) * B * T * 2 * H);
            gates[run] = malloc(sizeof(float) * 2 * B * T * g);
            state[run] = malloc(sizeof(float) * 2 * B * T * H);
            omp_set_num_threads(run + 1);
            if (cell == 0) {
                LstmWeights lw[2];
                for (int k = 0; k < 2; k++)
                    lw[k] = (LstmWeights){w + k * nw + off[0], w + k * nw + off[1], w + k * nw + off[2], w + k * nw + off[3]};
                bilstm_forward(h[run], gates[run], state[run], x, lengths, lw, d, s);
            } else {
                GruWeights gw[2];
                for (int k = 0; k < 2; k++)
                    gw[k] = (GruWeights){w + k * nw + off[0], w + k * nw + off[1], w + k * nw + off[2], w + k * nw + off[3]};
                bigru_forward(h[run], gates[run], state[run], x, lengths, gw, d, s);
            }
        }
        CHECK_MSG(memcmp(h[0], h[1], sizeof(float) * B * T * 2 * H) == 0 &&
                      memcmp(gates[0], gates[1], sizeof(float) * 2 * B * T * g) == 0 &&
                      memcmp(state[0], state[1], sizeof(float) * 2 * B * T * H) == 0,
                  "%s: 2 threads differ from 1", cell ? "bigru" : "bilstm");
        double mx = 0;
        for (long i = 0; i < (long)B * T * 2 * H; i++) mx = fmax(mx, fabs(h[0][i]));
        CHECK_MSG(mx > 0.05, "%s: outputs all near 0 (%g): nothing was compared", cell ? "bigru" : "bilstm", mx);
        for (int run = 0; run < 2; run++) { free(h[run]); free(gates[run]); free(state[run]); }
    }
    omp_set_num_threads(prev);
    free(x); free(w); free(s);
}
