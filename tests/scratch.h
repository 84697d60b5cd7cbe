/* scratch.h — the one way the tests make scratch folders and files.
 *
 * Every test that needs a temporary path asks here, instead of spelling its own
 * "/tmp/glue_..._XXXXXX" template: the tests then honour $TMPDIR (a machine
 * whose /tmp is small or read-only runs them with TMPDIR=elsewhere; unset or
 * empty means /tmp), and a path that would not fit its buffer is refused, not
 * cut short. Names are $TMPDIR/glue_<tag>_XXXXXX, made unique by mkdtemp or
 * mkstemp. The caller removes what it made. (eval/bench/bench_common.c does
 * the same for the benchmarks; the fuzz harnesses keep their /dev/shm.)
 * Tests only. */
#ifndef GLUE_TESTS_SCRATCH_H
#define GLUE_TESTS_SCRATCH_H

#include <stddef.h>

/* The buffer of a scratch path: room for a $TMPDIR of up to some 100
 * characters (a longer one is refused, never cut short). The paths a test
 * builds under a scratch folder go in buffers with room for this much plus
 * what it appends. */
enum { SCRATCH_PATH_MAX = 128 };

/* Makes the directory $TMPDIR/glue_<tag>_XXXXXX; out (cap bytes) receives its
 * path. 1 on success; 0 if the path does not fit in cap or mkdtemp fails
 * (out is then the empty string). */
int scratch_dir(const char *tag, char *out, size_t cap);

/* Makes and opens the file $TMPDIR/glue_<tag>_XXXXXX (read-write, mode 0600);
 * out (cap bytes) receives its path. Returns the open descriptor, or -1 if the
 * path does not fit or mkstemp fails (out is then the empty string). */
int scratch_file(const char *tag, char *out, size_t cap);

#endif
