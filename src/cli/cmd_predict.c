/* cmd_predict.c — `glue predict TASK [--model M] [TEXT [TEXT_B]] [--json]`: the
 * label and class probabilities (STS-B: the similarity score; a multi-label
 * task: every label its rule predicts, with its probability) of a trained run
 * for one text or pair, or for every line of stdin (a, or a<TAB>b for pair
 * tasks), one prediction per line. Input must be valid UTF-8, as in the task
 * files. The model kind comes from the run (--run DIR, --init of a glue
 * checkpoint); --model only chooses among runs/<task>/<model>. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/threads.h"
#include "train/decision.h"
#include "train/evaluate.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREDICT_USAGE                                                                                  \
    "glue predict TASK [--model M] [--run DIR | --init DIR|CKPT] [TEXT [TEXT_B]] [--bf16|--int8] [--json]\n" \
    "   (glue predict --run DIR [TEXT [TEXT_B]]: the run says its task or dataset and its model)"

static int is_pair(const Task *t) {
    const TaskSplit *s = task_dev_split(t);
    if (!s) s = &t->splits[0];
    return s->col_b >= 0;
}

/* Checks one text given as an argument; origin is "argument 1". Empty is
 * refused as an empty stdin line, a served empty text and libglue's are. */
static int predict_check_text(const char *s, const char *origin) {
    if (!*s) {
        user_error_data("give a text", "%s: empty text (no prediction)", origin);
        return -1;
    }
    return cli_check_text(s, strlen(s), origin);
}

static void predict_add(Dataset *d, int *cap, const char *a, const char *b, long line) {
    if (d->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        d->ex = xrealloc(d->ex, sizeof(Example) * (size_t)*cap);
    }
    d->ex[d->n] = (Example){.a = xstrdup(a), .b = b ? xstrdup(b) : NULL, .label = -1, .index = d->n, .line = line};
    d->n++;
}

/* Lines of stdin into d: "a" or "a<TAB>b" as the task wants. A bad line (an
 * empty one, the wrong number of texts, invalid UTF-8) is reported with its
 * number and skipped; the good ones are still predicted. *lines gets the
 * number of lines read; returns how many were bad. */
static long predict_read_stdin(const Task *t, Dataset *d, long *lines) {
    int pair = is_pair(t), cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    long no = 0, bad = 0;
    while ((len = getline(&line, &lcap, stdin)) >= 0) {
        no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        char origin[64];
        snprintf(origin, sizeof origin, "stdin:%ld", no);
        char *tab = strchr(line, '\t');
        if (len == 0) {
            user_error_data("give a text on every line", "%s: empty line (no prediction)", origin);
            bad++;
            continue;
        }
        if (pair != (tab != NULL) || (tab && strchr(tab + 1, '\t'))) {
            user_error_data(pair ? "write sentence_a<TAB>sentence_b" : "write one text per line, without tabs",
                       "%s: %s wants %s per line", origin, t->display, pair ? "two texts" : "one text");
            bad++;
            continue;
        }
        /* The whole line at its read length: a NUL would end its text there, silently. */
        if (cli_check_text(line, (size_t)len, origin)) {
            bad++;
            continue;
        }
        if (tab) *tab = '\0';
        predict_add(d, &cap, line, tab ? tab + 1 : NULL, no);
    }
    free(line);
    *lines = no;
    return bad;
}

/* A multi-label row's predicted set under rule into set (K). */
static void predict_set(const Decision *rule, const float *p, uint8_t *set) { decision_apply(rule, p, 1, set); }

