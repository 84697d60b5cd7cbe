/* test_trainer.c — the fine-tuning loop and the model commands, end to end, on
 * small synthetic tasks written in the official GLUE layouts to a temporary
 * $GLUE_DATA, driven through the bag-of-words test model (test_bow_model.c):
 * learning to ≥ 95% dev accuracy, results.json contents checked against an
 * independent recomputation from the checkpoint, determinism, exact resume after
 * a simulated crash, MNLI's two dev splits, STS-B regression, `glue eval`,
 * `predict` and `compare`, and the user errors (unknown task/model, bad
 * settings, missing or corrupt checkpoint). */
#include "tests/scratch.h"
#include "tests/test.h"
#include "cli/cli_run.h"

#include "cli/commands.h"
#include "core/common.h"
#include "core/files.h"
#include "core/rng.h"
#include "eval/report.h"
#include "train/evaluate.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "tests/capture.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- synthetic data ---- */

static const char *const POS_WORDS[] = {"good", "great", "excellent", "wonderful", "superb", "lovely", "brilliant",
                                        "moving"};
static const char *const NEG_WORDS[] = {"bad", "awful", "terrible", "boring", "poor", "dull", "clumsy", "tedious"};
static const char *const FILLER[] = {"the", "a", "movie", "film", "plot", "actor", "story", "was", "is", "very",
                                     "quite", "and", "this", "with", "its", "cast", "caf\xc3\xa9", "scene"};
#define NWORDS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A sentence whose sentiment words say `label`, with some noise from the other side. */
static void synth_sentence(Rng *r, int label, char *out, size_t cap) {
    int len = 6 + (int)rng_below(r, 7), hot = 1 + (int)rng_below(r, 2);
    int noisy = hot == 2 && rng_uniform(r) < 0.3f;   /* never a tie: two to one */
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < len; i++) {
        const char *w = FILLER[rng_below(r, NWORDS(FILLER))];
        if (i < hot) w = (label ? POS_WORDS : NEG_WORDS)[rng_below(r, NWORDS(POS_WORDS))];
        else if (i == hot && noisy) w = (label ? NEG_WORDS : POS_WORDS)[rng_below(r, NWORDS(POS_WORDS))];
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " " : "", w);
    }
}

static FILE *open_split(const char *root, const char *dir, const char *file, const char *header) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    file_make_dir(path);
    snprintf(path, sizeof path, "%s/%s/%s", root, dir, file);
    FILE *f = fopen(path, "w");
    if (!f) DIE("cannot write %s", path);
    if (header) fprintf(f, "%s\n", header);
    return f;
}

static void write_sst2(const char *root) {
    Rng r;
    rng_seed(&r, 7);
    static const struct { const char *file; int n; } SPLITS[] = {{"train.tsv", 1200}, {"dev.tsv", 200}};
    char s[512];
    for (int k = 0; k < 2; k++) {
        FILE *f = open_split(root, "SST-2", SPLITS[k].file, "sentence\tlabel");
        for (int i = 0; i < SPLITS[k].n; i++) {
            int label = (int)rng_below(&r, 2);
            synth_sentence(&r, label, s, sizeof s);
            fprintf(f, "%s\t%d\n", s, label);
        }
        fclose(f);
    }
    FILE *f = open_split(root, "SST-2", "test.tsv", "index\tsentence");
    for (int i = 0; i < 50; i++) {
        synth_sentence(&r, (int)rng_below(&r, 2), s, sizeof s);
        fprintf(f, "%d\t%s\n", i, s);
    }
    fclose(f);
}

/* QNLI's 9k subset (subsets/QNLI, the glue-subsets JSON) and the official
 * QNLI dev it is scored on: entailment iff the sentence repeats the
 * question's first filler word. */
static void write_qnli_9k(const char *root) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/subsets", root);
    file_make_dir(dir);
    Rng r;
    rng_seed(&r, 13);
    static const char *const LABELS[] = {"entailment", "not_entailment"};
    for (int k = 0; k < 3; k++) {   /* train.json, dev.json (held out), QNLI/dev.tsv */
        FILE *f = k < 2 ? open_split(dir, "QNLI", k ? "dev.json" : "train.json", NULL)
                        : open_split(root, "QNLI", "dev.tsv", "index\tquestion\tsentence\tlabel");
        int n = k == 0 ? 400 : 100;
        if (k < 2) fprintf(f, "{");
        for (int i = 0; i < n; i++) {
            int y = (int)rng_below(&r, 2);
            const char *w = FILLER[rng_below(&r, 8)], *v = y == 0 ? w : FILLER[8 + rng_below(&r, 8)];
            if (k < 2)
                fprintf(f, "%s\"%d\": {\"text_a\": \"what %s\", \"text_b\": \"the %s\", \"label\": \"%s\"}",
                        i ? ", " : "", i, w, v, LABELS[y]);
            else
                fprintf(f, "%d\twhat %s\tthe %s\t%s\n", i, w, v, LABELS[y]);
        }
        if (k < 2) fprintf(f, "}\n");
        fclose(f);
    }
}

/* MNLI: the hypothesis carries the label's marker word; the mismatched dev set
 * uses other filler words (a genre shift). */
static void write_mnli(const char *root) {
    static const char *const LABELS[] = {"contradiction", "entailment", "neutral"};
    static const char *const MARK[] = {"never", "indeed", "perhaps"};
    static const char *const HEAD = "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\t"
                                    "sentence2_binary_parse\tsentence1_parse\tsentence2_parse\tsentence1\tsentence2";
    static const struct { const char *file; int n, dev; } SPLITS[] = {
        {"train.tsv", 900, 0}, {"dev_matched.tsv", 150, 1}, {"dev_mismatched.tsv", 120, 2}};
    Rng r;
    rng_seed(&r, 11);
    for (int k = 0; k < 3; k++) {
        char head[512];
        snprintf(head, sizeof head, "%s\t%s", HEAD,
                 SPLITS[k].dev ? "label1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label" : "label1\tgold_label");
        FILE *f = open_split(root, "MNLI", SPLITS[k].file, head);
        for (int i = 0; i < SPLITS[k].n; i++) {
            int y = (int)rng_below(&r, 3);
            const char *w1 = FILLER[rng_below(&r, 8) + (SPLITS[k].dev == 2 ? 8 : 0)];
            const char *w2 = FILLER[rng_below(&r, 8)];
            fprintf(f, "%d\t1\t1e\tfiction\t(x)\t(y)\t(X x)\t(Y y)\tthe %s was %s\t%s it %s %s\t%s", i, w1, w2,
                    w2, MARK[y], w1, LABELS[y]);
            if (SPLITS[k].dev) fprintf(f, "\t%s\t%s\t%s\t%s", LABELS[y], LABELS[y], LABELS[y], LABELS[y]);
            fprintf(f, "\t%s\n", LABELS[y]);
        }
        fclose(f);
    }
}

/* STS-B: the score is the number of "same" words among five in sentence 2. */
static void write_stsb(const char *root) {
    static const char *const HEAD = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\t"
                                    "sentence2\tscore";
    static const struct { const char *file; int n; } SPLITS[] = {{"train.tsv", 600}, {"dev.tsv", 150}};
    Rng r;
    rng_seed(&r, 5);
    for (int k = 0; k < 2; k++) {
        FILE *f = open_split(root, "STS-B", SPLITS[k].file, HEAD);
        for (int i = 0; i < SPLITS[k].n; i++) {
            int same = (int)rng_below(&r, 6);
            fprintf(f, "%d\tmain-news\tx\t2012\t%d\tnone\tnone\tthe %s is %s here\t", i, i,
                    FILLER[rng_below(&r, 8)], FILLER[8 + rng_below(&r, 8)]);
            for (int w = 0; w < 5; w++) fprintf(f, "%s%s", w ? " " : "", w < same ? "same" : "other");
            fprintf(f, "\t%d.000\n", same);
        }
        fclose(f);
    }
}

/* A fresh temporary folder with GLUE data (SST-2), runs and results; the
 * environment points the code at it until fixture_remove puts it back. */
static const char *const FIXTURE_ENV[] = {"GLUE_DATA", "GLUE_RUNS", "GLUE_RESULTS"};
static const char *const FIXTURE_SUB[] = {"glue", "runs", "results"};

typedef struct Fixture {
    char root[256];
    char *saved[3];    /* the variables' previous values (NULL: unset) */
} Fixture;

