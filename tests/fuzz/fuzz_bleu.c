/* fuzz_bleu.c — `glue bleu HYP REF [REF2]` (src/cli/cmd_bleu.c, metrics/bleu.c,
 * metrics/chrf.c): the files (hypotheses FUZZ_SEP references [FUZZ_SEP second
 * references], any bytes), with --lowercase and --tokenize 13a|none picked by
 * byte 0; then corpus BLEU and chrF on the same lines directly, each of which
 * must be a number in [0, 100]. */
#include "cli/commands.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "tests/fuzz/fuzz_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LINES = 256, MAX_FILES = 3 };

static int split_lines(char *s, char **out) {
    int n = 0;
    for (char *line = s, *next; line && n < MAX_LINES; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        out[n++] = line;
    }
    return n;
}

static int in_range(double x) { return isfinite(x) && x >= 0 && x <= 100 + 1e-9; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *part[MAX_FILES];
    size_t len[MAX_FILES];
    int nfiles = fuzz_split(data + 1, size - 1, part, len, MAX_FILES);
    if (nfiles < 2) return 0;
    static const char *const NAMES[MAX_FILES] = {"hyp.txt", "ref.txt", "ref2.txt"};
    char path[MAX_FILES][512];
    char *argv[12] = {"bleu"};
    int argc = 1;
    for (int k = 0; k < nfiles; k++) {
        snprintf(path[k], sizeof path[k], "%s", fuzz_path(NAMES[k]));
        fuzz_write(path[k], part[k], len[k], 0);
        argv[argc++] = path[k];
    }
    argv[argc++] = "--tokenize";
    argv[argc++] = data[0] & 1 ? "none" : "13a";
    argv[argc++] = "--json";
    if (data[0] & 2) argv[argc++] = "--lowercase";
    cmd_bleu(argc, argv);

    char *text[MAX_FILES], *lines[MAX_FILES][MAX_LINES];
    int n = MAX_LINES;
    for (int k = 0; k < nfiles; k++) {
        text[k] = fuzz_strndup(part[k], len[k]);
        int nk = split_lines(text[k], lines[k]);
        if (nk < n) n = nk;
    }
    const char *const *refs[MAX_FILES - 1];
    for (int k = 1; k < nfiles; k++) refs[k - 1] = (const char *const *)lines[k];
    BleuOptions opt = {.lowercase = data[0] >> 1 & 1, .tokenize = data[0] & 1 ? BLEU_TOKENIZE_NONE : BLEU_TOKENIZE_13A};
    ChrfOptions co = {.lowercase = opt.lowercase};
    BleuScore s;
    bleu_corpus_refs((const char *const *)lines[0], refs, nfiles - 1, n, &opt, &s);
    if (!in_range(s.bleu)) __builtin_trap();
    if (!in_range(chrf_corpus((const char *const *)lines[0], refs, nfiles - 1, n, &co))) __builtin_trap();
    for (int k = 0; k < nfiles; k++) free(text[k]);
    return 0;
}
