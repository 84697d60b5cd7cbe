/* test_multitask.c — multi-task fine-tuning (train/multitask.h,
 * models/bert/bert_multi.h) through `glue finetune multi`, on a micro BERT
 * (dropout 0, one thread) and three synthetic tasks with the three kinds of
 * head: SST-2 (one text, classes), MRPC (pair features: do the two texts
 * share a polarity) and STS-B (regression: 5 when the first text is
 * positive, 0 else):
 *   - a head attached to an encoder (bert_attach_head) computes what the
 *     same classifier built into the model computes, logits and gradients,
 *     for a [CLS] head and a wider pair-features head attached after it;
 *   - the steps per epoch by temperature: each task's own batches at T = 1,
 *     in proportion to n^(1/T) otherwise, toward uniform as T grows;
 *   - one run learns every task above its majority baseline, and records a
 *     block per task per epoch and their mean;
 *   - a run stopped (SIGTERM) and killed (SIGKILL) at random moments and
 *     resumed ends with the uninterrupted run's numbers and model, bit for
 *     bit;
 *   - `glue finetune sst2 --init RUN` starts from the multi-task encoder
 *     (one epoch with the encoder all but frozen is far above what the
 *     same run from a fresh encoder reaches), with a fresh head;
 *   - as a protocol row's stage (--set intermediate=multi:A+B+...), the
 *     multi-task run is trained once per seed and every task of the row
 *     is fine-tuned from it;
 *   - bad task lists and settings: one message, exit 2, nothing trained. */
#include "tests/scratch.h"
#include "tests/test.h"

#include "core/common.h"
#include "core/files.h"
#include "core/rng.h"
#include "models/bert/bert.h"
#include "models/run_config.h"
#include "tests/kill_loop.h"
#include "tests/run_txn_check.h"
#include "train/multitask.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const POS[] = {"good", "great", "fine", "excellent"};
static const char *const NEG[] = {"bad", "awful", "poor", "terrible"};
static const char *const FILL[] = {"the", "movie", "was", "a", "film", "plot", "and", "it", "is", "very", "really", "cast"};
#define NFILL 12

typedef struct {
    char root[SCRATCH_PATH_MAX];
    char env[512];
    char micro[512];   /* the encoder settings of the micro BERT */
    int majority[3];   /* dev rows of the larger class, of sst2 and mrpc, in % (x1) */
} Fx;

/* Filler around one word of polarity y. */
static void sentence(Rng *r, int y, FILE *f) {
    int at = (int)rng_below(r, 5);
    for (int w = 0; w < 6; w++)
        fprintf(f, "%s%s", w ? " " : "", w == at ? (y ? POS : NEG)[rng_below(r, 4)] : FILL[rng_below(r, NFILL)]);
}

/* One split of task k (0 sst2, 1 mrpc, 2 stsb) with n rows; the count of label 1 (sst2, mrpc). */
static int write_split(const Fx *fx, int k, const char *split, int n, Rng *r) {
    static const char *const DIR[3] = {"SST-2", "MRPC", "STS-B"};
    char path[256];
    snprintf(path, sizeof path, "%s/glue/%s/%s.tsv", fx->root, DIR[k], split);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    if (k == 0) fprintf(f, "sentence\tlabel\n");
    if (k == 1) fprintf(f, "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n");
    if (k == 2) fprintf(f, "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n");
    int ones = 0;
    for (int i = 0; i < n; i++) {
        int a = (int)rng_below(r, 2), b = (int)rng_below(r, 2), same = a == b;
        if (k == 0) {
            sentence(r, a, f);
            fprintf(f, "\t%d\n", a);
            ones += a;
            continue;
        }
        if (k == 1) fprintf(f, "%d\t%d\t%d\t", same, i, i + n);
        else fprintf(f, "%d\tg\tf\t2012\t%d\ts\ts\t", i, i);
        sentence(r, a, f);
        fprintf(f, "\t");
        sentence(r, b, f);
        if (k == 1) fprintf(f, "\n");
        else fprintf(f, "\t%.3f\n", a ? 5.0 : 0.0);
        ones += same;
    }
    fclose(f);
    return ones;
}

