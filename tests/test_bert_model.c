/* test_bert_model.c — BERT behind ModelOps, end to end through the `glue`
 * binary on synthetic tasks with a small vocabulary and a small config:
 * `glue finetune sst2` learns (beats the majority class by far), `glue eval`
 * reproduces the dev number from the checkpoint, `glue predict` answers,
 * STS-B (pairs, regression) learns, `--init` starts from a pretrained encoder
 * checkpoint whose config wins, bad settings are clear errors; and in-process,
 * save + save_state -> load + load_state continues bit-identically (--resume). */
#include "tests/kill_loop.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/gemm_bf16.h"
#include "core/rng.h"
#include "models/bert/bert.h"
#include "models/model.h"
#include "models/run_config.h"
#include "train/evaluate.h"
#include "train/run_dir.h"
#include "train/step.h"
#include "text/vocab.h"
#include "tests/capture.h"

static const char *const POS[] = {"good", "great", "fine", "excellent"};
static const char *const NEG[] = {"bad", "awful", "poor", "terrible"};
static const char *const FILL[] = {"the", "movie", "was", "a", "film", "plot", "and", "it", "is", "very", "really", "cast"};
#define NFILL 12

typedef struct {
    char root[128];
    char env[1024];   /* "GLUE_DATA=... GLUE_RUNS=... GLUE_RESULTS=..." */
} BertFixture;

static FILE *open_file(const char *root, const char *sub, const char *name) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, sub);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    if (system(cmd) != 0) return NULL;
    snprintf(p, sizeof p, "%s/%s/%s", root, sub, name);
    return fopen(p, "w");
}

/* SST-2: filler words around one polarity word; label = its polarity. */
static void write_sst2(const char *root) {
    static const struct { const char *file; int n; } S[] = {{"train.tsv", 640}, {"dev.tsv", 200}};
    Rng r;
    rng_seed(&r, 11);
    for (int k = 0; k < 2; k++) {
        FILE *f = open_file(root, "glue/SST-2", S[k].file);
        fprintf(f, "sentence\tlabel\n");
        for (int i = 0; i < S[k].n; i++) {
            int y = (int)rng_below(&r, 2), at = (int)rng_below(&r, 5);
            for (int w = 0; w < 6; w++) {
                const char *word = w == at ? (y ? POS : NEG)[rng_below(&r, 4)] : FILL[rng_below(&r, NFILL)];
                fprintf(f, "%s%s", w ? " " : "", word);
            }
            fprintf(f, "\t%d\n", y);
        }
        fclose(f);
    }
}

/* STS-B: the score is the number of "same" among five words of sentence 2. */
static void write_stsb(const char *root) {
    static const struct { const char *file; int n; } S[] = {{"train.tsv", 640}, {"dev.tsv", 160}};
    Rng r;
    rng_seed(&r, 12);
    for (int k = 0; k < 2; k++) {
        FILE *f = open_file(root, "glue/STS-B", S[k].file);
        fprintf(f, "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n");
        for (int i = 0; i < S[k].n; i++) {
            int same = (int)rng_below(&r, 6);
            fprintf(f, "%d\tmain-news\tx\t2012\t%d\tnone\tnone\tthe %s is %s\t", i, i, FILL[rng_below(&r, NFILL)],
                    FILL[rng_below(&r, NFILL)]);
            for (int w = 0; w < 5; w++) fprintf(f, "%s%s", w ? " " : "", w < same ? "same" : "other");
            fprintf(f, "\t%d.000\n", same);
        }
        fclose(f);
    }
}

/* MRPC: two texts of filler around one polarity word each; label 1 iff the
 * two words have the same polarity (neither text alone tells). */
static void write_mrpc(const char *root) {
    static const struct { const char *file; int n; } S[] = {{"train.tsv", 800}, {"dev.tsv", 200}};
    Rng r;
    rng_seed(&r, 13);
    for (int k = 0; k < 2; k++) {
        FILE *f = open_file(root, "glue/MRPC", S[k].file);
        fprintf(f, "\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n");
        for (int i = 0; i < S[k].n; i++) {
            int pa = (int)rng_below(&r, 2), pb = (int)rng_below(&r, 2);
            fprintf(f, "%d\t%d\t%d\t", pa == pb, 2 * i, 2 * i + 1);
            for (int side = 0; side < 2; side++) {
                int at = (int)rng_below(&r, 4), pol = side ? pb : pa;
                for (int w = 0; w < 5; w++)
                    fprintf(f, "%s%s", w ? " " : "", w == at ? (pol ? POS : NEG)[rng_below(&r, 4)] : FILL[rng_below(&r, NFILL)]);
                fprintf(f, side ? "\n" : "\t");
            }
        }
        fclose(f);
    }
}

