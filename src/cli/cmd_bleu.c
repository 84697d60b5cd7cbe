/* cmd_bleu.c — `glue bleu HYP REF [REF ...] [--lowercase] [--tokenize 13a|none]
 * [--json]`: corpus BLEU and chrF of a hypothesis file against one or several
 * reference files (plain or .gz, one segment a line; `-` reads stdin), printed
 * like sacreBLEU with its signatures, or as one JSON object.
 *
 * The files are streamed in step, so memory does not grow with the corpus; a
 * line of invalid UTF-8 or a difference in line counts is an error (sacreBLEU
 * refuses both too), reported with the file and line. As in sacreBLEU,
 * --lowercase is BLEU's and --chrf-lowercase chrF's (each signature says
 * case:lc); --tokenize is BLEU's only, as chrF reads characters. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLEU_USAGE "glue bleu HYP REF [REF ...] [--lowercase] [--chrf-lowercase] [--tokenize 13a|none] [--json]   (HYP or a REF may be - for stdin)"

/* Next line of r into *line; 1 line, 0 end, -1 error (reported). */
static int bleu_next_line(LineReader *r, char **line) {
    size_t len;
    int got = lines_next(r, line, &len);
    if (got < 0) { lines_report(r); return -1; }
    if (got == 1 && !utf8_valid(*line, len)) {
        user_error_data("BLEU needs UTF-8 text", "%s:%ld: invalid UTF-8", r->path, r->line_no);
        return -1;
    }
    return got;
}

/* Lines left in r after the shorter file ended (for the mismatch message). */
static long bleu_count_rest(LineReader *r) {
    char *line;
    size_t len;
    while (lines_next(r, &line, &len) == 1) {}
    return r->line_no;
}

/* "hyp has 3 lines but ref has 2" (one reference) or "... but r1 has 3 and r2
 * has 2" (several), every file counted to its end. got[k]: 1 if file k still
 * had a line when the first one ended. */
static void bleu_report_mismatch(LineReader *r, const int *got, int nfiles) {
    char refs[2048] = "";
    size_t n = 0;
    long nh = got[0] ? bleu_count_rest(&r[0]) : r[0].line_no;
    for (int k = 1; k < nfiles && n < sizeof refs; k++) {
        long nk = got[k] ? bleu_count_rest(&r[k]) : r[k].line_no;
        const char *sep = k == 1 ? "" : k + 1 == nfiles ? " and " : ", ";
        n += (size_t)snprintf(refs + n, sizeof refs - n, "%s%s has %ld", sep, r[k].path, nk);
    }
    user_error_data(nfiles == 2 ? "the hypothesis needs one line per reference line"
                           : "the hypothesis and every reference file need the same number of lines",
               "%s has %ld lines but %s", r[0].path, nh, refs);
}

/* Open a file, or stdin for "-". 0, or -1 after a message (r is closed then). */
static int bleu_open(LineReader *r, const char *path) {
    if (strcmp(path, "-") != 0) return lines_open_or_report(r, path);
    if (lines_open_stdin(r) == LINES_OK) return 0;
    lines_report(r);
    lines_close(r);
    return -1;
}

typedef struct {
    BleuOptions bleu;
    ChrfOptions chrf;
    BleuStats bleu_stats;
    ChrfStats chrf_stats;
    long lines;
} BleuRun;

/* Read the open files in step, one segment a step, into the statistics.
 * Returns 0, or 1 after a message. */
static int bleu_read_all(LineReader *r, int nfiles, BleuRun *run) {
    char **line = xmalloc(sizeof *line * (size_t)nfiles);
    int *got = xmalloc(sizeof *got * (size_t)nfiles), rc;
    for (;;) {
        int ended = 0, bad = 0;
        for (int k = 0; k < nfiles && !bad; k++) {
            got[k] = bleu_next_line(&r[k], &line[k]);
            bad = got[k] < 0;
            ended += got[k] == 0;
        }
        if (bad) { rc = 1; break; }
        if (ended == nfiles) { rc = 0; break; }
        if (ended) { bleu_report_mismatch(r, got, nfiles); rc = 1; break; }
        const char *const *refs = (const char *const *)line + 1;
        bleu_add_segment_refs(&run->bleu_stats, line[0], refs, nfiles - 1, &run->bleu);
        chrf_add_segment(&run->chrf_stats, line[0], refs, nfiles - 1, &run->chrf);
    }
    run->lines = r[0].line_no;
    free(line);
    free(got);
    return rc;
}

/* Accumulate the statistics over the hypothesis file (paths[0]) and the
 * references. Returns 0, or 1 after a message. */