static int fx_make(Fx *fx) {
    if (!scratch_dir("multitask", fx->root, sizeof fx->root)) return 0;
    char path[512];
    snprintf(path, sizeof path, "mkdir -p %s/glue/SST-2 %s/glue/MRPC %s/glue/STS-B", fx->root, fx->root, fx->root);
    if (system(path) != 0) return 0;
    Rng r;
    rng_seed(&r, 5);
    static const int TRAIN[3] = {160, 128, 96}, DEV[3] = {40, 40, 40};
    for (int k = 0; k < 3; k++) {
        if (write_split(fx, k, "train", TRAIN[k], &r) < 0) return 0;
        int ones = write_split(fx, k, "dev", DEV[k], &r);
        if (ones < 0) return 0;
        fx->majority[k] = 100 * (ones > DEV[k] - ones ? ones : DEV[k] - ones) / DEV[k];
    }
    snprintf(path, sizeof path, "%s/vocab.txt", fx->root);
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int i = 0; i < 4; i++) fprintf(f, "%s\n%s\n", POS[i], NEG[i]);
    for (int i = 0; i < NFILL; i++) fprintf(f, "%s\n", FILL[i]);
    fclose(f);
    snprintf(path, sizeof path, "%s/micro.json", fx->root);
    if (!(f = fopen(path, "w"))) return 0;
    fprintf(f, "{\"vocab_size\": 25, \"hidden_size\": 32, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 64, \"max_position_embeddings\": 128, \"hidden_dropout_prob\": 0,"
               " \"attention_probs_dropout_prob\": 0}\n");
    fclose(f);
    snprintf(fx->env, sizeof fx->env, "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results", fx->root,
             fx->root, fx->root);
    snprintf(fx->micro, sizeof fx->micro, "--set bert=%s/micro.json --set vocab=%s/vocab.txt --set init=none "
             "--max-len 24 --batch 8 --lr 3e-3", fx->root, fx->root);
    return 1;
}

static void fx_remove(const Fx *fx) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fx->root);
}

/* `glue finetune ARGS --threads 1 --seed 3`; the exit status, stderr in *err. */
static int fx_finetune(const Fx *fx, const char *args, char **err) {
    char cmd[4096], errpath[256];
    snprintf(errpath, sizeof errpath, "%s/last.err", fx->root);
    snprintf(cmd, sizeof cmd, "%s %s finetune %s --threads 1 --seed 3 >/dev/null 2>%s", fx->env, test_glue_bin(),
             args, errpath);
    int st;
    free(test_run(cmd, &st));
    *err = file_read(errpath, NULL);
    if (!*err) *err = xstrdup("");
    return st;
}

static cJSON *fx_json(const Fx *fx, const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    return json_file_read(path, 0);
}

