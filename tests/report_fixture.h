/* report_fixture.h — a small world for the `glue report` tests, made in a
 * mktemp directory: synthetic SST-2 and STS-B data, two finished fastText
 * runs trained on them through the glue binary (so the report can load their
 * checkpoints and predict dev), an unfinished run (config.json only), a
 * results directory with one file of each kind the report reads (a compare
 * over three seeds, eval all, seeds, protocol, pretraining screen,
 * translation, BERT benchmarks in results/bench/<cpu>/, fastText and scaling
 * benchmarks, one with a CPU and one without, fuzzing and a fuzzing
 * campaign) plus a corrupt one, and a gzip pretraining log with a bad line.
 * The numbers written are known to the tests (REPORT_FX_*). */
#ifndef GLUE_TESTS_REPORT_FIXTURE_H
#define GLUE_TESTS_REPORT_FIXTURE_H

typedef struct ReportFixture {
    char root[128];
    char env[1024];   /* "GLUE_DATA=... GLUE_RUNS=... GLUE_RESULTS=..." */
} ReportFixture;

#define REPORT_FX_CPU "Fixture CPU 9000"
#define REPORT_FX_CPU_DIR "fixture-cpu-9000"
#define REPORT_FX_COMMIT "abc1234"
/* The seeds row's GLUE score, from the seeds files alone: seed 1 has SST-2 90
 * and STS-B (50 + 60) / 2, seed 2 SST-2 92 and STS-B (54 + 58) / 2, GLUE 72.5
 * and 74 (alpha's single run, glue_alpha.json, is never mixed in). */
#define REPORT_FX_SEEDS_GLUE 73.25
#define REPORT_FX_SEEDS_GLUE_SD 1.0606601717798212
/* compare.json's spreads of alpha (SST-2 score, GLUE), shown as ±. */
#define REPORT_FX_COMPARE_SD 1.3567
#define REPORT_FX_COMPARE_SD_TEXT "1.3567"
#define REPORT_FX_COMPARE_GLUE_SD 1.1815
#define REPORT_FX_COMPARE_GLUE_SD_TEXT "1.1815"
/* The pretraining screen's proxy score, the scaling ratio, the fuzzing total. */
#define REPORT_FX_PROXY 80.875
#define REPORT_FX_PROXY_TEXT "80.875"
#define REPORT_FX_SCALING 1.0871
#define REPORT_FX_SCALING_TEXT "1.0871"
#define REPORT_FX_FUZZ_EXECS 1540238
#define REPORT_FX_FUZZ_EXECS_TEXT "1540238"
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
