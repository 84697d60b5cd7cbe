/* optim_internal.h — what the update rules (sgd.c, adamw.c, adadelta.c,
 * clip.c) share and nobody else needs. */
#ifndef GLUE_OPTIM_INTERNAL_H
#define GLUE_OPTIM_INTERNAL_H

/* Spans shorter than this are updated on one thread: starting the OpenMP team
 * costs more than the work (a few microseconds). */
enum { OPTIM_PARALLEL_MIN = 1 << 15 };

/* The weight decay of tensor flags (0 for PARAM_NO_DECAY tensors). */
#define OPTIM_DECAY(o, flags) (((flags) & PARAM_NO_DECAY) ? 0.0 : (o)->weight_decay)

#endif
