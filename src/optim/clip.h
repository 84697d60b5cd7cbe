/* clip.h — global-norm gradient clipping (Pascanu et al. 2013; what BERT and
 * torch.nn.utils.clip_grad_norm_ do): the L2 norm over ALL gradients of the
 * arena, and if it exceeds max_norm every gradient is scaled by
 * max_norm / norm, so the clipped gradient has norm max_norm exactly (up to
 * float rounding) and keeps its direction. Sparse-rows tensors count only
 * their touched rows (the others are zero). A sharded arena (params_set_shard)
 * counts and scales its shard only. */
#ifndef GLUE_CLIP_H
#define GLUE_CLIP_H

#include "core/params.h"

/* The global L2 norm of p->grad, accumulated in double. */
double clip_compute_norm(const Params *p);
/* Clips to max_norm (<= 0: only measures) and returns the norm BEFORE
 * clipping. A non-finite norm is returned unchanged and nothing is scaled:
 * the caller should treat it as divergence. */
double clip_grad_norm(Params *p, float max_norm);

/* The same over several arenas as one model (ELECTRA's generator and
 * discriminator): one norm over all their gradients, one scale for all. */
double clip_grad_norm_many(Params *const *ps, int n, float max_norm);

/* clip_grad_norm_many in two halves, for arenas sharded over processes
 * (params_set_shard, ZeRO-1), where each measures and scales only its shard:
 * the sum of squares of the shards' gradients (sum it over the processes and
 * take the root: the global norm), then the scaling of the shards to
 * max_norm given that norm (nothing when it is within, or not finite). */
double clip_sumsq_many(Params *const *ps, int n);
void clip_scale_many(Params *const *ps, int n, float max_norm, double norm);

#endif
