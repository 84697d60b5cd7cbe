/* test_chrf.c — corpus chrF (metrics/chrf.c, sacreBLEU 2.x's CHRF defaults) on tiny
 * cases worked out by hand, and against the independent Python reference
 * tests/ref/bleu_multi_ref.py on cases aimed at its details: the choice among
 * references, references shorter than an order, whitespace, code points rather
 * than bytes, lowercasing; and its signature. */
#include "core/provenance.h"
#include "metrics/chrf.h"
#include "tests/bleu_multi_ref.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <string.h>

static double chrf1(const char *hyp, const char *ref) {
    ChrfOptions opt = {0};
    const char *const *refs[1] = {&ref};
    return chrf_corpus(&hyp, refs, 1, 1, &opt);
}

TEST(chrf_hand_computed) {
    /* "ab" vs "ab": orders 1 and 2 match fully (2/2, 1/1); the reference has no
     * 3..6-grams, so those orders count nothing. P = R = 1: 100. */
    CHECK_NEAR(chrf1("ab", "ab"), 100, 1e-12);
    /* "ab" vs "ac": order 1 matches 1 of 2 both ways, order 2 0 of 1.
     * P = R = (1/2 + 0) / 2 = 1/4, F2 = 5 PR / (4P + R) = 1/4: 25. */
    CHECK_NEAR(chrf1("ab", "ac"), 25, 1e-12);
    /* "a" vs "ab": order 1: P = 1/1, R = 1/2; order 2: the hypothesis has no
     * bigram, so the order is not effective. F2 = 5 * 1 * 1/2 / (4 + 1/2) = 5/9. */
    CHECK_NEAR(chrf1("a", "ab"), 500.0 / 9, 1e-12);
    /* Whitespace is removed before counting: "a b" is "ab". */
    CHECK_NEAR(chrf1("a b", "ab"), 100, 1e-12);
    CHECK_NEAR(chrf1(" a\u00a0b\t", "ab"), 100, 1e-12);
    /* Code points, not bytes: "über" vs "uber" has 4 characters each.
     * order 1: b e r of 4 = 3/4; order 2: be er of 3 = 2/3; order 3: ber of 2 =
     * 1/2; order 4: 0 of 1; orders 5-6: none. P = R = (3/4 + 2/3 + 1/2 + 0) / 4
     * = 23/48, and F2 = P when P = R. */
    CHECK_NEAR(chrf1("über", "uber"), 100.0 * 23 / 48, 1e-12);
    /* Nothing in common: 0; an empty hypothesis: 0. */
    CHECK_NEAR(chrf1("ab", "cd"), 0, 0);
    CHECK_NEAR(chrf1("", "ab"), 0, 0);
    CHECK_NEAR(chrf1("", ""), 0, 0);
}

TEST(chrf_corpus_hand_computed) {
    ChrfOptions opt = {0};
    /* Statistics are summed before averaging, and a reference too short for an
     * order zeroes the hypothesis count there. Line 1 "abc" vs "abc": [3,3,3],
     * [2,2,2], [1,1,1]. Line 2 "abc" vs "a": [3,1,1], then nothing (not [2,0,0]
     * and [1,0,0]). Sums: [6,4,4], [2,2,2], [1,1,1]: P = (4/6 + 1 + 1) / 3 =
     * 8/9, R = 1, F2 = 5 * 8/9 / (32/9 + 1) = 40/41. */
    const char *h1[] = {"abc", "abc"}, *r1[] = {"abc", "a"};
    const char *const *refs1[] = {r1};
    CHECK_NEAR(chrf_corpus(h1, refs1, 1, 2, &opt), 4000.0 / 41, 1e-12);
    /* An empty hypothesis line still adds its reference's n-grams to recall:
     * sums [2,4,2], [1,2,1]: P = 1, R = 1/2, F2 = 5/9. */
    const char *h2[] = {"", "ab"}, *r2[] = {"ab", "ab"};
    const char *const *refs2[] = {r2};
    CHECK_NEAR(chrf_corpus(h2, refs2, 1, 2, &opt), 500.0 / 9, 1e-12);
}

