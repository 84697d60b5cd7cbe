/* positions.c — sinusoidal / learned absolute positions (see positions.h). */
#include "nn/positions.h"

#include <math.h>

#define POSITIONS_PARALLEL_MIN 32768  /* elements below which threads do not pay */

void positions_sinusoid(float *table, int T, int C) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C; i += 2) {
            double angle = t / pow(10000.0, (double)i / C);
            table[(long)t * C + i] = (float)sin(angle);
            if (i + 1 < C) table[(long)t * C + i + 1] = (float)cos(angle);
        }
}

void positions_add(float *x, const float *table, int B, int T, int C, int offset) {
    #pragma omp parallel for collapse(2) if ((long)B * T * C > POSITIONS_PARALLEL_MIN)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *row = x + ((long)b * T + t) * C;
            const float *p = table + (long)(offset + t) * C;
            for (int c = 0; c < C; c++) row[c] += p[c];
        }
}

void positions_backward(float *dtable, const float *dx, int B, int T, int C, int offset) {
    /* Parallel over positions, the batch summed in order: the same result for
     * any thread count. */
    #pragma omp parallel for if ((long)B * T * C > POSITIONS_PARALLEL_MIN)
    for (int t = 0; t < T; t++) {
        float *g = dtable + (long)(offset + t) * C;
        for (int b = 0; b < B; b++) {
            const float *row = dx + ((long)b * T + t) * C;
            for (int c = 0; c < C; c++) g[c] += row[c];
        }
    }
}
