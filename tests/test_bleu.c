/* test_bleu.c — corpus BLEU against sacreBLEU's published numbers
 * (../shared/tests/bleu_golden.json.gz: every system x lowercase x tokenizer, on
 * the Multi30k test_2016 German references), through the library and through
 * `glue bleu`; the 13a tokenizer and lowercasing against Python's own `re` and
 * str.lower() on tricky random strings (tests/ref/bleu_ref.py); hand-computed
 * smoothing and brevity cases; multi-reference BLEU (and chrF) against the
 * independent Python reference tests/ref/bleu_multi_ref.py, with hand-computed
 * clipping and closest-length cases; and the CLI: signatures, stdin, several
 * reference files, errors. */
#include "core/common.h"
#include "core/lines.h"
#include "core/provenance.h"
#include "core/rng.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "tests/bleu_multi_ref.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOLDEN_BLEU_TOL 0.01
#define GOLDEN_PREC_TOL 1e-6

/* A whole text file (.gz allowed) as one string, lines joined by '\n'; NULL if unreadable. */
static char *slurp(const char *path) {
    LineReader r;
    if (lines_open(&r, path) != LINES_OK) { lines_close(&r); return NULL; }
    size_t n = 0, cap = 1 << 16;
    char *out = xmalloc(cap), *line;
    size_t len;
    while (lines_next(&r, &line, &len) == 1) {
        while (n + len + 2 > cap) out = xrealloc(out, cap *= 2);
        memcpy(out + n, line, len);
        n += len;
        out[n++] = '\n';
    }
    out[n] = '\0';
    int ok = r.status == LINES_OK;
    lines_close(&r);
    if (!ok) { free(out); return NULL; }
    return out;
}

static cJSON *golden_load(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/bleu_golden.json.gz", test_shared_dir());
    char *text = slurp(path);
    if (!CHECK_MSG(text != NULL, "cannot read %s", path)) return NULL;
    cJSON *g = cJSON_Parse(text);
    free(text);
    CHECK_MSG(g != NULL, "%s is not JSON", path);
    return g;
}

/* The strings of a JSON array (pointers into the cJSON tree). */
static const char **json_strings(const cJSON *arr, int *n) {
    *n = cJSON_GetArraySize(arr);
    const char **s = xmalloc(sizeof *s * (size_t)(*n ? *n : 1));
    for (int i = 0; i < *n; i++) s[i] = cJSON_GetArrayItem(arr, i)->valuestring;
    return s;
}

/* The hypothesis lines of `system` (stored once, on one of its cases). */
static const cJSON *golden_hyp(const cJSON *cases, int system) {
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const cJSON *h = cJSON_GetObjectItem(c, "hyp");
        if (cJSON_GetObjectItem(c, "system")->valueint == system && cJSON_IsArray(h)) return h;
    }
    return NULL;
}

static void check_against_case(const BleuScore *s, const cJSON *c, const char *where) {
    const cJSON *prec = cJSON_GetObjectItem(c, "precisions");
    CHECK_MSG(fabs(s->bleu - cJSON_GetObjectItem(c, "bleu")->valuedouble) <= GOLDEN_BLEU_TOL,
              "%s: bleu %.4f vs sacreBLEU %.4f", where, s->bleu, cJSON_GetObjectItem(c, "bleu")->valuedouble);
    for (int k = 0; k < BLEU_MAX_ORDER; k++)
        CHECK_MSG(fabs(s->precisions[k] - cJSON_GetArrayItem(prec, k)->valuedouble) <= GOLDEN_PREC_TOL,
                  "%s: p%d %.6f vs %.6f", where, k + 1, s->precisions[k], cJSON_GetArrayItem(prec, k)->valuedouble);
    CHECK_MSG(fabs(s->bp - cJSON_GetObjectItem(c, "bp")->valuedouble) <= 1e-9, "%s: bp %.9f vs %.9f", where,
              s->bp, cJSON_GetObjectItem(c, "bp")->valuedouble);
    CHECK_MSG(s->sys_len == (long)cJSON_GetObjectItem(c, "sys_len")->valuedouble, "%s: sys_len %ld", where, s->sys_len);
    CHECK_MSG(s->ref_len == (long)cJSON_GetObjectItem(c, "ref_len")->valuedouble, "%s: ref_len %ld", where, s->ref_len);
}

static void case_options(const cJSON *c, BleuOptions *opt, char *where, size_t cap) {
    opt->lowercase = cJSON_IsTrue(cJSON_GetObjectItem(c, "lowercase"));
    const char *tok = cJSON_GetObjectItem(c, "tokenize")->valuestring;
    CHECK(bleu_tokenize_parse(tok, &opt->tokenize) == 0);
    snprintf(where, cap, "system %d lowercase %d tokenize %s", cJSON_GetObjectItem(c, "system")->valueint,
             opt->lowercase, tok);
}

