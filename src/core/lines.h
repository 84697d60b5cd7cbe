/* lines.h — a streaming line reader over plain and gzip text files alike.
 *
 * Every dataset in the suite (GLUE TSVs, Multi30k, the pretraining corpus) is read
 * through this one reader: it takes `.tsv` and `.tsv.gz` transparently (zlib),
 * returns lines of any length without their "\n" or "\r\n", counts them, and tells
 * a clean end of file from a truncated or corrupt gzip stream — the usual result of
 * an interrupted download, which must be reported, never silently read as a short
 * dataset. Errors are returned as a status plus a message (never printed here), so
 * callers decide whether a missing file is an error or just "missing". */
#ifndef GLUE_LINES_H
#define GLUE_LINES_H

#include <stddef.h>

typedef enum {
    LINES_OK = 0,
    LINES_MISSING,     /* the file does not exist */
    LINES_TRUNCATED,   /* gzip stream ends early (interrupted download / copy) */
    LINES_CORRUPT,     /* gzip data or CRC error, or a .gz name on a plain file */
    LINES_IO,          /* any other read error (permissions, a directory, ...) */
} LinesStatus;

typedef struct LineReader {
    void *gz;          /* gzFile (opaque here so users need not include zlib.h) */
    char *path;
    char *buf;         /* bytes buf[beg..end) are read but not yet returned */
    size_t cap, beg, end;
    size_t scanned;    /* bytes after beg already searched for '\n' (long lines) */
    int eof;
    int expect_gzip;   /* the name ends in .gz: a plain file there is corrupt */
    long line_no;      /* lines returned so far (1-based number of the last line) */
    LinesStatus status;
    char err[512];     /* "path: what went wrong" when status != LINES_OK */
} LineReader;

/* Open a file (.gz or plain). Returns LINES_OK, or a status with r->err filled;
 * lines_close is safe to call either way. */
LinesStatus lines_open(LineReader *r, const char *path);
/* Standard input (plain or gzip) as a reader named "stdin" in its messages;
 * lines_close leaves the process's stdin open. */
LinesStatus lines_open_stdin(LineReader *r);
/* Next line, NUL-terminated, without "\n"/"\r\n"; valid until the next call.
 * Returns 1 for a line, 0 at a clean end of file, -1 on error (r->status, r->err).
 * A last line without a final newline is returned like any other. */
int lines_next(LineReader *r, char **line, size_t *len);
void lines_close(LineReader *r);
/* Print r->err as a user error (one line, with a re-fetch hint when truncated). */
void lines_report(const LineReader *r);

/* Find "path" or "path.gz", whichever exists (plain first). Returns 0 and writes
 * the found name to out; -1 when neither exists (out gets the plain path). */
int lines_find(const char *path, char *out, size_t cap);
/* lines_open on "path" or "path.gz", whichever exists (LINES_MISSING if neither). */
LinesStatus lines_open_any(LineReader *r, const char *path);
/* lines_open_any for readers that give up when the file cannot be opened: 0, or
 * -1 after reporting the error (r is closed then). */
int lines_open_or_report(LineReader *r, const char *path);

/* Count lines as lines_next would return them (a final unterminated line counts).
 * On error returns the status and, when err != NULL, the message. */
LinesStatus lines_count(const char *path, long *num_lines, char *err, size_t err_cap);
/* Decompress (or copy) src to dst byte for byte, counting lines on the way.
 * dst is created or truncated; on error dst may be partial (write to a temporary
 * name and rename). */
LinesStatus lines_copy(const char *src, const char *dst, long *num_lines, char *err, size_t err_cap);

#endif