static void fixture_make(Fixture *fx) {
    if (!scratch_dir("trainer", fx->root, sizeof fx->root)) DIE("no scratch folder");
    for (int i = 0; i < 3; i++) {
        const char *old = getenv(FIXTURE_ENV[i]);
        fx->saved[i] = old ? xstrdup(old) : NULL;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", fx->root, FIXTURE_SUB[i]);
        setenv(FIXTURE_ENV[i], p, 1);
    }
    write_sst2(getenv("GLUE_DATA"));
}

static void fixture_remove(Fixture *fx) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fx->root);
    for (int i = 0; i < 3; i++) {
        if (fx->saved[i]) setenv(FIXTURE_ENV[i], fx->saved[i], 1);
        else unsetenv(FIXTURE_ENV[i]);
        free(fx->saved[i]);
    }
}

/* stderr to /dev/null around calls whose error messages are expected. */
static int stderr_mute(void) {
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    close(null);
    return saved;
}

static void stderr_restore(int saved) {
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

/* ---- running the trainer and the commands in-process ---- */

static const ModelOps *bow(void) { return model_find("testbow"); }

/* trainer_run on task with the test model's defaults plus sets; 0 ok. */
static int train(const char *task, uint64_t seed, const char *out_dir, int resume, const char *const *sets, int nsets,
                 cJSON **results) {
    const Task *t = task_find(task);
    const char *origin[8] = {0};
    cJSON *config = run_config_build(bow()->default_config(t), NULL, sets, origin, nsets);
    if (!config) return -1;
    TrainerOptions o = {.task = t, .ops = bow(), .config = config, .seed = seed, .threads = 1,
                        .out_dir = out_dir, .data_root = task_data_root(), .command = "test", .resume = resume};
    int rc = trainer_run(&o, results);
    cJSON_Delete(config);
    return rc;
}

typedef struct { int status; char *out, *err; } Ran;

static char *slurp(const char *path) {
    char *s = file_read(path, NULL);
    return s ? s : xstrdup("");
}

/* Set in the environment of a re-executed test binary: run one command. */
#define CHILD_ENV "GLUE_TEST_COMMAND_CHILD"

/* Child mode. run_command re-executes this test binary (so the test model is
 * linked in, as `glue` would not have it) and this constructor runs the command
 * before main(). A fresh process, not a plain fork: forking once OpenMP or
 * OpenBLAS threads exist in the test process would deadlock the child's first
 * parallel region. glibc passes argc/argv to constructors. */
__attribute__((constructor)) static void command_child(int argc, char **argv) {
    if (!getenv(CHILD_ENV)) return;
    static const struct { const char *name; CommandFn fn; } CMDS[] = {
        {"finetune", cmd_finetune}, {"eval", cmd_eval}, {"predict", cmd_predict}, {"compare", cmd_compare},
        {"score", cmd_score}};
    for (int i = 0; i < (int)(sizeof CMDS / sizeof CMDS[0]); i++)
        if (argc > 1 && strcmp(argv[1], CMDS[i].name) == 0) exit(CMDS[i].fn(argc - 1, argv + 1));
    exit(99);
}

/* Runs `glue argv...` with the test model (see command_child), stdin from
 * in_text, capturing stdout and stderr; extra_env ("NAME=value") may be NULL. */
static Ran run_command(const char *root, const char *in_text, const char *extra_env, int argc, const char **argv) {
    char out[4096], err[4096], in[4096];
    snprintf(out, sizeof out, "%s/cmd.out", root);
    snprintf(err, sizeof err, "%s/cmd.err", root);
    snprintf(in, sizeof in, "%s/cmd.in", root);
    FILE *f = fopen(in, "w");
    fputs(in_text ? in_text : "", f);
    fclose(f);
    /* Everything the child needs is prepared here: after fork it only opens,
     * dups and execs. */
    extern char **environ;
    int nenv = 0;
    while (environ[nenv]) nenv++;
    char **env = xmalloc(sizeof(char *) * (size_t)(nenv + 3));
    memcpy(env, environ, sizeof(char *) * (size_t)nenv);
    env[nenv++] = CHILD_ENV "=1";
    if (extra_env) env[nenv++] = (char *)extra_env;
    env[nenv] = NULL;
    char *args[34] = {"glue_tests"};
    for (int i = 0; i < argc && i < 32; i++) args[i + 1] = (char *)argv[i];
    args[argc < 32 ? argc + 1 : 33] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fi < 0 || fo < 0 || fe < 0 || dup2(fi, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(98);
        execve("/proc/self/exe", args, env);
        _exit(97);
    }
    free(env);
    int st = 0;
    waitpid(pid, &st, 0);
    Ran r = {.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1, .out = slurp(out), .err = slurp(err)};
    return r;
}

static void ran_free(Ran *r) { free(r->out); free(r->err); }

static double metric_of(const cJSON *obj, const char *split, const char *metric) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, split);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, metric);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Accuracy ×100 of a checkpoint on a split, recomputed here without the
 * trainer's evaluation code. */
static double checkpoint_accuracy(const char *ckpt, const char *task, const char *split) {
    const Task *t = task_find(task);
    Model *m = bow()->load(ckpt, t);
    Dataset d;
    if (!m || task_load(t, split, task_data_root(), 1, &d) != 0) return NAN;
    Encoded *e = bow()->encode(m, &d);
    int correct = 0, k = t->num_labels;
    float p[TASK_MAX_LABELS];
    for (int i = 0; i < d.n; i++) {
        evaluate_rows(bow(), m, e, &i, 1, k, p);
        int best = 0;
        for (int c = 1; c < k; c++) best = p[c] > p[best] ? c : best;
        correct += best == d.ex[i].label;
    }
    double acc = 100.0 * correct / d.n;
    bow()->encoded_free(e);
    bow()->free(m);
    dataset_free(&d);
    return acc;
}

static cJSON *read_json_file(const char *dir, const char *file) {
    char path[4096];
    file_join(dir, file, path, sizeof path);
    return json_file_read(path, 1);
}

static int file_in(const char *dir, const char *file) {
    char path[4096];
    file_join(dir, file, path, sizeof path);
    return file_exists(path);
}

/* ---- tests ---- */

/* "[TASK.]key=value": a dot after '=' is the value's; bad forms are -1, and
 * only unqualified or this task's settings reach a task (without the prefix). */
TEST(run_setting_split_and_per_task) {
    RunSetting rs;
    CHECK(run_setting_split("stsb.pair_encoding=cross", &rs) == 0);
    CHECK(strcmp(rs.task, "stsb") == 0 && strcmp(rs.key, "pair_encoding") == 0 && strcmp(rs.value, "cross") == 0);
    CHECK(run_setting_split("init=models/m.ckpt", &rs) == 0);
    CHECK(rs.task[0] == 0 && strcmp(rs.key, "init") == 0 && strcmp(rs.value, "models/m.ckpt") == 0);
    CHECK(run_setting_split("lr=", &rs) == 0 && rs.value[0] == 0);
    CHECK(run_setting_split("epochs", &rs) == -1);
    CHECK(run_setting_split("=3", &rs) == -1);
    CHECK(run_setting_split("cola.=3", &rs) == -1);
    CHECK(run_setting_split(".epochs=3", &rs) == -1);
    const char *sets[] = {"epochs=10", "stsb.pair_encoding=cross", "cola.lr=1e-4", "init=a.b"}, *out[4];
    CHECK(run_config_sets_for_task(sets, 4, "stsb", out) == 3);
    CHECK(strcmp(out[0], "epochs=10") == 0 && strcmp(out[1], "pair_encoding=cross") == 0 && strcmp(out[2], "init=a.b") == 0);
    CHECK(run_config_sets_for_task(sets, 4, "rte", out) == 2);
}

/* compare, protocol and search continue an interrupted run only when its
 * resume point (or the one before it) was made with the same settings, seed
 * and hold-out fraction. */