TEST(bleu_matches_sacrebleu_golden) {
    cJSON *g = golden_load();
    if (!g) return;
    int nref, ncase = 0;
    const char **refs = json_strings(cJSON_GetObjectItem(g, "refs"), &nref);
    const cJSON *cases = cJSON_GetObjectItem(g, "cases"), *c;
    cJSON_ArrayForEach(c, cases) {
        BleuOptions opt;
        char where[128];
        case_options(c, &opt, where, sizeof where);
        int nhyp;
        const cJSON *h = golden_hyp(cases, cJSON_GetObjectItem(c, "system")->valueint);
        if (!CHECK_MSG(h != NULL, "%s: no hyp lines", where)) continue;
        const char **hyp = json_strings(h, &nhyp);
        CHECK_EQ_INT(nhyp, nref);
        BleuScore s;
        bleu_corpus(hyp, refs, nhyp < nref ? nhyp : nref, &opt, &s);
        check_against_case(&s, c, where);
        free(hyp);
        ncase++;
    }
    CHECK_MSG(ncase >= 32, "only %d golden cases", ncase);
    free(refs);
    cJSON_Delete(g);
}

/* Write lines to a file; returns 0 on success. */
static int write_lines(const char *path, const char **lines, int n) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", lines[i]);
    return fclose(f);
}

TEST(bleu_cli_matches_golden) {
    cJSON *g = golden_load();
    if (!g) return;
    char dir[SCRATCH_PATH_MAX], hyp_path[600], ref_path[600], cmd[2048];
    if (!CHECK(scratch_dir("bleu", dir, sizeof dir))) { cJSON_Delete(g); return; }
    /* The references straight from the gzipped Multi30k file, to cover .gz input. */
    snprintf(ref_path, sizeof ref_path, "%s/data/mt/multi30k/raw/test_2016_flickr.de.gz", test_shared_dir());
    snprintf(hyp_path, sizeof hyp_path, "%s/hyp.txt", dir);
    const cJSON *cases = cJSON_GetObjectItem(g, "cases"), *c;
    int system_written = -1, checked = 0;
    cJSON_ArrayForEach(c, cases) {
        int system = cJSON_GetObjectItem(c, "system")->valueint;
        if (system != 2 && system != 3 && system != 1) continue;   /* a long, a short, an empty system */
        BleuOptions opt;
        char where[128];
        case_options(c, &opt, where, sizeof where);
        if (system != system_written) {
            int n;
            const char **hyp = json_strings(golden_hyp(cases, system), &n);
            CHECK(write_lines(hyp_path, hyp, n) == 0);
            free(hyp);
            system_written = system;
        }
        snprintf(cmd, sizeof cmd, "%s bleu %s %s --tokenize %s %s --json", test_glue_bin(), hyp_path, ref_path,
                 bleu_tokenize_name(opt.tokenize), opt.lowercase ? "--lowercase" : "");
        int status;
        char *out = test_run(cmd, &status);
        cJSON *o = cJSON_Parse(out);
        if (CHECK_MSG(status == 0 && o, "%s: %s -> status %d, output '%s'", where, cmd, status, out)) {
            BleuScore s = {0};
            s.bleu = cJSON_GetObjectItem(o, "bleu")->valuedouble;
            for (int k = 0; k < BLEU_MAX_ORDER; k++)
                s.precisions[k] = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "precisions"), k)->valuedouble;
            s.bp = cJSON_GetObjectItem(o, "bp")->valuedouble;
            s.sys_len = (long)cJSON_GetObjectItem(o, "sys_len")->valuedouble;
            s.ref_len = (long)cJSON_GetObjectItem(o, "ref_len")->valuedouble;
            check_against_case(&s, c, where);
            checked++;
        }
        cJSON_Delete(o);
        free(out);
    }
    CHECK_EQ_INT(checked, 12);
    unlink(hyp_path);
    rmdir(dir);
    cJSON_Delete(g);
}