static double num_at(const cJSON *j, const char *const *keys, int n) {
    for (int i = 0; i < n && j; i++) j = cJSON_GetObjectItemCaseSensitive(j, keys[i]);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

TEST(multitask_quotas_by_temperature) {
    const long batches[3] = {100, 10, 1};
    const int n[3] = {3200, 320, 20};
    long q[3];
    multitask_quotas(batches, n, 3, 1.0, q);
    CHECK(q[0] == 100 && q[1] == 10 && q[2] == 1);
    /* T = 2: in proportion to sqrt(n) = 56.57, 17.89, 4.47 of 111 steps. */
    multitask_quotas(batches, n, 3, 2.0, q);
    double w[3] = {sqrt(3200.0), sqrt(320.0), sqrt(20.0)}, s = w[0] + w[1] + w[2];
    for (int t = 0; t < 3; t++)
        CHECK_MSG(fabs((double)q[t] - 111 * w[t] / s) < 1.0, "T=2 task %d: %ld steps, want %.2f", t, q[t],
                  111 * w[t] / s);
    CHECK_EQ_INT(q[0] + q[1] + q[2], 111);
    /* Flatter as T grows, near uniform at 1000. */
    long q5[3];
    multitask_quotas(batches, n, 3, 5.0, q5);
    CHECK(q5[0] < q[0] && q5[2] > q[2] && q5[0] + q5[1] + q5[2] == 111);
    multitask_quotas(batches, n, 3, 1000.0, q);
    for (int t = 0; t < 3; t++) CHECK_MSG(labs(q[t] - 37) <= 1, "T=1000 task %d: %ld steps", t, q[t]);
    /* Never a task without a step. */
    const long b2[2] = {1000, 1};
    const int n2[2] = {32000, 1};
    multitask_quotas(b2, n2, 2, 1.5, q);
    CHECK(q[1] >= 1 && q[0] + q[1] == 1001);
}

#define MT_TASKS "--tasks sst2,mrpc,stsb"

TEST(multitask_learns_each_task_and_init) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    char args[2048], *err;
    snprintf(args, sizeof args, "multi " MT_TASKS " %s --epochs 10 --out %s/mt", fx.micro, fx.root);
    int st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0, "exit %d: %s", st, err);
    free(err);
    cJSON *res = fx_json(&fx, "mt/results.json");
    CHECK(res != NULL);
    const cJSON *epochs = cJSON_GetObjectItemCaseSensitive(res, "epochs");
    CHECK(cJSON_GetArraySize(epochs) == 10);
    /* T = 1: the tasks' own batches (160/8, 128/8, 96/8). */
    static const char *const Q[][2] = {{"quotas", "sst2"}, {"quotas", "mrpc"}, {"quotas", "stsb"}};
    CHECK(num_at(res, Q[0], 2) == 20 && num_at(res, Q[1], 2) == 16 && num_at(res, Q[2], 2) == 12);
    static const char *const ACC[] = {"best", "tasks", "sst2", "dev", "accuracy"};
    static const char *const MACC[] = {"best", "tasks", "mrpc", "dev", "accuracy"};
    static const char *const PEARSON[] = {"best", "tasks", "stsb", "dev", "pearson"};
    double sst2 = num_at(res, ACC, 5), mrpc = num_at(res, MACC, 5), stsb = num_at(res, PEARSON, 5);
    CHECK_MSG(sst2 >= fx.majority[0] + 20, "sst2 accuracy %.2f, majority %d", sst2, fx.majority[0]);
    CHECK_MSG(mrpc >= fx.majority[1] + 15, "mrpc accuracy %.2f, majority %d", mrpc, fx.majority[1]);
    CHECK_MSG(stsb >= 60, "stsb pearson %.2f (majority: 0)", stsb);
    /* The mean of the three scores (mrpc: of f1 and accuracy). */
    static const char *const S[3][4] = {{"best", "tasks", "sst2", "score"}, {"best", "tasks", "mrpc", "score"},
                                        {"best", "tasks", "stsb", "score"}};
    static const char *const MEAN[] = {"best", "score"};
    double mean = (num_at(res, S[0], 4) + num_at(res, S[1], 4) + num_at(res, S[2], 4)) / 3;
    CHECK_MSG(fabs(mean - num_at(res, MEAN, 2)) < 1e-9, "mean %.4f, recorded %.4f", mean, num_at(res, MEAN, 2));
    cJSON_Delete(res);
    /* Per-task fine-tuning from the multi-task encoder for one epoch, the
     * encoder all but frozen (layer_decay: its layers at lr x 1e-3 and
     * less), so that what the encoder brings decides: from a fresh one the
     * same run stays near chance. */
    const char *slow = "--max-len 24 --batch 8 --lr 3e-3 --epochs 1 --set layer_decay=0.001";
    snprintf(args, sizeof args, "sst2 %s --init %s/mt --out %s/from-mt", slow, fx.root, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0, "exit %d: %s", st, err);
    free(err);
    snprintf(args, sizeof args, "sst2 %s --set bert=%s/micro.json --set vocab=%s/vocab.txt --init none "
             "--out %s/fresh", slow, fx.root, fx.root, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0, "exit %d: %s", st, err);
    free(err);
    cJSON *a = fx_json(&fx, "from-mt/results.json"), *b = fx_json(&fx, "fresh/results.json");
    static const char *const BEST[] = {"best", "dev", "accuracy"};
    double from_mt = num_at(a, BEST, 3), fresh = num_at(b, BEST, 3);
    CHECK_MSG(from_mt >= fx.majority[0] + 25 && fresh < fx.majority[0] + 15,
              "sst2 after one slow epoch: %.2f from the multi-task encoder, %.2f fresh (majority %d)", from_mt, fresh,
              fx.majority[0]);
    cJSON_Delete(a), cJSON_Delete(b);
    fx_remove(&fx);
}