TEST(trainer_can_resume_same_settings_only) {
    char dir[SCRATCH_PATH_MAX], path[256];
    if (!scratch_dir("can_resume", dir, sizeof dir)) { CHECK_MSG(0, "mkdtemp"); return; }
    cJSON *config = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8}"), *other = cJSON_Parse("{\"lr\": 0.002, \"batch\": 8}");
    CHECK(!trainer_can_resume(dir, config, 1, 0));
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "seed", 1);
    cJSON_AddItemToObject(st, "config", cJSON_Duplicate(config, 1));
    snprintf(path, sizeof path, "%s/%s.prev", dir, RUN_RESUME_DIR);   /* only the previous one left */
    CHECK(file_make_dir(path) == 0);
    snprintf(path, sizeof path, "%s/%s.prev/%s", dir, RUN_RESUME_DIR, RUN_TRAINER_STATE);
    CHECK(json_file_write(path, st) == 0);
    CHECK(trainer_can_resume(dir, config, 1, 0));
    CHECK(!trainer_can_resume(dir, config, 2, 0));
    CHECK(!trainer_can_resume(dir, other, 1, 0));
    CHECK(!trainer_can_resume(dir, config, 1, 0.1));   /* a search trial's: another hold-out */
    cJSON_AddNumberToObject(st, "holdout", 0.1);
    CHECK(json_file_write(path, st) == 0);
    CHECK(trainer_can_resume(dir, config, 1, 0.1));
    CHECK(!trainer_can_resume(dir, config, 1, 0.2) && !trainer_can_resume(dir, config, 1, 0));
    cJSON_Delete(st), cJSON_Delete(config), cJSON_Delete(other);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) CHECK_MSG(0, "cleanup");
}

/* bucket_mb changes no result: a resume point, a finished run or a search
 * trial of other settings only there (or from before the key) still counts. */
TEST(trainer_config_same_ignores_bucket_mb) {
    cJSON *a = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"bucket_mb\": 2}");
    cJSON *b = cJSON_Parse("{\"batch\": 8, \"lr\": 0.001}");
    cJSON *c = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"bucket_mb\": 0.5}");
    cJSON *d = cJSON_Parse("{\"lr\": 0.002, \"batch\": 8, \"bucket_mb\": 2}");
    cJSON *e = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"bucket_mb\": 2, \"epochs\": 3}");
    CHECK(trainer_config_same(a, b) && trainer_config_same(b, a));
    CHECK(trainer_config_same(a, c));
    CHECK(!trainer_config_same(a, d) && !trainer_config_same(d, a));
    CHECK(!trainer_config_same(a, e) && !trainer_config_same(e, a));
    /* A switch added later: absent = false (older runs still match), not = true. */
    cJSON *f = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"group_by_length\": false}");
    cJSON *g = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"group_by_length\": true}");
    CHECK(trainer_config_same(b, f) && trainer_config_same(f, b));
    CHECK(!trainer_config_same(b, g) && !trainer_config_same(g, b) && !trainer_config_same(f, g));
    cJSON_Delete(f);
    cJSON_Delete(g);
    /* precision: absent = "fp32" (runs before the setting), not "bf16". */
    f = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"precision\": \"fp32\"}");
    g = cJSON_Parse("{\"lr\": 0.001, \"batch\": 8, \"precision\": \"bf16\"}");
    CHECK(trainer_config_same(b, f) && trainer_config_same(f, b));
    CHECK(!trainer_config_same(b, g) && !trainer_config_same(g, b) && !trainer_config_same(f, g));
    cJSON_Delete(f);
    cJSON_Delete(g);
    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c), cJSON_Delete(d), cJSON_Delete(e);
}

/* Token slots of batches of `batch` rows in perm's order, each padded to its longest row. */
static long padded_slots(const int *perm, int n, int batch, const int *len) {
    long slots = 0;
    for (int i = 0; i < n; i += batch) {
        int b = n - i < batch ? n - i : batch, mx = 0;
        for (int j = 0; j < b; j++) mx = len[perm[i + j]] > mx ? len[perm[i + j]] : mx;
        slots += (long)mx * b;
    }
    return slots;
}

/* group_by_length: each epoch is a permutation, the same for the same
 * arguments, pads far less than a plain shuffle, and is still random:
 * epochs differ, a group's batches are not longest-first, and rows of one
 * length mix across the epoch. Without lengths it is the plain shuffle. */
TEST(trainer_epoch_order_groups_by_length) {
    enum { N = 5003, BATCH = 16 };
    int *len = malloc(sizeof(int) * N), *p = malloc(sizeof(int) * N), *q = malloc(sizeof(int) * N);
    int *seen = calloc(N, sizeof(int));
    Rng r;
    rng_seed(&r, 3);
    for (int i = 0; i < N; i++) len[i] = 3 + (int)rng_below(&r, 60);
    trainer_epoch_order(p, N, 7, 0, BATCH, len);
    for (int i = 0; i < N; i++) seen[p[i]]++;
    int perm_ok = 1;
    for (int i = 0; i < N; i++) perm_ok &= seen[i] == 1;
    CHECK_MSG(perm_ok, "an epoch's order is not a permutation of the rows");
    trainer_epoch_order(q, N, 7, 0, BATCH, len);
    CHECK(memcmp(p, q, sizeof(int) * N) == 0);
    long grouped = padded_slots(p, N, BATCH, len), real = 0;
    for (int i = 0; i < N; i++) real += len[i];
    trainer_epoch_order(q, N, 7, 0, BATCH, NULL);
    long plain = padded_slots(q, N, BATCH, len);
    CHECK_MSG(grouped < real * 1.05 && plain > real * 1.5, "slots: grouped %ld, plain %ld, real %ld", grouped, plain,
              real);
    /* Without lengths: the trainer's plain shuffle (rows 0..N-1, Fisher-Yates). */
    Rng s;
    rng_seed_stream(&s, 7 ^ 0x5348554646ull, 0);
    for (int i = 0; i < N; i++) p[i] = i;
    rng_shuffle_int(&s, p, N);
    CHECK(memcmp(p, q, sizeof(int) * N) == 0);
    /* Another epoch, another order; the first group's first batch is not
     * always its longest (batch order shuffled within the group). */
    trainer_epoch_order(p, N, 7, 0, BATCH, len);
    trainer_epoch_order(q, N, 7, 1, BATCH, len);
    CHECK(memcmp(p, q, sizeof(int) * N) != 0);
    int longest_first = 0;
    for (int e = 0; e < 8; e++) {
        trainer_epoch_order(p, N, 7, e, BATCH, len);
        longest_first += len[p[0]] == 62;
    }
    CHECK_MSG(longest_first < 8, "the longest batch came first in every epoch");
    /* Rows of one length are spread over the epoch, not in one place. */
    trainer_epoch_order(p, N, 7, 0, BATCH, len);
    int first = -1, last = -1;
    for (int i = 0; i < N; i++)
        if (len[p[i]] == 30) {
            if (first < 0) first = i;
            last = i;
        }
    CHECK_MSG(last - first > N / 2, "rows of length 30 only between %d and %d", first, last);
    free(len); free(p); free(q); free(seen);
}

TEST(trainer_learns_synthetic_sst2) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char dir[4096];
    Fixture fx;
    fixture_make(&fx);
    run_dir_path("sst2", "testbow", dir, sizeof dir);
    cJSON *res = NULL;
    CHECK_EQ_INT(train("sst2", 1, dir, 0, NULL, 0, &res), 0);
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    double acc = metric_of(best, "dev", "accuracy");
    CHECK_MSG(acc >= 95.0, "dev accuracy %.2f >= 95", acc);
    /* The kept checkpoint is the best epoch: recompute its accuracy independently. */
    char ckpt[4096];
    file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
    CHECK_NEAR(checkpoint_accuracy(ckpt, "sst2", "dev"), acc, 1e-9);
    /* results.json on disk says the same, with every epoch and the run's facts. */
    cJSON *disk = read_json_file(dir, RUN_RESULTS);
    CHECK(cJSON_Compare(disk, res, 1));
    const cJSON *epochs = cJSON_GetObjectItemCaseSensitive(disk, "epochs");
    CHECK_EQ_INT(cJSON_GetArraySize(epochs), 6);
    double best_seen = 0;
    for (const cJSON *e = epochs ? epochs->child : NULL; e; e = e->next) {
        double a = metric_of(e, "dev", "accuracy");
        CHECK(a >= 0 && a <= 100);
        if (a > best_seen) best_seen = a;
    }
    CHECK_NEAR(best_seen, acc, 1e-9);
    CHECK(!strcmp(cJSON_GetObjectItemCaseSensitive(disk, "task")->valuestring, "sst2"));
    CHECK(!strcmp(cJSON_GetObjectItemCaseSensitive(disk, "model")->valuestring, "testbow"));
    CHECK_EQ_INT(run_config_number(disk, "num_params", 0), 2 * 1024 + 2);
    CHECK_EQ_INT(run_config_number(disk, "train_examples", 0), 1200);
    CHECK(run_config_number(disk, "eval_examples_per_sec", 0) > 0);
    CHECK_EQ_INT(run_config_number(cJSON_GetObjectItemCaseSensitive(disk, "config"), "dim", 0), 1024);
    /* The loss went down; config.json is there; the resume files are gone. */
    CHECK(run_config_number(cJSON_GetArrayItem(epochs, 5), "loss", 9) <
          run_config_number(cJSON_GetArrayItem(epochs, 0), "loss", 0));
    CHECK(file_in(dir, RUN_CONFIG));
    CHECK(!file_in(dir, RUN_RESUME_DIR) && !file_in(dir, RUN_RESUME_DIR ".prev"));
    cJSON_Delete(disk);
    cJSON_Delete(res);
    fixture_remove(&fx);
}