TEST(bleu_cli_errors) {
    char dir[SCRATCH_PATH_MAX], a[600], b[600], bad[600], cmd[2048];
    if (!CHECK(scratch_dir("bleu", dir, sizeof dir))) return;
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    const char *three[] = {"ein Hund läuft über die Wiese.", "zwei Katzen schlafen", "drei"}, *invalid[] = {"gut", "caf\xC3", "x"};
    write_lines(a, three, 3);
    write_lines(b, three, 2);
    write_lines(bad, invalid, 3);
    const char *bin = test_glue_bin();
    struct { char cmd[2048]; int status; const char *msg; } cases[6];
    snprintf(cases[0].cmd, sizeof cases[0].cmd, "%s bleu %s %s 2>&1", bin, a, b);
    cases[0].status = 65, cases[0].msg = "has 3 lines but";
    snprintf(cases[1].cmd, sizeof cases[1].cmd, "%s bleu %s %s 2>&1", bin, bad, a);
    cases[1].status = 65, cases[1].msg = "bad.txt:2: invalid UTF-8";
    snprintf(cases[2].cmd, sizeof cases[2].cmd, "%s bleu %s %s --tokenize intl 2>&1", bin, a, a);
    cases[2].status = 2, cases[2].msg = "unknown tokenizer 'intl'";
    snprintf(cases[3].cmd, sizeof cases[3].cmd, "%s bleu %s 2>&1", bin, a);
    cases[3].status = 2, cases[3].msg = "expected HYP and REF";
    snprintf(cases[4].cmd, sizeof cases[4].cmd, "%s bleu %s /nonexistent/ref.txt 2>&1", bin, a);
    cases[4].status = 74, cases[4].msg = "/nonexistent/ref.txt: no such file";
    snprintf(cases[5].cmd, sizeof cases[5].cmd, "%s bleu %s %s --bogus 2>&1", bin, a, a);
    cases[5].status = 2, cases[5].msg = "unknown option '--bogus'";
    for (int k = 0; k < 6; k++) {
        int status;
        char *out = test_run(cases[k].cmd, &status);
        CHECK_MSG(status == cases[k].status && strstr(out, cases[k].msg),
                  "'%s': status %d (want %d), output '%s' (want '%s')", cases[k].cmd, status, cases[k].status,
                  out, cases[k].msg);
        free(out);
    }
    /* The same file against itself: 100, in text form too. */
    snprintf(cmd, sizeof cmd, "%s bleu %s %s", test_glue_bin(), a, a);
    int status;
    char *out = test_run(cmd, &status);
    CHECK_MSG(status == 0 && strncmp(out, "BLEU = 100.00", 13) == 0, "self-BLEU: '%s'", out);
    free(out);
    unlink(a); unlink(b); unlink(bad);
    rmdir(dir);
}

TEST(bleu_hand_computed) {
    BleuOptions opt = {0, BLEU_TOKENIZE_NONE};
    /* hyp "the cat the cat" vs "the cat sat": clipped 2/4, 1/3, 0/2, 0/1; smoothing
     * gives p3 = 1/(2*2), p4 = 1/(4*1). */
    const char *h1[] = {"the cat the cat"}, *r1[] = {"the cat sat"};
    BleuScore s;
    bleu_corpus(h1, r1, 1, &opt, &s);
    double p[4] = {50, 100.0 / 3, 25, 25};
    for (int k = 0; k < 4; k++) CHECK_NEAR(s.precisions[k], p[k], 1e-9);
    CHECK_NEAR(s.bp, 1.0, 0);
    CHECK_NEAR(s.bleu, pow(p[0] * p[1] * p[2] * p[3], 0.25), 1e-9);
    /* Too short for 3-grams: BLEU 0 but the precisions it has; BP exp(1 - 3/2). */
    const char *h2[] = {"a b"}, *r2[] = {"a b c"};
    bleu_corpus(h2, r2, 1, &opt, &s);
    CHECK_NEAR(s.bleu, 0, 0);
    CHECK_NEAR(s.precisions[0], 100, 1e-9);
    CHECK_NEAR(s.precisions[1], 100, 1e-9);
    CHECK_NEAR(s.bp, exp(-0.5), 1e-12);
    /* Statistics add up across calls exactly like one corpus call. */
    const char *h3[] = {"a b c d e", "x y z"}, *r3[] = {"a b c d f", "x y w z"};
    BleuStats st = {0};
    for (int i = 0; i < 2; i++) bleu_add_segment(&st, h3[i], r3[i], &opt);
    BleuScore s2;
    bleu_from_stats(&st, &s2);
    bleu_corpus(h3, r3, 2, &opt, &s);
    CHECK_NEAR(s.bleu, s2.bleu, 0);
    CHECK_EQ_INT(st.correct[0], 7);   /* a b c d + x y z */
    CHECK_EQ_INT(st.total[3], 2);
    CHECK_EQ_INT(s.ref_len, 9);
}

/* An empty hypothesis against an empty reference: no tokens at all, so the
 * token list is NULL; qsort(NULL, 0) is undefined behaviour (fuzz_bleu's first
 * find, tests/fuzz/regressions/fuzz_bleu/; fatal under `make asan`). */
