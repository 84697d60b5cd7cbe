/* test_lib_batch.c — a text's prediction does not depend on the batch it
 * lands in. glue serve puts concurrent requests into one glue_predict call,
 * and a call sorts its texts by length and cuts them into batches of similar
 * length (train/length_batches.h): whatever else is in the call, and in
 * whatever order, each text gets the label and (within 1e-6) the
 * probabilities it gets alone, in request order. For BERT (padded to a
 * batch's longest row) and TextCNN, on texts of 1 to 40 words. */
#include "include/glue.h"
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LB_TEXTS = 40, LB_K = 2 };

/* Text i: i + 1 words of the fixture's vocabulary, varied by i. */
static char *lb_text(int i) {
    static const char *const WORDS[] = {"good", "great", "fine", "nice", "day", "the", "was", "bad", "awful", "sad"};
    char *s = calloc(1, 16 * (size_t)(i + 1) + 1);
    for (int w = 0; w <= i; w++) {
        if (w) strcat(s, " ");
        strcat(s, WORDS[(w * 7 + i * 3) % 10]);
    }
    return s;
}

/* Predicts texts[order[0..n)] in calls of chunk texts; each row checked against ref (per text). */
static void lb_check(glue_model *m, const char *name, char **texts, const int *order, int n, int chunk, const float *ref,
                     const char *how) {
    const char *call[LB_TEXTS];
    float p[LB_TEXTS * LB_K];
    char err[GLUE_ERROR_MAX];
    for (int at = 0; at < n; at += chunk) {
        int b = n - at < chunk ? n - at : chunk;
        for (int i = 0; i < b; i++) call[i] = texts[order[at + i]];
        CHECK_MSG(glue_predict(m, call, NULL, b, p, NULL, err, sizeof err) == GLUE_OK, "%s: %s", name, err);
        for (int i = 0; i < b; i++) {
            const float *want = ref + (size_t)order[at + i] * LB_K, *got = p + (size_t)i * LB_K;
            int same = (want[0] > want[1]) == (got[0] > got[1]);
            for (int k = 0; k < LB_K; k++) same = same && fabsf(want[k] - got[k]) <= 1e-6f;
            CHECK_MSG(same, "%s, %s: text %d (%d words): %.9g %.9g, alone %.9g %.9g", name, how, order[at + i],
                      order[at + i] + 1, got[0], got[1], want[0], want[1]);
        }
    }
}

static void lb_model(const CliFixture *f, const char *model, const char *quick) {
    char args[4096], run[512], err[GLUE_ERROR_MAX];
    int st;
    snprintf(args, sizeof args, "finetune --train days.tsv --dev days.tsv --model %s --out run-%s --epochs 1 --threads 1 %s",
             model, model, quick);
    char *out = cli_fixture_glue(f, args, &st);
    CHECK_MSG(st == 0, "%s: finetune exit %d: %s", model, st, out);
    free(out);
    snprintf(run, sizeof run, "%s/run-%s", f->dir, model);
    glue_model *m;
    /* More threads than the command line allows is a bad argument, not a crash of the OpenMP runtime. */
    CHECK(glue_open(run, GLUE_MAX_THREADS + 1, &m, err, sizeof err) == GLUE_ERR_ARGUMENT && !m && strstr(err, "threads"));
    /* a negative count, as --threads -1 is refused (it was every core without a word) */
    CHECK(glue_open(run, -1, &m, err, sizeof err) == GLUE_ERR_ARGUMENT && !m && strstr(err, "threads: 0 (every core)"));
    if (st != 0 || glue_open(run, 1, &m, err, sizeof err) != GLUE_OK) {
        CHECK_MSG(0, "%s: %s", model, err);
        return;
    }
    CHECK_EQ_INT(glue_num_labels(m), LB_K);
    char *texts[LB_TEXTS];
    float ref[LB_TEXTS * LB_K];
    int order[LB_TEXTS];
    for (int i = 0; i < LB_TEXTS; i++) {
        texts[i] = lb_text(i);
        const char *one = texts[i];
        CHECK(glue_predict(m, &one, NULL, 1, ref + (size_t)i * LB_K, NULL, err, sizeof err) == GLUE_OK);
    }
    /* Not all alike: a wrong row put back in another's place would show. */
    int distinct = 0;
    for (int i = 1; i < LB_TEXTS; i++) distinct += fabsf(ref[i * LB_K] - ref[0]) > 1e-4f;
    CHECK_MSG(distinct > LB_TEXTS / 2, "%s: only %d texts predicted differently from the first", model, distinct);
    for (int i = 0; i < LB_TEXTS; i++) order[i] = i;
    lb_check(m, model, texts, order, LB_TEXTS, LB_TEXTS, ref, "all in one call");
    for (int i = 0; i < LB_TEXTS; i++) order[i] = LB_TEXTS - 1 - i;
    lb_check(m, model, texts, order, LB_TEXTS, LB_TEXTS, ref, "longest first");
    for (int i = 0; i < LB_TEXTS; i++) order[i] = (i * 17) % LB_TEXTS;   /* 17 is prime to 40: a shuffle */
    lb_check(m, model, texts, order, LB_TEXTS, LB_TEXTS, ref, "shuffled");
    lb_check(m, model, texts, order, LB_TEXTS, 7, ref, "shuffled, 7 a call");
    for (int i = 0; i < LB_TEXTS; i++) free(texts[i]);
    /* An empty text fails the call as the header says (it was predicted), naming its index. */
    const char *with_empty[2] = {"a good day", ""};
    float p2[2 * LB_K];
    CHECK_MSG(glue_predict(m, with_empty, NULL, 2, p2, NULL, err, sizeof err) == GLUE_ERR_DATA && strstr(err, "text 1: empty"),
              "%s: an empty text: %s", model, err);
    glue_close(m);
}

TEST(lib_predict_does_not_depend_on_the_batch) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || cli_fixture_two_class(&f, "days.tsv", 60) != 0) return;
    char repo[PATH_MAX], bert[PATH_MAX + 64];
    if (!getcwd(repo, sizeof repo)) repo[0] = '\0';
    snprintf(bert, sizeof bert, "--init '%s/models/bert-tiny-wiki' --max-len 64 --batch 16", repo);
    lb_model(&f, "bert", bert);
    lb_model(&f, "textcnn", "");
    cli_fixture_close(&f);
}
