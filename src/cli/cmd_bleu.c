/* cmd_bleu.c — `glue bleu HYP REF [--lowercase] [--tokenize 13a|none] [--json]`:
 * corpus BLEU of a hypothesis file against a single reference file (plain or
 * .gz, one segment a line), printed like sacreBLEU or as one JSON object.
 *
 * The two files are streamed in step, so memory does not grow with the corpus;
 * a line of invalid UTF-8 or a difference in line counts is an error (sacreBLEU
 * refuses both too), reported with the file and line. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "eval/bleu.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLEU_USAGE "glue bleu HYP REF [--lowercase] [--tokenize 13a|none] [--json]"

/* Next line of r into *line; 1 line, 0 end, -1 error (reported). */
static int bleu_next_line(LineReader *r, char **line) {
    size_t len;
    int got = lines_next(r, line, &len);
    if (got < 0) { lines_report(r); return -1; }
    if (got == 1 && !utf8_valid(*line, len)) {
        user_error("BLEU needs UTF-8 text", "%s:%ld: invalid UTF-8", r->path, r->line_no);
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

/* Accumulate the statistics over both files. Returns 0, or 1 after a message. */
static int bleu_files(const char *hyp_path, const char *ref_path, const BleuOptions *opt, BleuStats *st,
                      long *num_lines) {
    LineReader h, r;
    int rc = 1;
    if (lines_open_or_report(&h, hyp_path)) return 1;
    if (lines_open_or_report(&r, ref_path)) { lines_close(&h); return 1; }
    for (;;) {
        char *hl, *rl;
        int gh = bleu_next_line(&h, &hl);
        if (gh < 0) break;
        int gr = bleu_next_line(&r, &rl);
        if (gr < 0) break;
        if (gh != gr) {
            long nh = gh ? bleu_count_rest(&h) : h.line_no, nr = gr ? bleu_count_rest(&r) : r.line_no;
            user_error("the hypothesis needs one line per reference line", "%s has %ld lines but %s has %ld",
                       hyp_path, nh, ref_path, nr);
            break;
        }
        if (gh == 0) { rc = 0; break; }
        bleu_add_segment(st, hl, rl, opt);
    }
    *num_lines = h.line_no;
    lines_close(&h);
    lines_close(&r);
    return rc;
}

static void bleu_print(const BleuScore *s, const BleuOptions *opt, long lines, int json) {
    double ratio = s->ref_len ? (double)s->sys_len / (double)s->ref_len : 0.0;
    if (!json) {
        printf("BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %ld ref_len = %ld)"
               "  [tokenize %s%s, %ld lines]\n",
               s->bleu, s->precisions[0], s->precisions[1], s->precisions[2], s->precisions[3], s->bp, ratio,
               s->sys_len, s->ref_len, bleu_tokenize_name(opt->tokenize), opt->lowercase ? ", lowercase" : "",
               lines);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "bleu", s->bleu);
    cJSON *p = cJSON_AddArrayToObject(o, "precisions");
    for (int k = 0; k < BLEU_MAX_ORDER; k++) cJSON_AddItemToArray(p, cJSON_CreateNumber(s->precisions[k]));
    cJSON_AddNumberToObject(o, "bp", s->bp);
    cJSON_AddNumberToObject(o, "ratio", ratio);
    cJSON_AddNumberToObject(o, "sys_len", (double)s->sys_len);
    cJSON_AddNumberToObject(o, "ref_len", (double)s->ref_len);
    cJSON_AddNumberToObject(o, "lines", (double)lines);
    cJSON_AddStringToObject(o, "tokenize", bleu_tokenize_name(opt->tokenize));
    cJSON_AddBoolToObject(o, "lowercase", opt->lowercase);
    json_print_line(o);
    cJSON_Delete(o);
}

int cmd_bleu(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    BleuOptions opt = {0};
    int json = args_flag(&a, "--json");
    opt.lowercase = args_flag(&a, "--lowercase");
    const char *tok = args_str(&a, "--tokenize", "13a");
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, BLEU_USAGE);
    if (rc) return rc;
    if (bleu_tokenize_parse(tok, &opt.tokenize) != 0) {
        user_error(NULL, "bleu: unknown tokenizer '%s' (use 13a or none)", tok);
        return EXIT_USAGE;
    }
    if (npos != 2) {
        user_error(NULL, "bleu: expected HYP and REF files, got %d argument%s", npos, npos == 1 ? "" : "s");
        fprintf(stderr, "usage: %s\n", BLEU_USAGE);
        return EXIT_USAGE;
    }
    BleuStats st;
    memset(&st, 0, sizeof st);
    long lines = 0;
    if (bleu_files(pos[0], pos[1], &opt, &st, &lines) != 0) return 1;
    BleuScore s;
    bleu_from_stats(&st, &s);
    bleu_print(&s, &opt, lines, json);
    return 0;
}
