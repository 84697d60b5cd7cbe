/* scratch.c — scratch folders and files under $TMPDIR for the tests (see scratch.h). */
#include "tests/scratch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* $TMPDIR/glue_<tag>_XXXXXX into out; 0 if it does not fit. */
static int scratch_template(const char *tag, char *out, size_t cap) {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/') n--;   /* "/scratch/" -> "/scratch" */
    if (cap == 0) return 0;
    int len = snprintf(out, cap, "%.*s/glue_%s_XXXXXX", (int)n, tmp, tag);
    if (len < 0 || (size_t)len >= cap) {
        fprintf(stderr, "scratch: $TMPDIR/glue_%s_XXXXXX is longer than %zu bytes: set TMPDIR to a shorter path\n",
                tag, cap - 1);
        out[0] = '\0';
        return 0;
    }
    return 1;
}

int scratch_dir(const char *tag, char *out, size_t cap) {
    if (!scratch_template(tag, out, cap)) return 0;
    if (mkdtemp(out)) return 1;
    fprintf(stderr, "scratch: cannot make the folder %s: %s\n", out, strerror(errno));
    out[0] = '\0';
    return 0;
}

int scratch_file(const char *tag, char *out, size_t cap) {
    if (!scratch_template(tag, out, cap)) return -1;
    int fd = mkstemp(out);
    if (fd < 0) {
        fprintf(stderr, "scratch: cannot make the file %s: %s\n", out, strerror(errno));
        out[0] = '\0';
    }
    return fd;
}
