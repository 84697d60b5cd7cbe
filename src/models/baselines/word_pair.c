/* word_pair.c — [u; v; |u - v|; u * v] and its gradient (see word_pair.h). */
#include "models/baselines/word_pair.h"

#include <math.h>
#include <string.h>

int word_pair_task(const Dataset *train) {
    if (train->split) return train->split->col_b >= 0;
    return train->n > 0 && train->ex[0].b != NULL;
}

void word_pair_features(float *feat, const float *enc, int n, int H, int pair) {
    if (!pair) {
        memcpy(feat, enc, (size_t)n * H * sizeof *feat);
        return;
    }
    for (int i = 0; i < n; i++) {
        const float *u = enc + (long)i * H, *v = enc + (long)(n + i) * H;
        float *f = feat + (long)i * 4 * H;
        for (int h = 0; h < H; h++) {
            f[h] = u[h];
            f[H + h] = v[h];
            f[2 * H + h] = fabsf(u[h] - v[h]);
            f[3 * H + h] = u[h] * v[h];
        }
    }
}

void word_pair_features_backward(float *denc, const float *dfeat, const float *feat, int n, int H, int pair) {
    if (!pair) {
        memcpy(denc, dfeat, (size_t)n * H * sizeof *denc);
        return;
    }
    for (int i = 0; i < n; i++) {
        const float *g = dfeat + (long)i * 4 * H, *f = feat + (long)i * 4 * H;
        float *du = denc + (long)i * H, *dv = denc + (long)(n + i) * H;
        for (int h = 0; h < H; h++) {
            float u = f[h], v = f[H + h], ga = g[2 * H + h], gm = g[3 * H + h];
            float sgn = u > v ? 1.0f : u < v ? -1.0f : 0.0f;
            du[h] = g[h] + sgn * ga + v * gm;
            dv[h] = g[H + h] - sgn * ga + u * gm;
        }
    }
}