/* Epoch records without the timings, which legitimately differ between runs. */
static cJSON *epochs_without_time(const cJSON *res) {
    cJSON *e = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(res, "epochs"), 1);
    for (cJSON *it = e ? e->child : NULL; it; it = it->next) cJSON_DeleteItemFromObject(it, "seconds");
    return e;
}

TEST(trainer_same_seed_same_numbers) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char a[4096], b[4096], c[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    snprintf(a, sizeof a, "%s/a", root);
    snprintf(b, sizeof b, "%s/b", root);
    snprintf(c, sizeof c, "%s/c", root);
    cJSON *ra = NULL, *rb = NULL, *rc = NULL;
    CHECK_EQ_INT(train("sst2", 3, a, 0, NULL, 0, &ra), 0);
    CHECK_EQ_INT(train("sst2", 3, b, 0, NULL, 0, &rb), 0);
    CHECK_EQ_INT(train("sst2", 4, c, 0, NULL, 0, &rc), 0);
    cJSON *ea = epochs_without_time(ra), *eb = epochs_without_time(rb), *ec = epochs_without_time(rc);
    CHECK_MSG(cJSON_Compare(ea, eb, 1), "same seed: identical losses and metrics");
    CHECK_MSG(!cJSON_Compare(ea, ec, 1), "another seed: other numbers");
    cJSON_Delete(ea); cJSON_Delete(eb); cJSON_Delete(ec);
    cJSON_Delete(ra); cJSON_Delete(rb); cJSON_Delete(rc);
    fixture_remove(&fx);
}

/* A run of `glue finetune` (argv ft, nft args) that crashes at step 260 (the
 * test model's TEST_BOW_CRASH_AT_STEP), then resumed in-process, must end as
 * the uninterrupted run rw did (losses, metrics, best epoch, best checkpoint).
 * The resume point it left: epoch `epoch` (0-based), row `row`. */
static void crash_and_resume(const char *root, const char *whole, const cJSON *rw, const char *cut,
                             const char **ft, int nft, int epoch, int row, long step, int damage) {
    Ran crash = run_command(root, NULL, "TEST_BOW_CRASH_AT_STEP=260", nft, ft);
    CHECK_MSG(crash.status == 77, "the child crashed as planned: %d %s", crash.status, crash.err);
    ran_free(&crash);
    CHECK(file_in(cut, RUN_RESUME_DIR "/" RUN_TRAINER_STATE) && !file_in(cut, RUN_RESULTS));
    cJSON *state = read_json_file(cut, RUN_RESUME_DIR "/" RUN_TRAINER_STATE);
    CHECK_EQ_INT(run_config_number(state, "epoch", -1), epoch);
    CHECK_EQ_INT(run_config_number(state, "next_row", -1), row);
    CHECK_EQ_INT(run_config_number(state, "step", -1), step);
    cJSON_Delete(state);
    /* Resuming with other settings is refused; with the same ones it finishes. */
    const char *other[] = {"lr=0.25"};
    int muted = stderr_mute();
    CHECK(train("sst2", 9, cut, 1, other, 1, NULL) != 0);
    CHECK(train("sst2", 10, cut, 1, NULL, 0, NULL) != 0);
    stderr_restore(muted);
    if (damage) {   /* a flipped bit in the weights: resume.prev/, the point before, takes over */
        char path[4200];
        file_join(cut, RUN_RESUME_DIR "/" RUN_LAST_CKPT, path, sizeof path);
        CHECK(test_flip_byte(path, 60, 4) == 0);
    }
    cJSON *rr = NULL;
    StderrCapture cap;
    stderr_capture_begin(&cap);
    CHECK_EQ_INT(train("sst2", 9, cut, 1, NULL, 0, &rr), 0);
    char *said = stderr_capture_end(&cap);
    CHECK_MSG(!damage == !strstr(said, "continuing from"), "damage %d: %s", damage, said);
    free(said);
    cJSON *ew = epochs_without_time(rw), *er = epochs_without_time(rr);
    CHECK_MSG(cJSON_Compare(ew, er, 1), "resumed run: the same losses and metrics as the uninterrupted one");
    cJSON *bw = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(rw, "best"), 1);
    cJSON *br = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(rr, "best"), 1);
    cJSON_DeleteItemFromObject(bw, "seconds");
    cJSON_DeleteItemFromObject(br, "seconds");
    CHECK_MSG(bw && cJSON_Compare(bw, br, 1), "the same best epoch");
    cJSON_Delete(bw); cJSON_Delete(br);
    char ca[4096], cb[4096];
    file_join(whole, RUN_CKPT, ca, sizeof ca);
    file_join(cut, RUN_CKPT, cb, sizeof cb);
    size_t na, nb;
    char *fa = file_read(ca, &na), *fb = file_read(cb, &nb);
    CHECK_MSG(fa && fb && na == nb && memcmp(fa, fb, na) == 0, "identical best checkpoints");
    free(fa); free(fb);
    CHECK(!file_in(cut, RUN_RESUME_DIR));
    cJSON_Delete(ew); cJSON_Delete(er);
    cJSON_Delete(rr);
}

TEST(trainer_resume_after_crash_is_exact) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char whole[4096], cut[4096], cut_steps[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    snprintf(whole, sizeof whole, "%s/whole", root);
    snprintf(cut, sizeof cut, "%s/cut", root);
    cJSON *rw = NULL;
    CHECK_EQ_INT(train("sst2", 9, whole, 0, NULL, 0, &rw), 0);
    /* 1200 rows / 16 = 75 steps per epoch: die in the middle of epoch 4
     * (step 260). Per epoch: resume at the start of epoch 4. */
    const char *ft[] = {"finetune", "sst2", "--model", "testbow", "--seed", "9", "--out", cut};
    crash_and_resume(root, whole, rw, cut, ft, 8, 3, 0, 225, 0);
    /* Every 7 steps: at step 259 = 7 * 37, row (259 - 225) * 16 of epoch 4. */
    snprintf(cut_steps, sizeof cut_steps, "%s/cut_steps", root);
    const char *fs[] = {"finetune", "sst2", "--model", "testbow", "--seed", "9", "--out", cut_steps,
                        "--checkpoint-every", "7"};
    crash_and_resume(root, whole, rw, cut_steps, fs, 10, 3, (259 - 225) * 16, 259, 0);
    /* The same with the last resume point damaged: the one before it (step 252). */
    snprintf(cut_steps, sizeof cut_steps, "%s/cut_damaged", root);
    fs[7] = cut_steps;
    crash_and_resume(root, whole, rw, cut_steps, fs, 10, 3, (259 - 225) * 16, 259, 1);
    cJSON_Delete(rw);
    fixture_remove(&fx);
}

/* A run resumed after its best epoch (lr 5: epoch 5 of 6; the crash at step
 * 400, in epoch 6) keeps that epoch's per-label table ("details", which glue
 * protocol's macro-F1 reads) as the uninterrupted run does; it had none. */
TEST(trainer_resume_keeps_best_details) {
    if (!bow()) { test_skip("test model not linked"); return; }
    Fixture fx;
    fixture_make(&fx);
    char whole[4096], cut[4096];
    snprintf(whole, sizeof whole, "%s/whole", fx.root);
    snprintf(cut, sizeof cut, "%s/cut", fx.root);
    const char *sets[] = {"lr=5"};
    cJSON *rw = NULL, *rr = NULL;
    CHECK_EQ_INT(train("sst2", 9, whole, 0, sets, 1, &rw), 0);
    const char *ft[] = {"finetune", "sst2", "--model", "testbow", "--seed", "9", "--set", "lr=5", "--out", cut};
    Ran crash = run_command(fx.root, NULL, "TEST_BOW_CRASH_AT_STEP=400", 10, ft);
    CHECK_MSG(crash.status == 77, "the child crashed as planned: %d %s", crash.status, crash.err);
    ran_free(&crash);
    int muted = stderr_mute();
    CHECK_EQ_INT(train("sst2", 9, cut, 1, sets, 1, &rr), 0);
    stderr_restore(muted);
    CHECK_EQ_INT(run_config_number(cJSON_GetObjectItemCaseSensitive(rr, "best"), "epoch", -1), 5);
    const cJSON *dw = cJSON_GetObjectItemCaseSensitive(rw, "details"), *dr = cJSON_GetObjectItemCaseSensitive(rr, "details");
    CHECK_MSG(dw && dr && cJSON_Compare(dw, dr, 1), "details after the resume: %s", dr ? "other numbers" : "none");
    cJSON_Delete(rw);
    cJSON_Delete(rr);
    fixture_remove(&fx);
}

