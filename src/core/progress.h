/* progress.h — a progress display on stderr for anything that takes more than
 * a few seconds (training epochs, evaluation, pretraining, data fetch).
 *
 * On a terminal: one line redrawn in place at most PROGRESS_BAR_HZ times a
 * second — label, percent, bar, done/total, items/s, ETA and free-form text
 * ("loss 0.41 acc 88.2") — cut to the terminal width. When stderr is not a
 * terminal (CI logs, `2> log`): plain lines, one per update but at most one
 * every PROGRESS_LINE_SECONDS, so a log gets a readable trail instead of
 * thousands of carriage returns. Quiet mode prints nothing. progress_finish
 * always ends with one final line (elapsed time instead of ETA).
 *
 *   Progress bar;
 *   progress_start(&bar, "epoch 1", n_batches, PROGRESS_AUTO);
 *   for (...) progress_update(&bar, i + 1, "loss %.3f", loss);
 *   progress_finish(&bar, "loss %.3f", mean);
 *
 * The *_at variants take the clock as an argument (tests, replay). */
#ifndef GLUE_PROGRESS_H
#define GLUE_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    PROGRESS_AUTO,  /* BAR on a terminal, LINES otherwise */
    PROGRESS_BAR,
    PROGRESS_LINES,
    PROGRESS_QUIET,
} ProgressMode;

enum { PROGRESS_BAR_HZ = 10, PROGRESS_LINE_SECONDS = 5, PROGRESS_TEXT_MAX = 160 };

typedef struct Progress {
    FILE *out;
    ProgressMode mode;        /* resolved: BAR, LINES or QUIET */
    char label[64];
    const char *unit;         /* "it" by default; e.g. "ex" for examples */
    long total;               /* <= 0: unknown (no percent, no ETA) */
    long done;
    double start, last_draw;  /* seconds (now_seconds clock) */
    int width;                /* columns of the terminal (BAR) */
    int drawn;                /* BAR: a line is on screen and needs a newline */
    char text[PROGRESS_TEXT_MAX];
} Progress;

void progress_start(Progress *p, const char *label, long total, ProgressMode mode);
/* done: items finished so far; fmt (may be NULL): printf-style free text,
 * formatted only when the display is actually redrawn. */
void progress_update(Progress *p, long done, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void progress_finish(Progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when an update now would draw (text that takes work is made only then). */
int progress_due(const Progress *p);

void progress_start_at(Progress *p, FILE *out, const char *label, long total, ProgressMode mode, double now);
/* 1 when it drew (the text is used only then). */
int progress_update_at(Progress *p, long done, double now, const char *text);
void progress_finish_at(Progress *p, double now, const char *text);
/* The display line for `done` at time `now` (no \r or newline). */
void progress_format(const Progress *p, long done, double now, int final, char *buf, size_t cap);

#endif
