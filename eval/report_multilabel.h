/* report_multilabel.h — the dev figures of a multi-label run in the HTML
 * report: each label's F1 as bars (under the run's prediction rule, its
 * tuned thresholds included) and the threshold curve, micro-F1 of one
 * global threshold from 0.05 to 0.95, with the macro-F1 beside it. Made
 * from dev probabilities the way `glue eval` makes them (report_dev.c). */
#ifndef GLUE_REPORT_MULTILABEL_H
#define GLUE_REPORT_MULTILABEL_H

#include "eval/report_page.h"
#include "tasks/task.h"

typedef struct Decision Decision;

/* prob (d->n, K) of d's rows; rule: the run's (train/decision.h); id: a
 * unique slug for the element ids; title names the run. */
void report_multilabel_dev(ReportPage *p, const Task *t, const Dataset *d, const float *prob, const Decision *rule,
                           const char *id, const char *title);

#endif