TEST(bleu_empty_lines) {
    BleuOptions opt = {1, BLEU_TOKENIZE_13A};
    const char *h[] = {"", "the cat", ""}, *r[] = {"", "the cat", "   "};
    BleuStats st = {0};
    bleu_add_segment(&st, h[0], r[0], &opt);
    CHECK(st.sys_len == 0 && st.ref_len == 0 && st.total[0] == 0);
    BleuScore s;
    bleu_corpus(h, r, 3, &opt, &s);
    CHECK(s.sys_len == 2 && s.ref_len == 2 && isfinite(s.bleu));
}

TEST(bleu_tokenize_13a_examples) {
    static const char *const cases[][2] = {
        {"Hello, world.", "Hello , world ."},
        {"It costs $3.50 (or 1,000 yen).", "It costs $ 3.50 ( or 1,000 yen ) ."},
        {"scores 5-3 and well-known", "scores 5 - 3 and well-known"},
        {"A&amp;B &quot;x&quot; &lt;tag&gt; &amp;lt;", "A & B \" x \" < tag > <"},
        {"don't stop<skipped>ping", "don't stopping"},
        {"a.b,c..d", "a . b , c . . d"},
        {"  many\t\tspaces\u00a0nbsp  ", "many spaces nbsp"},
        {"Größe: 5€/Stück.", "Größe : 5€ / Stück ."},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *t = bleu_tokenize_13a(cases[k][0]);
        CHECK_MSG(strcmp(t, cases[k][1]) == 0, "13a('%s') = '%s', want '%s'", cases[k][0], t, cases[k][1]);
        free(t);
    }
}

/* Random strings built from pieces that exercise every 13a rule, whitespace
 * Python splits on, and the special lowercase cases (İ, final sigma). */
static cJSON *random_texts(int count, uint64_t seed) {
    static const char *const PIECES[] = {
        "a", "Z", "word", "0", "7", "12", ".", ",", "-", "'", "&", "&quot;", "&amp;", "&lt;", "&gt;",
        "<skipped>", "<", ">", " ", "  ", "\t", "\n", "-\n", "\x1f", "\xc2\xa0", "\xe2\x80\x83",
        "\xe3\x80\x80", "\xe2\x80\x8b", "\xc3\xa4", "\xc3\x84", "\xc3\x9f", "\xc4\xb0", "\xce\xa3",
        "\xce\xa3\xce\x91", "\xce\xb1", "\xcf\x82", "\xe2\x82\xac", "$", "(", ")", "[", "]", "{", "}",
        "~", "/", "\\", "@", ":", ";", "!", "?", "\"", "`", "^", "_", "|", "*", "+", "=", "#", "%",
        "\xe2\x80\x94", "\xe2\x80\xa6", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\xc7\x85", "\xe2\x84\xaa",
        "\xcc\x81", "\xe2\x80\x99", "\xd0\x96", "\xef\xbc\xa1",
    };
    const int NP = (int)(sizeof PIECES / sizeof PIECES[0]);
    Rng r;
    rng_seed(&r, seed);
    cJSON *arr = cJSON_CreateArray();
    char buf[1024];
    for (int i = 0; i < count; i++) {
        int len = 1 + (int)rng_below(&r, 30);
        buf[0] = '\0';
        for (int k = 0; k < len; k++) strcat(buf, PIECES[rng_below(&r, (uint32_t)NP)]);
        cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
    }
    return arr;
}

TEST(bleu_preprocessing_matches_python) {
    cJSON *texts = random_texts(400, 7);
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("bleu_tok", path, sizeof path);
    if (!CHECK(fd >= 0)) { cJSON_Delete(texts); return; }
    char *json = cJSON_PrintUnformatted(texts);
    FILE *f = fdopen(fd, "w");
    fputs(json, f);
    fclose(f);
    free(json);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/ref/bleu_ref.py %s 2>&1", path);
    int status;
    char *out = test_run(cmd, &status);
    unlink(path);
    cJSON *ref = cJSON_Parse(out);
    if (CHECK_MSG(status == 0 && ref, "reference run failed: %s", out)) {
        const cJSON *tok = cJSON_GetObjectItem(ref, "tok13a"), *low = cJSON_GetObjectItem(ref, "lower");
        int bad = 0;
        for (int i = 0; i < cJSON_GetArraySize(texts) && bad < 5; i++) {
            const char *s = cJSON_GetArrayItem(texts, i)->valuestring;
            char *t = bleu_tokenize_13a(s), *l = bleu_lowercase(s);
            const char *want_t = cJSON_GetArrayItem(tok, i)->valuestring;
            const char *want_l = cJSON_GetArrayItem(low, i)->valuestring;
            bad += !CHECK_MSG(strcmp(t, want_t) == 0, "13a of '%s': '%s', python '%s'", s, t, want_t);
            bad += !CHECK_MSG(strcmp(l, want_l) == 0, "lower of '%s': '%s', python '%s'", s, l, want_l);
            free(t);
            free(l);
        }
    }
    cJSON_Delete(ref);
    free(out);
    cJSON_Delete(texts);
}