TEST(trainer_mnli_reports_both_dev_splits) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char dir[4096], data[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    snprintf(data, sizeof data, "%s/glue", root);
    write_mnli(data);
    run_dir_path("mnli", "testbow", dir, sizeof dir);
    cJSON *res = NULL;
    CHECK_EQ_INT(train("mnli", 1, dir, 0, NULL, 0, &res), 0);
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    double m = metric_of(best, "dev_matched", "accuracy"), mm = metric_of(best, "dev_mismatched", "accuracy");
    CHECK_MSG(m >= 95 && mm >= 90, "matched %.2f, mismatched %.2f", m, mm);
    /* Selection is on dev_matched: the score is its accuracy. */
    CHECK_NEAR(run_config_number(best, "score", 0), m, 1e-9);
    char ckpt[4096];
    file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
    CHECK_NEAR(checkpoint_accuracy(ckpt, "mnli", "dev_mismatched"), mm, 1e-9);
    cJSON_Delete(res);
    fixture_remove(&fx);
}

TEST(trainer_stsb_regression) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char dir[4096], data[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    snprintf(data, sizeof data, "%s/glue", root);
    write_stsb(data);
    run_dir_path("stsb", "testbow", dir, sizeof dir);
    const char *sets[] = {"lr=0.1", "epochs=10"};
    cJSON *res = NULL;
    CHECK_EQ_INT(train("stsb", 1, dir, 0, sets, 2, &res), 0);
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    double p = metric_of(best, "dev", "pearson"), s = metric_of(best, "dev", "spearman");
    CHECK_MSG(p > 95 && s > 90, "pearson %.2f spearman %.2f", p, s);
    CHECK_NEAR(run_config_number(best, "score", 0), (p + s) / 2, 1e-9);
    cJSON_Delete(res);
    fixture_remove(&fx);
}

TEST(trainer_cli_eval_predict) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char dir[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    run_dir_path("sst2", "testbow", dir, sizeof dir);
    cJSON *res = NULL;
    CHECK_EQ_INT(train("sst2", 42, dir, 0, NULL, 0, &res), 0);
    double best = metric_of(cJSON_GetObjectItemCaseSensitive(res, "best"), "dev", "accuracy");

    /* eval on dev reproduces the best epoch's number from the checkpoint. */
    const char *ev[] = {"eval", "sst2", "--model", "testbow", "--json"};
    Ran r = run_command(root, NULL, NULL, 5, ev);
    CHECK_EQ_INT(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    CHECK_MSG(j != NULL, "one JSON object: %s", r.out);
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "tasks"), "sst2");
    CHECK_NEAR(metric_of(task, "dev", "accuracy"), best, 1e-9);
    CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(j, "glue"), "glue_score", 0), best, 1e-9);
    /* ... and writes the dev predictions, which glue score reads back to the
     * same accuracy, with their confusion matrix (its diagonal: the hits). */
    const cJSON *dp = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(task, "dev_predictions"), "dev");
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(dp, "confusion");
    double hits = 0, all = 0;
    for (int g = 0; g < 2 && cJSON_GetArraySize(cm) == 2; g++)
        for (int p = 0; p < 2; p++) {
            double c = cJSON_GetArrayItem(cJSON_GetArrayItem(cm, g), p)->valuedouble;
            all += c;
            hits += g == p ? c : 0;
        }
    CHECK_MSG(all > 0 && fabs(100 * hits / all - best) < 1e-9, "confusion %g/%g vs accuracy %g", hits, all, best);
    char preds[4200];
    run_dir_path("sst2", "testbow", dir, sizeof dir);
    file_join(dir, "dev_predictions.tsv", preds, sizeof preds);
    const char *sc[] = {"score", "sst2", preds, "--json"};
    Ran rs = run_command(root, NULL, NULL, 4, sc);
    cJSON *sj = cJSON_Parse(rs.out);
    CHECK_MSG(rs.status == 0 && fabs(run_config_number(sj, "accuracy", -1) - best) < 1e-9,
              "score of the dev predictions: %s %s", rs.out, rs.err);
    cJSON_Delete(sj);
    ran_free(&rs);
    cJSON_Delete(j);
    ran_free(&r);

    /* eval on test writes the leaderboard file: header + one row per test example. */
    const char *et[] = {"eval", "sst2", "--model", "testbow", "--split", "test"};
    r = run_command(root, NULL, NULL, 6, et);
    CHECK_EQ_INT(r.status, 0);
    CHECK(strstr(r.out, "SST-2.tsv") != NULL);
    ran_free(&r);
    char sub[4096];
    file_join(dir, "SST-2.tsv", sub, sizeof sub);
    char *text = file_read(sub, NULL);
    CHECK(text && strncmp(text, "index\tprediction\n0\t", 19) == 0);
    int lines = 0;
    for (char *p = text; p && *p; p++) lines += *p == '\n';
    CHECK_EQ_INT(lines, 51);
    free(text);

    /* predict: one text, --json, and stdin lines. */
    const char *p1[] = {"predict", "sst2", "--model", "testbow", "a wonderful superb film"};
    r = run_command(root, NULL, NULL, 5, p1);
    CHECK_EQ_INT(r.status, 0);
    CHECK_MSG(strncmp(r.out, "positive\tnegative=", 18) == 0, "positive: %s", r.out);
    ran_free(&r);
    const char *p2[] = {"predict", "sst2", "--model", "testbow", "--json", "an awful boring plot"};
    r = run_command(root, NULL, NULL, 6, p2);
    j = cJSON_Parse(r.out);
    const cJSON *probs = cJSON_GetObjectItemCaseSensitive(j, "probabilities");
    CHECK(j && !strcmp(cJSON_GetObjectItemCaseSensitive(j, "label")->valuestring, "negative"));
    CHECK(j && !strcmp(cJSON_GetObjectItemCaseSensitive(j, "label_id")->valuestring, "0"));
    CHECK_NEAR(run_config_number(probs, "negative", 0) + run_config_number(probs, "positive", 0), 1.0, 1e-5);
    CHECK(run_config_number(probs, "negative", 0) > 0.5);
    cJSON_Delete(j);
    ran_free(&r);
    const char *p3[] = {"predict", "sst2", "--model", "testbow"};
    r = run_command(root, "great lovely cast\nterrible dull story\nbrilliant\n", NULL, 4, p3);
    CHECK_EQ_INT(r.status, 0);
    CHECK_MSG(!strncmp(r.out, "positive\t", 9) && strstr(r.out, "\nnegative\t") &&
                  strstr(strstr(r.out, "\nnegative\t") + 1, "\npositive\t"),
              "one line each, in order: %s", r.out);
    ran_free(&r);

    /* Usage errors: a pair for a single-sentence task, a tab in stdin, bad UTF-8. */
    const char *p4[] = {"predict", "sst2", "--model", "testbow", "one", "two"};
    r = run_command(root, NULL, NULL, 6, p4);
    CHECK_EQ_INT(r.status, 2);
    ran_free(&r);
    /* A bad line (a tab, an empty line) is named and skipped; the good lines
     * around it are still predicted, one output line per input line. */
    r = run_command(root, "great lovely cast\nnot\tfine\n\nterrible dull story\n", NULL, 4, p3);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.err, "stdin:2") && strstr(r.err, "stdin:3: empty line") && strstr(r.err, "2 of 4 lines"),
              "names the lines: %s", r.err);
    CHECK_MSG(!strncmp(r.out, "positive\t", 9) && strstr(r.out, "\n-\n-\nnegative\t"), "output: %s", r.out);
    ran_free(&r);
    r = run_command(root, "bad \xff byte\n", NULL, 4, p3);
    CHECK(r.status == 1 && strstr(r.err, "stdin:1: invalid UTF-8"));
    ran_free(&r);
    cJSON_Delete(res);
    fixture_remove(&fx);
}