TEST(multitask_resume_is_exact) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    char command[4096], watch[256];
    snprintf(command, sizeof command, "env %s %s finetune multi " MT_TASKS " %s --epochs 3 --threads 1 --seed 4 "
             "--set temperature=2", fx.env, test_glue_bin(), fx.micro);
    snprintf(watch, sizeof watch, "%s/%s", RUN_RESUME_DIR, RUN_TRAINER_STATE);
    KillTest t = {.name = "finetune multi", .command = command, .killed = "--checkpoint-every 2", .dir = fx.root,
                  .watch = watch, .sigterm = 1, .seed = 8};
    KillLoop k = kill_test(&t);
    CHECK_MSG(k.status == 0, "the killed run ended with %d", k.status);
    char ref[256], cut[256];
    snprintf(ref, sizeof ref, "%s/ref", fx.root);
    snprintf(cut, sizeof cut, "%s/cut", fx.root);
    CHECK_MSG(kill_loop_same_results(ref, cut), "the resumed multi-task run differs from the uninterrupted one");
    cJSON *r = fx_json(&fx, "cut/results.json");
    static const char *const T[] = {"temperature"};
    CHECK(r && num_at(r, T, 1) == 2);
    cJSON_Delete(r);
    fx_remove(&fx);
}

/* `glue finetune multi`'s run directory is a transaction, as every run's
 * (train/run_txn.h, tests/run_txn_check.h): locked, a finished or interrupted
 * run refused before anything is written, a failing --overwrite keeps the old
 * run, an --overwrite killed after any of its writes leaves the old run or the
 * whole new one. It trained over a finished run with --resume and started an
 * interrupted one over without a word. */
TEST(multitask_run_dir_is_a_transaction) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    static const char *const FILES[] = {RUN_CONFIG, RUN_CKPT, RUN_RESULTS};
    char a[4096], b[4096], fail[4096], dir[256];
    snprintf(a, sizeof a, "env %s %s finetune multi " MT_TASKS " %s --epochs 2 --threads 1 --seed 4", fx.env,
             test_glue_bin(), fx.micro);
    snprintf(b, sizeof b, "%.3000s --set temperature=2", a);
    snprintf(fail, sizeof fail, "%.3000s --set vocab=%s/none.txt", b, fx.root);
    snprintf(dir, sizeof dir, "%s/txn", fx.root);
    TxnCase c = {.name = "finetune multi", .run_a = a, .run_b = b, .fail_b = fail, .dir = dir, .files = FILES,
                 .nfiles = 3, .b_marker = "\"temperature\":\t2"};
    txn_check_lock(&c);
    txn_check_refusals(&c);
    txn_check_interrupted(&c);
    txn_check_overwrite_killed(&c, 4);
    fx_remove(&fx);
}

TEST(multitask_bad_input) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    static const struct { const char *args, *says; } BAD[] = {
        {"--tasks sst2,nosuch", "unknown task"},
        {"--tasks sst2,mrpc,sst2", "is in sst2,mrpc,sst2 twice"},
        {"--tasks ''", "names no task"},
        {"--tasks ,", "names no task"},
        {"", "names no task"},
        {"--tasks sst2", "needs two or more"},
        {"--tasks sst2,goemotions", "multi-label"},
        {"--tasks sst2,ax", "no training data"},
        {MT_TASKS " --set temperature=0.5", "temperature"},
        {MT_TASKS " --set intermediate=rte", "intermediate"},
        {MT_TASKS " --set pair_swap=true", "pair_swap"},
        {MT_TASKS " --set nosuch=1", "nosuch"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char args[2048], *err, path[256];
        snprintf(args, sizeof args, "multi %s %s --out %s/bad%zu", BAD[i].args, fx.micro, fx.root, i);
        int st = fx_finetune(&fx, args, &err);
        CHECK_MSG(st == 2 && strstr(err, BAD[i].says) && strlen(err) < 600, "%s: exit %d: %s", BAD[i].args, st, err);
        /* A refused setting points where the settings are listed (it said
         * `glue finetune multi --help`, which lists none). */
        if (strncmp(BAD[i].args, MT_TASKS, strlen(MT_TASKS)) == 0 && !strstr(BAD[i].args, "nosuch"))
            CHECK_MSG(strstr(err, "glue finetune --help-settings") && !strstr(err, "multi --help"), "%s: %s",
                      BAD[i].args, err);
        free(err);
        snprintf(path, sizeof path, "%s/bad%zu/%s", fx.root, i, RUN_RESULTS);
        CHECK(access(path, F_OK) != 0);
    }
    fx_remove(&fx);
}