/* ---- several references ------------------------------------------------------ */

TEST(bleu_multi_ref_hand_computed) {
    BleuOptions opt = {0, BLEU_TOKENIZE_NONE};
    /* "the" occurs 3 times in the hypothesis, twice in ref 1, once in ref 2: it
     * is clipped at the maximum, 2. Unigrams: the 2 + cat 1 + sat 1 = 4 of 5.
     * Bigrams: "the cat" (both refs) and "cat sat" (ref 2) of the 4; trigrams:
     * "the cat sat" of 3; 4-grams: none of 2. Lengths 5 vs refs 4 and 3: 4. */
    const char *refs1[] = {"the cat the mat", "the cat sat"};
    BleuStats st = {0};
    bleu_add_segment_refs(&st, "the the the cat sat", refs1, 2, &opt);
    long want_correct[] = {4, 2, 1, 0}, want_total[] = {5, 4, 3, 2};
    for (int k = 0; k < BLEU_MAX_ORDER; k++) {
        CHECK_EQ_INT(st.correct[k], want_correct[k]);
        CHECK_EQ_INT(st.total[k], want_total[k]);
    }
    CHECK_EQ_INT(st.sys_len, 5);
    CHECK_EQ_INT(st.ref_len, 4);
    /* 'closest': 4 tokens vs 3 and 5 is a tie, the shorter wins, in either order. */
    const char *tie_a[] = {"a b c", "a b c d e"}, *tie_b[] = {"a b c d e", "a b c"};
    BleuStats ta = {0}, tb = {0};
    bleu_add_segment_refs(&ta, "a b c d", tie_a, 2, &opt);
    bleu_add_segment_refs(&tb, "a b c d", tie_b, 2, &opt);
    CHECK_EQ_INT(ta.ref_len, 3);
    CHECK_EQ_INT(tb.ref_len, 3);
    CHECK_EQ_INT(ta.correct[0], 4);   /* a b c in both, d in the longer one */
    CHECK_EQ_INT(ta.correct[3], 1);
    long l1[] = {1, 3}, l2[] = {3, 1}, l3[] = {5, 2}, l4[] = {2, 0}, l5[] = {7};
    CHECK_EQ_INT(bleu_closest_ref_len(2, l1, 2), 1);
    CHECK_EQ_INT(bleu_closest_ref_len(2, l2, 2), 1);
    CHECK_EQ_INT(bleu_closest_ref_len(5, l3, 2), 5);
    CHECK_EQ_INT(bleu_closest_ref_len(0, l4, 2), 0);   /* an empty hypothesis picks the empty reference */
    CHECK_EQ_INT(bleu_closest_ref_len(0, l5, 1), 7);
    /* An empty hypothesis line adds nothing but its reference length. */
    const char *empty_refs[] = {"a b", "x"};
    BleuStats se = {0};
    bleu_add_segment_refs(&se, "", empty_refs, 2, &opt);
    CHECK(se.sys_len == 0 && se.ref_len == 1 && se.total[0] == 0 && se.correct[0] == 0);
}

/* The hand-made cases: ties in reference length, an n-gram in two references
 * with different counts, empty hypothesis and reference lines, non-ASCII text
 * (German, Greek with final sigma under --lowercase, CJK, a 4-byte emoji). */
static const char *const MR_TIE_H[] = {"a b c d", "x y", "p q r s t u"};
static const char *const MR_TIE_R1[] = {"a b c", "x", "p q r s t u v"};
static const char *const MR_TIE_R2[] = {"a b c d e", "x y z", "p q r s t"};
static const char *const MR_CLIP_H[] = {"the the the cat sat", "a a a a b"};
static const char *const MR_CLIP_R1[] = {"the cat the mat", "a a b a"};
static const char *const MR_CLIP_R2[] = {"the cat sat", "a b a a a a"};
static const char *const MR_CLIP_R3[] = {"on the mat the cat sat", "b"};
static const char *const MR_EMPTY_H[] = {"", "a cat is here", "", "one more line ."};
static const char *const MR_EMPTY_R1[] = {"a b", "a cat is there", "", "one more line."};
static const char *const MR_EMPTY_R2[] = {"", "the cat is here", "c", "One more line"};
static const char *const MR_UTF8_H[] = {"Größe: 5€/Stück.", "ΣΟΦΙΑ ΚΑΙ ΛΟΓΟΣ ΣΟΦΟΣ", "我爱北京 天安门",
                                         "Ein Hund läuft über die Wiese 🐕.", "İstanbul’da ÇAY"};