TEST(trainer_cli_run_errors) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char dir[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    /* No run yet: a clear message that says how to train one. */
    const char *ev[] = {"eval", "sst2", "--model", "testbow"};
    Ran r = run_command(root, NULL, NULL, 4, ev);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.err, "glue finetune sst2 --model testbow") != NULL, "hint: %s", r.err);
    ran_free(&r);
    /* A corrupt checkpoint: one error naming the file, a hint, no crash. */
    run_dir_path("sst2", "testbow", dir, sizeof dir);
    CHECK_EQ_INT(train("sst2", 1, dir, 0, NULL, 0, NULL), 0);
    char ckpt[4096];
    file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
    FILE *f = fopen(ckpt, "r+b");
    fseek(f, 100, SEEK_SET);
    fputc(0x5A, f);
    fclose(f);
    r = run_command(root, NULL, NULL, 4, ev);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.err, "model.ckpt") && strstr(r.err, "corrupt") && strstr(r.err, "hint"), "%s", r.err);
    ran_free(&r);
    const char *pr[] = {"predict", "sst2", "--model", "testbow", "text"};
    r = run_command(root, NULL, NULL, 5, pr);
    CHECK_EQ_INT(r.status, 1);
    ran_free(&r);
    /* Unknown task / model in-process: exit 2 with a suggestion. */
    const char *bad_model[] = {"eval", "sst2", "--model", "testbw"};
    r = run_command(root, NULL, NULL, 4, bad_model);
    CHECK(r.status == 2 && strstr(r.err, "did you mean 'testbow'"));
    ran_free(&r);
    const char *bad_task[] = {"finetune", "sts-c", "--model", "testbow"};
    r = run_command(root, NULL, NULL, 4, bad_task);
    CHECK(r.status == 2 && strstr(r.err, "did you mean 'stsb'"));
    ran_free(&r);
    fixture_remove(&fx);
}

TEST(trainer_cli_finetune_settings) {
    if (!bow()) { test_skip("test model not linked"); return; }
    char out[4096];
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    snprintf(out, sizeof out, "%s/custom", root);
    /* Options, --set and --config FILE combine; the run lands in --out. */
    char cfg[4096];
    snprintf(cfg, sizeof cfg, "%s/cfg.json", root);
    FILE *f = fopen(cfg, "w");
    fputs("{\"dim\": 256, \"momentum\": 0.5, \"epochs\": 7}", f);
    fclose(f);
    const char *ft[] = {"finetune", "sst2", "--model", "testbow", "--config", cfg, "--epochs", "2",
                        "--set", "max_len=20", "--set=lr=0.4", "--out", out, "--json", "--seed", "5"};
    Ran r = run_command(root, NULL, NULL, 16, ft);
    CHECK_EQ_INT(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "config");
    CHECK_EQ_INT(run_config_number(c, "dim", 0), 256);
    CHECK_EQ_INT(run_config_number(c, "epochs", 0), 2);
    CHECK_EQ_INT(run_config_number(c, "max_len", 0), 20);
    CHECK_NEAR(run_config_number(c, "lr", 0), 0.4, 1e-12);
    CHECK_NEAR(run_config_number(c, "momentum", 0), 0.5, 1e-12);
    CHECK_EQ_INT(run_config_number(j, "seed", 0), 5);
    CHECK_EQ_INT(run_config_number(j, "num_params", 0), 2 * 256 + 2);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "epochs")), 2);
    const char *cmd = run_config_string(j, "command", "");
    CHECK_MSG(strncmp(cmd, "glue finetune sst2 --model testbow", 34) == 0, "command line: %s", cmd);
    cJSON_Delete(j);
    ran_free(&r);
    CHECK(file_in(out, RUN_CKPT) && file_in(out, RUN_RESULTS) && file_in(out, RUN_CONFIG));
    /* Bad settings are usage errors, each with a clear message. */
    static const struct { const char *opt, *val, *says; } BAD[] = {
        {"--set", "dropuot=0.1", "unknown setting 'dropuot'"}, {"--set", "lr=fast", "wants a number"},
        {"--epochs", "0", "epochs"}, {"--lr", "-1", "lr"}, {"--set", "schedule=steep", "schedule"},
        {"--batch", "2.5", "batch"}, {"--set", "novalue", "key=value"}, {"--epoch", "3", "unknown option"},
    };
    for (int i = 0; i < (int)(sizeof BAD / sizeof BAD[0]); i++) {
        const char *argv[] = {"finetune", "sst2", "--model", "testbow", BAD[i].opt, BAD[i].val, "--out", out};
        r = run_command(root, NULL, NULL, 8, argv);
        CHECK_MSG(r.status == 2 && strstr(r.err, BAD[i].says), "%s %s -> %d: %s", BAD[i].opt, BAD[i].val,
                  r.status, r.err);
        ran_free(&r);
    }
    fixture_remove(&fx);
}

/* --seeds: one run per seed in DIR/seed-<s>/, each the same as a lone run with
 * that seed, and DIR/seeds.json with their mean, sample std, min and max. */
TEST(trainer_cli_finetune_seeds) {
    if (!bow()) { test_skip("test model not linked"); return; }
    Fixture fx;
    fixture_make(&fx);
    char out[4096], lone[4096];
    snprintf(out, sizeof out, "%s/seeds", fx.root);
    snprintf(lone, sizeof lone, "%s/lone", fx.root);
    const char *ft[] = {"finetune", "sst2", "--model", "testbow", "--epochs", "2", "--seeds", "3,11,4", "--out", out};
    Ran r = run_command(fx.root, NULL, NULL, 10, ft);
    CHECK_MSG(r.status == 0 && strstr(r.out, "over 3 seeds"), "--seeds: %d %s %s", r.status, r.out, r.err);
    ran_free(&r);
    cJSON *j = read_json_file(out, "seeds.json");
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
    CHECK_EQ_INT(cJSON_GetArraySize(runs), 3);
    static const int SEEDS[3] = {3, 11, 4};
    double acc[3], sum = 0;
    for (int i = 0; i < 3; i++) {
        const cJSON *run = cJSON_GetArrayItem(runs, i);
        CHECK_EQ_INT(run_config_number(run, "seed", -1), SEEDS[i]);
        acc[i] = metric_of(cJSON_GetObjectItemCaseSensitive(run, "best"), "dev", "accuracy");
        sum += acc[i];
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/seed-%d", out, SEEDS[i]);
        CHECK(file_in(dir, RUN_CKPT) && file_in(dir, RUN_RESULTS));
        CHECK_MSG(strcmp(run_config_string(run, "dir", ""), dir) == 0, "dir %s", run_config_string(run, "dir", ""));
    }
    /* The seed-11 run equals a lone run with --seed 11. */
    const char *one[] = {"finetune", "sst2", "--model", "testbow", "--epochs", "2", "--seed", "11", "--out", lone};
    r = run_command(fx.root, NULL, NULL, 10, one);
    CHECK_EQ_INT(r.status, 0);
    ran_free(&r);
    cJSON *l = read_json_file(lone, RUN_RESULTS);
    CHECK_NEAR(metric_of(cJSON_GetObjectItemCaseSensitive(l, "best"), "dev", "accuracy"), acc[1], 1e-12);
    cJSON_Delete(l);
    double mean = sum / 3, ss = 0;
    for (int i = 0; i < 3; i++) ss += (acc[i] - mean) * (acc[i] - mean);
    const cJSON *spread = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "summary"), "dev"), "accuracy");
    CHECK_NEAR(run_config_number(spread, "mean", NAN), mean, 1e-9);
    CHECK_NEAR(run_config_number(spread, "std", NAN), sqrt(ss / 2), 1e-9);
    CHECK_NEAR(run_config_number(spread, "min", NAN), fmin(acc[0], fmin(acc[1], acc[2])), 1e-12);
    CHECK_NEAR(run_config_number(spread, "max", NAN), fmax(acc[0], fmax(acc[1], acc[2])), 1e-12);
    cJSON_Delete(j);
    /* --resume keeps the finished seeds and trains the new one only. */
    const char *more[] = {"finetune", "sst2", "--model", "testbow", "--epochs", "2", "--seeds", "3,11,4,5",
                          "--resume", "--out", out};
    r = run_command(fx.root, NULL, NULL, 11, more);
    CHECK_MSG(r.status == 0 && strstr(r.err, "seed 3: finished") && strstr(r.err, "seed 4: finished") &&
                  !strstr(r.err, "seed 5: finished") && strstr(r.out, "over 4 seeds"),
              "--seeds --resume: %d %s %s", r.status, r.out, r.err);
    ran_free(&r);
    j = read_json_file(out, "seeds.json");
    runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
    CHECK_EQ_INT(cJSON_GetArraySize(runs), 4);
    for (int i = 0; i < 3 && cJSON_GetArraySize(runs) == 4; i++)
        CHECK_NEAR(metric_of(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, i), "best"), "dev", "accuracy"),
                   acc[i], 1e-12);
    cJSON_Delete(j);
    /* A bad list is a usage error. */
    static const char *const BAD[] = {"1,,2", "a", "-3", "1;2", "3,11,3"};   /* a seed twice: no spread */
    for (int i = 0; i < 5; i++) {
        const char *argv[] = {"finetune", "sst2", "--model", "testbow", "--seeds", BAD[i], "--out", out};
        r = run_command(fx.root, NULL, NULL, 8, argv);
        CHECK_MSG(r.status == 2 && strstr(r.err, "--seeds"), "--seeds %s -> %d: %s", BAD[i], r.status, r.err);
        ran_free(&r);
    }
    /* --seed beside --seeds would be ignored: an error instead. */
    const char *both[] = {"finetune", "sst2", "--model", "testbow", "--seed", "5", "--seeds", "1,2", "--out", out};
    r = run_command(fx.root, NULL, NULL, 10, both);
    CHECK_MSG(r.status == 2 && strstr(r.err, "--seed 5 and --seeds 1,2"), "--seed with --seeds -> %d: %s", r.status,
              r.err);
    ran_free(&r);
    fixture_remove(&fx);
}

