/* progress.c — progress bar / log lines on stderr (see progress.h). */
#include "core/progress.h"

#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/common.h"

enum { PROGRESS_BAR_CELLS = 20, PROGRESS_DEFAULT_WIDTH = 80, PROGRESS_LINE_MAX = 512 };

/* Least seconds between two draws. */
static double progress_interval(const Progress *p) {
    return p->mode == PROGRESS_BAR ? 1.0 / PROGRESS_BAR_HZ : PROGRESS_LINE_SECONDS;
}

static int progress_columns(FILE *out) {
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
    return PROGRESS_DEFAULT_WIDTH;
}

void progress_start_at(Progress *p, FILE *out, const char *label, long total, ProgressMode mode, double now) {
    memset(p, 0, sizeof *p);
    p->out = out;
    if (mode == PROGRESS_AUTO) mode = isatty(fileno(out)) ? PROGRESS_BAR : PROGRESS_LINES;
    p->mode = mode;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->unit = "it";
    p->total = total;
    p->start = now;
    p->last_draw = now;
    p->width = mode == PROGRESS_BAR ? progress_columns(out) : PROGRESS_LINE_MAX;
}

void progress_start(Progress *p, const char *label, long total, ProgressMode mode) {
    progress_start_at(p, stderr, label, total, mode, now_seconds());
}

/* "1:05" or "2:03:07". */
static void progress_duration(char *buf, size_t cap, double secs) {
    long s = secs > 0 && secs < 1e9 ? (long)(secs + 0.5) : 0;
    if (s >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, cap, "%ld:%02ld", s / 60, s % 60);
}

/* "950", "12.3k", "4.56M". */
static void progress_rate(char *buf, size_t cap, double r) {
    if (r >= 1e6) snprintf(buf, cap, "%.2fM", r / 1e6);
    else if (r >= 1e4) snprintf(buf, cap, "%.1fk", r / 1e3);
    else if (r >= 100) snprintf(buf, cap, "%.0f", r);
    else snprintf(buf, cap, "%.2f", r);
}

/* Appends to buf (cap) at *at, never past the end. */
static void progress_appendf(char *buf, size_t cap, size_t *at, const char *fmt, ...) {
    if (*at >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, cap - *at, fmt, ap);
    va_end(ap);
    if (n > 0) *at = *at + (size_t)n < cap ? *at + (size_t)n : cap;
}

/* "[#####...............]" for a fraction in [0, 1]. */
static void progress_bar_cells(char *bar, double frac) {
    int full = (int)(frac * PROGRESS_BAR_CELLS);
    bar[0] = '[';
    for (int i = 0; i < PROGRESS_BAR_CELLS; i++) bar[i + 1] = i < full ? '#' : '.';
    bar[PROGRESS_BAR_CELLS + 1] = ']';
    bar[PROGRESS_BAR_CELLS + 2] = ' ';
    bar[PROGRESS_BAR_CELLS + 3] = '\0';
}

void progress_format(const Progress *p, long done, double now, int final, char *buf, size_t cap) {
    double secs = now - p->start, rate = secs > 0 ? (double)done / secs : 0.0;
    char rs[32], ts[32], bar[PROGRESS_BAR_CELLS + 4] = "";
    size_t at = 0;
    progress_rate(rs, sizeof rs, rate);
    buf[0] = '\0';
    progress_appendf(buf, cap, &at, "%s", p->label);
    if (p->total > 0) {
        double frac = (double)done / (double)p->total;
        frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
        if (p->mode == PROGRESS_BAR) progress_bar_cells(bar, frac);
        double eta = rate > 0 ? (double)(p->total - done) / rate : 0.0;
        progress_duration(ts, sizeof ts, final ? secs : eta);
        progress_appendf(buf, cap, &at, " %3.0f%% %s%ld/%ld %s %s/s %s %s", 100.0 * frac, bar, done, p->total,
                         rs, p->unit, final ? "took" : "ETA", ts);
    } else {
        progress_duration(ts, sizeof ts, secs);
        progress_appendf(buf, cap, &at, " %ld %s %s %s/s %s", done, p->unit, rs, p->unit, ts);
    }
    if (p->text[0]) progress_appendf(buf, cap, &at, "  %s", p->text);
}

/* Writes the line for `done` (BAR: in place; LINES: a new line). */
static void progress_draw(Progress *p, long done, double now, int final) {
    char line[PROGRESS_LINE_MAX];
    progress_format(p, done, now, final, line, sizeof line);
    if (p->mode == PROGRESS_BAR) {
        int keep = p->width - 1 < (int)sizeof line - 1 ? p->width - 1 : (int)sizeof line - 1;
        if ((int)strlen(line) > keep) line[keep] = '\0';
        /* \033[K clears what a longer previous line left behind. */
        fprintf(p->out, "\r%s\033[K%s", line, final ? "\n" : "");
        p->drawn = !final;
    } else {
        fprintf(p->out, "%s\n", line);
    }
    fflush(p->out);
    p->last_draw = now;
}

int progress_update_at(Progress *p, long done, double now, const char *text) {
    p->done = done;
    if (p->mode == PROGRESS_QUIET) return 0;
    if (now - p->last_draw < progress_interval(p)) return 0;
    if (text) snprintf(p->text, sizeof p->text, "%s", text);
    progress_draw(p, done, now, 0);
    return 1;
}

void progress_finish_at(Progress *p, double now, const char *text) {
    if (p->mode == PROGRESS_QUIET) return;
    if (text) snprintf(p->text, sizeof p->text, "%s", text);
    progress_draw(p, p->done, now, 1);
}

/* text = fmt with the caller's arguments (when fmt is not NULL). A macro:
 * va_start belongs to the variadic function itself. */
#define PROGRESS_FORMAT(text, fmt)                     \
    do {                                               \
        if (fmt) {                                     \
            va_list ap_;                               \
            va_start(ap_, fmt);                        \
            vsnprintf(text, sizeof text, fmt, ap_);    \
            va_end(ap_);                               \
        }                                              \
    } while (0)

int progress_due(const Progress *p) {
    return p->mode != PROGRESS_QUIET && now_seconds() - p->last_draw >= progress_interval(p);
}

void progress_update(Progress *p, long done, const char *fmt, ...) {
    double now = now_seconds();
    p->done = done;
    /* Format the text only when it will be shown. */
    if (p->mode == PROGRESS_QUIET || now - p->last_draw < progress_interval(p)) return;
    char text[PROGRESS_TEXT_MAX];
    PROGRESS_FORMAT(text, fmt);
    progress_update_at(p, done, now, fmt ? text : NULL);
}

void progress_finish(Progress *p, const char *fmt, ...) {
    char text[PROGRESS_TEXT_MAX];
    PROGRESS_FORMAT(text, fmt);
    progress_finish_at(p, now_seconds(), fmt ? text : NULL);
}