/* The vocabulary and a small BERT config (C 32, L 1, NH 2, FF 64, P 32). */
static void write_model_files(const char *root) {
    FILE *f = open_file(root, "m", "vocab.txt");
    fprintf(f, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nsame\nother\n");
    for (int i = 0; i < 4; i++) fprintf(f, "%s\n%s\n", POS[i], NEG[i]);
    for (int i = 0; i < NFILL; i++) fprintf(f, "%s\n", FILL[i]);
    fclose(f);
    f = open_file(root, "m", "small.json");
    fprintf(f, "{\"vocab_size\": 27, \"hidden_size\": 32, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 64, \"max_position_embeddings\": 32, \"hidden_dropout_prob\": 0.1,"
               " \"attention_probs_dropout_prob\": 0.1}\n");
    fclose(f);
}

static void fixture_make(BertFixture *fx) {
    if (!scratch_dir("bert", fx->root, sizeof fx->root)) DIE("no scratch folder");
    write_sst2(fx->root);
    write_stsb(fx->root);
    write_mrpc(fx->root);
    write_model_files(fx->root);
    snprintf(fx->env, sizeof fx->env, "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results", fx->root,
             fx->root, fx->root);
}

static void fixture_remove(BertFixture *fx) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fx->root);
}

/* Runs `glue ARGS` in the fixture; stdout returned, stderr into *err if given. */
static char *glue(const BertFixture *fx, const char *args, int *status, char **err) {
    char cmd[4096], errpath[256];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", fx->root);
    snprintf(cmd, sizeof cmd, "%s %s %s 2>%s", fx->env, test_glue_bin(), args, errpath);
    char *out = test_run(cmd, status);
    if (err) {
        FILE *f = fopen(errpath, "r");
        char buf[8192] = {0};
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[n] = '\0';
        *err = xstrdup(buf);
    }
    return out;
}

/* metrics.<split>.<metric> of the "best" record of finetune --json output. */
static double best_metric(const char *json, const char *metric) {
    cJSON *j = cJSON_Parse(json);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "best"), "dev");
    double v = run_config_number(dev, metric, -1);
    cJSON_Delete(j);
    return v;
}

/* SMALL_GRIDLESS: without --batch and --lr, which --search refuses (its grid sets them). */
#define SMALL_GRIDLESS "--overwrite --threads 1 --init none --set bert=%s/m/small.json --set vocab=%s/m/vocab.txt --max-len 16"
#define SMALL SMALL_GRIDLESS " --batch 16 --lr 2e-3"

/* `glue eval sst2 --json FLAGS`: the dev accuracy (-1 on failure) and whether
 * the results say bf16 (*bf16: 1 yes, 0 no). */
static double eval_sst2_accuracy(BertFixture *fx, const char *flags, int *bf16) {
    char args[256];
    snprintf(args, sizeof args, "eval sst2 --json %s", flags);
    int st;
    char *err = NULL, *out = glue(fx, args, &st, &err);
    CHECK_MSG(st == 0, "%s failed: %s", args, err ? err : "");
    cJSON *j = cJSON_Parse(out ? out : "");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "tasks"), "sst2");
    double acc = run_config_number(cJSON_GetObjectItemCaseSensitive(t, "dev"), "accuracy", -1);
    *bf16 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "bf16"));
    cJSON_Delete(j);
    free(out);
    free(err);
    return acc;
}

/* `glue predict sst2 FLAGS 'TEXT'` answers with the label named `label`. */
static int predicts(BertFixture *fx, const char *flags, const char *text, const char *label) {
    char args[512];
    snprintf(args, sizeof args, "predict sst2 %s '%s'", flags, text);
    int st;
    char *out = glue(fx, args, &st, NULL);
    size_t n = strlen(label);
    int ok = st == 0 && out && strncmp(out, label, n) == 0 && out[n] == '\t';
    if (!ok) printf("  %s: %s\n", args, out ? out : "");
    free(out);
    return ok;
}

TEST(bert_finetune_cli_learns_sst2) {
    BertFixture fx;
    fixture_make(&fx);
    char args[1024];
    snprintf(args, sizeof args, "finetune sst2 " SMALL " --epochs 3 --json", fx.root, fx.root);
    int st;
    char *err = NULL, *out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0, "finetune failed (%d): %s", st, err);
    double acc = best_metric(out, "accuracy");
    /* Majority is ~50%: the polarity word decides every row. */
    CHECK_MSG(acc >= 90.0, "dev accuracy %.2f, expected >= 90", acc);
    free(out);
    free(err);
    /* eval reproduces it from the checkpoint; predict answers. */
    int bf16 = -1;
    CHECK_NEAR(eval_sst2_accuracy(&fx, "", &bf16), acc, 1e-9);
    CHECK(bf16 == 0);
    CHECK(predicts(&fx, "", "the movie was really excellent", "positive"));
    CHECK(predicts(&fx, "", "a terrible plot", "negative"));
    /* --bf16: the same decisions here (an approximation: within a point), marked
     * in the results (bf16 weights only where the CPU has AVX512-BF16, else the
     * fp32 path); a model without a bf16 path says so. */
    CHECK_NEAR(eval_sst2_accuracy(&fx, "--bf16", &bf16), acc, 1.0);
    CHECK(bf16 == gemm_bf16_native());
    CHECK(predicts(&fx, "--bf16", "the movie was really excellent", "positive"));
    out = glue(&fx, "eval sst2 --model fasttext --bf16", &st, &err);
    CHECK_MSG(st != 0 && err && strstr(err, "no bf16 inference path"), "fasttext --bf16: %d %s", st, err ? err : "");
    free(out);
    free(err);
    fixture_remove(&fx);
}

