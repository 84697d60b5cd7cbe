/* cli_fixture.h — a scratch folder of tiny data files and `glue` runs in it,
 * for the tests that check what the commands say and exit with on bad input
 * (tests only). Every run gets GLUE_DATA, GLUE_RUNS and GLUE_RESULTS inside
 * the folder, so nothing lands in the repository. */
#ifndef GLUE_TESTS_CLI_FIXTURE_H
#define GLUE_TESTS_CLI_FIXTURE_H

#include "tests/scratch.h"

#include <stddef.h>

typedef struct CliFixture {
    char dir[SCRATCH_PATH_MAX];   /* the scratch folder ("" when it could not be made) */
} CliFixture;

/* A fresh folder; 0, or -1 after a failed check. */
int cli_fixture_open(CliFixture *f);
/* Removes the folder and everything in it. */
void cli_fixture_close(CliFixture *f);
/* Writes text (n bytes; n < 0: strlen) to dir/name, making sub-folders. 0 or -1. */
int cli_fixture_write(const CliFixture *f, const char *name, const char *text, long n);
/* dir/name into out. */
void cli_fixture_path(const CliFixture *f, const char *name, char *out, size_t cap);
/* A two-class TSV "text<TAB>label" of rows rows (header first) whose classes
 * ("pos", "neg") a bag of words separates, into dir/name. 0 or -1. */
int cli_fixture_two_class(const CliFixture *f, const char *name, int rows);
/* Runs `glue <args>` in dir (stdout and stderr together); the exit status
 * (-1: killed by a signal) in *status. Caller frees the output. */
char *cli_fixture_glue(const CliFixture *f, const char *args, int *status);
/* Checks that `glue <args>` exits with want_status and (unless want is NULL)
 * says want; the output is shown when not. */
void cli_fixture_says(const CliFixture *f, const char *args, int want_status, const char *want);
/* The glue binary under test as an absolute path (commands run in dir). */
const char *cli_fixture_bin(void);
/* 1 when dir/name exists. */
int cli_fixture_exists(const CliFixture *f, const char *name);

#endif