static int bleu_files(const char *const *paths, int nfiles, BleuRun *run) {
    LineReader *r = xcalloc((size_t)nfiles, sizeof *r);
    int opened = 0, rc = 1;
    while (opened < nfiles && bleu_open(&r[opened], paths[opened]) == 0) opened++;
    if (opened == nfiles) rc = bleu_read_all(r, nfiles, run);
    if (rc == 0 && run->lines == 0) {   /* a score of no segments is no score: it printed BLEU 0.00, exit 0 */
        user_error_data("give the hypotheses and references one segment a line", "%s: no lines: nothing to score",
                        strcmp(paths[0], "-") ? paths[0] : "standard input");
        rc = 1;
    }
    for (int k = 0; k < opened; k++) lines_close(&r[k]);
    free(r);
    return rc;
}

static void bleu_print(const BleuRun *run, int nrefs, int json) {
    BleuScore s;
    bleu_from_stats(&run->bleu_stats, &s);
    double chrf = chrf_from_stats(&run->chrf_stats);
    double ratio = s.ref_len ? (double)s.sys_len / (double)s.ref_len : 0.0;
    char sig[256], chrf_sig[256];
    bleu_signature(&run->bleu, nrefs, sig, sizeof sig);
    chrf_signature(&run->chrf, nrefs, chrf_sig, sizeof chrf_sig);
    if (!json) {
        printf("BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %ld ref_len = %ld)  [%ld lines]  %s\n",
               s.bleu, s.precisions[0], s.precisions[1], s.precisions[2], s.precisions[3], s.bp, ratio,
               s.sys_len, s.ref_len, run->lines, sig);
        printf("chrF%d = %.2f  %s\n", CHRF_BETA, chrf, chrf_sig);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "bleu", s.bleu);
    cJSON *p = cJSON_AddArrayToObject(o, "precisions");
    for (int k = 0; k < BLEU_MAX_ORDER; k++) cJSON_AddItemToArray(p, cJSON_CreateNumber(s.precisions[k]));
    cJSON_AddNumberToObject(o, "bp", s.bp);
    cJSON_AddNumberToObject(o, "ratio", ratio);
    cJSON_AddNumberToObject(o, "sys_len", (double)s.sys_len);
    cJSON_AddNumberToObject(o, "ref_len", (double)s.ref_len);
    cJSON_AddNumberToObject(o, "lines", (double)run->lines);
    cJSON_AddNumberToObject(o, "nrefs", nrefs);
    cJSON_AddStringToObject(o, "tokenize", bleu_tokenize_name(run->bleu.tokenize));
    cJSON_AddBoolToObject(o, "lowercase", run->bleu.lowercase);
    cJSON_AddStringToObject(o, "signature", sig);
    cJSON_AddNumberToObject(o, "chrf", chrf);
    cJSON_AddStringToObject(o, "chrf_signature", chrf_sig);
    json_print_line(o);
    cJSON_Delete(o);
}

/* The positional arguments: HYP and at least one REF, at most one of them "-". */
static int bleu_check_files(const char *const *pos, int npos) {
    int dashes = 0;
    for (int k = 0; k < npos; k++) dashes += strcmp(pos[k], "-") == 0;
    if (npos >= 2 && dashes <= 1) return 0;
    if (npos < 2)
        user_error(NULL, "bleu: expected HYP and REF files (one REF or more), got %d argument%s", npos,
                   npos == 1 ? "" : "s");
    else
        user_error(NULL, "bleu: '-' (stdin) given %d times; at most one file can be read from stdin", dashes);
    return args_usage(BLEU_USAGE);
}

int cmd_bleu(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    BleuRun run;
    memset(&run, 0, sizeof run);
    int json = args_flag(&a, "--json");
    run.bleu.lowercase = args_flag(&a, "--lowercase");
    run.chrf.lowercase = args_flag(&a, "--chrf-lowercase");
    const char *tok = args_str(&a, "--tokenize", "13a");
    const char *pos[ARGS_MAX];
    int npos = args_positional(&a, pos, ARGS_MAX);
    int rc = args_finish(&a, BLEU_USAGE);
    if (rc) return rc;
    if (bleu_tokenize_parse(tok, &run.bleu.tokenize) != 0) {
        user_error(NULL, "bleu: unknown tokenizer '%s' (use 13a or none)", tok);
        return EXIT_USAGE;
    }
    if ((rc = bleu_check_files(pos, npos)) != 0) return rc;
    if (bleu_files(pos, npos, &run) != 0) return 1;
    bleu_print(&run, npos - 1, json);
    return 0;
}
