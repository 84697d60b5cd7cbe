/* schedule.h — learning-rate schedules: constant, warm-up + linear decay to 0
 * (BERT), warm-up + cosine decay, inverse square root with warm-up (Vaswani
 * et al. 2017).
 *
 * `step` is the 0-based index of the optimizer step about to be taken, of
 * `total` planned. Warm-up (every kind, when warmup > 0) rises linearly:
 * lr * (step + 1) / warmup for step < warmup, so the first step is not wasted
 * at lr 0 and step warmup - 1 reaches the peak lr. After it, with
 * p = (step - warmup) / (total - warmup) clamped to [0, 1]:
 *   constant  lr
 *   linear    lr * (1 - p)
 *   cosine    lr * (1 + cos(pi p)) / 2
 *   inv_sqrt  lr * sqrt(warmup / (step + 1))   (total unused; warmup 0 acts
 *             as 1). Vaswani's d^-0.5 * min(s^-0.5, s * w^-1.5) is this with
 *             peak lr = (d * w)^-0.5.
 * warmup_float: the warm-up in float arithmetic as fine-tuning has always
 * computed it (another last bit than in double for about a quarter of the
 * steps: fine-tuned checkpoints stay bit-identical). rewarm (0: off): a run
 * continued from weights with a fresh optimizer (pretraining's init_step)
 * gets the rate times min(1, (step - rewarm_from + 1) / rewarm). */
#ifndef GLUE_SCHEDULE_H
#define GLUE_SCHEDULE_H

typedef enum {
    SCHEDULE_CONSTANT,
    SCHEDULE_LINEAR,
    SCHEDULE_COSINE,
    SCHEDULE_INV_SQRT,
} ScheduleKind;

typedef struct {
    ScheduleKind kind;
    float lr;     /* peak learning rate */
    long warmup;  /* warm-up steps */
    long total;   /* planned steps */
    int warmup_float;          /* see above; 0: in double, rounded once */
    long rewarm_from, rewarm;  /* see above; rewarm 0: off */
} Schedule;

float schedule_lr(const Schedule *s, long step);
/* "constant", "linear", "cosine", "inv_sqrt" -> kind; -1 after a message
 * listing the names when unknown. */
int schedule_parse(const char *name, ScheduleKind *kind);

#endif
