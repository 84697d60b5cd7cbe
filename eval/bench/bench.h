/* bench.h — `glue bench <what>`: side-by-side measurements against a reference
 * implementation on this machine (DESIGN §7). Each benchmark is a subcommand in
 * src/cli/cmd_bench.c's table; the helpers below are what they share: summary
 * statistics of repeated timings as JSON, running a reference tool as a child process,
 * and writing the results file. */
#ifndef GLUE_BENCH_H
#define GLUE_BENCH_H

#include <stddef.h>

#include "core/stats.h"

typedef struct cJSON cJSON;

/* Benchmarks: argv[0] is the subcommand name; return the process exit code. */
int bench_fasttext(int argc, char **argv);
int bench_bert(int argc, char **argv);
int bench_scaling(int argc, char **argv);
int bench_rnn(int argc, char **argv);

/* {"median": .., "min": .., "max": ..} of repeated timings (core/stats.h). */
cJSON *bench_stats_json(Summary s);

/* Run argv[0] (a path) with argv, stdout to stdout_path (NULL: /dev/null) and
 * stderr to stderr_path (NULL: /dev/null); waits. Returns the exit status, or
 * -1 when it could not start or died by a signal. *seconds (may be NULL) gets
 * the wall time from spawn to exit. */
int bench_spawn(const char *const *argv, const char *stdout_path, const char *stderr_path, double *seconds);

/* A fresh private directory under $TMPDIR (or /tmp) into out; 0 ok, -1 after a
 * message. The caller removes it with file_remove_tree (core/files.h): runs
 * write folders inside it (a resume point's run0/resume/...). */
int bench_tmpdir_make(const char *tag, char *out, size_t cap);

/* Writes json to <results root>/<name> (atomically, creating the directory) and
 * says where on stderr. 0 ok, -1 after a message. */
int bench_write_results(const char *name, const cJSON *json);

/* "bench/<cpu>" under the results root, where BERT speed results go: one
 * directory per CPU model (numbers from different CPUs are not comparable),
 * <cpu> being core/kernels.h's CPU name in lower case with every run of other
 * characters a '-', e.g. "bench/amd-epyc-family-25-model-17". */
void bench_cpu_dir(char *out, size_t cap);

#endif
