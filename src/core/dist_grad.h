/* dist_grad.h — the data-parallel gradient of a global batch's mean.
 *
 * Under `mpirun -np N` each rank computes the gradient of ITS rows' mean loss
 * (its share of the global batch: rows / global rows); that gradient times
 * the share, summed over the ranks, is the gradient of the global batch's
 * mean on every rank, before the identical clip and optimizer step. The sum
 * goes in buckets (dist.h DistBuckets) started as soon as a backward says
 * the floats they cover are final, so that it overlaps the backward:
 *
 *   s = dist_grad_sum_create(grad, n, bucket_mb);   once (NULL in one process)
 *   dist_grad_sum_begin(s, share);                  each step, before the backward
 *   dist_grad_sum_ready(s, lo);                     from the backward: floats [lo, n) are final
 *   dist_grad_sum_finish(s);                        after it: scales and starts the rest, waits
 *
 * Every call does nothing on a NULL s, so one-process code calls them as they
 * are. The array must be dense (no sparse rows: another rank's rows would
 * escape this rank's touched set) and must not move while s lives. */
#ifndef GLUE_DIST_GRAD_H
#define GLUE_DIST_GRAD_H

typedef struct DistGradSum DistGradSum;

/* Over grad (n floats) in buckets of bucket_mb MiB (0: one sum after the
 * backward); NULL in one process. */
DistGradSum *dist_grad_sum_create(float *grad, long n, double bucket_mb);
void dist_grad_sum_free(DistGradSum *s);
/* share: this rank's rows over the global batch's (0 for a rank given none of
 * a short last batch: it still joins the sum). */
void dist_grad_sum_begin(DistGradSum *s, double share);
/* A backward's listener (void * for the models' callback pointers): floats
 * [lo, n) are final; they are scaled and the buckets wholly inside start. */
void dist_grad_sum_ready(void *s, long lo);
void dist_grad_sum_finish(DistGradSum *s);

#endif
