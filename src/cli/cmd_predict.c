/* cmd_predict.c — `glue predict TASK [--model M] [TEXT [TEXT_B]] [--json]`: the
 * label and class probabilities (STS-B: the similarity score) of a trained run
 * for one text or pair, or for every line of stdin (a, or a<TAB>b for pair
 * tasks), one prediction per line. Input must be valid UTF-8, as in the task
 * files. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/threads.h"
#include "models/evaluate.h"
#include "models/run_dir.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREDICT_USAGE                                                                                  \
    "glue predict TASK [--model M] [--run DIR | --init DIR|CKPT] [TEXT [TEXT_B]] [--bf16] [--json]\n" \
    "   (a run on your own dataset: glue predict NAME --model M ..., or glue predict --run DIR [TEXT])"

static int is_pair(const Task *t) {
    const TaskSplit *s = task_dev_split(t);
    if (!s) s = &t->splits[0];
    return s->col_b >= 0;
}

/* Checks one input text; origin is "argument 1" or "stdin:3". */
static int predict_check_text(const char *s, const char *origin) {
    if (utf8_valid(s, strlen(s))) return 0;
    user_error("give the text as UTF-8", "%s: invalid UTF-8", origin);
    return -1;
}

static void predict_add(Dataset *d, int *cap, const char *a, const char *b, long line) {
    if (d->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        d->ex = xrealloc(d->ex, sizeof(Example) * (size_t)*cap);
    }
    d->ex[d->n] = (Example){.a = xstrdup(a), .b = b ? xstrdup(b) : NULL, .label = -1, .index = d->n, .line = line};
    d->n++;
}

/* Lines of stdin into d: "a" or "a<TAB>b" as the task wants. */
static int predict_read_stdin(const Task *t, Dataset *d) {
    int pair = is_pair(t), cap = 0, rc = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    long no = 0;
    while (rc == 0 && (len = getline(&line, &lcap, stdin)) >= 0) {
        no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        char origin[64];
        snprintf(origin, sizeof origin, "stdin:%ld", no);
        char *tab = strchr(line, '\t');
        if (pair != (tab != NULL) || (tab && strchr(tab + 1, '\t'))) {
            user_error(pair ? "write sentence_a<TAB>sentence_b" : "write one text per line, without tabs",
                       "%s: %s wants %s per line", origin, t->display, pair ? "two texts" : "one text");
            rc = 1;
            break;
        }
        if (tab) *tab = '\0';
        if (predict_check_text(line, origin) || (tab && predict_check_text(tab + 1, origin))) { rc = 1; break; }
        predict_add(d, &cap, line, tab ? tab + 1 : NULL, no);
    }
    free(line);
    return rc;
}

static cJSON *predict_json(const Task *t, const float *p) {
    cJSON *o = cJSON_CreateObject();
    if (t->num_labels == 1) {
        cJSON_AddNumberToObject(o, "score", p[0]);
        return o;
    }
    cJSON_AddStringToObject(o, "label", t->labels[eval_argmax(p, t->num_labels)]);
    cJSON *probs = cJSON_AddObjectToObject(o, "probabilities");
    for (int k = 0; k < t->num_labels; k++) cJSON_AddNumberToObject(probs, t->labels[k], p[k]);
    return o;
}

/* "label<TAB>p(label_0)=..." style line: the label, then each class's probability. */
static void predict_print_line(const Task *t, const float *p) {
    if (t->num_labels == 1) { printf("%.4f\n", p[0]); return; }
    printf("%s", t->labels[eval_argmax(p, t->num_labels)]);
    for (int k = 0; k < t->num_labels; k++) printf("\t%s=%.4f", t->labels[k], p[k]);
    printf("\n");
}