static const char *const MR_UTF8_R1[] = {"Die Größe: 5 € pro Stück.", "σοφια και λογος σοφος", "我爱 北京天安门",
                                          "Ein Hund rennt über die Wiese.", "istanbul’da çay"};
static const char *const MR_UTF8_R2[] = {"größe 5€/stück", "Σοφία και λόγος σοφός", "我 爱 北京 天安门",
                                          "Ein Hund läuft über eine Wiese 🐕 .", "İstanbul'da çay içtik"};

static int mr_hand_cases(MultiRefCase *c) {
    int n = 0;
    c[n++] = (MultiRefCase){"length ties", 3, 2, 0, "none", MR_TIE_H, {MR_TIE_R1, MR_TIE_R2}};
    c[n++] = (MultiRefCase){"length ties, refs swapped", 3, 2, 0, "none", MR_TIE_H, {MR_TIE_R2, MR_TIE_R1}};
    c[n++] = (MultiRefCase){"clipping", 2, 3, 0, "13a", MR_CLIP_H, {MR_CLIP_R1, MR_CLIP_R2, MR_CLIP_R3}};
    c[n++] = (MultiRefCase){"empty lines", 4, 2, 0, "13a", MR_EMPTY_H, {MR_EMPTY_R1, MR_EMPTY_R2}};
    c[n++] = (MultiRefCase){"empty lines, lowercase", 4, 2, 1, "none", MR_EMPTY_H, {MR_EMPTY_R1, MR_EMPTY_R2}};
    c[n++] = (MultiRefCase){"utf-8", 5, 2, 0, "13a", MR_UTF8_H, {MR_UTF8_R1, MR_UTF8_R2}};
    c[n++] = (MultiRefCase){"utf-8, lowercase", 5, 2, 1, "13a", MR_UTF8_H, {MR_UTF8_R1, MR_UTF8_R2}};
    c[n++] = (MultiRefCase){"utf-8, lowercase, none", 5, 2, 1, "none", MR_UTF8_H, {MR_UTF8_R1, MR_UTF8_R2}};
    c[n++] = (MultiRefCase){"utf-8, one ref", 5, 1, 0, "13a", MR_UTF8_H, {MR_UTF8_R2}};
    return n;
}

static void mr_check_case(const MultiRefCase *c, const cJSON *want) {
    BleuOptions opt = {c->lowercase, BLEU_TOKENIZE_13A};
    CHECK(bleu_tokenize_parse(c->tokenize, &opt.tokenize) == 0);
    BleuScore s;
    bleu_corpus_refs(c->hyp, c->ref, c->nrefs, c->n, &opt, &s);
    ChrfOptions co = {c->lowercase};
    double chrf = chrf_corpus(c->hyp, c->ref, c->nrefs, c->n, &co);
    const cJSON *prec = cJSON_GetObjectItem(want, "precisions");
    CHECK_MSG(fabs(s.bleu - cJSON_GetObjectItem(want, "bleu")->valuedouble) <= 1e-9, "%s: bleu %.12f vs python %.12f",
              c->name, s.bleu, cJSON_GetObjectItem(want, "bleu")->valuedouble);
    for (int k = 0; k < BLEU_MAX_ORDER; k++)
        CHECK_MSG(fabs(s.precisions[k] - cJSON_GetArrayItem(prec, k)->valuedouble) <= 1e-9, "%s: p%d %.12f vs %.12f",
                  c->name, k + 1, s.precisions[k], cJSON_GetArrayItem(prec, k)->valuedouble);
    CHECK_MSG(fabs(s.bp - cJSON_GetObjectItem(want, "bp")->valuedouble) <= 1e-9, "%s: bp", c->name);
    CHECK_MSG(s.sys_len == (long)cJSON_GetObjectItem(want, "sys_len")->valuedouble, "%s: sys_len %ld", c->name, s.sys_len);
    CHECK_MSG(s.ref_len == (long)cJSON_GetObjectItem(want, "ref_len")->valuedouble, "%s: ref_len %ld vs %g", c->name,
              s.ref_len, cJSON_GetObjectItem(want, "ref_len")->valuedouble);
    CHECK_MSG(fabs(chrf - cJSON_GetObjectItem(want, "chrf")->valuedouble) <= 1e-9, "%s: chrf %.12f vs python %.12f",
              c->name, chrf, cJSON_GetObjectItem(want, "chrf")->valuedouble);
}

