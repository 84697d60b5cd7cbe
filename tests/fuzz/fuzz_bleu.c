/* fuzz_bleu.c — `glue bleu HYP REF` (src/cli/cmd_bleu.c, eval/bleu.c): the two
 * files (hypotheses FUZZ_SEP references, any bytes), with --lowercase and
 * --tokenize 13a|none picked by byte 0; then corpus BLEU on the same lines
 * directly, which must be a number in [0, 100]. */
#include "cli/commands.h"
#include "eval/bleu.h"
#include "tests/fuzz/fuzz_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LINES = 256 };

static int split_lines(char *s, char **out) {
    int n = 0;
    for (char *line = s, *next; line && n < MAX_LINES; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        out[n++] = line;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *part[2];
    size_t len[2];
    if (fuzz_split(data + 1, size - 1, part, len, 2) != 2) return 0;
    char hyp[512], ref[512];
    snprintf(hyp, sizeof hyp, "%s", fuzz_path("hyp.txt"));
    snprintf(ref, sizeof ref, "%s", fuzz_path("ref.txt"));
    fuzz_write(hyp, part[0], len[0], 0);
    fuzz_write(ref, part[1], len[1], 0);
    char *argv[8] = {"bleu", hyp, ref, "--tokenize", data[0] & 1 ? "none" : "13a", "--json"};
    int argc = 6;
    if (data[0] & 2) argv[argc++] = "--lowercase";
    cmd_bleu(argc, argv);

    char *h = fuzz_strndup(part[0], len[0]), *r = fuzz_strndup(part[1], len[1]);
    char *hl[MAX_LINES], *rl[MAX_LINES];
    int nh = split_lines(h, hl), nr = split_lines(r, rl);
    BleuOptions opt = {.lowercase = data[0] >> 1 & 1, .tokenize = data[0] & 1 ? BLEU_TOKENIZE_NONE : BLEU_TOKENIZE_13A};
    BleuScore s;
    bleu_corpus((const char *const *)hl, (const char *const *)rl, nh < nr ? nh : nr, &opt, &s);
    if (!isfinite(s.bleu) || s.bleu < 0 || s.bleu > 100 + 1e-9) __builtin_trap();
    free(h);
    free(r);
    return 0;
}
