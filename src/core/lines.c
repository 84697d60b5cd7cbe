/* lines.c — streaming line reader over plain and gzip files (see lines.h).
 *
 * gzread rather than gzgets: it gives byte counts, so lines of any length and
 * stray NUL bytes need no special cases, and one read path serves line reading,
 * counting and copying — all three must detect a truncated stream the same way. */
#include "core/lines.h"

#include "core/common.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum {
    LINES_CHUNK = 1 << 16,        /* bytes per gzread */
    LINES_GZ_BUFFER = 1 << 17,    /* zlib's own input buffer */
};

static LinesStatus reader_fail(LineReader *r, LinesStatus st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static LinesStatus reader_fail(LineReader *r, LinesStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->status = st;
    return st;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void reader_init(LineReader *r, const char *path) {
    memset(r, 0, sizeof *r);
    r->path = xstrdup(path);
    r->cap = 2 * LINES_CHUNK;
    r->buf = xmalloc(r->cap);
}

LinesStatus lines_open(LineReader *r, const char *path) {
    reader_init(r, path);
    r->expect_gzip = ends_with(path, ".gz");
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        if (errno == ENOENT) return reader_fail(r, LINES_MISSING, "%s: no such file", path);
        return reader_fail(r, LINES_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
    }
    gzbuffer(gz, LINES_GZ_BUFFER);
    r->gz = gz;
    return LINES_OK;
}

/* Read up to n bytes into dst. Returns the count, 0 at a clean end of file, -1 on
 * error (status and message set). zlib reports a stream that stops before its
 * trailer as Z_BUF_ERROR, either from gzread or from gzerror once at EOF. */
static long reader_read(LineReader *r, char *dst, size_t n) {
    if (r->status != LINES_OK) return -1;
    if (n > INT_MAX / 2) n = INT_MAX / 2;
    int k = gzread((gzFile)r->gz, dst, (unsigned)n);
    int errnum = Z_OK;
    const char *zmsg = gzerror((gzFile)r->gz, &errnum);
    if (r->expect_gzip && gzdirect((gzFile)r->gz))
        return reader_fail(r, LINES_CORRUPT, "%s: not a gzip file (but the name ends in .gz)", r->path), -1;
    if (k > 0 && errnum == Z_OK) return k;
    if (errnum == Z_BUF_ERROR)
        return reader_fail(r, LINES_TRUNCATED, "%s: truncated gzip stream — re-fetch with 'glue data fetch'",
                           r->path), -1;
    if (errnum == Z_DATA_ERROR)
        return reader_fail(r, LINES_CORRUPT, "%s: corrupt gzip data (%s) — re-fetch with 'glue data fetch'",
                           r->path, zmsg), -1;
    if (errnum == Z_ERRNO)
        return reader_fail(r, LINES_IO, "%s: read error: %s", r->path, strerror(errno)), -1;
    if (errnum != Z_OK || k < 0)
        return reader_fail(r, LINES_IO, "%s: read error: %s", r->path, zmsg), -1;
    return k;
}

/* Append more bytes after buf[end]: slide the unread part to the front, grow when a
 * single line fills the buffer. Keeps one spare byte for the NUL terminator. */
static long reader_fill(LineReader *r) {
    if (r->beg > 0) {
        memmove(r->buf, r->buf + r->beg, r->end - r->beg);
        r->end -= r->beg;
        r->beg = 0;
    }
    if (r->cap - r->end < LINES_CHUNK) {
        r->cap *= 2;
        r->buf = xrealloc(r->buf, r->cap);
    }
    long k = reader_read(r, r->buf + r->end, r->cap - r->end - 1);
    if (k > 0) r->end += (size_t)k;
    return k;
}

/* Terminate the line buf[beg, beg+n), strip a "\r" before the newline, advance. */
static void take_line(LineReader *r, size_t n, size_t consumed, char **line, size_t *len) {
    char *s = r->buf + r->beg;
    if (n > 0 && s[n - 1] == '\r') n--;
    s[n] = '\0';
    r->beg += consumed;
    r->scanned = 0;
    r->line_no++;
    *line = s;
    *len = n;
}

LinesStatus lines_open_stdin(LineReader *r) {
    reader_init(r, "stdin");
    /* gzclose closes the descriptor it was given: hand it a duplicate so
     * stdin stays open for the rest of the process. */
    int fd = dup(STDIN_FILENO);
    gzFile gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
    if (!gz) {
        if (fd >= 0) close(fd);
        return reader_fail(r, LINES_IO, "stdin: cannot read: %s", strerror(errno));
    }
    gzbuffer(gz, LINES_GZ_BUFFER);
    r->gz = gz;
    return LINES_OK;
}

int lines_next(LineReader *r, char **line, size_t *len) {
    if (r->status != LINES_OK || !r->gz) return -1;
    for (;;) {
        size_t avail = r->end - r->beg;
        char *nl = memchr(r->buf + r->beg + r->scanned, '\n', avail - r->scanned);
        if (nl) {
            size_t n = (size_t)(nl - (r->buf + r->beg));
            take_line(r, n, n + 1, line, len);
            return 1;
        }
        r->scanned = avail;
        if (r->eof) {
            if (avail == 0) return 0;
            take_line(r, avail, avail, line, len);   /* last line, no final newline */
            return 1;
        }
        long k = reader_fill(r);
        if (k < 0) return -1;
        if (k == 0) r->eof = 1;
    }
}

void lines_close(LineReader *r) {
    if (r->gz) gzclose_r((gzFile)r->gz);
    free(r->buf);
    free(r->path);
    r->gz = NULL;
    r->buf = NULL;
    r->path = NULL;
}

void lines_report(const LineReader *r) {
    /* A damaged stream is the file's contents; a missing or unreadable file is I/O. */
    if (r->status == LINES_TRUNCATED || r->status == LINES_CORRUPT)
        user_error_data(NULL, "%s", r->err[0] ? r->err : "damaged file");
    else
        user_error_io(NULL, "%s", r->err[0] ? r->err : "unknown read error");
}

int lines_find(const char *path, char *out, size_t cap) {
    struct stat st;
    snprintf(out, cap, "%s", path);
    if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) return 0;
    if (!ends_with(path, ".gz")) {
        snprintf(out, cap, "%s.gz", path);
        if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) return 0;
    }
    snprintf(out, cap, "%s", path);
    return -1;
}

