/* schedule.c — learning-rate schedules (see schedule.h). */
#include "optim/schedule.h"

#include <math.h>
#include <string.h>

#include "core/common.h"

static const char *const SCHEDULE_NAMES[] = {"constant", "linear", "cosine", "inv_sqrt"};
enum { NUM_SCHEDULES = sizeof SCHEDULE_NAMES / sizeof SCHEDULE_NAMES[0] };

/* The rate before re-warm-up. */
static float schedule_base(const Schedule *s, long step) {
    double lr = s->lr;
    if (step < 0) step = 0;
    if (s->warmup > 0 && step < s->warmup)
        return s->warmup_float ? s->lr * (float)(step + 1) / (float)s->warmup
                               : (float)(lr * (double)(step + 1) / (double)s->warmup);
    if (s->kind == SCHEDULE_INV_SQRT) {
        double w = s->warmup > 0 ? (double)s->warmup : 1.0;
        return (float)(lr * sqrt(w / (double)(step + 1)));
    }
    long span = s->total - s->warmup > 0 ? s->total - s->warmup : 1;
    double p = (double)(step - s->warmup) / (double)span;
    if (p > 1.0) p = 1.0;
    switch (s->kind) {
    case SCHEDULE_LINEAR: return (float)(lr * (1.0 - p));
    case SCHEDULE_COSINE: return (float)(lr * 0.5 * (1.0 + cos(M_PI * p)));
    default: return (float)lr;
    }
}

float schedule_lr(const Schedule *s, long step) {
    float lr = schedule_base(s, step);
    long k = step - s->rewarm_from + 1;
    if (s->rewarm > 0 && k < s->rewarm) return (float)((double)lr * ((double)k / (double)s->rewarm));
    return lr;
}

int schedule_parse(const char *name, ScheduleKind *kind) {
    for (int i = 0; i < NUM_SCHEDULES; i++)
        if (strcmp(name, SCHEDULE_NAMES[i]) == 0) {
            *kind = (ScheduleKind)i;
            return 0;
        }
    user_error("use one of: constant, linear, cosine, inv_sqrt", "unknown learning-rate schedule '%s'", name);
    return -1;
}
