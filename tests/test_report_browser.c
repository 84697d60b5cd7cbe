/* test_report_browser.c — the report page in a real browser: headless
 * Chromium renders the fixture's report (report_fixture.h) at 1280 px, and
 *   - the screenshot is not blank and shows the palette's colours (bars and
 *     curves were drawn, not only text; decoded by tests/ref/png_ink.py);
 *   - the page raised no console message (it has no script: any message is a
 *     failed load or an error);
 *   - the DOM Chromium built (--dump-dom) has every chart and table, as many
 *     <svg> as the file (nothing swallowed by a parse error), and the numbers.
 * Skipped, with the reason, only when no Chromium can be run here. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "tests/report_fixture.h"
#include "tests/report_page_check.h"

/* Chromium's process-level flags: headless, root-safe, no GPU, a private profile. */
#define CHROMIUM_FLAGS "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --mute-audio"
#define CHROMIUM_TIMEOUT "timeout 120"

/* The Chromium binary, or NULL; *why says what is wrong when it cannot run. */
static const char *chromium_find(const char *root, char *why, size_t cap) {
    static const char *const NAMES[] = {"chromium", "chromium-browser", "google-chrome"};
    static char found[256];
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "command -v %s 2>/dev/null", NAMES[i]);
        int st;
        char *out = test_run(cmd, &st);
        if (st == 0 && out && out[0] == '/') {
            out[strcspn(out, "\n")] = '\0';
            snprintf(found, sizeof found, "%s", out);
            free(out);
            /* Installed is not enough: it must start here. */
            snprintf(cmd, sizeof cmd, CHROMIUM_TIMEOUT " %s " CHROMIUM_FLAGS " --user-data-dir=%s/probe --dump-dom "
                     "about:blank 2>/dev/null", found, root);
            out = test_run(cmd, &st);
            int ok = st == 0 && out && strstr(out, "<html");
            free(out);
            if (ok) return found;
            snprintf(why, cap, "%s is installed but does not start headless here (exit %d)", found, st);
            return NULL;
        }
        free(out);
    }
    snprintf(why, cap, "Chromium is not installed (apt-get install chromium; .ci/run installs it)");
    return NULL;
}

static char *root_file(const ReportFixture *fx, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx->root, name);
    return report_fixture_read(path);
}

/* The screenshot's size, non-white share and palette pixel counts. */
static void check_screenshot(const ReportFixture *fx) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/ref/png_ink.py %s/shot.png 2>&1", fx->root);
    int st;
    char *out = test_run(cmd, &st);
    cJSON *j = st == 0 ? cJSON_Parse(out) : NULL;
    CHECK_MSG(j != NULL, "png_ink.py: %s", out ? out : "");
    const cJSON *pal = cJSON_GetObjectItemCaseSensitive(j, "palette");
    double ink = j ? cJSON_GetObjectItemCaseSensitive(j, "ink")->valuedouble : 0;
    CHECK_EQ_INT(j ? cJSON_GetObjectItemCaseSensitive(j, "width")->valueint : 0, 1280);
    CHECK_MSG(ink > 0.03, "the screenshot is (nearly) blank: %.4f of the pixels are not white", ink);
    /* The GLUE bar charts are in the first 2000 px: blue (one metric) and orange (a second one). */
    CHECK_MSG(pal && cJSON_GetArrayItem(pal, 0)->valueint > 10000, "few blue chart pixels: %s", out);
    CHECK_MSG(pal && cJSON_GetArrayItem(pal, 1)->valueint > 4000, "few orange chart pixels: %s", out);
    cJSON_Delete(j);
    free(out);
}

TEST(report_renders_in_chromium) {
    ReportFixture fx;
    if (report_fixture_make(&fx) != 0) return;
    char why[512];
    const char *chromium = chromium_find(fx.root, why, sizeof why);
    if (!chromium) {
        report_fixture_remove(&fx);
        test_skip(why);
        return;
    }
    int st;
    char *html = report_fixture_page(&fx, "--runs runs --results results --pretrain pt", &st);
    CHECK_EQ_INT(st, 0);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && " CHROMIUM_TIMEOUT " %s " CHROMIUM_FLAGS " --user-data-dir=%s/profile1 "
             "--window-size=1280,2000 --enable-logging=stderr --v=0 --screenshot=%s/shot.png file://%s/report.html "
             ">/dev/null 2>chrome.log",
             fx.root, chromium, fx.root, fx.root, fx.root);
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "chromium --screenshot exited %d (see %s/chrome.log)", st, fx.root);
    check_screenshot(&fx);
    char *log = root_file(&fx, "chrome.log");
    CHECK_MSG(log && !strstr(log, ":CONSOLE"), "the page logged to the console:\n%s", log ? log : "(no log)");
    free(log);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && " CHROMIUM_TIMEOUT " %s " CHROMIUM_FLAGS " --user-data-dir=%s/profile2 --dump-dom "
             "file://%s/report.html >dom.html 2>/dev/null",
             fx.root, chromium, fx.root, fx.root);
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 0);
    char *dom = root_file(&fx, "dom.html");
    static const char *const IDS[] = {"glue-table", "bars-sst2", "bars-stsb", "curve-loss-runs-sst2-fasttext",
                                      "curve-dev-runs-stsb-fasttext", "pretrain-loss-pt", "pretrain-acc-pt",
                                      "confusion-runs-sst2-fasttext", "scatter-runs-stsb-fasttext",
                                      "translation-table", "bench-bert-" REPORT_FX_CPU_DIR, "protocol-finetune-protocol",
                                      "fuzz-fuzz", "sources", "missing"};
    for (size_t i = 0; i < sizeof IDS / sizeof IDS[0]; i++) {
        char key[128];
        snprintf(key, sizeof key, "id=\"%s\"", IDS[i]);
        CHECK_MSG(dom && strstr(dom, key), "the DOM has no %s", IDS[i]);
    }
    CHECK_EQ_INT(page_count(dom, "<svg"), page_count(html, "<svg"));
    CHECK(page_count(dom, "<svg") >= 10);
    /* The fixture's numbers, as Chromium parsed them. */
    CHECK(page_shows(dom, 91.234567890123, 2, 0) && page_shows(dom, 61.875, 2, 0));
    CHECK(page_shows(dom, REPORT_FX_SEEDS_GLUE, 2, 1e-12) && page_shows(dom, 37.777, 2, 0));
    CHECK(dom && strstr(dom, REPORT_FX_CPU) && strstr(dom, "CPU not recorded"));
    free(dom);
    free(html);
    report_fixture_remove(&fx);
}
