/* files.h — the file helpers every layer shares: mkdir -p, whole-file reads,
 * JSON files, and atomic writes (a temporary beside the target, flushed to
 * disk, then rename()d over it, so a crash or a full disk never leaves half a
 * file where a good one was).
 *
 * Temporaries are named "<path>.tmp.<pid>": two processes writing the same
 * file (two pretraining runs filling one token cache) each rename a complete
 * file of their own; neither finds its temporary taken by the other.
 *
 *   AtomicFile a;
 *   FILE *f = atomic_open(&a, path);        // NULL: said why
 *   if (!f) return -1;
 *   fprintf(f, ...);
 *   return atomic_commit(&a);               // 0, or -1 having said why
 *
 * Writers that take a path rather than a FILE (checkpoint writers, a model's
 * save) use atomic_begin() and write to a.tmp themselves. */
#ifndef GLUE_FILES_H
#define GLUE_FILES_H

#include <stddef.h>
#include <stdio.h>

typedef struct cJSON cJSON;

/* mkdir -p. 0 ok; else prints why and returns -1. */
int file_make_dir(const char *dir);
int file_exists(const char *path);
/* A file or folder the repository ships (rel: "models/..."), from the
 * repository's top folder when it is there, else the copy `make install`
 * put in PREFIX/share/glue/ beside the running PREFIX/bin/glue: that copy's
 * path into out when it exists, else rel (a missing file is named as given).
 * Returns out. */
const char *file_shipped(const char *rel, char *out, size_t cap);
/* "<dir>/<file>" into out (cap bytes); DIE if it does not fit. */
void file_join(const char *dir, const char *file, char *out, size_t cap);
/* The Markdown twin of a table file: "x.json" -> "x.md" (any other name gets
 * ".md" appended), into out (cap bytes). */
void file_md_twin(const char *json_path, char *out, size_t cap);
/* Read a whole (small) file, NUL-terminated; NULL with errno set when it
 * cannot be read. */
char *file_read(const char *path, size_t *len);

/* Parse a JSON file. NULL when missing (with a message if report_missing) or
 * malformed (always with a message naming the file and line). */
cJSON *json_file_read(const char *path, int report_missing);
/* text[0..len) parsed as exactly one JSON value (whitespace may follow;
 * cJSON alone stops after the first value, so '{...}garbage' passed), or
 * NULL, no message. *end: where parsing stopped (the error, or the first
 * byte after the value); *trailing (may be NULL): 1 when a whole value was
 * followed by more. */
cJSON *json_parse_whole(const char *text, size_t len, const char **end, int *trailing);
/* Pretty-printed JSON, written atomically. 0 ok; else prints why, -1. */
int json_file_write(const char *path, const cJSON *json);
/* Resume records hold running sums that must come back bit for bit, but
 * cJSON prints a double with 15 digits whenever that reads back within a few
 * ulps, which is not exact. These store the double as a hexadecimal float
 * string ("%a", exact) and read it back (a plain JSON number is taken too). */
void json_add_exact(cJSON *object, const char *key, double value);
double json_exact(const cJSON *object, const char *key, double fallback);

/* path with the home directory written "~" (no machine's paths in results
 * and committed files); other paths as they are. */
void file_portable_path(const char *path, char *out, size_t cap);
/* A setting "key=value" with its value passed through file_portable_path
 * ("init=/home/u/run" -> "init=~/run"); without "=", the whole of it. */
void file_portable_setting(const char *setting, char *out, size_t cap);
/* The JSON file `from` written to `to` (atomically) with every string value of
 * its top level, and every string in its top-level arrays, passed through
 * file_portable_path: a run's config or results made fit to commit. 0 ok; else
 * -1 after a message. */
int json_file_copy_portable(const char *from, const char *to);
/* j as one line of JSON on stdout (what --json prints). */
void json_print_line(const cJSON *j);

typedef struct AtomicFile {
    FILE *f;      /* open on tmp after atomic_open; NULL after atomic_begin */
    char *path;   /* the target */
    char *tmp;    /* the temporary beside it */
} AtomicFile;

/* Names the temporary for path (nothing is opened). */
void atomic_begin(AtomicFile *a, const char *path);
/* atomic_begin, then opens the temporary for writing (binary). NULL when it
 * cannot be created (said why; a is released). */
FILE *atomic_open(AtomicFile *a, const char *path);
/* Checks the stream for write errors, flushes it to disk, closes it and
 * renames the temporary over the target. 0 ok; else one message naming the
 * target, the temporary removed, -1. Releases a either way. */
int atomic_commit(AtomicFile *a);
/* Gives up: closes and removes the temporary, releases a. */
void atomic_abort(AtomicFile *a);
/* The whole of data as path, atomically. 0 ok; else prints why, -1. */
int atomic_write(const char *path, const void *data, size_t len);

/* Removes dir and everything under it (rm -rf); quiet when it is missing.
 * 0, or -1 with errno set. */
int file_remove_tree(const char *dir);
/* Called after every rename that publishes a write (atomic_commit, a
 * checkpoint, a resume point, a run swapped in). A test hook: with
 * GLUE_TEST_KILL_AFTER_WRITES=N in the environment the process kills itself
 * (SIGKILL) right after its Nth, so a test can stop a run at every point of
 * its writes; without it, nothing. */
void file_write_point(void);

#endif
