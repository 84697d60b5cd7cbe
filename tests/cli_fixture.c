/* cli_fixture.c — scratch folders and `glue` runs for the CLI tests (see cli_fixture.h). */
#include "tests/cli_fixture.h"

#include "tests/test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_fixture_open(CliFixture *f) {
    if (CHECK(scratch_dir("test_cli", f->dir, sizeof f->dir))) return 0;
    f->dir[0] = '\0';
    return -1;
}

void cli_fixture_close(CliFixture *f) {
    if (!f->dir[0]) return;
    char cmd[SCRATCH_PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    free(test_run(cmd, NULL));
    f->dir[0] = '\0';
}

void cli_fixture_path(const CliFixture *f, const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", f->dir, name);
}

int cli_fixture_write(const CliFixture *f, const char *name, const char *text, long n) {
    char path[512];
    cli_fixture_path(f, name, path, sizeof path);
    for (char *s = strchr(path + strlen(f->dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *o = fopen(path, "wb");
    if (!CHECK_MSG(o != NULL, "cannot write %s", path)) return -1;
    fwrite(text, 1, n < 0 ? strlen(text) : (size_t)n, o);
    return CHECK(fclose(o) == 0) ? 0 : -1;
}

int cli_fixture_two_class(const CliFixture *f, const char *name, int rows) {
    static const char *const POS[] = {"good", "great", "fine", "nice"}, *const NEG[] = {"bad", "awful", "poor", "sad"};
    size_t cap = 64 + (size_t)rows * 64, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text, cap, "text\tlabel\n");
    for (int i = 0; i < rows; i++) {
        int pos = i % 2 == 0;
        const char *const *w = pos ? POS : NEG;
        n += (size_t)snprintf(text + n, cap - n, "the %s day was %s %d\t%s\n", w[i % 4], w[(i / 2) % 4], i,
                              pos ? "pos" : "neg");
    }
    int rc = cli_fixture_write(f, name, text, (long)n);
    free(text);
    return rc;
}

const char *cli_fixture_bin(void) {
    static char bin[PATH_MAX];   /* the runs happen in dir: the binary's path must not be relative */
    if (!realpath(test_glue_bin(), bin)) snprintf(bin, sizeof bin, "%s", test_glue_bin());
    return bin;
}

char *cli_fixture_glue(const CliFixture *f, const char *args, int *status) {
    const char *bin = cli_fixture_bin();
    size_t cap = strlen(args) + 2 * PATH_MAX;
    char *cmd = malloc(cap);
    snprintf(cmd, cap, "cd '%s' && GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results '%s' %s 2>&1", f->dir,
             f->dir, f->dir, f->dir, bin, args);
    char *out = test_run(cmd, status);
    free(cmd);
    return out;
}

int cli_fixture_exists(const CliFixture *f, const char *name) {
    char path[512];
    cli_fixture_path(f, name, path, sizeof path);
    return access(path, F_OK) == 0;
}

void cli_fixture_says(const CliFixture *f, const char *args, int want_status, const char *want) {
    int st;
    char *out = cli_fixture_glue(f, args, &st);
    CHECK_MSG(st == want_status && (!want || strstr(out, want)), "glue %s: exit %d (want %d, '%s'):\n%.1500s", args, st,
              want_status, want ? want : "", out);
    free(out);
}