static cJSON *predict_json(const Task *t, const Decision *rule, const float *p) {
    cJSON *o = cJSON_CreateObject();
    if (t->num_labels == 1) {
        cJSON_AddNumberToObject(o, "score", p[0]);
        return o;
    }
    if (t->multi_label) {   /* every predicted label (maybe none) with its probability */
        uint8_t set[TASK_MAX_LABELS];
        predict_set(rule, p, set);
        cJSON *labels = cJSON_AddArrayToObject(o, "labels");
        for (int k = 0; k < t->num_labels; k++) {
            if (!set[k]) continue;
            cJSON *l = cJSON_CreateObject();
            cJSON_AddStringToObject(l, "label", task_label_name(t, k));
            cJSON_AddStringToObject(l, "label_id", t->labels[k]);
            cJSON_AddNumberToObject(l, "probability", p[k]);
            cJSON_AddItemToArray(labels, l);
        }
        cJSON *probs = cJSON_AddObjectToObject(o, "probabilities");
        for (int k = 0; k < t->num_labels; k++) cJSON_AddNumberToObject(probs, task_label_name(t, k), p[k]);
        return o;
    }
    int best = evaluate_argmax(p, t->num_labels);
    cJSON_AddStringToObject(o, "label", task_label_name(t, best));
    cJSON_AddStringToObject(o, "label_id", t->labels[best]);   /* as in the task's files and submissions */
    cJSON *probs = cJSON_AddObjectToObject(o, "probabilities");
    for (int k = 0; k < t->num_labels; k++) cJSON_AddNumberToObject(probs, task_label_name(t, k), p[k]);
    return o;
}

/* "label<TAB>name_0=p_0<TAB>..." line: the label's name, then each class's
 * probability; multi-label: each predicted label as name=p ("(none)" when
 * no label is predicted). */
static void predict_print_line(const Task *t, const Decision *rule, const float *p) {
    if (t->num_labels == 1) { printf("%.4f\n", p[0]); return; }
    if (t->multi_label) {
        uint8_t set[TASK_MAX_LABELS];
        predict_set(rule, p, set);
        int n = 0;
        for (int k = 0; k < t->num_labels; k++)
            if (set[k]) printf("%s%s=%.4f", n++ ? "\t" : "", task_label_name(t, k), p[k]);
        printf("%s\n", n ? "" : "(none)");
        return;
    }
    printf("%s", task_label_name(t, evaluate_argmax(p, t->num_labels)));
    for (int k = 0; k < t->num_labels; k++) printf("\t%s=%.4f", task_label_name(t, k), p[k]);
    printf("\n");
}

/* One output per input line (lines: how many stdin had, none for an empty
 * stdin; -1 for texts given as arguments): a prediction, or for a skipped line
 * "-" (text) / an object with the line's number and "error" (JSON). */
static void predict_print(const Task *t, const Decision *rule, const Dataset *d, const float *out, int json,
                          long lines) {
    int k = evaluate_num_outputs(t);
    if (json) {
        cJSON *o;
        if (lines >= 0) {
            o = cJSON_CreateObject();
            cJSON *arr = cJSON_AddArrayToObject(o, "predictions");
            for (long no = 1, i = 0; no <= lines; no++) {
                cJSON *p;
                if (i < d->n && d->ex[i].line == no) {
                    p = predict_json(t, rule, out + (size_t)i++ * (size_t)k);
                } else {
                    p = cJSON_CreateObject();
                    cJSON_AddStringToObject(p, "error", "skipped (see stderr)");
                }
                cJSON_AddNumberToObject(p, "line", (double)no);
                cJSON_AddItemToArray(arr, p);
            }
        } else {
            o = predict_json(t, rule, out);
        }
        json_print_line(o);
        cJSON_Delete(o);
        return;
    }
    if (lines < 0) {
        predict_print_line(t, rule, out);
        return;
    }
    for (long no = 1, i = 0; no <= lines; no++) {
        if (i < d->n && d->ex[i].line == no) predict_print_line(t, rule, out + (size_t)i++ * (size_t)k);
        else printf("-\n");   /* the line was skipped: one output line per input line */
    }
}

/* --model not given: the model trained for the task (BERT when it is one of
 * several), saying so when it is not BERT. */
static const ModelOps *predict_default_model(const Task *rt) {
    const ModelOps *found = NULL;
    for (int i = 0; i < model_count(); i++) {
        const ModelOps *ops = model_at(i);
        char dir[4096], path[4200];
        run_dir_path(rt->name, ops->name, dir, sizeof dir);
        file_join(dir, RUN_CKPT, path, sizeof path);
        if (!file_exists(path)) continue;
        if (strcmp(ops->name, "bert") == 0) return ops;
        if (!found) found = ops;
    }
    if (!found) return model_find("bert");   /* nothing trained: its message says how */
    fprintf(stderr, "predicting with the %s run (no BERT run for %s; --model chooses)\n", found->name, rt->display);
    return found;
}

