/* test_finetune_mpi.c — data-parallel `mpirun -np N glue finetune` (trainer.h)
 * on a micro BERT (dropout 0) and a small synthetic SST-2, one thread per rank:
 *   - 2 ranks give the per-epoch training losses and dev metrics of 1 rank
 *     with the same global batch to 1e-4 relative (only the order of sums
 *     differs); 97 training rows make the last batch of each epoch one row,
 *     so rank 1 gets none of it and must still join the gradient sum;
 *   - rank 0 alone reports (one result line, one set of epoch lines) and the
 *     run directory holds one finished run and nothing else;
 *   - the same with the gradient summed in tiny buckets (bucket_mb) on a
 *     2-layer micro BERT: most buckets start during the backward (counted
 *     from results.json), and a bucket started before its gradients are
 *     final would change the losses;
 *   - a model that is not data-parallel (fastText) is refused under mpirun
 *     with one message, a non-zero exit and no run directory.
 * Skipped (with the reason) where glue was built without MPI or mpirun is
 * missing. */
#include "tests/scratch.h"
#include "tests/test.h"

#include "core/dist.h"
#include "core/rng.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* As in test_pretrain_mpi.c: as root in containers, more ranks than cores,
 * bounded in time; no leak checks of OpenMPI's own allocations under asan. */
#define MPIRUN "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -np"

static int mpi_ready(void) {
    if (!dist_available()) {
        test_skip("glue built without MPI (apt-get install libopenmpi-dev openmpi-bin, then make clean && make)");
        return 0;
    }
    if (system("command -v mpirun >/dev/null 2>&1") != 0) {
        test_skip("mpirun not found (apt-get install openmpi-bin)");
        return 0;
    }
    return 1;
}

static const char *const POS[] = {"good", "great", "fine", "excellent"};
static const char *const NEG[] = {"bad", "awful", "poor", "terrible"};
static const char *const FILL[] = {"the", "movie", "was", "a", "film", "plot", "and", "it", "is", "very", "really", "cast"};
#define NFILL 12

typedef struct {
    char root[SCRATCH_PATH_MAX];
    char env[512];   /* GLUE_DATA=... GLUE_RUNS=... GLUE_RESULTS=... */
    char args[1024]; /* the finetune arguments shared by the runs */
} Fx;

static FILE *fx_open(const Fx *fx, const char *name) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", fx->root, name);
    return fopen(p, "w");
}

/* SST-2 (filler around one polarity word), its vocabulary, and a micro BERT
 * without dropout, so that the runs are comparable number for number. */
static int fx_make(Fx *fx) {
    if (!scratch_dir("ftmpi", fx->root, sizeof fx->root)) return 0;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/glue/SST-2", fx->root);
    if (system(cmd) != 0) return 0;
    static const struct { const char *file; int n; } S[] = {{"glue/SST-2/train.tsv", 97}, {"glue/SST-2/dev.tsv", 40}};
    Rng r;
    rng_seed(&r, 5);
    for (int k = 0; k < 2; k++) {
        FILE *f = fx_open(fx, S[k].file);
        if (!f) return 0;
        fprintf(f, "sentence\tlabel\n");
        for (int i = 0; i < S[k].n; i++) {
            int y = (int)rng_below(&r, 2), at = (int)rng_below(&r, 5);
            for (int w = 0; w < 6; w++)
                fprintf(f, "%s%s", w ? " " : "", w == at ? (y ? POS : NEG)[rng_below(&r, 4)] : FILL[rng_below(&r, NFILL)]);
            fprintf(f, "\t%d\n", y);
        }
        fclose(f);
    }
    FILE *f = fx_open(fx, "vocab.txt");
    if (!f) return 0;
    fprintf(f, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nsame\nother\n");
    for (int i = 0; i < 4; i++) fprintf(f, "%s\n%s\n", POS[i], NEG[i]);
    for (int i = 0; i < NFILL; i++) fprintf(f, "%s\n", FILL[i]);
    fclose(f);
    if (!(f = fx_open(fx, "micro.json"))) return 0;
    fprintf(f, "{\"vocab_size\": 27, \"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 32, \"max_position_embeddings\": 32, \"hidden_dropout_prob\": 0,"
               " \"attention_probs_dropout_prob\": 0}\n");
    fclose(f);
    if (!(f = fx_open(fx, "micro2.json"))) return 0;   /* two layers: a bucket can start between them */
    fprintf(f, "{\"vocab_size\": 27, \"hidden_size\": 16, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 32, \"max_position_embeddings\": 32, \"hidden_dropout_prob\": 0,"
               " \"attention_probs_dropout_prob\": 0}\n");
    fclose(f);
    snprintf(fx->env, sizeof fx->env, "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results", fx->root,
             fx->root, fx->root);
    snprintf(fx->args, sizeof fx->args,
             "finetune sst2 --threads 1 --set bert=%s/micro.json --set vocab=%s/vocab.txt --set init=none "
             "--max-len 16 --batch 8 --epochs 2 --lr 1e-2 --json",
             fx->root, fx->root);
    return 1;
}

static void fx_remove(const Fx *fx) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fx->root);
}