TEST(trainer_cli_compare) {
    if (!bow()) { test_skip("test model not linked"); return; }
    Fixture fx;
    fixture_make(&fx);
    const char *root = fx.root;
    const char *argv[] = {"compare", "sst2", "--models", "testbow", "--json"};
    Ran r = run_command(root, NULL, NULL, 5, argv);
    CHECK_MSG(r.status == 0, "compare: %d %s", r.status, r.err);
    cJSON *j = cJSON_Parse(r.out);
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(j, "models");
    CHECK_EQ_INT(cJSON_GetArraySize(models), 2);
    const cJSON *maj = cJSON_GetArrayItem(models, 0), *bw = cJSON_GetArrayItem(models, 1);
    CHECK(!strcmp(run_config_string(maj, "model", ""), "majority") && !strcmp(run_config_string(bw, "model", ""), "testbow"));
    /* The majority row: the share of the most frequent training label on dev, counted here. */
    Dataset train_d, dev;
    CHECK_EQ_INT(task_load(task_find("sst2"), "train", task_data_root(), 1, &train_d), 0);
    CHECK_EQ_INT(task_load(task_find("sst2"), "dev", task_data_root(), 1, &dev), 0);
    int ones = 0, dev_hits = 0;
    for (int i = 0; i < train_d.n; i++) ones += train_d.ex[i].label;
    int major = 2 * ones > train_d.n;
    for (int i = 0; i < dev.n; i++) dev_hits += dev.ex[i].label == major;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(maj, "tasks"), "sst2");
    CHECK_NEAR(metric_of(mt, "dev", "accuracy"), 100.0 * dev_hits / dev.n, 1e-9);
    dataset_free(&train_d);
    dataset_free(&dev);
    const cJSON *bt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(bw, "tasks"), "sst2");
    CHECK_MSG(metric_of(bt, "dev", "accuracy") >= 95, "%s", r.out);
    CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(bw, "glue"), "glue_score", 0),
               metric_of(bt, "dev", "accuracy"), 1e-9);
    CHECK(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bt, "reused")));
    cJSON_Delete(j);
    ran_free(&r);
    /* Files written; a second compare reuses the finished run. */
    char res_dir[4096], md[4096];
    snprintf(res_dir, sizeof res_dir, "%s/results", root);
    CHECK(file_in(res_dir, "compare.json"));
    file_join(res_dir, "compare.md", md, sizeof md);
    char *text = file_read(md, NULL);
    CHECK_MSG(text && strstr(text, "| majority") && strstr(text, "| testbow") && strstr(text, "SST-2 (acc)"), "%s",
              text ? text : "(none)");
    free(text);
    r = run_command(root, NULL, NULL, 5, argv);
    j = cJSON_Parse(r.out);
    bt = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "models"), 1), "tasks"),
        "sst2");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bt, "reused")));
    cJSON_Delete(j);
    ran_free(&r);
    /* A user's run with other settings is kept: compare trains its own. */
    const char *mine[] = {"finetune", "sst2", "--model", "testbow", "--epochs", "1", "--overwrite"};
    r = run_command(root, NULL, NULL, 7, mine);
    CHECK_EQ_INT(r.status, 0);
    ran_free(&r);
    char dir[4096], path[4200];
    run_dir_path("sst2", "testbow", dir, sizeof dir);
    file_join(dir, RUN_RESULTS, path, sizeof path);
    char *before = file_read(path, NULL);
    r = run_command(root, NULL, NULL, 5, argv);
    CHECK_MSG(r.status == 0 && strstr(r.err, "kept") && strstr(r.out, "compare/sst2/testbow-seed42"), "%s %s", r.err,
              r.out);
    char *after = file_read(path, NULL);
    CHECK_MSG(before && after && strcmp(before, after) == 0, "compare trained over the user's run");
    free(before);
    free(after);
    ran_free(&r);
    /* --seeds: each cell the mean of the seeds' runs, the GLUE score with its
     * spread; the seed 42 run above is reused. */
    const char *seeded[] = {"compare", "sst2", "--models", "testbow", "--seeds", "42,7", "--json"};
    r = run_command(root, NULL, NULL, 7, seeded);
    CHECK_MSG(r.status == 0, "compare --seeds: %d %s", r.status, r.err);
    j = cJSON_Parse(r.out);
    const cJSON *m2 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "models"), 1);
    bt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m2, "tasks"), "sst2");
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(bt, "seed_scores");
    CHECK_EQ_INT(cJSON_GetArraySize(ss), 2);
    double s42 = -1, s7 = -1;
    for (int k = 0; k < 2; k++) {
        char rd[4200], rp[4300];
        snprintf(rd, sizeof rd, "%s/compare/sst2/testbow-seed%d", run_root(), k ? 7 : 42);
        file_join(rd, RUN_RESULTS, rp, sizeof rp);
        cJSON *res = json_file_read(rp, 1);
        double acc = metric_of(cJSON_GetObjectItemCaseSensitive(res, "best"), "dev", "accuracy");
        if (k) s7 = acc; else s42 = acc;
        cJSON_Delete(res);
    }
    CHECK_NEAR(cJSON_GetArrayItem(ss, 0)->valuedouble, s42, 1e-9);
    CHECK_NEAR(cJSON_GetArrayItem(ss, 1)->valuedouble, s7, 1e-9);
    CHECK_NEAR(metric_of(bt, "dev", "accuracy"), (s42 + s7) / 2, 1e-9);
    CHECK_NEAR(run_config_number(m2, "glue_std", -1), fabs(s42 - s7) / sqrt(2.0), 1e-9);
    cJSON_Delete(j);
    ran_free(&r);
    /* --with qnli-9k: the subset task is run too, the GLUE column stays the
     * official tasks' score and GLUE+QNLI-9k counts the subset as QNLI. */
    write_qnli_9k(getenv("GLUE_DATA"));
    const char *with[] = {"compare", "sst2", "--with", "qnli-9k", "--models", "testbow", "--json"};
    r = run_command(root, NULL, NULL, 7, with);
    CHECK_MSG(r.status == 0, "compare --with: %d %s", r.status, r.err);
    j = cJSON_Parse(r.out);
    m2 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "models"), 1);
    const cJSON *tasks2 = cJSON_GetObjectItemCaseSensitive(m2, "tasks");
    double sst = metric_of(cJSON_GetObjectItemCaseSensitive(tasks2, "sst2"), "dev", "accuracy");
    double qn = metric_of(cJSON_GetObjectItemCaseSensitive(tasks2, "qnli-9k"), "dev", "accuracy");
    CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(m2, "glue"), "glue_score", -1), sst, 1e-9);
    CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(m2, "glue_with_subsets"), "glue_score", -1),
               (sst + qn) / 2, 1e-9);
    cJSON_Delete(j);
    ran_free(&r);
    fixture_remove(&fx);
}

/* --set (and --init, the same as --set init=X): applied to the models that
 * have the key, a TASK.key to that task only; the runs go to their own
 * directory (the default runs stay), the row is marked and its settings said;
 * a setting no model has, an unknown task or a bare word is a usage error. */