/* `glue protocol --change mt:intermediate=multi:...`: one multi-task run
 * per seed, shared by the row's tasks, each fine-tuned from it. */
TEST(multitask_protocol_stage) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    char cmd[4096], errpath[256];
    snprintf(errpath, sizeof errpath, "%s/protocol.err", fx.root);
    snprintf(cmd, sizeof cmd, "%s %s protocol --model bert --tasks sst2,mrpc --seeds 3 --set bert=%s/micro.json "
             "--set vocab=%s/vocab.txt --set init=none --set max_len=24 --set epochs=2 --set lr=3e-3 "
             "--change mt:intermediate=multi:sst2+mrpc+stsb --threads 1 >/dev/null 2>%s", fx.env, test_glue_bin(),
             fx.root, fx.root, errpath);
    int st;
    free(test_run(cmd, &st));
    char *err = file_read(errpath, NULL);
    const char *first = err ? strstr(err, "intermediate task multi first") : NULL;
    int reused = 0;
    for (const char *at = err; at && (at = strstr(at, "intermediate task multi: the finished run")) != NULL; at++)
        reused++;
    CHECK_MSG(st == 0 && first && !strstr(first + 1, "intermediate task multi first") && reused == 1,
              "exit %d, want the multi-task stage trained once and reused once: %s", st, err ? err : "");
    free(err);
    cJSON *a = fx_json(&fx, "runs/protocol/mt/sst2-seed3/results.json");
    cJSON *b = fx_json(&fx, "runs/protocol/mt/mrpc-seed3/results.json");
    const cJSON *ia = cJSON_GetObjectItemCaseSensitive(a, "intermediate");
    const cJSON *ib = cJSON_GetObjectItemCaseSensitive(b, "intermediate");
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(ia, "run"), *rb = cJSON_GetObjectItemCaseSensitive(ib, "run");
    char want[192];
    snprintf(want, sizeof want, "%s/runs/protocol/intermediate/multi-seed3-", fx.root);
    CHECK_MSG(cJSON_IsString(ra) && cJSON_IsString(rb) && !strncmp(ra->valuestring, want, strlen(want)) &&
              !strcmp(ra->valuestring, rb->valuestring), "the rows' stages: %s and %s",
              cJSON_IsString(ra) ? ra->valuestring : "none", cJSON_IsString(rb) ? rb->valuestring : "none");
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(ia, "tasks");
    CHECK(cJSON_GetArraySize(tasks) == 3);
    /* The stage is a multi-task run; the target started from it. */
    if (cJSON_IsString(ra)) {
        char path[512];
        snprintf(path, sizeof path, "%s/results.json", ra->valuestring);
        cJSON *m = json_file_read(path, 0);
        CHECK(m && !strcmp(run_config_string(m, "task", ""), "multi"));
        cJSON_Delete(m);
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(a, "config");
        CHECK(!strcmp(run_config_string(cfg, "intermediate", ""), "multi:sst2+mrpc+stsb"));
    }
    cJSON_Delete(a), cJSON_Delete(b);
    fx_remove(&fx);
}

/* Model b (a built-in classifier of K labels reading F features) against
 * encoder e with head h attached (the same weights): logits, and after one
 * backward of the same dlogits, the classifier's and the word embeddings'
 * gradients, bit for bit. n examples: [CLS] rows, or pairs (2n rows). */
