/* report_sections.h — the sections of the HTML report, one file each:
 *   report_glue.c      the GLUE table (best per column marked, seed spread)
 *                      and a bar chart per task
 *   report_protocol.c  tables over seeds: glue protocol, glue pretrain screen
 *   report_curves.c    learning curves of runs, pretraining curves
 *   report_dev.c       dev predictions: confusion matrices, STS-B scatter
 *   report_measured.c  the translation table and the benchmarks
 *   report_fuzz.c      the fuzzing figures
 *   report_analysis.c  the tables of analyses that scripts write
 * Each writes <section id=...> with an <h2> to the page, or says in it what
 * is missing and which command would make it; report_html.c puts them in
 * order. */
#ifndef GLUE_REPORT_SECTIONS_H
#define GLUE_REPORT_SECTIONS_H

#include "eval/report_inputs.h"
#include "eval/report_page.h"

void report_section_glue(ReportPage *p, const ReportInputs *in);
void report_section_task_bars(ReportPage *p, const ReportInputs *in);
void report_section_protocol(ReportPage *p, const ReportInputs *in);
void report_section_curves(ReportPage *p, const ReportInputs *in);
/* The pretraining curves, then the screens (report_screens). */
void report_section_pretrain(ReportPage *p, const ReportInputs *in);
void report_screens(ReportPage *p, const ReportInputs *in);
/* Loads each run's model and predicts its task's dev split (data from
 * $GLUE_DATA or data/glue); predict = 0 skips that (and says so). */
void report_section_dev(ReportPage *p, const ReportInputs *in, int predict);
void report_section_translation(ReportPage *p, const ReportInputs *in);
void report_section_bench(ReportPage *p, const ReportInputs *in);
void report_section_fuzz(ReportPage *p, const ReportInputs *in);
void report_section_analyses(ReportPage *p, const ReportInputs *in);

/* The value of a JSON number field, NaN when absent. */
double report_num(const cJSON *o, const char *key);
/* The first member of o when it is an object, else NULL: files may hold an
 * array or a number where an object belongs, and array items have no names. */
const cJSON *report_members(const cJSON *o);
/* " ±0.61" after a mean: its sample std over seeds (nothing for a NaN). */
void report_sd(ReportPage *p, double sd);

#endif