/* A user's multi-label data (fastText tags): a row holds a positive word, a
 * negative one, or both, and its label set says which; BERT's sigmoid head
 * learns it far above predicting every label (macro-F1 ~67 here), eval
 * reproduces it, predict names both labels of a mixed text. */
static void write_polar_multilabel(const char *root, const char *name, int n, uint64_t seed) {
    FILE *f = open_file(root, "own", name);
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        int kind = (int)rng_below(&r, 3);   /* 0 pos, 1 neg, 2 both */
        fprintf(f, "%s", kind == 1 ? "__label__neg" : kind == 2 ? "__label__pos __label__neg" : "__label__pos");
        int at = (int)rng_below(&r, 4), at2 = (at + 1 + (int)rng_below(&r, 3)) % 4;
        for (int w = 0; w < 5; w++) {
            const char *word = FILL[rng_below(&r, NFILL)];
            if (w == at) word = (kind == 1 ? NEG : POS)[rng_below(&r, 4)];
            if (w == at2 && kind == 2) word = NEG[rng_below(&r, 4)];
            fprintf(f, " %s", word);
        }
        fprintf(f, "\n");
    }
    fclose(f);
}

TEST(bert_finetune_cli_multi_label) {
    BertFixture fx;
    fixture_make(&fx);
    write_polar_multilabel(fx.root, "train.txt", 480, 21);
    write_polar_multilabel(fx.root, "dev.txt", 150, 22);
    char args[2048];
    snprintf(args, sizeof args, "finetune --train %s/own/train.txt --dev %s/own/dev.txt --format fasttext --name polar "
             "--out %s/polar " SMALL " --epochs 6 --json", fx.root, fx.root, fx.root, fx.root, fx.root);
    int st;
    char *err = NULL, *out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0, "finetune failed (%d): %s", st, err);
    double f1 = best_metric(out, "macro_f1");
    CHECK_MSG(f1 >= 90.0, "dev macro-F1 %.2f, expected >= 90 (every label: ~67)", f1);
    free(out);
    free(err);
    snprintf(args, sizeof args, "predict --run %s/polar 'the film was great but the plot awful'", fx.root);
    out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0 && out && strstr(out, "pos=") && strstr(out, "neg="), "predict (%d): %s %s", st, out, err);
    free(out);
    free(err);
    fixture_remove(&fx);
}

/* STS-B learns with either pair encoding: "siamese" (the default for
 * regression: texts apart, cosine of mean-pooled states) and "cross" ([CLS]
 * regression); eval reproduces the siamese dev number from the saved model (the
 * setting travels with it) and predict scores a pair on STS-B's 0..5 scale. */
TEST(bert_finetune_cli_stsb_regression) {
    BertFixture fx;
    fixture_make(&fx);
    static const char *const ENC[] = {"cross", "siamese"};
    double r[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char args[1024];
        snprintf(args, sizeof args, "finetune stsb " SMALL " --epochs 6 --set pair_encoding=%s --json", fx.root,
                 fx.root, ENC[k]);
        int st;
        char *err = NULL, *out = glue(&fx, args, &st, &err);
        CHECK_MSG(st == 0, "finetune (%s) failed (%d): %s", ENC[k], st, err);
        r[k] = best_metric(out, "pearson");
        CHECK_MSG(r[k] >= 80.0, "%s: dev Pearson %.2f, expected >= 80", ENC[k], r[k]);
        free(out);
        free(err);
    }
    /* Both orders: twice the training rows, with layer-wise decay on. */
    {
        char args[1024];
        snprintf(args, sizeof args, "finetune stsb " SMALL " --epochs 1 --set pair_swap=true --set layer_decay=0.8 "
                 "--out %s/swap --json", fx.root, fx.root, fx.root);
        int st;
        char *err = NULL, *out = glue(&fx, args, &st, &err);
        cJSON *j = cJSON_Parse(out);
        CHECK_MSG(st == 0 && run_config_number(j, "train_examples", 0) == 1280, "pair_swap (%d): %s", st, err);
        double pearson = run_config_number(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "best"),
                                                                            "dev"), "pearson", -2);
        cJSON_Delete(j);
        free(out);
        free(err);
        /* A run outside runs/<task>/<model> is scored with --run (or --init naming its directory). */
        static const char *const HOW[] = {"--run", "--init"};
        for (int k = 0; k < 2; k++) {
            snprintf(args, sizeof args, "eval stsb %s %s/swap --json", HOW[k], fx.root);
            out = glue(&fx, args, &st, &err);
            j = cJSON_Parse(out);
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "tasks"), "stsb");
            CHECK_MSG(st == 0, "eval %s: %s", HOW[k], err);
            CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(t, "dev"), "pearson", -1), pearson, 1e-4);
            cJSON_Delete(j);
            free(out);
            free(err);
        }
        snprintf(args, sizeof args, "eval stsb --run %s/swap --init %s/swap", fx.root, fx.root);
        out = glue(&fx, args, &st, &err);
        CHECK_MSG(st == 2 && strstr(err, "give one of them"), "--run with --init: %d %s", st, err);
        free(out);
        free(err);
    }
    int st;
    char *err = NULL, *out = glue(&fx, "eval stsb --json", &st, &err);
    CHECK_MSG(st == 0, "eval failed: %s", err);
    cJSON *j = cJSON_Parse(out);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "tasks"), "stsb");
    /* to rounding: eval batches the rows differently (other padding, other T) */
    CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(t, "dev"), "pearson", -1), r[1], 1e-4);
    cJSON_Delete(j);
    free(out);
    free(err);
    out = glue(&fx, "predict stsb 'the film is good' 'same same same same same'", &st, NULL);
    double score = out ? atof(out) : -99;
    CHECK_MSG(st == 0 && score > -5.01 && score < 5.01, "predict: %s", out ? out : "");
    free(out);
    fixture_remove(&fx);
}

