/* test_progress.c — the progress display with an explicit clock: the bar
 * redraws at most PROGRESS_BAR_HZ times a second, log mode prints plain lines
 * at most every PROGRESS_LINE_SECONDS, quiet prints nothing, and the line
 * holds percent, done/total, rate, ETA (or elapsed at the end) and the text. */
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "tests/test.h"

static char *read_all(FILE *f) {
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = '\0';
    return s;
}

static int count(const char *s, const char *what) {
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

TEST(progress_bar_throttles_and_formats) {
    FILE *f = tmpfile();
    Progress p;
    progress_start_at(&p, f, "epoch 1", 1000, PROGRESS_BAR, 100.0);
    p.width = 200;
    int drawn = 0;
    /* 1000 updates over 2 s: at most 2 / 0.1 = 20 redraws. */
    for (int i = 1; i <= 1000; i++) drawn += progress_update_at(&p, i, 100.0 + i * 0.002, "loss 0.41 acc 88.2");
    CHECK(drawn >= 19 && drawn <= 20);
    progress_finish_at(&p, 102.5, "loss 0.40");
    char *s = read_all(f);
    CHECK_EQ_INT(count(s, "\r"), drawn + 1);
    CHECK_EQ_INT(count(s, "\n"), 1); /* in place until the end */
    CHECK(strstr(s, "loss 0.41 acc 88.2") != NULL);
    /* The final line: 100%, full bar, 1000/1000 in 2.5 s = 400 it/s, took 0:03. */
    const char *last = strrchr(s, '\r');
    CHECK_MSG(last && strstr(last, "epoch 1 100% [####################] 1000/1000 400 it/s took 0:03  loss 0.40"),
              "final line: %s", last ? last : "");
    free(s);
    fclose(f);
}

TEST(progress_line_format_midway) {
    Progress p;
    progress_start_at(&p, stderr, "eval", 200, PROGRESS_LINES, 0.0);
    char buf[256];
    /* 50 of 200 after 10 s: 25%, 5 it/s, 150 left = 30 s. */
    progress_format(&p, 50, 10.0, 0, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "eval  25% 50/200 5.00 it/s ETA 0:30") == 0, "got '%s'", buf);
    p.unit = "ex";
    strcpy(p.text, "acc 91.3");
    progress_format(&p, 50, 10.0, 0, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "eval  25% 50/200 5.00 ex/s ETA 0:30  acc 91.3") == 0, "got '%s'", buf);
    /* Unknown total: count, rate, elapsed. */
    progress_start_at(&p, stderr, "read", 0, PROGRESS_LINES, 0.0);
    progress_format(&p, 123456, 4000.0, 0, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "read 123456 it 30.86 it/s 1:06:40") == 0, "got '%s'", buf);
    /* A tiny buffer is cut, never overrun. */
    char small[8];
    progress_format(&p, 123456, 4000.0, 0, small, sizeof small);
    CHECK_EQ_INT(strlen(small), 7);
}

TEST(progress_lines_and_quiet) {
    FILE *f = tmpfile();
    Progress p;
    progress_start_at(&p, f, "train", 100, PROGRESS_LINES, 0.0);
    /* 100 updates over 20 s: a line at most every 5 s. */
    for (int i = 1; i <= 100; i++) progress_update_at(&p, i, i * 0.2, NULL);
    progress_finish_at(&p, 20.0, NULL);
    char *s = read_all(f);
    CHECK_EQ_INT(count(s, "\n"), 5); /* at 5, 10, 15, 20 s and the final line */
    CHECK_EQ_INT(count(s, "\r"), 0);
    CHECK(strstr(s, "train 100% 100/100 5.00 it/s took 0:20\n") != NULL);
    free(s);
    fclose(f);

    f = tmpfile();
    progress_start_at(&p, f, "quiet", 10, PROGRESS_QUIET, 0.0);
    for (int i = 1; i <= 10; i++) CHECK(!progress_update_at(&p, i, i * 10.0, "x"));
    progress_finish_at(&p, 200.0, "done");
    fflush(f);
    CHECK_EQ_INT(ftell(f), 0);
    fclose(f);

    /* AUTO on a file (not a terminal) picks lines. */
    f = tmpfile();
    progress_start_at(&p, f, "auto", 10, PROGRESS_AUTO, 0.0);
    CHECK(p.mode == PROGRESS_LINES);
    fclose(f);
}