TEST(chrf_multi_ref_hand_computed) {
    ChrfOptions opt = {0};
    /* The reference with the best sentence chrF, not the most matches: "abc" vs
     * "abcdefgh" matches every hypothesis n-gram but scores ~32; vs "ab":
     * [3,2,2], [2,1,1], order 3 not effective: P = (2/3 + 1/2) / 2 = 7/12,
     * R = 1, F2 = 5 * 7/12 / (7/3 + 1) = 7/8. In either order. */
    const char *h[] = {"abc"}, *ra[] = {"abcdefgh"}, *rb[] = {"ab"};
    const char *const *ab[] = {ra, rb}, *const *ba[] = {rb, ra};
    CHECK_NEAR(chrf_corpus(h, ab, 2, 1, &opt), 87.5, 1e-12);
    CHECK_NEAR(chrf_corpus(h, ba, 2, 1, &opt), 87.5, 1e-12);
    /* A tie keeps the first reference. Line 1 "ab" scores 0 against both "c"
     * ([2,1,0]) and "cd" ([2,2,0], [1,1,0]); line 2 is "ab" against "ab" twice
     * ([2,2,2], [1,1,1]). First kept: sums [4,3,2], [1,1,1]: P = (1/2 + 1)/2 =
     * 3/4, R = (2/3 + 1)/2 = 5/6, F2 = 5 * 3/4 * 5/6 / (3 + 5/6) = 75/92.
     * ("cd" kept would give sums [4,4,2], [2,2,1] and 50.) */
    const char *th[] = {"ab", "ab"}, *t1[] = {"c", "ab"}, *t2[] = {"cd", "ab"};
    const char *const *t12[] = {t1, t2}, *const *t21[] = {t2, t1};
    CHECK_NEAR(chrf_corpus(th, t12, 2, 2, &opt), 7500.0 / 92, 1e-12);
    CHECK_NEAR(chrf_corpus(th, t21, 2, 2, &opt), 50, 1e-12);
}

TEST(chrf_lowercase_and_signature) {
    ChrfOptions mixed = {0}, lc = {1};
    /* Python's lower(): a word-final capital sigma becomes ς, the others σ. */
    const char *h[] = {"ΣΟΦΟΣ Über"}, *r[] = {"σοφος über"};
    const char *const *refs[] = {r};
    CHECK(chrf_corpus(h, refs, 1, 1, &mixed) < 100);
    CHECK_NEAR(chrf_corpus(h, refs, 1, 1, &lc), 100, 1e-12);   /* final sigma included */
    char sig[256];
    chrf_signature(&mixed, 1, sig, sizeof sig);
    CHECK_MSG(strcmp(sig, "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:glue-" GLUE_VERSION) == 0, "%s", sig);
    chrf_signature(&lc, 3, sig, sizeof sig);
    CHECK_MSG(strcmp(sig, "nrefs:3|case:lc|eff:yes|nc:6|nw:0|space:no|version:glue-" GLUE_VERSION) == 0, "%s", sig);
}

/* Cases for chrF's own rules; test_bleu.c compares the shared multi-reference
 * cases (chrF included) too. */
static const char *const CH_H[] = {"abc", "ab", "ab", "", "Die Katze schläft.", "我爱北京天安门",
                                   "a  b\tc d", "ΣΟΦΟΣ", "🐕🐕🐕 wau", "x"};
static const char *const CH_R1[] = {"abcdefgh", "c", "ab", "ab", "Die Katzen schlafen.", "我爱北京",
                                    "abcd", "σοφος", "🐕 wau wau", ""};
static const char *const CH_R2[] = {"ab", "cd", "ab", "", "Eine Katze schläft", "北京天安门",
                                    "ab cd", "Σοφός", "🐕🐕", "xy"};
static const char *const CH_R3[] = {"abd", "", "ba", "abc", "die katze schläft", "爱",
                                    "dcba", "ΣΟΦΟΣ ΚΑΙ", "w a u", "x"};

TEST(chrf_matches_python) {
    MultiRefCase cases[] = {
        {"one ref", 10, 1, 0, "13a", CH_H, {CH_R1}},
        {"two refs", 10, 2, 0, "13a", CH_H, {CH_R1, CH_R2}},
        {"three refs", 10, 3, 0, "13a", CH_H, {CH_R1, CH_R2, CH_R3}},
        {"three refs, other order", 10, 3, 0, "13a", CH_H, {CH_R3, CH_R1, CH_R2}},
        {"three refs, lowercase", 10, 3, 1, "13a", CH_H, {CH_R2, CH_R3, CH_R1}},
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    cJSON *want = multi_ref_python(cases, n);
    for (int c = 0; want && c < n; c++) {
        ChrfOptions opt = {cases[c].lowercase};
        double got = chrf_corpus(cases[c].hyp, cases[c].ref, cases[c].nrefs, cases[c].n, &opt);
        double ref = cJSON_GetObjectItem(cJSON_GetArrayItem(want, c), "chrf")->valuedouble;
        CHECK_MSG(fabs(got - ref) <= 1e-9, "%s: chrf %.12f vs python %.12f", cases[c].name, got, ref);
    }
    cJSON_Delete(want);
}