/* A "pretrained" encoder checkpoint (MLM head, vocabulary blob) of another
 * size than --set bert asks for: its config wins, its head is dropped. */
TEST(bert_finetune_cli_init_and_errors) {
    BertFixture fx;
    fixture_make(&fx);
    BertConfig cfg = {.vocab_size = 27, .hidden_size = 16, .num_layers = 2, .num_heads = 2, .intermediate_size = 48,
                      .max_position = 24, .type_vocab_size = 2, .hidden_dropout = 0.1f, .attention_dropout = 0.1f,
                      .layer_norm_eps = 1e-12f};
    Bert *pre = bert_create(&cfg, &(BertHeads){.mlm = 1, .pooler = 1}, 5);
    char path[512], vpath[512];
    snprintf(path, sizeof path, "%s/m/pretrained.ckpt", fx.root);
    snprintf(vpath, sizeof vpath, "%s/m/vocab.txt", fx.root);
    Vocab *v = vocab_load(vpath);
    CHECK(bert_save_with(pre, path, NULL, v) == 0);
    long encoder_pooler = bert_num_params(pre) - 16 * 16 - 16 - 2 * 16 - 27;   /* minus the MLM head */
    vocab_free(v);
    bert_free(pre);
    char args[1024];
    /* --init with the directory: it holds exactly one .ckpt. The vocab comes from
     * the checkpoint, so no --set vocab. */
    snprintf(args, sizeof args, "finetune sst2 --threads 1 --init %s/m --max-len 16 --batch 16 --lr 2e-3 --epochs 2 --json",
             fx.root);
    int st;
    char *err = NULL, *out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0, "finetune --init failed (%d): %s", st, err);
    cJSON *j = cJSON_Parse(out);
    /* encoder + pooler + a new classifier (2C + 2) */
    CHECK_EQ_INT(run_config_number(j, "num_params", 0), encoder_pooler + 2 * 16 + 2);
    cJSON_Delete(j);
    free(out);
    free(err);
    /* Clear errors, exit 2 for settings, 74 for missing files (core/exit_codes.h). */
    const struct { const char *args; int status; const char *says; } bad[] = {
        {"finetune sst2 --threads 1 --init /nonexistent.ckpt", 74, "no such file"},
        {"finetune sst2 --threads 1 --init none --set bert=huge", 2, "unknown BERT config"},
        {"finetune sst2 --threads 1 --init none --set vocab=/nonexistent/vocab.txt", 74, "vocab.txt"},
        {"finetune sst2 --threads 1 --max-len 600", 2, "max_position_embeddings"},
        {"finetune sst2 --threads 1 --set clip=-1", 2, "clip"},
        {"finetune sst2 --threads 1 --set pair_encoding=siamese", 2, "scores similarity"},
        {"finetune stsb --threads 1 --set pair_encoding=both", 2, "unknown pair_encoding"},
        {"finetune sst2 --threads 1 --set pair_swap=true", 2, "not symmetric"},
        {"finetune sst2 --threads 1 --set layer_decay=1.5", 2, "layer_decay"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        out = glue(&fx, bad[i].args, &st, &err);
        CHECK_MSG(st == bad[i].status && strstr(err, bad[i].says), "%s: status %d, stderr: %s", bad[i].args, st, err);
        CHECK_MSG(!strstr(err, "internal") && !strstr(err, "Segmentation"), "%s crashed: %s", bad[i].args, err);
        free(out);
        free(err);
    }
    /* A finished run is not trained over unless asked: --overwrite replaces it. */
    snprintf(args, sizeof args, "finetune sst2 --threads 1 --init %s/m --max-len 16 --batch 16 --epochs 1", fx.root);
    out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 2 && strstr(err, "already holds a finished run") && strstr(err, "--overwrite"), "%d: %s", st, err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "finetune sst2 --threads 1 --init %s/m --max-len 16 --batch 16 --epochs 1 --overwrite",
             fx.root);
    out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0, "--overwrite: %d %s", st, err);
    free(out);
    free(err);
    /* A pretrained encoder brings its config and vocabulary: naming others
     * beside it is refused, not silently ignored: a usage error (exit 2). */
    const char *conflict[][2] = {{"bert=small", "--init none"}, {"vocab=%s/m/vocab.txt", "stores its own vocabulary"}};
    for (int i = 0; i < 2; i++) {
        char set[600];
        snprintf(set, sizeof set, conflict[i][0], fx.root);
        snprintf(args, sizeof args, "finetune sst2 --threads 1 --init %s/m --set %s", fx.root, set);
        out = glue(&fx, args, &st, &err);
        CHECK_MSG(st == 2 && strstr(err, conflict[i][1]), "%s: status %d, stderr: %s", args, st, err);
        free(out);
        free(err);
    }
    fixture_remove(&fx);
}