static void predict_print(const Task *t, const Dataset *d, const float *out, int json, int from_stdin) {
    int k = eval_num_outputs(t);
    if (json) {
        cJSON *o;
        if (from_stdin) {
            o = cJSON_CreateObject();
            cJSON *arr = cJSON_AddArrayToObject(o, "predictions");
            for (int i = 0; i < d->n; i++) cJSON_AddItemToArray(arr, predict_json(t, out + (size_t)i * (size_t)k));
        } else {
            o = predict_json(t, out);
        }
        char *s = cJSON_PrintUnformatted(o);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
        return;
    }
    for (int i = 0; i < d->n; i++) predict_print_line(t, out + (size_t)i * (size_t)k);
}

static int predict_run(const Task *t, const ModelOps *ops, const char *run, const char *init, const char **texts,
                       int ntexts, int json, int bf16);

int cmd_predict(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    int json = args_flag(&a, "--json"), bf16 = args_flag(&a, "--bf16");
    const char *model = args_str(&a, "--model", "bert");
    const char *run = args_str(&a, "--run", NULL), *init = args_str(&a, "--init", NULL);
    const char *pos[4];
    int npos = args_positional(&a, pos, 4);
    int rc = args_finish(&a, PREDICT_USAGE);
    if (rc) return rc;
    const ModelOps *ops = cli_find_model(model);
    if (!ops) return EXIT_USAGE;
    /* With --run DIR of a run on a user's dataset, TASK may be left out: the
     * first argument is then a text unless it is that dataset's name. */
    const Task *t = NULL;
    if (run && cli_run_dataset(run, &t) != 0) return EXIT_USAGE;
    int skip = !t || (npos > 0 && strcmp(pos[0], t->name) == 0);   /* pos[0] is TASK */
    if (!t && (npos < 1 || !(t = cli_resolve_task(pos[0], ops->name, run)))) {
        if (npos < 1) {
            user_error(NULL, "predict: expected TASK and up to two texts, got %d arguments", npos);
            fprintf(stderr, "usage: %s\n", PREDICT_USAGE);
        }
        return EXIT_USAGE;
    }
    rc = predict_run(t, ops, run, init, pos + skip, npos - skip, json, bf16);
    cli_task_free(t);
    return rc;
}

static int predict_run(const Task *t, const ModelOps *ops, const char *run, const char *init, const char **texts,
                       int ntexts, int json, int bf16) {
    int rc = 0;
    if (ntexts > 2) {
        user_error(NULL, "predict: expected TASK and up to two texts, got %d texts", ntexts);
        fprintf(stderr, "usage: %s\n", PREDICT_USAGE);
        return EXIT_USAGE;
    }
    if (ntexts && ntexts != 1 + is_pair(t)) {
        user_error(NULL, "%s is a %s task: give %s", t->display, is_pair(t) ? "sentence-pair" : "single-sentence",
                   is_pair(t) ? "two texts" : "one text");
        return EXIT_USAGE;
    }
    for (int i = 0; i < ntexts; i++) {
        char origin[32];
        snprintf(origin, sizeof origin, "argument %d", i + 1);
        if (predict_check_text(texts[i], origin)) return EXIT_USAGE;
    }
    threads_init(0);   /* every core this process may use, FTZ on */
    const Task *rt = cli_run_task(t);
    char dir[4096];
    Model *m = cli_load_model(ops, rt, run, init, bf16, dir, sizeof dir);
    if (!m) return 1;
    Dataset d = {.task = t, .split = task_dev_split(t) ? task_dev_split(t) : &t->splits[0]};
    int cap = 0;
    if (ntexts) predict_add(&d, &cap, texts[0], ntexts == 2 ? texts[1] : NULL, 1);
    else rc = predict_read_stdin(t, &d);
    float *out = rc == 0 ? eval_predict_dataset(ops, m, &d, EVAL_BATCH_DEFAULT, NULL) : NULL;
    if (out) predict_print(t, &d, out, json, ntexts == 0);
    else rc = 1;
    free(out);
    ops->free(m);
    dataset_free(&d);
    return rc;
}