/* `glue ARGS --out ROOT/name` under launcher (NULL: a plain process); stdout
 * returned, stderr in *err. */
static char *fx_run(const Fx *fx, const char *launcher, const char *args, const char *name, int *st, char **err) {
    char cmd[4096], errpath[256];
    snprintf(errpath, sizeof errpath, "%s/%s.err", fx->root, name);
    snprintf(cmd, sizeof cmd, "%s %s %s %s --out %s/%s 2>%s", fx->env, launcher ? launcher : "", test_glue_bin(),
             args, fx->root, name, errpath);
    char *out = test_run(cmd, st);
    int cat;
    snprintf(cmd, sizeof cmd, "cat %s", errpath);
    *err = test_run(cmd, &cat);
    return out;
}

static cJSON *read_results(const Fx *fx, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s/results.json", fx->root, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return cJSON_Parse(buf);
}

static double rel(double a, double b) { return a == b ? 0 : fabs(a - b) / fmax(fabs(a), 1e-30); }

/* Times `needle` occurs in `hay`. */
static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

TEST(finetune_mpi_two_ranks_equal_one) {
    if (!mpi_ready()) return;
    Fx fx;
    if (!CHECK(fx_make(&fx))) return;
    int st1, st2;
    char *err1, *err2;
    char *out1 = fx_run(&fx, NULL, fx.args, "one", &st1, &err1);
    char *out2 = fx_run(&fx, MPIRUN " 2", fx.args, "two", &st2, &err2);
    CHECK_MSG(st1 == 0, "1 rank: exit %d: %s", st1, err1);
    CHECK_MSG(st2 == 0, "2 ranks: exit %d: %s", st2, err2);
    /* Rank 0 alone prints: one result line, one line per epoch. */
    CHECK_MSG(count(out2, "\"task\":\"sst2\"") == 1, "2 ranks printed %d result lines: %s", count(out2, "\"task\":\"sst2\""), out2);
    CHECK_MSG(count(err2, "epoch 1/2  loss") == 1 && count(err2, "x 2 data-parallel ranks") == 1, "stderr: %s", err2);
    cJSON *a = read_results(&fx, "one"), *b = read_results(&fx, "two");
    if (CHECK(a && b)) {
        const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(b, "ranks");
        CHECK_MSG(cJSON_IsNumber(ranks) && ranks->valueint == 2, "results.json does not say ranks 2");
        const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "epochs"), *eb = cJSON_GetObjectItemCaseSensitive(b, "epochs");
        CHECK_EQ_INT(cJSON_GetArraySize(ea), 2);
        CHECK_EQ_INT(cJSON_GetArraySize(eb), 2);
        double worst = 0;
        for (int e = 0; e < 2; e++) {
            const cJSON *x = cJSON_GetArrayItem(ea, e), *y = cJSON_GetArrayItem(eb, e);
            double la = cJSON_GetObjectItemCaseSensitive(x, "loss")->valuedouble;
            double lb = cJSON_GetObjectItemCaseSensitive(y, "loss")->valuedouble;
            double ma = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(x, "dev"), "accuracy")->valuedouble;
            double mb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(y, "dev"), "accuracy")->valuedouble;
            CHECK_MSG(rel(la, lb) <= 1e-4, "epoch %d loss: 1 rank %.9g, 2 ranks %.9g", e + 1, la, lb);
            CHECK_MSG(rel(ma, mb) <= 1e-4, "epoch %d dev accuracy: 1 rank %.9g, 2 ranks %.9g", e + 1, ma, mb);
            worst = fmax(worst, rel(la, lb));
        }
        printf("     2 ranks vs 1: epoch losses differ by %.2g relative at most\n", worst);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    /* One finished run: config, checkpoint and results, no resume point left. */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A %s/two | tr '\\n' ' '", fx.root);
    int st;
    char *ls = test_run(cmd, &st);
    CHECK_MSG(strcmp(ls, "config.json model.ckpt results.json ") == 0, "run directory holds: %s", ls);
    free(ls);
    free(out1), free(out2), free(err1), free(err2);
    fx_remove(&fx);
}

TEST(finetune_mpi_refuses_fasttext) {
    if (!mpi_ready()) return;
    Fx fx;
    if (!CHECK(fx_make(&fx))) return;
    int st;
    char *err, *out = fx_run(&fx, MPIRUN " 2", "finetune sst2 --model fasttext --threads 1", "ft", &st, &err);
    CHECK_MSG(st != 0 && st != 124, "exit %d", st);
    CHECK_MSG(count(err, "fasttext does not train data-parallel") == 1, "stderr: %s", err);
    char path[256];
    snprintf(path, sizeof path, "%s/ft", fx.root);
    CHECK_MSG(access(path, F_OK) != 0, "%s was created", path);
    free(out), free(err);
    fx_remove(&fx);
}

