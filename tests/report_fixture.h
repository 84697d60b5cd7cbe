/* report_fixture.h — a small world for the `glue report` tests, made in a
 * mktemp directory: synthetic SST-2 and STS-B data, two finished fastText
 * runs trained on them through the glue binary (so the report can load their
 * checkpoints and predict dev), an unfinished run (config.json only), a
 * results directory with one file of each kind the report reads (compare,
 * seeds, translation, BERT and fastText benchmarks, one with a CPU and one
 * without) plus a corrupt one, and a gzip pretraining log with a bad line.
 * The numbers written are known to the tests (REPORT_FX_*). */
#ifndef GLUE_TESTS_REPORT_FIXTURE_H
#define GLUE_TESTS_REPORT_FIXTURE_H

typedef struct ReportFixture {
    char root[128];
    char env[1024];   /* "GLUE_DATA=... GLUE_RUNS=... GLUE_RESULTS=..." */
} ReportFixture;

#define REPORT_FX_CPU "Fixture CPU 9000"
#define REPORT_FX_COMMIT "abc1234"
/* The seeds row's GLUE score: seeds 1 and 2 of SST-2 (90, 92) with alpha's
 * STS-B task score (55) give 72.5 and 73.5. */
#define REPORT_FX_SEEDS_GLUE 73.0
#define REPORT_FX_SEEDS_GLUE_SD 0.70710678118654757
#define REPORT_FX_DEV_ROWS 200

typedef struct ReportFile {
    const char *name, *text;
} ReportFile;

/* Writes n files into root/dir (created); 0, or -1 when one cannot be written. */
int report_fixture_write(const ReportFixture *fx, const char *dir, const ReportFile *files, int n);
/* Makes everything; 0, or -1 after a failed check (the directory is removed then). */
int report_fixture_make(ReportFixture *fx);
void report_fixture_remove(ReportFixture *fx);
/* `glue report ARGS` run in the fixture's root (stderr into root/report.err;
 * --out report.html unless ARGS has --out); the exit status into *status.
 * Returns the page (root/report.html), malloc'd, or NULL when not written. */
char *report_fixture_page(const ReportFixture *fx, const char *args, int *status);
/* Whole file, malloc'd; NULL when unreadable. */
char *report_fixture_read(const char *path);

#endif