LinesStatus lines_open_any(LineReader *r, const char *path) {
    char found[4096];
    lines_find(path, found, sizeof found);
    return lines_open(r, found);
}

int lines_open_or_report(LineReader *r, const char *path) {
    if (lines_open_any(r, path) == LINES_OK) return 0;
    lines_report(r);
    lines_close(r);
    return -1;
}

/* Shared loop of lines_count and lines_copy: stream raw chunks, count newlines,
 * optionally write them out. */
static LinesStatus stream_chunks(const char *src, FILE *out, const char *dst, long *num_lines,
                                 char *err, size_t err_cap) {
    LineReader r;
    long lines = 0;
    int last = '\n';
    if (lines_open(&r, src) == LINES_OK) {
        long k;
        while ((k = reader_read(&r, r.buf, r.cap)) > 0) {
            for (const char *p = r.buf, *e = r.buf + k; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
                lines++;
            last = (unsigned char)r.buf[k - 1];
            if (out && fwrite(r.buf, 1, (size_t)k, out) != (size_t)k) {
                reader_fail(&r, LINES_IO, "%s: write failed: %s", dst, strerror(errno));
                break;
            }
        }
    }
    if (last != '\n') lines++;
    LinesStatus st = r.status;
    if (err && err_cap) snprintf(err, err_cap, "%s", r.err);
    if (num_lines) *num_lines = lines;
    lines_close(&r);
    return st;
}

LinesStatus lines_count(const char *path, long *num_lines, char *err, size_t err_cap) {
    return stream_chunks(path, NULL, NULL, num_lines, err, err_cap);
}

LinesStatus lines_copy(const char *src, const char *dst, long *num_lines, char *err, size_t err_cap) {
    FILE *out = fopen(dst, "wb");
    if (!out) {
        if (err && err_cap) snprintf(err, err_cap, "%s: cannot create: %s", dst, strerror(errno));
        return LINES_IO;
    }
    LinesStatus st = stream_chunks(src, out, dst, num_lines, err, err_cap);
    if (fclose(out) != 0 && st == LINES_OK) {
        if (err && err_cap) snprintf(err, err_cap, "%s: write failed: %s", dst, strerror(errno));
        st = LINES_IO;
    }
    return st;
}