/* Save model + state after some steps, load both into a new model: the next
 * steps give bit-identical weights (what `--resume` relies on). */
TEST(bert_resume_is_exact) {
    BertFixture fx;
    fixture_make(&fx);
    char data[512], cfgpath[512], vpath[512];
    snprintf(data, sizeof data, "%s/glue", fx.root);
    snprintf(cfgpath, sizeof cfgpath, "%s/m/small.json", fx.root);
    snprintf(vpath, sizeof vpath, "%s/m/vocab.txt", fx.root);
    const ModelOps *ops = model_find("bert");
    const Task *t = task_find("sst2");
    Dataset train;
    CHECK(task_load(t, "train", data, 1, &train) == 0);
    cJSON *cfg = ops->default_config(t);
    run_config_set(cfg, "init", "none", NULL);   /* the default is the shipped encoder */
    run_config_set(cfg, "bert", cfgpath, NULL);
    run_config_set(cfg, "vocab", vpath, NULL);
    run_config_set(cfg, "max_len", "16", NULL);
    Model *a = ops->create(cfg, t, &train, 7);
    CHECK(a != NULL);
    if (a) {
        Encoded *e = ops->encode(a, &train);
        int rows[16];
        TrainState st = {.lr = 1e-3f, .total_steps = 10, .share = 1};
        TrainStep *sa = train_step_create(ops, a, &train, e), *sb = NULL;
        for (int s = 0; s < 3; s++) {
            for (int i = 0; i < 16; i++) rows[i] = s * 16 + i;
            train_step_run(sa, rows, 16, &st);
        }
        char mp[512], sp[512];
        snprintf(mp, sizeof mp, "%s/m.ckpt", fx.root);
        snprintf(sp, sizeof sp, "%s/m.state", fx.root);
        CHECK(ops->save(a, mp) == 0 && ops->save_state(a, sp) == 0);
        /* A model of another task is refused. */
        StderrCapture tcap;
        stderr_capture_begin(&tcap);
        Model *wrong = ops->load(mp, task_find("cola"));
        char *terr = stderr_capture_end(&tcap);
        CHECK_MSG(!wrong && strstr(terr, "fine-tuned for sst2"), "loaded for another task: %s", terr);
        free(terr);
        Model *b = ops->load(mp, t);
        CHECK(b != NULL && ops->load_state(b, sp) == 0);
        if (b) sb = train_step_create(ops, b, &train, e);
        for (int s = 3; s < 6 && b; s++) {
            for (int i = 0; i < 16; i++) rows[i] = s * 16 + i;
            float la = train_step_run(sa, rows, 16, &st), lb = train_step_run(sb, rows, 16, &st);
            CHECK_MSG(la == lb, "step %d: loss %.9g vs %.9g", s, la, lb);
        }
        float pa[32], pb[32];
        for (int i = 0; i < 16; i++) rows[i] = 100 + i;
        evaluate_rows(ops, a, e, rows, 16, 2, pa);
        if (b) evaluate_rows(ops, b, e, rows, 16, 2, pb);
        train_step_free(sa);
        train_step_free(sb);
        CHECK(b && memcmp(pa, pb, sizeof pa) == 0);
        /* The state of another architecture is refused with a message. */
        char p16[512];
        snprintf(p16, sizeof p16, "%s/m/c16.json", fx.root);
        FILE *f = fopen(p16, "w");
        fprintf(f, "{\"vocab_size\": 27, \"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2}\n");
        fclose(f);
        cJSON *other = cJSON_Duplicate(cfg, 1);
        run_config_set(other, "bert", p16, NULL);
        Model *o = ops->create(other, t, &train, 7);
        StderrCapture cap;
        stderr_capture_begin(&cap);
        int rc = o ? ops->load_state(o, sp) : 0;
        char *err = stderr_capture_end(&cap);
        CHECK_MSG(o && rc != 0 && strstr(err, "hidden_size"), "load_state of another model: %d %s", rc, err);
        free(err);
        ops->free(o);
        cJSON_Delete(other);
        ops->free(b);
        ops->encoded_free(e);
        ops->free(a);
    }
    cJSON_Delete(cfg);
    dataset_free(&train);
    fixture_remove(&fx);
}