TEST(bleu_multi_ref_matches_python) {
    MultiRefCase cases[16];
    int n = mr_hand_cases(cases);
    /* A corpus-sized case: the shuffled golden system 4 against three
     * perturbed systems as references (every length relation occurs). */
    cJSON *g = golden_load();
    const char **sys[4] = {NULL};
    int lines = 0;
    if (g) {
        const cJSON *golden_cases = cJSON_GetObjectItem(g, "cases");
        int which[4] = {4, 3, 5, 6};
        for (int k = 0; k < 4; k++) {
            const cJSON *h = golden_hyp(golden_cases, which[k]);
            if (CHECK_MSG(h != NULL, "golden system %d missing", which[k])) sys[k] = json_strings(h, &lines);
        }
        if (sys[0] && sys[1] && sys[2] && sys[3]) {
            cases[n++] = (MultiRefCase){"golden systems", lines, 3, 0, "13a", sys[0], {sys[1], sys[2], sys[3]}};
            cases[n++] = (MultiRefCase){"golden systems, lc", lines, 3, 1, "none", sys[0], {sys[1], sys[2], sys[3]}};
        }
    }
    cJSON *want = multi_ref_python(cases, n);
    for (int c = 0; want && c < n; c++) mr_check_case(&cases[c], cJSON_GetArrayItem(want, c));
    cJSON_Delete(want);
    for (int k = 0; k < 4; k++) free(sys[k]);
    cJSON_Delete(g);
}

/* One reference through the multi-reference path is the single-reference BLEU,
 * bit for bit (the golden test above holds that one to sacreBLEU). */
TEST(bleu_multi_ref_single_is_unchanged) {
    cJSON *g = golden_load();
    if (!g) return;
    int nref, nhyp;
    const char **refs = json_strings(cJSON_GetObjectItem(g, "refs"), &nref);
    const char **hyp = json_strings(golden_hyp(cJSON_GetObjectItem(g, "cases"), 4), &nhyp);
    const char *const *streams[1] = {refs};
    BleuOptions opt = {0, BLEU_TOKENIZE_13A};
    BleuScore a, b;
    bleu_corpus(hyp, refs, nhyp, &opt, &a);
    bleu_corpus_refs(hyp, streams, 1, nhyp, &opt, &b);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    /* The same reference twice changes nothing either. */
    const char *const *twice[2] = {refs, refs};
    bleu_corpus_refs(hyp, twice, 2, nhyp, &opt, &b);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    free(hyp);
    free(refs);
    cJSON_Delete(g);
}

/* ---- the CLI with several references, stdin and signatures ------------------- */

static void mr_write_case(const MultiRefCase *c, const char *dir, char paths[][600]) {
    snprintf(paths[0], 600, "%s/hyp.txt", dir);
    CHECK(write_lines(paths[0], (const char **)c->hyp, c->n) == 0);
    for (int k = 0; k < c->nrefs; k++) {
        snprintf(paths[k + 1], 600, "%s/ref%d.txt", dir, k + 1);
        CHECK(write_lines(paths[k + 1], (const char **)c->ref[k], c->n) == 0);
    }
}

