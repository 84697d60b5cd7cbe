/* test_gemm_threads.c — the inference products called from two threads at
 * once, each on its own weights and inputs (two models served side by side:
 * `glue serve --run A=.. --run B=..` workers, or two glue_model handles of the
 * library, which "share nothing"): each thread's outputs equal, bit for bit,
 * what the same calls give one thread alone. int8 (matmul_int8, and
 * matmul_int8_quantized handing over to matmul_int8_acts) and bf16
 * (matmul_bf16, where the CPU has AVX512-BF16). Each product is large enough
 * to run on a team of OpenMP threads, as in a model. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/gemm_bf16.h"
#include "core/gemm_int8.h"
#include "core/rng.h"
#include "tests/test.h"

enum { ROUNDS = 60 };

typedef struct {
    int M, N, K, bf16;
    float *x, *W, *W2, *bias;
    Int8Weights q, q2;
    Bf16Weights b;
    float *want, *got;   /* (3, M * N): matmul_int8, the hand-over's second product, matmul_bf16 */
    int mismatches;
} Job;

static void job_make(Job *j, int M, int N, int K, uint64_t seed, int bf16) {
    Rng r;
    rng_seed(&r, seed);
    *j = (Job){.M = M, .N = N, .K = K, .bf16 = bf16};
    j->x = malloc(sizeof(float) * (size_t)M * K);
    j->W = malloc(sizeof(float) * (size_t)N * K);
    j->W2 = malloc(sizeof(float) * (size_t)N * N);
    j->bias = malloc(sizeof(float) * (size_t)N);
    for (long i = 0; i < (long)M * K; i++) j->x[i] = rng_normal(&r);
    for (long i = 0; i < (long)N * K; i++) j->W[i] = rng_normal(&r);
    for (long i = 0; i < (long)N * N; i++) j->W2[i] = rng_normal(&r);
    for (int i = 0; i < N; i++) j->bias[i] = rng_normal(&r);
    int8_weights_quantize(&j->q, j->W, N, K);
    int8_weights_quantize(&j->q2, j->W2, N, N);
    if (bf16) bf16_weights_pack(&j->b, j->W, N, K);
    j->want = calloc(3 * (size_t)M * N, sizeof(float));
    j->got = calloc(3 * (size_t)M * N, sizeof(float));
}

static void job_products(Job *j, float *out) {
    long mn = (long)j->M * j->N;
    float *y = malloc(sizeof(float) * (size_t)mn);
    matmul_int8(out, j->x, &j->q, j->M, j->bias, 1);
    Int8Acts acts;
    memset(&acts, 0, sizeof acts);
    matmul_int8_quantized(&acts, y, j->x, &j->q, j->M, j->bias, 1, &j->q2);
    matmul_int8_acts(out + mn, &acts, &j->q2, NULL, NULL);
    int8_acts_free(&acts);
    if (j->bf16) matmul_bf16(out + 2 * mn, j->x, &j->b, j->M, 0.0f, j->bias, 1);
    free(y);
}

static void *job_run(void *arg) {
    Job *j = arg;
    for (int round = 0; round < ROUNDS; round++) {
        job_products(j, j->got);
        if (memcmp(j->got, j->want, sizeof(float) * 3 * (size_t)j->M * j->N) != 0) j->mismatches++;
    }
    return NULL;
}

static void job_free(Job *j) {
    int8_weights_free(&j->q);
    int8_weights_free(&j->q2);
    if (j->bf16) bf16_weights_free(&j->b);
    free(j->x); free(j->W); free(j->W2); free(j->bias); free(j->want); free(j->got);
}

TEST(gemm_products_from_two_threads_at_once) {
    int bf16 = gemm_bf16_available();
    Job jobs[2];
    job_make(&jobs[0], 96, 128, 192, 1, bf16);
    job_make(&jobs[1], 130, 96, 160, 2, bf16);
    for (int i = 0; i < 2; i++) job_products(&jobs[i], jobs[i].want);   /* each alone */
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, job_run, &jobs[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(jobs[i].mismatches == 0, "thread %d: %d of %d rounds differ from the thread alone (bf16 %s)", i,
                  jobs[i].mismatches, ROUNDS, bf16 ? "too" : "not on this CPU");
        job_free(&jobs[i]);
    }
}