static void same_as_builtin(Bert *b, Bert *e, BertTaskHead *h, int n, int F) {
    int K = h->num_labels, C = b->cfg.hidden_size, rows = F ? 2 * n : n, T = 6;
    memcpy(params_data(h->params, 0), b->w.cls_w, sizeof(float) * (size_t)K * (size_t)(F ? F : 1) * (size_t)C);
    memcpy(params_data(h->params, 1), b->w.cls_b, sizeof(float) * (size_t)K);
    bert_attach_head(e, h);
    bert_reserve(b, rows, T, 0, 1);
    bert_reserve(e, rows, T, 0, 1);
    int ids[64], lengths[16];
    Rng r;
    rng_seed(&r, 21);
    for (int i = 0; i < rows * T; i++) ids[i] = 5 + (int)rng_below(&r, 20);
    for (int i = 0; i < rows; i++) ids[i * T] = 2, lengths[i] = 3 + (int)rng_below(&r, 4);
    BertBatch batch = {rows, T, ids, NULL, lengths};
    float lb[32], le[32], d[32];
    Bert *m[2] = {b, e};
    float *out[2] = {lb, le};
    for (int k = 0; k < 2; k++) {
        params_zero_grad(m[k]->params);
        params_zero_grad(h->params);
        Rng drop;
        rng_seed(&drop, 3);
        bert_forward(m[k], &batch, &drop);
        if (F) bert_pair_features_forward(m[k], n, &drop, out[k]);
        else bert_head_forward(m[k], &drop, out[k]);
        for (int i = 0; i < n * K; i++) d[i] = 0.1f * (float)(i % 5) - 0.2f;
        if (F) bert_pair_features_backward(m[k], d);
        else bert_head_backward(m[k], d);
        bert_backward(m[k]);   /* b's gradients stay in b's arena; e's head's in h's */
    }
    CHECK_MSG(memcmp(lb, le, sizeof(float) * (size_t)(n * K)) == 0, "F=%d: the attached head's logits differ", F);
    CHECK_MSG(memcmp(b->g.cls_w, params_grad(h->params, 0), sizeof(float) * (size_t)K * (size_t)(F ? F : 1) * C) == 0 &&
              memcmp(b->g.cls_b, params_grad(h->params, 1), sizeof(float) * (size_t)K) == 0,
              "F=%d: the attached head's gradients differ", F);
    long emb = (long)b->cfg.vocab_size * bert_embedding_size(&b->cfg);
    CHECK_MSG(memcmp(b->g.word_emb, e->g.word_emb, sizeof(float) * (size_t)emb) == 0,
              "F=%d: the encoder's gradients differ", F);
}

TEST(multitask_attached_head_is_the_builtin_one) {
    BertConfig cfg = {.vocab_size = 30, .hidden_size = 16, .num_layers = 1, .num_heads = 2, .intermediate_size = 32,
                      .max_position = 16, .type_vocab_size = 2, .layer_norm_eps = 1e-12f};
    /* The same seed draws the same encoder; the classifier is declared last. */
    Bert *b3 = bert_create(&cfg, &(BertHeads){.pooler = 1, .num_labels = 3}, 7);
    Bert *b2 = bert_create(&cfg, &(BertHeads){.pooler = 1, .num_labels = 2, .pair_features = 4}, 7);
    Bert *e = bert_create(&cfg, &(BertHeads){.pooler = 1}, 7);
    BertTaskHead *h3 = bert_task_head_create(e, 3, 0, 1), *h2 = bert_task_head_create(e, 2, 4, 2);
    same_as_builtin(b3, e, h3, 8, 0);
    /* A wider head after the encoder's buffers were sized for [CLS] heads of as many rows. */
    same_as_builtin(b2, e, h2, 4, 4);
    /* Detached, the encoder saves as one without a classifier. */
    bert_attach_head(e, NULL);
    CHECK(e->heads.num_labels == 0 && e->w.cls_w == NULL);
    bert_task_head_free(h3), bert_task_head_free(h2);
    bert_free(b3), bert_free(b2), bert_free(e);
}
