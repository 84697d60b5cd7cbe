/* test_report_multilabel.c — the report's figures of a multi-label run
 * (eval/report_multilabel.h): one F1 bar per label by name, the macro- and
 * micro-F1 of the run's rule as the metric modules compute them, and the
 * threshold curve with its best point, read back from the HTML. */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "eval/report_multilabel.h"
#include "metrics/multilabel.h"
#include "tests/test.h"
#include "train/decision.h"

static char *read_all(FILE *f) {
    fflush(f);
    long n = ftell(f);
    char *s = xmalloc((size_t)n + 1);
    rewind(f);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    return s;
}

TEST(report_multilabel_bars_and_curve) {
    static const Task T = {.name = "ml3", .display = "ML-3", .num_labels = 3, .multi_label = 1,
                           .labels = {"0", "1", "2"}, .label_names = {"joy", "anger", "neutral"},
                           .metrics = {METRIC_MACRO_F1, METRIC_MICRO_F1}};
    enum { N = 6, K = 3 };
    int sets[N][K + 1] = {{1, 0}, {2, 0, 2}, {1, 1}, {1, 2}, {2, 1, 2}, {1, 0}};   /* count, ids */
    Example ex[N];
    for (int i = 0; i < N; i++) {
        ex[i] = (Example){.label = -1, .nlabels = sets[i][0], .labels = &sets[i][1]};
    }
    Dataset d = {.task = &T, .ex = ex, .n = N};
    const float prob[N * K] = {0.9f, 0.1f, 0.2f,  0.7f, 0.3f, 0.6f,  0.2f, 0.8f, 0.1f,
                               0.1f, 0.2f, 0.4f,  0.3f, 0.9f, 0.7f,  0.4f, 0.6f, 0.2f};
    Decision rule;
    decision_default(&rule, K);
    FILE *f = tmpfile();
    ReportPage p;
    report_page_init(&p, f);
    report_multilabel_dev(&p, &T, &d, prob, &rule, "ml3-run", "ML-3 dev, run");
    char *html = read_all(f);
    uint8_t *gold = decision_gold(&d, K), pred[N * K];
    decision_apply(&rule, prob, N, pred);
    MultiLabelScores s;
    multilabel_score(pred, gold, N, K, &s, NULL);
    char want[128];
    snprintf(want, sizeof want, "macro-F1 <data value=\"%.17g\">", 100 * s.macro.f1);
    CHECK_MSG(strstr(html, want) != NULL, "no '%s' in the page", want);
    snprintf(want, sizeof want, "micro-F1 <data value=\"%.17g\">", 100 * s.micro.f1);
    CHECK_MSG(strstr(html, want) != NULL, "no '%s' in the page", want);
    CHECK(strstr(html, "id=\"labels-ml3-run\"") && strstr(html, "id=\"threshold-ml3-run\""));
    CHECK(strstr(html, "joy") && strstr(html, "anger") && strstr(html, "neutral"));
    CHECK_MSG(strstr(html, "rows with no label predicted") != NULL, "empty predictions not said");
    free(gold);
    free(html);
    report_page_free(&p);
    fclose(f);
}