TEST(bleu_cli_multi_ref_signature_stdin) {
    char dir[SCRATCH_PATH_MAX], paths[4][600], cmd[4096];
    if (!CHECK(scratch_dir("bleu", dir, sizeof dir))) return;
    MultiRefCase cases[16];
    mr_hand_cases(cases);
    const MultiRefCase *c = &cases[2];   /* clipping: three references, 13a */
    mr_write_case(c, dir, paths);
    const char *bin = test_glue_bin();
    int status;
    /* --json: the library's numbers and both signatures. */
    snprintf(cmd, sizeof cmd, "%s bleu %s %s %s %s --json", bin, paths[0], paths[1], paths[2], paths[3]);
    char *json_out = test_run(cmd, &status);
    cJSON *o = cJSON_Parse(json_out);
    if (CHECK_MSG(status == 0 && o, "%s -> %d '%s'", cmd, status, json_out)) {
        BleuOptions opt = {0, BLEU_TOKENIZE_13A};
        ChrfOptions co = {0};
        BleuScore s;
        bleu_corpus_refs(c->hyp, c->ref, c->nrefs, c->n, &opt, &s);
        CHECK_NEAR(cJSON_GetObjectItem(o, "bleu")->valuedouble, s.bleu, 1e-12);
        CHECK_NEAR(cJSON_GetObjectItem(o, "chrf")->valuedouble, chrf_corpus(c->hyp, c->ref, c->nrefs, c->n, &co), 1e-12);
        CHECK_EQ_INT(cJSON_GetObjectItem(o, "nrefs")->valueint, 3);
        const char *sig = cJSON_GetStringValue(cJSON_GetObjectItem(o, "signature"));
        const char *csig = cJSON_GetStringValue(cJSON_GetObjectItem(o, "chrf_signature"));
        CHECK_MSG(sig && strcmp(sig, "nrefs:3|case:mixed|eff:no|tok:13a|smooth:exp|version:glue-" GLUE_VERSION) == 0,
                  "signature '%s'", sig ? sig : "(none)");
        CHECK_MSG(csig && strcmp(csig, "nrefs:3|case:mixed|eff:yes|nc:6|nw:0|space:no|version:glue-" GLUE_VERSION) == 0,
                  "chrF signature '%s'", csig ? csig : "(none)");
    }
    cJSON_Delete(o);
    /* The hypothesis from stdin, redirected and piped: the same object. */
    const char *forms[] = {"%s bleu - %s %s %s --json < %s", "cat %5$s | %s bleu - %s %s %s --json"};
    for (int f = 0; f < 2; f++) {
        snprintf(cmd, sizeof cmd, forms[f], bin, paths[1], paths[2], paths[3], paths[0]);
        char *out = test_run(cmd, &status);
        CHECK_MSG(status == 0 && strcmp(out, json_out) == 0, "%s -> %d '%s', want '%s'", cmd, status, out, json_out);
        free(out);
    }
    free(json_out);
    /* Text: the signature after each score, chrF on the second line; case:lc
     * and tok:none follow the options (--lowercase is BLEU's only, as in
     * sacreBLEU; --chrf-lowercase is chrF's). */
    snprintf(cmd, sizeof cmd, "%s bleu %s %s %s --lowercase --tokenize none", bin, paths[0], paths[1], paths[2]);
    char *out = test_run(cmd, &status);
    const char *second = strchr(out, '\n');
    CHECK_MSG(status == 0 && strncmp(out, "BLEU = ", 7) == 0 && second && strncmp(second + 1, "chrF2 = ", 8) == 0,
              "text output '%s'", out);
    CHECK_MSG(strstr(out, " nrefs:2|case:lc|eff:no|tok:none|smooth:exp|version:glue-" GLUE_VERSION "\n") != NULL &&
                  (!second || strstr(second, " nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:glue-" GLUE_VERSION "\n")),
              "signatures in '%s'", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s bleu %s %s %s --chrf-lowercase", bin, paths[0], paths[1], paths[2]);
    out = test_run(cmd, &status);
    second = strchr(out, '\n');
    CHECK_MSG(status == 0 && strstr(out, " nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:glue-") != NULL && second &&
                  strstr(second, " nrefs:2|case:lc|eff:yes|nc:6|nw:0|space:no|version:glue-" GLUE_VERSION "\n"),
              "--chrf-lowercase signatures in '%s'", out);
    free(out);
    for (int k = 0; k < 4; k++) unlink(paths[k]);
    rmdir(dir);
}

TEST(bleu_cli_multi_ref_errors) {
    char dir[SCRATCH_PATH_MAX], a[600], b[600], short_[600], cmd[4096];
    if (!CHECK(scratch_dir("bleu", dir, sizeof dir))) return;
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    snprintf(short_, sizeof short_, "%s/short.txt", dir);
    const char *three[] = {"eins", "zwei", "drei"};
    write_lines(a, three, 3);
    write_lines(b, three, 3);
    write_lines(short_, three, 2);
    const char *bin = test_glue_bin();
    struct { const char *fmt; int status; const char *msg; } cases[] = {
        /* three files, the last one short: every file named with its count */
        {"%s bleu %s %s %s 2>&1", 65, "b.txt has 3 lines but "},
        {"%s bleu - - %s < %s 2>&1", 2, "at most one file can be read from stdin"},
    };
    for (int k = 0; k < 2; k++) {
        if (k == 0) snprintf(cmd, sizeof cmd, cases[k].fmt, bin, b, a, short_);
        else snprintf(cmd, sizeof cmd, cases[k].fmt, bin, a, a);
        int status;
        char *out = test_run(cmd, &status);
        CHECK_MSG(status == cases[k].status && strstr(out, cases[k].msg), "'%s': status %d (want %d), output '%s'",
                  cmd, status, cases[k].status, out);
        if (k == 0) CHECK_MSG(strstr(out, "a.txt has 3 and ") && strstr(out, "short.txt has 2"), "counts in '%s'", out);
        free(out);
    }
    unlink(a); unlink(b); unlink(short_);
    rmdir(dir);
}