/* MRPC's label is a relation between the texts: the pair-features heads
 * learn it, eval reproduces their dev numbers from the saved model, predict
 * reads a pair; a features head on a single-text task is refused. */
TEST(bert_finetune_cli_pair_features) {
    BertFixture fx;
    fixture_make(&fx);
    static const char *const ENC[] = {"features", "cross+features"};
    for (int k = 0; k < 2; k++) {
        char args[1024];
        snprintf(args, sizeof args, "finetune mrpc " SMALL " --epochs 8 --set pair_encoding=%s --json", fx.root,
                 fx.root, ENC[k]);
        int st;
        char *err = NULL, *out = glue(&fx, args, &st, &err);
        CHECK_MSG(st == 0, "finetune (%s) failed (%d): %s", ENC[k], st, err);
        double acc = best_metric(out, "accuracy");
        CHECK_MSG(acc >= 90.0, "%s: dev accuracy %.2f, expected >= 90", ENC[k], acc);
        free(out);
        free(err);
        out = glue(&fx, "eval mrpc --json", &st, &err);
        CHECK_MSG(st == 0 && strstr(out, "accuracy"), "eval (%s): %s", ENC[k], err);
        cJSON *j = cJSON_Parse(out);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "tasks"), "mrpc");
        double again = run_config_number(cJSON_GetObjectItemCaseSensitive(t, "dev"), "accuracy", -1);
        CHECK_MSG(fabs(again - acc) < 1e-9, "%s: eval %.4f vs finetune %.4f", ENC[k], again, acc);
        cJSON_Delete(j);
        free(out);
        free(err);
        out = glue(&fx, "predict mrpc \"the movie was good\" \"a film and excellent\"", &st, &err);
        CHECK_MSG(st == 0 && strncmp(out, "paraphrase\t", 11) == 0, "%s predict: %s %s", ENC[k], out, err);
        free(out);
        free(err);
    }
    int st;
    char *err = NULL, *out = glue(&fx, "finetune sst2 --threads 1 --set pair_encoding=features", &st, &err);
    CHECK_MSG(st == 2 && strstr(err, "not a pair classification task"), "status %d: %s", st, err);   /* a setting: usage */
    free(out);
    free(err);
    fixture_remove(&fx);
}

/* A search stopped in its second trial (SIGTERM: saved at the next step, exit
 * 143, a line naming --resume) and run again with --resume reuses the finished
 * trial, continues the stopped one and ends with the uninterrupted search's
 * numbers: every trial's and the final run's losses and scores. */
TEST(bert_finetune_cli_search_stopped_continues) {
    BertFixture fx;
    fixture_make(&fx);
    char cmd[4096], base[2048], watch[512], log[512];
    /* 8 epochs: the stop must land while the second trial or the final run is
     * still going, and a trial of 2 took ~10 ms, less than a busy machine's
     * scheduling delay for the watching loop */
    snprintf(base, sizeof base, "env %s %s finetune sst2 " SMALL_GRIDLESS " --epochs 8 --search --lrs 2e-3,1e-3 --batches 16",
             fx.env, test_glue_bin(), fx.root, fx.root);
    snprintf(cmd, sizeof cmd, "%s --out %s/sref >/dev/null 2>&1", base, fx.root);
    int st;
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "the uninterrupted search failed (exit %d)", st);
    snprintf(log, sizeof log, "%s/scut.log", fx.root);
    snprintf(watch, sizeof watch, "%s/scut/trial-lr0.001-b16/%s/%s", fx.root, RUN_RESUME_DIR, RUN_TRAINER_STATE);
    snprintf(cmd, sizeof cmd, "%s --checkpoint-every 1 --out %s/scut >/dev/null 2>%s", base, fx.root, log);
    CHECK_EQ_INT(kill_loop_signal(cmd, watch, SIGTERM), 143);
    char *said = file_read(log, NULL);
    CHECK_MSG(said && strstr(said, "terminated (SIGTERM)") && strstr(said, "--resume"), "%s", said ? said : "");
    free(said);
    snprintf(cmd, sizeof cmd, "%s --checkpoint-every 1 --out %s/scut --resume 2>&1 >/dev/null", base, fx.root);
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "resuming ") && strstr(out, "trial-lr0.001-b16"), "exit %d: %s", st, out);
    free(out);
    static const char *const RUNS[] = {"trial-lr0.002-b16", "trial-lr0.001-b16", "final"};
    for (int i = 0; i < 3; i++) {
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/sref/%s", fx.root, RUNS[i]);
        snprintf(b, sizeof b, "%s/scut/%s", fx.root, RUNS[i]);
        CHECK_MSG(kill_loop_same_results(a, b), "%s: the continued search differs from the uninterrupted one", RUNS[i]);
    }
    fixture_remove(&fx);
}