static double num(const cJSON *j, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The epoch losses and dev accuracies of two runs: the largest relative
 * difference, and whether they are the same numbers. */
static double epochs_diff(const cJSON *a, const cJSON *b, int *same) {
    const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "epochs"), *eb = cJSON_GetObjectItemCaseSensitive(b, "epochs");
    double worst = cJSON_GetArraySize(ea) == 2 && cJSON_GetArraySize(eb) == 2 ? 0 : INFINITY;
    *same = worst == 0;
    for (int e = 0; e < 2 && worst < INFINITY; e++) {
        const cJSON *x = cJSON_GetArrayItem(ea, e), *y = cJSON_GetArrayItem(eb, e);
        double v[4] = {num(x, "loss"), num(y, "loss"), num(cJSON_GetObjectItemCaseSensitive(x, "dev"), "accuracy"),
                       num(cJSON_GetObjectItemCaseSensitive(y, "dev"), "accuracy")};
        worst = fmax(worst, fmax(rel(v[0], v[1]), rel(v[2], v[3])));
        *same = *same && v[0] == v[1] && v[2] == v[3];
    }
    return worst;
}

/* The 2-layer micro model's arena: embeddings 27x16 + 32x16 + 2x16 + 32 =
 * 1,008 floats, each layer 2,224, pooler 272, classifier 34: 5,762 floats,
 * in buckets of 256 (1/1024 MiB) cut from its end: 23. After layer 1 (from
 * float 3,232 on) 9 of them are final, after layer 0 (from 1,008) 18; the
 * other 5 start at the end. 97 rows in batches of 8: 13 steps per epoch,
 * whose last (1 row) gives rank 0 no rows and so no backward: rank 0 starts
 * 18 buckets during the backward in 24 of the 26 steps. */
#define TINY_BUCKETS "--set bucket_mb=0.0009765625"
TEST(finetune_mpi_buckets_overlap_equal_one_rank) {
    if (!mpi_ready()) return;
    Fx fx;
    if (!CHECK(fx_make(&fx))) return;
    char args[2048], base[1200];
    snprintf(base, sizeof base, "%s --set bert=%s/micro2.json", fx.args, fx.root);   /* the later --set wins */
    int st[3];
    char *err[3], *out[3];
    snprintf(args, sizeof args, "%s %s", base, TINY_BUCKETS);
    out[0] = fx_run(&fx, NULL, args, "one", &st[0], &err[0]);
    out[1] = fx_run(&fx, MPIRUN " 2", args, "tiny", &st[1], &err[1]);
    snprintf(args, sizeof args, "%s --set bucket_mb=0", base);
    out[2] = fx_run(&fx, MPIRUN " 2", args, "whole", &st[2], &err[2]);
    for (int i = 0; i < 3; i++) CHECK_MSG(st[i] == 0, "run %d: exit %d: %s", i, st[i], err[i]);
    cJSON *one = read_results(&fx, "one"), *tiny = read_results(&fx, "tiny"), *whole = read_results(&fx, "whole");
    if (CHECK(one && tiny && whole)) {
        CHECK_MSG(num(one, "num_params") == 5762, "the micro model has %.0f parameters, not 5762", num(one, "num_params"));
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(tiny, "gradient_sums");
        double sums = num(g, "sums"), buckets = num(g, "buckets"), early = num(g, "buckets_started_during_backward");
        CHECK_MSG(sums == 26 && buckets == 26 * 23 && early == 24 * 18,
                  "rank 0: %.0f sums, %.0f buckets, %.0f started during the backward (26, 598, 432 expected)", sums,
                  buckets, early);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(whole, "gradient_sums");
        CHECK_MSG(num(w, "buckets") == 26 && num(w, "buckets_started_during_backward") == 0,
                  "bucket_mb=0: %.0f buckets, %.0f started during the backward", num(w, "buckets"),
                  num(w, "buckets_started_during_backward"));
        int same, same_whole;
        double d = epochs_diff(one, tiny, &same), dw = epochs_diff(whole, tiny, &same_whole);
        CHECK_MSG(d <= 1e-4, "2 ranks in buckets differ from 1 rank by %.3g relative", d);
        CHECK_MSG(dw <= 1e-4, "2 ranks in buckets differ from 2 ranks in one sum by %.3g relative", dw);
        printf("     2 ranks in 23 buckets (18 started during the backward) vs 1 rank: %.2g relative (%s); vs 2 ranks "
               "in one sum: %.2g (%s)\n", d, same ? "the same numbers" : "the sums run in another order", dw,
               same_whole ? "the same numbers" : "not the same numbers");
    }
    cJSON_Delete(one), cJSON_Delete(tiny), cJSON_Delete(whole);
    for (int i = 0; i < 3; i++) free(out[i]), free(err[i]);
    fx_remove(&fx);
}
