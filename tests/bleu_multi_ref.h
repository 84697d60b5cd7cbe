/* bleu_multi_ref.h — multi-reference test cases for BLEU and chrF, scored by
 * the library and by the independent Python reference tests/ref/bleu_multi_ref.py
 * (standard library only, run by /usr/bin/python3), and compared. Shared by
 * tests/test_bleu.c and tests/test_chrf.c. Tests only. */
#ifndef GLUE_TESTS_BLEU_MULTI_REF_H
#define GLUE_TESTS_BLEU_MULTI_REF_H

typedef struct cJSON cJSON;

#define MULTI_REF_MAX 4

/* n hypothesis lines against nrefs reference streams (ref[k][i] is reference
 * k of line i). */
typedef struct {
    const char *name;
    int n, nrefs, lowercase;
    const char *tokenize;              /* "13a" or "none" */
    const char *const *hyp;
    const char *const *ref[MULTI_REF_MAX];
} MultiRefCase;

/* The reference's results, a JSON array with one object per case ({"bleu",
 * "precisions", "bp", "sys_len", "ref_len", "chrf"}); NULL after a failed
 * check. Caller frees. */
cJSON *multi_ref_python(const MultiRefCase *cases, int ncases);

#endif