TEST(trainer_cli_compare_settings) {
    if (!bow()) { test_skip("test model not linked"); return; }
    Fixture fx;
    fixture_make(&fx);
    const char *argv[] = {"compare", "sst2", "--models", "testbow", "--set", "dim=64", "--set", "sst2.epochs=2",
                          "--set", "mnli.epochs=1", "--json"};
    Ran r = run_command(fx.root, NULL, NULL, 11, argv);
    CHECK_MSG(r.status == 0, "compare --set: %d %s", r.status, r.err);
    cJSON *j = cJSON_Parse(r.out);
    const cJSON *bw = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "models"), 1);
    const cJSON *sets = cJSON_GetObjectItemCaseSensitive(bw, "settings");
    CHECK_EQ_INT(cJSON_GetArraySize(sets), 3);
    CHECK(!strcmp(cJSON_GetArrayItem(sets, 1)->valuestring, "sst2.epochs=2"));
    char run[4096];
    snprintf(run, sizeof run, "%s", run_config_string(cJSON_GetObjectItemCaseSensitive(
                                        cJSON_GetObjectItemCaseSensitive(bw, "tasks"), "sst2"), "run", ""));
    CHECK_MSG(strstr(run, "compare/sst2/testbow-") && strstr(run, "-seed42") && !strstr(run, "testbow-seed42"), "%s", run);
    cJSON_Delete(j);
    /* the run was trained with dim 64 and 2 epochs (mnli.epochs left SST-2 alone) */
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s", run);   /* absolute here: the runs are outside the project */
    file_join(dir, "config.json", path, sizeof path);
    cJSON *cfg = json_file_read(path, 1);
    CHECK_MSG(cfg && run_config_number(cfg, "dim", 0) == 64 && run_config_number(cfg, "epochs", 0) == 2, "%s", path);
    cJSON_Delete(cfg);
    char res[4096], md[4200];
    snprintf(res, sizeof res, "%s/results", fx.root);
    file_join(res, "compare.md", md, sizeof md);
    char *text = file_read(md, NULL);
    CHECK_MSG(text && strstr(text, "| testbow * |") && strstr(text, "testbow *: its defaults with `dim=64` `sst2.epochs=2`"),
              "%s", text ? text : "(none)");
    free(text);
    ran_free(&r);
    /* the same settings in another order: the same config, reused */
    const char *again[] = {"compare", "sst2", "--models", "testbow", "--set", "sst2.epochs=2", "--set", "dim=64",
                           "--json"};
    r = run_command(fx.root, NULL, NULL, 9, again);
    CHECK_MSG(r.status == 0 && strstr(r.err, "reusing"), "%d %s", r.status, r.err);
    ran_free(&r);
    static const char *const BAD[][2] = {{"--set", "dropuot=0.1"}, {"--set", "sst3.epochs=2"}, {"--set", "epochs"},
                                         {"--init", "none"}};
    for (int i = 0; i < 4; i++) {
        const char *bad[] = {"compare", "sst2", "--models", "testbow", BAD[i][0], BAD[i][1]};
        r = run_command(fx.root, NULL, NULL, 6, bad);
        CHECK_MSG(r.status == 2 && strstr(r.err, BAD[i][1]), "%s %s: %d %s", BAD[i][0], BAD[i][1], r.status, r.err);
        ran_free(&r);
    }
    fixture_remove(&fx);
}

TEST(trainer_report_tables) {
    ReportTable *t = report_table_create(3);
    report_table_add(t, "Model");
    report_table_add(t, "SST-2 (acc)");
    report_table_add(t, "Params");
    report_table_add(t, "majority");
    report_table_add(t, "50.92");
    report_table_add(t, "0");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_table_print_markdown(t, f);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "| Model    | SST-2 (acc) | Params |\n"
                           "|:-------- | -----------:| ------:|\n"
                           "| majority |       50.92 |      0 |\n"), "%s", buf);
    free(buf);
    f = open_memstream(&buf, &len);
    report_table_print(t, f);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "Model     SST-2 (acc)  Params\n"
                           "-----------------------------\n"
                           "majority        50.92       0\n"), "%s", buf);
    free(buf);
    report_table_free(t);
}

/* The real binary: unknown task or model exits 2 with a suggestion. */
TEST(trainer_cli_unknown_names_binary) {
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "%s finetune sst3 2>&1", test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 2);
    CHECK_MSG(strstr(out, "did you mean 'sst2'") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s eval sst2 --model fastext 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 2);
    CHECK_MSG(strstr(out, "unknown model 'fastext' (did you mean") != NULL, "%s", out);
    free(out);
    /* A suggestion only when one is near: a misspelt command gets one, a name like no other none. */
    static const struct { const char *args, *says; int suggests; } GUESS[] = {
        {"finetun", "did you mean 'finetune'", 1}, {"xyzzyq", "unknown command 'xyzzyq'", 0},
        {"compare all --models nosuch", "unknown model 'nosuch'", 0}, {"finetune zzzzzz", "unknown task 'zzzzzz'", 0},
        {"data fetch nosuchtask", "unknown dataset 'nosuchtask'", 0}, {"data fetch colaa", "did you mean 'cola'", 1},
        /* a name as papers write it: the lower-case name glue knows (none was suggested) */
        {"eval sst2 --model TextCNN", "did you mean 'textcnn'", 1}, {"Finetune sst2", "did you mean 'finetune'", 1},
        /* options and settings (none was suggested): the nearest the command or model takes */
        {"finetune sst2 --epoch 2", "unknown option '--epoch' (did you mean '--epochs'?)", 1},
        {"compare sst2 --model textcnn", "did you mean '--models'", 1}, {"predict --zzzzzz", "'--zzzzzz'", 0},
        {"finetune sst2 --model textcnn --set dropuot=0.1", "unknown setting 'dropuot' (did you mean 'dropout'?)", 1},
        {"finetune sst2 --model textcnn --set zzzz=1", "unknown setting 'zzzz'", 0}};
    for (size_t i = 0; i < sizeof GUESS / sizeof GUESS[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s %s 2>&1", test_glue_bin(), GUESS[i].args);
        out = test_run(cmd, &st);
        CHECK_MSG(st == 2 && strstr(out, GUESS[i].says) && !strstr(out, "did you mean") == !GUESS[i].suggests,
                  "glue %s: %s", GUESS[i].args, out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "%s predict qnli --model bert 2>&1 < /dev/null", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st != 0, "no run: fails cleanly");
    free(out);
}

/* Resume records need their sums back bit for bit; cJSON's own number
 * printing is not exact (0.1 + 0.2 comes back as 0.3), which made a killed and
 * resumed translation run end with other losses now and then. */
TEST(run_json_exact_round_trip) {
    static const double V[] = {0.1 + 0.2, 1.0 / 3, 1e-300, -12345.678901234567, 0.0};
    static const char *const KEY[] = {"a", "b", "c", "d", "e"};
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < 5; i++) json_add_exact(o, KEY[i], V[i]);
    cJSON_AddNumberToObject(o, "plain", 0.1 + 0.2);
    char *text = cJSON_PrintUnformatted(o);
    cJSON *back = cJSON_Parse(text);
    for (int i = 0; i < 5; i++)
        CHECK_MSG(json_exact(back, KEY[i], NAN) == V[i], "%s: %.17g", KEY[i], json_exact(back, KEY[i], NAN));
    CHECK(json_exact(back, "plain", NAN) != 0.1 + 0.2);   /* why: cJSON's own numbers are not exact */
    CHECK(isnan(json_exact(back, "missing", NAN)));
    free(text);
    cJSON_Delete(o);
    cJSON_Delete(back);
}

/* The command recorded in results files: shell-quoted where needed, the home
 * directory written ~ (a results file names no machine's paths). */
TEST(trainer_command_line_is_portable) {
    char *saved = getenv("HOME") ? xstrdup(getenv("HOME")) : NULL;
    setenv("HOME", "/home/u", 1);
    char *argv[] = {"finetune", "sst2", "--out", "/home/u/runs/x", "--set", "init=/home/u/m.ckpt", "/home/user2/y",
                    "a b", "/home/u"};
    char *line = cli_command_line(9, argv);
    CHECK_MSG(strcmp(line, "glue finetune sst2 --out ~/runs/x --set init=~/m.ckpt /home/user2/y 'a b' /home/u") == 0,
              "%s", line);
    free(line);
    if (saved) setenv("HOME", saved, 1);
    else unsetenv("HOME");
    free(saved);
}