static int predict_run(const Task *t, const ModelOps *ops, const char *run, const char *init, const char **texts,
                       int ntexts, int json, int bf16);

int cmd_predict(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    int json = args_flag(&a, "--json"), bf16 = args_flag(&a, "--bf16") ? CLI_BF16 : 0;
    bf16 |= args_flag(&a, "--int8") ? CLI_INT8 : 0;   /* the precision bits (cli_run.h) */
    const char *model = args_str(&a, "--model", NULL);
    const char *run = args_str(&a, "--run", NULL), *init = args_str(&a, "--init", NULL);
    const char *pos[4];
    int npos = args_positional(&a, pos, 4);
    int rc = args_finish(&a, PREDICT_USAGE);
    if (rc) return rc;
    /* A run (or a glue checkpoint) says which model it is; --model only where there is none. */
    const ModelOps *ops = cli_choose_model(model, run, init, run || init ? "bert" : NULL);
    if ((model || run || init) && !ops) return EXIT_USAGE;
    /* With --run DIR, TASK may be left out (the run says it): the first
     * argument is then a text unless it names the run's task or dataset. */
    const Task *t = NULL;
    if (run && cli_run_dataset(run, &t) != 0) return EXIT_USAGE;
    int skip = !t || (npos > 0 && (strcmp(pos[0], t->name) == 0 || task_find(pos[0]) == t));   /* pos[0] is TASK */
    /* Another task's name and the texts after it: TASK, as eval reads it (it
     * was taken for a text, and "give one text" was said of one text). */
    if (t && !skip && npos == 2 + is_pair(t) && task_find(pos[0])) {
        cli_run_not_task(run, t, pos[0]);
        cli_task_free(t);
        return EXIT_USAGE;
    }
    if (!t && (npos < 1 || !(t = cli_resolve_task(pos[0], ops ? ops->name : "bert", run)))) {
        if (npos >= 1) return EXIT_USAGE;
        user_error(NULL, "predict: expected TASK and up to two texts, got %d arguments", npos);
        return args_usage(PREDICT_USAGE);
    }
    /* No --model: what is trained for the task (BERT when it is). */
    if (!ops) ops = predict_default_model(cli_run_task(t));
    rc = predict_run(t, ops, run, init, pos + skip, npos - skip, json, bf16);
    cli_task_free(t);
    return rc;
}

static int predict_run(const Task *t, const ModelOps *ops, const char *run, const char *init, const char **texts,
                       int ntexts, int json, int bf16) {
    int rc = 0;
    if (ntexts > 2) {
        user_error(NULL, "predict: expected TASK and up to two texts, got %d texts", ntexts);
        return args_usage(PREDICT_USAGE);
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
    Decision rule;   /* a multi-label run's prediction rule (its tuned thresholds) */
    if (decision_of_run(&rule, t, dir) != 0) {
        ops->free(m);
        return 1;
    }
    /* The dev split's layout (pair or not), named for what it is in messages
     * ("1 of 3 rows of SST-2 input truncated ..."). */
    TaskSplit input = task_dev_split(t) ? *task_dev_split(t) : t->splits[0];
    input.name = "input";
    Dataset d = {.task = t, .split = &input};
    int cap = 0;
    long lines = -1, bad = 0;   /* stdin's lines; -1: the text is in the arguments */
    if (ntexts) predict_add(&d, &cap, texts[0], ntexts == 2 ? texts[1] : NULL, 1);
    else bad = predict_read_stdin(t, &d, &lines);
    float *out = d.n ? evaluate_predict_dataset(ops, m, &d, EVALUATE_BATCH_DEFAULT, NULL) : NULL;
    if (out || d.n == 0) predict_print(t, &rule, &d, out, json, lines);
    if ((!out && d.n) || bad) rc = 1;
    if (bad) fprintf(stderr, "%ld of %ld lines skipped (no prediction; see above)\n", bad, lines);
    free(out);
    ops->free(m);
    dataset_free(&d);
    return rc;
}
