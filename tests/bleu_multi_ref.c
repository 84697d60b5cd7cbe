/* bleu_multi_ref.c — runs tests/ref/bleu_multi_ref.py on multi-reference
 * cases (see bleu_multi_ref.h). */
#include "tests/bleu_multi_ref.h"

#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <unistd.h>

static cJSON *string_array(const char *const *s, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
    return a;
}

/* {"cases": [{"hyp", "refs", "lowercase", "tokenize"}, ...]} */
static cJSON *cases_json(const MultiRefCase *cases, int ncases) {
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "cases");
    for (int c = 0; c < ncases; c++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "hyp", string_array(cases[c].hyp, cases[c].n));
        cJSON *refs = cJSON_AddArrayToObject(o, "refs");
        for (int k = 0; k < cases[c].nrefs; k++) cJSON_AddItemToArray(refs, string_array(cases[c].ref[k], cases[c].n));
        cJSON_AddBoolToObject(o, "lowercase", cases[c].lowercase);
        cJSON_AddStringToObject(o, "tokenize", cases[c].tokenize);
        cJSON_AddItemToArray(arr, o);
    }
    return root;
}

cJSON *multi_ref_python(const MultiRefCase *cases, int ncases) {
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("bleu_multi", path, sizeof path);
    if (!CHECK(fd >= 0)) return NULL;
    cJSON *in = cases_json(cases, ncases);
    char *text = cJSON_PrintUnformatted(in);
    cJSON_Delete(in);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/ref/bleu_multi_ref.py %s 2>&1", path);
    int status;
    char *out = test_run(cmd, &status);
    unlink(path);
    cJSON *ref = cJSON_Parse(out);
    if (!CHECK_MSG(status == 0 && cJSON_GetArraySize(ref) == ncases, "reference run failed: %s", out)) {
        cJSON_Delete(ref);
        ref = NULL;
    }
    free(out);
    return ref;
}
