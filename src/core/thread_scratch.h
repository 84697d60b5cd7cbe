/* thread_scratch.h — scratch buffers owned by the calling thread.
 *
 * The packed-operand products (core/gemm_bf16, gemm_amx, gemm_int8) need
 * scratch that grows to the largest product seen and is kept between calls:
 * allocating per call costs more than a small product. Kept in one global,
 * two threads calling products at once (two models served side by side, two
 * handles of the library, which share nothing) packed into the same buffer
 * and each read the other's numbers. Here each calling thread has its own
 * buffers (a POSIX thread-specific key, not _Thread_local, so that they are
 * freed when the thread exits: libgomp replaces its workers when a team of
 * another size is asked for, and their buffers leaked). A product asks for
 * its team's scratch from the calling thread and gives each team thread its
 * own part (gemm_bf16, gemm_int8), or each worker asks for its own (sgemm).
 *
 * A buffer is 64-byte aligned and holds at least the bytes asked; its
 * contents are not kept when it grows. One slot per use, so two buffers one
 * product needs at once never alias. */
#ifndef GLUE_THREAD_SCRATCH_H
#define GLUE_THREAD_SCRATCH_H

#include <stddef.h>

typedef enum {
    SCRATCH_SGEMM_A,         /* core/sgemm's packed A block (each OpenMP worker its own) */
    SCRATCH_SGEMM_B,         /* and packed B panel */
    SCRATCH_BF16_X_BLOCKS,   /* gemm_bf16 inference: each team thread's packed rows of x */
    SCRATCH_BF16_PAIRS_A,    /* bf16 training products: op(A) as pairs (bf16_pairs_scratch 0) */
    SCRATCH_BF16_PAIRS_B,    /* op(B) as pairs (1) */
    SCRATCH_BF16_PARTIAL,    /* gemm_amx's fp32 partial sums (2) */
    SCRATCH_INT8_Q,          /* gemm_int8: the quantized rows of x */
    SCRATCH_INT8_Z,          /* their zero points */
    SCRATCH_INT8_SX,         /* their scales */
    SCRATCH_INT8_BLOCKS,     /* each team thread's output block before the hand-over */
    THREAD_SCRATCH_SLOTS
} ThreadScratchSlot;

/* The calling thread's buffer `slot`, grown to at least `bytes`. */
void *thread_scratch(ThreadScratchSlot slot, size_t bytes);

#endif