/* --search: every trial selects on the same held-out tenth of the training
 * split and never sees dev; the winner is the trial with the best held-out
 * score and is retrained on the whole split, whose dev numbers are reported. */
TEST(bert_finetune_cli_search_selects_on_heldout) {
    BertFixture fx;
    fixture_make(&fx);
    char args[1024];
    snprintf(args, sizeof args, "finetune sst2 " SMALL_GRIDLESS " --epochs 2 --search --lrs 2e-3,1e-5 --batches 16,32 "
             "--out %s/search --json", fx.root, fx.root, fx.root);
    int st;
    char *err = NULL, *out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0, "search failed (%d): %s", st, err);
    cJSON *j = cJSON_Parse(out);
    const cJSON *trials = cJSON_GetObjectItemCaseSensitive(j, "trials");
    CHECK_EQ_INT(cJSON_GetArraySize(trials), 4);
    double best = -1, best_lr = 0;
    int best_batch = 0;
    for (const cJSON *t = trials ? trials->child : NULL; t; t = t->next) {
        double s = run_config_number(t, "heldout_score", -1);
        if (s > best) best = s, best_lr = run_config_number(t, "lr", 0), best_batch = (int)run_config_number(t, "batch", 0);
        char path[1200];
        snprintf(path, sizeof path, "%s/results.json", cJSON_GetObjectItemCaseSensitive(t, "dir")->valuestring);
        cJSON *r = json_file_read(path, 1);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "best");
        /* 640 training rows: 64 held out, 576 trained on; no dev anywhere. */
        CHECK_MSG(cJSON_GetObjectItemCaseSensitive(b, "heldout") && !cJSON_GetObjectItemCaseSensitive(b, "dev") &&
                      run_config_number(r, "train_examples", 0) == 576,
                  "trial %s: not selected on the held-out slice", path);
        CHECK_NEAR(run_config_number(b, "score", -1), s, 1e-9);
        cJSON_Delete(r);
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "winner");
    CHECK(run_config_number(w, "lr", 0) == best_lr && run_config_number(w, "batch", 0) == best_batch);
    CHECK_MSG(best_lr == 2e-3, "the winner should be the rate that learns (held-out %.2f)", best);
    char path[1200];
    snprintf(path, sizeof path, "%s/search/final/results.json", fx.root);
    cJSON *r = json_file_read(path, 1);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(r, "config");
    CHECK(run_config_number(cfg, "lr", 0) == best_lr && run_config_number(cfg, "batch", 0) == best_batch);
    CHECK(run_config_number(r, "train_examples", 0) == 640);
    /* Provenance: version, commit, date, CPU with its kernels, threads, seed. */
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(r, "provenance");
    static const char *const PROV[] = {"glue_version", "commit", "date", "cpu", "kernels"};
    for (int k = 0; k < 5; k++)
        CHECK_MSG(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(prov, PROV[k])) &&
                      cJSON_GetObjectItemCaseSensitive(prov, PROV[k])->valuestring[0],
                  "results.json provenance lacks %s", PROV[k]);
    CHECK(run_config_number(prov, "threads", 0) == 1 && run_config_number(prov, "seed", -1) == 42);
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(prov, "cpu");
    CHECK(cJSON_IsString(cpu) && strstr(cpu->valuestring, "family") != NULL);
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "final"), "best");
    CHECK_NEAR(run_config_number(cJSON_GetObjectItemCaseSensitive(fb, "dev"), "accuracy", -1),
               run_config_number(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "best"), "dev"),
                                 "accuracy", -2), 1e-9);
    cJSON_Delete(r);
    cJSON_Delete(j);
    free(out);
    free(err);
    /* The hold-out fraction is part of what a trial is: another --holdout into
     * the same directory trains the trials again (128 held out, 512 trained
     * on) instead of reusing the tenth-held-out ones. */
    snprintf(args, sizeof args, "finetune sst2 " SMALL_GRIDLESS " --epochs 2 --search --lrs 2e-3,1e-5 --batches 16,32 "
             "--holdout 0.2 --out %s/search --json", fx.root, fx.root, fx.root);
    out = glue(&fx, args, &st, &err);
    CHECK_MSG(st == 0, "search --holdout 0.2 failed (%d): %s", st, err);
    j = cJSON_Parse(out);
    trials = cJSON_GetObjectItemCaseSensitive(j, "trials");
    CHECK_EQ_INT(cJSON_GetArraySize(trials), 4);
    for (const cJSON *t = trials ? trials->child : NULL; t; t = t->next) {
        snprintf(path, sizeof path, "%s/results.json", cJSON_GetObjectItemCaseSensitive(t, "dir")->valuestring);
        r = json_file_read(path, 1);
        CHECK_MSG(run_config_number(r, "train_examples", 0) == 512 && run_config_number(r, "holdout", 0) == 0.2,
                  "trial %s: reused from the --holdout 0.1 search (%g examples)", path,
                  run_config_number(r, "train_examples", 0));
        cJSON_Delete(r);
    }
    cJSON_Delete(j);
    free(out);
    free(err);
    out = glue(&fx, "finetune sst2 --threads 1 --lrs 1e-4", &st, &err);
    CHECK_MSG(st == 2 && strstr(err, "add --search"), "--lrs alone: %d %s", st, err);
    free(out);
    free(err);
    fixture_remove(&fx);
}

