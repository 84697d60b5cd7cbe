/* gradcheck.h — finite-difference gradient checker for the nn ops (tests only).
 *
 * For a scalar loss L = sum_i out_i * R_i with a fixed random R (so every output
 * element matters, with its own weight), it compares the analytic gradient of
 * each registered tensor (the op's backward with dout = R) against the central
 * difference (L(x + eps) - L(x - eps)) / (2 eps), element by element: all of
 * them, or a random sample for big tensors. The forward runs in float as in
 * production; L is accumulated in double so that untouched outputs cancel exactly.
 *
 * An element passes when |a - n| <= rtol * max(floor, |a| + |n|).
 *
 * Why eps = 1e-2 by default: the forward is float, so each output carries ~6e-8
 * relative rounding that the difference quotient divides by eps, while the
 * truncation error of the central difference grows as eps^2. Measured on these ops
 * with O(1) inputs, eps = 1e-3 puts the worst element at 0.3-0.55 of the tolerance
 * from rounding alone, eps = 1e-2 at 0.01-0.08 — so a real error of a few percent
 * still fails (see nn_gradcheck_catches_wrong_gradients). Ops with kinks (ReLU,
 * max pooling) need inputs further than eps from the kink. */
#ifndef GLUE_TESTS_GRADCHECK_H
#define GLUE_TESTS_GRADCHECK_H

#include <stdint.h>

#define GRADCHECK_MAX_TENSORS 32

typedef struct {
    const char *name;
    float *x;      /* values; perturbed in place (and restored) during the check */
    float *grad;   /* analytic gradient: zeroed by the checker, filled by backward */
    long n;
} GcTensor;

typedef struct {
    void *ctx;
    void (*forward)(void *ctx);                     /* recompute out from the tensors */
    void (*backward)(void *ctx, const float *dout); /* ADD grads into each GcTensor.grad */
    float *out;
    long n_out;
    GcTensor tensors[GRADCHECK_MAX_TENSORS];
    int n_tensors;
    float eps;        /* perturbation (default 1e-2, see above) */
    float rtol;       /* relative tolerance (default 1e-2) */
    float floor;      /* scale below which the tolerance becomes absolute (default 1e-2) */
    int max_samples;  /* elements checked per tensor at most (default 256, one per stratum) */
    uint64_t seed;    /* for R and the sample */
} GradCheck;

/* Worst element of one tensor. */
typedef struct {
    double worst_ratio;   /* |a - n| / (rtol * max(floor, |a| + |n|)); > 1 fails */
    long worst_index, checked, failures;
    double worst_analytic, worst_numeric;
} GcResult;

/* Defaults as above; add tensors with gradcheck_add. */
void gradcheck_init(GradCheck *g, void *ctx, void (*forward)(void *), void (*backward)(void *, const float *),
                    float *out, long n_out);
void gradcheck_add(GradCheck *g, const char *name, float *x, float *grad, long n);

/* Runs the check; res[t] (n_tensors entries) gets each tensor's result. Returns the
 * total number of failing elements. */
long gradcheck_run(const GradCheck *g, GcResult *res);

/* gradcheck_run plus one CHECK per tensor naming `what`, the tensor and its worst
 * element. Returns 1 when everything passed. */
int gradcheck_expect(const GradCheck *g, const char *what);

/* x (n) uniform in [lo, hi) from a seeded stream: test inputs. */
void gradcheck_fill(float *x, long n, float lo, float hi, uint64_t seed);

#endif
