/* glue_score.c — the GLUE score over (task, metrics) records (see glue_score.h).
 *
 * The nine task ids are listed here rather than taken from the task registry:
 * they are the definition of the GLUE score (fixed by the leaderboard), while the
 * registry may grow tasks (AX, translation) that must not enter the average. */
#include "metrics/glue_score.h"

#include "core/common.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const struct { const char *id, *display; } GLUE_TASKS[GLUE_SCORE_NUM_TASKS] = {
    {"cola", "CoLA"}, {"sst2", "SST-2"}, {"mrpc", "MRPC"}, {"stsb", "STS-B"}, {"qqp", "QQP"},
    {"mnli", "MNLI"}, {"qnli", "QNLI"}, {"rte", "RTE"},   {"wnli", "WNLI"},
};
enum { MNLI_SLOT = 5, QNLI_SLOT = 6, NAME_CAP = 64 };
#define QNLI_9K_KEY "qnli9k"   /* canonical_name("qnli-9k") */

/* Lowercase letters and digits only: "SST-2", "sst_2" and "sst2" meet. */
static void canonical_name(const char *s, char *out) {
    int n = 0;
    for (; *s && n < NAME_CAP - 1; s++)
        if (isalnum((unsigned char)*s)) out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
}

/* Slot of a record in GLUE_TASKS, or -1 when it does not count. For MNLI, *half
 * gets 0 (matched) or 1 (mismatched), from the name's suffix or else the split. */
static int record_slot(const GlueRecord *r, const GlueScoreOptions *o, int *half, int *subset) {
    char key[NAME_CAP];
    canonical_name(r->task ? r->task : "", key);
    *half = 0;
    *subset = 0;
    if (o && o->qnli_9k_as_qnli && strcmp(key, QNLI_9K_KEY) == 0) {
        *subset = 1;
        return QNLI_SLOT;
    }
    if (strncmp(key, "mnli", 4) == 0) {
        const char *rest = key + 4;
        if (*rest == '\0') *half = r->split && strstr(r->split, "mismatched") != NULL;
        else if (strcmp(rest, "m") == 0 || strcmp(rest, "matched") == 0) *half = 0;
        else if (strcmp(rest, "mm") == 0 || strcmp(rest, "mismatched") == 0) *half = 1;
        else return -1;
        return MNLI_SLOT;
    }
    for (int k = 0; k < GLUE_SCORE_NUM_TASKS; k++)
        if (strcmp(key, GLUE_TASKS[k].id) == 0) return k;
    return -1;
}

static double record_mean(const GlueRecord *r) {
    double sum = 0;
    for (int m = 0; m < r->num_metrics; m++) sum += r->values[m];
    return sum / r->num_metrics;
}

int glue_score_compute(const GlueRecord *rec, int n, GlueScore *out) {
    return glue_score_compute_opts(rec, n, NULL, out);
}

int glue_score_compute_opts(const GlueRecord *rec, int n, const GlueScoreOptions *o, GlueScore *out) {
    double half_score[GLUE_SCORE_NUM_TASKS][2] = {{0}};
    int seen[GLUE_SCORE_NUM_TASKS] = {0};   /* bit h: half h seen (non-MNLI tasks use bit 0) */
    int subset[GLUE_SCORE_NUM_TASKS] = {0};
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        const GlueRecord *r = &rec[i];
        if (r->num_metrics < 1 || r->num_metrics > 2) {
            user_error(NULL, "GLUE score: task '%s' has %d metrics (want 1 or 2)",
                       r->task ? r->task : "?", r->num_metrics);
            return -1;
        }
        int half, sub, k = record_slot(r, o, &half, &sub);
        if (k < 0) {
            if (out->num_ignored < GLUE_SCORE_MAX_IGNORED) out->ignored[out->num_ignored] = r->task;
            out->num_ignored++;
            continue;
        }
        if (seen[k] & (1 << half)) {
            user_error("give each task once", "GLUE score: %s%s appears twice", GLUE_TASKS[k].display,
                       k == MNLI_SLOT ? (half ? "-mm" : "-m") : "");
            return -1;
        }
        seen[k] |= 1 << half;
        subset[k] = sub;
        half_score[k][half] = record_mean(r);
    }
    double total = 0;
    for (int k = 0; k < GLUE_SCORE_NUM_TASKS; k++) {
        if (!seen[k]) continue;
        int both = seen[k] == 3;
        double s = both ? 0.5 * (half_score[k][0] + half_score[k][1])
                        : half_score[k][seen[k] == 2];
        out->tasks[out->num_tasks++] = (GlueTaskScore){
            GLUE_TASKS[k].id, subset[k] ? "QNLI-9k" : GLUE_TASKS[k].display, s, k == MNLI_SLOT ? seen[k] : 0,
            subset[k]};
        total += s;
    }
    out->score = out->num_tasks ? total / out->num_tasks : 0.0;
    return 0;
}

/* "MNLI matched only" when one half of MNLI is missing, else NULL. */
static const char *score_note(const GlueTaskScore *t) {
    if (t->from_subset) return "QNLI-9k: trained on 8,999 of QNLI's 104,743 training pairs, scored on the official dev";
    if (t->halves == 1) return "MNLI matched only (no MNLI-mm result)";
    if (t->halves == 2) return "MNLI mismatched only (no MNLI-m result)";
    return NULL;
}

cJSON *glue_score_json(const GlueScore *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "glue_score", 100.0 * s->score);
    cJSON_AddNumberToObject(o, "num_tasks", s->num_tasks);
    cJSON *used = cJSON_AddArrayToObject(o, "tasks_used");
    cJSON *scores = cJSON_AddObjectToObject(o, "task_scores");
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (int k = 0; k < s->num_tasks; k++) {
        const GlueTaskScore *t = &s->tasks[k];
        cJSON_AddItemToArray(used, cJSON_CreateString(t->display));
        cJSON_AddNumberToObject(scores, t->display, 100.0 * t->score);
        if (score_note(t)) cJSON_AddItemToArray(notes, cJSON_CreateString(score_note(t)));
    }
    cJSON *ignored = cJSON_AddArrayToObject(o, "not_counted");
    for (int k = 0; k < s->num_ignored && k < GLUE_SCORE_MAX_IGNORED; k++)
        cJSON_AddItemToArray(ignored, cJSON_CreateString(s->ignored[k] ? s->ignored[k] : "?"));
    return o;
}

void glue_score_describe(const GlueScore *s, char *out, int cap) {
    if (cap <= 0) return;
    int n = snprintf(out, (size_t)cap, "GLUE score %.2f over %d task%s (", 100.0 * s->score,
                     s->num_tasks, s->num_tasks == 1 ? "" : "s");
    for (int k = 0; k < s->num_tasks && n < cap; k++)
        n += snprintf(out + n, (size_t)(cap - n), "%s%s", k ? ", " : "", s->tasks[k].display);
    for (int k = 0; k < s->num_tasks && n < cap; k++)
        if (score_note(&s->tasks[k])) n += snprintf(out + n, (size_t)(cap - n), "; %s", score_note(&s->tasks[k]));
    if (s->num_ignored && n < cap)
        n += snprintf(out + n, (size_t)(cap - n), "; %d result%s not counted", s->num_ignored,
                      s->num_ignored == 1 ? "" : "s");
    if (n < cap) snprintf(out + n, (size_t)(cap - n), ")");
}
