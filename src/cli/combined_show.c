/* combined_show.c — the report of an ensemble or boosting run (see combined_show.h). */
#include "cli/combined_show.h"

#include "cli/run_score.h"
#include "core/files.h"
#include "models/run_config.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* "  dev accuracy 91.20 f1 88.10" for every split object of o. */
static void combined_print_splits(const cJSON *o) {
    for (const cJSON *s = o ? o->child : NULL; s; s = s->next) {
        if (!cJSON_IsObject(s)) continue;
        printf("  %s", s->string);
        for (const cJSON *m = s->child; m; m = m->next)
            if (cJSON_IsNumber(m)) printf(" %s %.2f", m->string, m->valuedouble);
        printf("\n");
    }
}

int combined_show(const Task *t, const char *dir, cJSON *res, int json) {
    const char *kind = run_config_string(res, "model", "");
    if (run_score_test_public(t)) {
        cJSON *test = run_score_test(model_find(kind), t, dir);
        if (!test) return 1;
        cJSON_AddItemToObject(res, "test", cJSON_DetachItemFromObjectCaseSensitive(test, "test"));
        cJSON_Delete(test);
    }
    if (json) {
        json_print_line(res);
        return 0;
    }
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(res, "members");
    printf("%s of %d runs on %s (weights: %s, combine: %s) -> %s\n", kind, cJSON_GetArraySize(members),
           t->display, run_config_string(res, "weights", ""), run_config_string(res, "combine", ""), dir);
    combined_print_splits(cJSON_GetObjectItemCaseSensitive(res, "best"));
    const cJSON *test = cJSON_GetObjectItemCaseSensitive(res, "test");
    if (test) {
        printf("  test");
        for (const cJSON *m = test->child; m; m = m->next)
            if (cJSON_IsNumber(m)) printf(" %s %.2f", m->string, m->valuedouble);
        printf("\n");
    }
    for (const cJSON *m = members ? members->child : NULL; m; m = m->next)
        printf("  member %s (%s): weight %.4g, dev score alone %.2f\n", run_config_string(m, "run", ""),
               run_config_string(m, "model", ""), run_config_number(m, "weight", 0), run_config_number(m, "score", 0));
    return 0;
}