/* Interruption: SIGKILL at random moments (checkpoint every step), resumed
 * after each kill with --resume, ends with the losses, dev metrics and
 * model.ckpt of an uninterrupted run (tests/kill_loop.h; the long version:
 * GLUE_KILL_TEST_KILLS=N). */
TEST(bert_finetune_killed_resumes_bit_identical) {
    BertFixture fx;
    fixture_make(&fx);
    char cmd[2048], ref[256], cut[256];
    /* Length-grouped batches: the epoch's order is rebuilt on resume (trainer_epoch_order). */
    snprintf(cmd, sizeof cmd, "env %s %s finetune sst2 " SMALL " --epochs 2 --set group_by_length=true", fx.env,
             test_glue_bin(), fx.root, fx.root);
    KillTest t = {.name = "finetune", .command = cmd, .killed = "--checkpoint-every 1", .dir = fx.root,
                  .watch = RUN_RESUME_DIR "/" RUN_TRAINER_STATE, .sigterm = 1, .seed = 11};
    kill_test(&t);
    snprintf(ref, sizeof ref, "%s/ref", fx.root);
    snprintf(cut, sizeof cut, "%s/cut", fx.root);
    CHECK_MSG(kill_loop_same_results(ref, cut), "losses or dev metrics differ from the uninterrupted run");
    fixture_remove(&fx);
}

/* The "precision" and epoch losses of a finetune --json output. */
static void finetune_precision(const char *json, char *prec, size_t cap, double loss[3]) {
    cJSON *j = cJSON_Parse(json);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "precision");
    snprintf(prec, cap, "%s", cJSON_IsString(p) ? p->valuestring : "");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "epochs");
    for (int i = 0; i < 3; i++) loss[i] = run_config_number(cJSON_GetArrayItem(e, i), "loss", -1);
    cJSON_Delete(j);
}

/* --set precision=bf16 (mixed precision, core/blas.h's MATMUL_BF16): with
 * the bf16 dot product the steps' losses are not fp32's, the model learns
 * as well and results.json says bf16; a level below avx512bf16 says so once
 * and trains exactly the fp32 run. */
TEST(bert_finetune_bf16_precision) {
    if (!gemm_bf16_available()) {
        test_skip("this CPU has no AVX512-BF16");
        return;
    }
    BertFixture fx;
    fixture_make(&fx);
    const char *levels[3] = {"avx512bf16", "avx512bf16", "avx512"}, *precs[3] = {"fp32", "bf16", "bf16"};
    double loss[3][3], acc[3];
    char prec[3][8];
    for (int i = 0; i < 3; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "env %s GLUE_KERNELS=%s %s finetune sst2 " SMALL " --epochs 3 --json --set precision=%s 2>%s/err.txt",
                 fx.env, levels[i], test_glue_bin(), fx.root, fx.root, precs[i], fx.root);
        int st;
        char *out = test_run(cmd, &st), path[300];
        snprintf(path, sizeof path, "%s/err.txt", fx.root);
        char *err = file_read(path, NULL);
        CHECK_MSG(st == 0, "%s: exit %d: %s", levels[i], st, err ? err : "");
        int said = err && strstr(err, "precision=bf16 trains with fp32 products");
        CHECK_MSG(said == (i == 2), "%s %s: %s", levels[i], precs[i], err ? err : "");
        finetune_precision(out, prec[i], sizeof prec[i], loss[i]);
        acc[i] = best_metric(out, "accuracy");
        free(out);
        free(err);
    }
    CHECK_MSG(strcmp(prec[0], "fp32") == 0 && strcmp(prec[1], "bf16") == 0 && strcmp(prec[2], "fp32") == 0,
              "precision in results: %s %s %s", prec[0], prec[1], prec[2]);
    CHECK_MSG(loss[1][0] != loss[0][0] && fabs(loss[1][0] - loss[0][0]) < 0.05 * loss[0][0],
              "epoch 1 loss: bf16 %.6f, fp32 %.6f", loss[1][0], loss[0][0]);
    CHECK_MSG(acc[1] >= 90.0, "bf16 dev accuracy %.2f", acc[1]);
    for (int e = 0; e < 3; e++) CHECK_MSG(loss[2][e] == loss[0][e], "fallback epoch %d: %.9g vs %.9g", e + 1,
                                          loss[2][e], loss[0][e]);
    fixture_remove(&fx);
}
