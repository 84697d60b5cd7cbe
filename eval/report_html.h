/* report_html.h — `glue report`: one self-contained HTML page of every run.
 *
 * The page is inline SVG and CSS only (no script, nothing fetched: it opens
 * from disk and prints), generated from what the program already wrote (see
 * report_inputs.h for the files read, report_sections.h for the sections).
 * Missing or unreadable inputs are listed at the top of the page; the page is
 * written whatever is missing. */
#ifndef GLUE_REPORT_HTML_H
#define GLUE_REPORT_HTML_H

typedef struct ReportOptions {
    const char *results_dir;           /* results/ (GLUE tables, translation, benchmarks) */
    const char *runs_dir;              /* runs/ (run directories) */
    const char *const *pretrain_dirs;  /* pretraining runs to chart besides those in runs_dir */
    int npretrain;
    int predict;                       /* make dev predictions from the runs' checkpoints */
    const char *command;               /* the command line, shown in the page */
    const char *out_path;
} ReportOptions;

/* Writes the page (through a temporary file, renamed at the end). Returns 0,
 * or 1 after a message when the output cannot be written. *num_missing (may
 * be NULL) gets how many missing-input notes the page has. */
int report_html_write(const ReportOptions *o, int *num_missing);

#endif
