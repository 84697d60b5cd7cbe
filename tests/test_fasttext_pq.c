/* test_fasttext_pq.c — fastText's product quantization (glue quantize on a
 * fastText run): PQ encode/decode and k-means against numpy
 * (tests/ref/pq_ref.py), the quantized model's probabilities within a stated
 * bound of fp32's, the cutoff keeping the rows of largest norm, checkpoint
 * round trips, damaged quantized checkpoints refused with one message, and the
 * command on a run. */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/rng.h"
#include "models/baselines/fasttext.h"
#include "models/baselines/fasttext_pq.h"
#include "tests/capture.h"
#include "tests/cli_fixture.h"
#include "tests/run_txn_check.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"

/* ---- the quantizer against numpy ---- */

/* dim 7 with dsub 2: three sub-vectors of 2 and a last one of 1. */
TEST(fasttext_pq_encode_decode_numpy) {
    enum { N = 200, DIM = 7, DSUB = 2, KSUB = 16 };
    FtPQ pq;
    ft_pq_init(&pq, DIM, DSUB, KSUB);
    CHECK_EQ_INT(pq.nsub, 4);
    CHECK_EQ_INT(pq.lastdsub, 1);
    Rng r;
    rng_seed(&r, 5);
    static float x[N * DIM], codes_ref[N * 4], dec_ref[N * DIM], dec[DIM];
    for (int i = 0; i < N * DIM; i++) x[i] = rng_normal(&r);
    for (int i = 0; i < KSUB * DIM; i++) pq.centroids[i] = rng_normal(&r);
    static uint8_t codes[N * 4];
    ft_pq_encode(&pq, x, N, codes);
    RefTensor in[] = {{"x", x, N * DIM}, {"centroids", pq.centroids, KSUB * DIM}};
    RefTensor out[] = {{"codes", codes_ref, N * 4}, {"decoded", dec_ref, N * DIM}};
    char args[128];
    snprintf(args, sizeof args, "encode %d %d %d %d 0.5", N, DIM, DSUB, KSUB);
    if (torchref_run("pq_ref.py", args, in, 2, out, 2) == 1) {
        int wrong = 0;
        double err = 0;
        for (int i = 0; i < N; i++) {
            for (int m = 0; m < 4; m++) wrong += codes[i * 4 + m] != (int)codes_ref[i * 4 + m];
            ft_pq_decode(&pq, codes + i * 4, 0.5f, dec);
            err = fmax(err, torchref_max_diff(dec, dec_ref + i * DIM, DIM));
        }
        CHECK_MSG(wrong == 0, "%d of %d codes differ from numpy's", wrong, N * 4);
        CHECK_MSG(err <= 1e-6, "decoded rows differ from numpy's by %g", err);
    }
    ft_pq_free(&pq);
}

/* Four tight groups in 2-D and 4 centroids: k-means ends at the group means
 * (as numpy computes them), whichever centroid took which group. */
TEST(fasttext_pq_kmeans_group_means) {
    enum { N = 400, D = 2, K = 4 };
    static const float centre[K][D] = {{-5, -5}, {5, -5}, {-5, 5}, {6, 6}};
    static float p[N * D], group[N], means[K * D], c[K * D];
    Rng r;
    rng_seed(&r, 9);
    for (int i = 0; i < N; i++) {
        int g = i % K;
        group[i] = (float)g;
        for (int j = 0; j < D; j++) p[i * D + j] = centre[g][j] + 0.3f * rng_normal(&r);
    }
    ft_pq_kmeans(p, N, D, K, c, 3);
    RefTensor in[] = {{"points", p, N * D}, {"group", group, N}};
    RefTensor out[] = {{"means", means, K * D}};
    char args[64];
    snprintf(args, sizeof args, "means %d %d %d", N, D, K);
    if (torchref_run("pq_ref.py", args, in, 2, out, 1) != 1) return;
    for (int k = 0; k < K; k++) {
        double best = 1e30;
        for (int j = 0; j < K; j++) best = fmin(best, torchref_max_diff(c + j * D, means + k * D, D));
        CHECK_MSG(best <= 1e-5, "group %d's mean is %g from every centroid", k, best);
    }
}

/* As many centroids as rows: every row is coded exactly, with norms apart too. */
TEST(fasttext_pq_small_matrix_exact) {
    enum { N = 5, DIM = 6 };
    float x[N * DIM], keep[N * DIM], row[DIM];
    Rng r;
    rng_seed(&r, 2);
    for (int i = 0; i < N * DIM; i++) keep[i] = x[i] = rng_normal(&r);
    for (int qnorm = 0; qnorm < 2; qnorm++) {
        memcpy(x, keep, sizeof x);
        FtQMatrix q;
        ft_qmatrix_build(&q, x, N, DIM, 2, qnorm, 7);
        CHECK_EQ_INT(q.pq.ksub, N);
        for (int i = 0; i < N; i++) {
            ft_qmatrix_row(&q, i, row);
            CHECK_MSG(torchref_max_diff(row, keep + i * DIM, DIM) <= 1e-5, "qnorm %d row %d", qnorm, i);
        }
        ft_qmatrix_free(&q);
    }
}

/* ---- the model ---- */

/* 2 of 8 words say the class, among 300 noise words: with bigrams, several
 * thousand input rows to quantize. */
static const SynthTask PQ_TASK = {.name = "pq", .task = &SYNTH_TASK2, .kind = SYNTH_CLASS, .class_words = 10,
                                  .noise_words = 300, .len_min = 8, .len_max = 8, .signal_min = 2, .signal_max = 2};

static Model *pq_train(const Dataset *tr) {
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASK2);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "bucket", cJSON_CreateNumber(50000));
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "epochs", cJSON_CreateNumber(3));
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "threads", cJSON_CreateNumber(1));
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "dim", cJSON_CreateNumber(20));   /* k-means cost is per value */
    Model *m = synth_train(&FASTTEXT_OPS, tr, cfg, 3);
    cJSON_Delete(cfg);
    return m;
}

/* A fresh scratch file (tests/scratch.h) for a checkpoint or state the test writes; name tags it. */
static void temp_path(char *out, size_t cap, const char *name) {
    int fd = scratch_file(name, out, cap);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

static double accuracy(const float *p, const Dataset *d) {
    int ok = 0;
    for (int i = 0; i < d->n; i++) ok += (p[2 * i + 1] > p[2 * i]) == (d->ex[i].label == 1);
    return 100.0 * ok / d->n;
}

/* The bound the quantized model's class probabilities keep to fp32's on this
 * fixture's dev rows (dim 20, 256 centroids per subspace, every kept row
 * quantized): measured 0.019 max / 0.006 mean (dsub 2), 0.015 / 0.005 (qnorm
 * and qout), 0.018 / 0.006 (dsub 3); and no accuracy lost beyond 1 point. */
#define PQ_MAX_PROB_DIFF 0.05
#define PQ_MEAN_PROB_DIFF 0.015

static void pq_bound(const char *settings_json) {
    Dataset tr = synth_dataset(&PQ_TASK, 1500, 61), dv = synth_dataset(&PQ_TASK, 400, 62);
    Model *m = pq_train(&tr);
    float *fp = synth_predict(&FASTTEXT_OPS, m, &dv, 0);
    cJSON *s = cJSON_Parse(settings_json);
    CHECK_EQ_INT(FASTTEXT_OPS.quantize(m, s, &tr), 0);
    float *q = synth_predict(&FASTTEXT_OPS, m, &dv, 0);
    double mx = 0, mean = 0;
    for (int i = 0; i < 2 * dv.n; i++) {
        mx = fmax(mx, fabs(q[i] - fp[i]));
        mean += fabs(q[i] - fp[i]) / (2 * dv.n);
    }
    CHECK_MSG(mx <= PQ_MAX_PROB_DIFF && mean <= PQ_MEAN_PROB_DIFF, "%s: probabilities differ by %.4f max, %.4f mean",
              settings_json, mx, mean);
    CHECK_MSG(accuracy(q, &dv) >= accuracy(fp, &dv) - 1.0, "%s: accuracy %.1f, fp32 %.1f", settings_json,
              accuracy(q, &dv), accuracy(fp, &dv));
    printf("  %s: max %.4f mean %.4f, accuracy %.1f (fp32 %.1f)\n", settings_json, mx, mean, accuracy(q, &dv),
           accuracy(fp, &dv));
    free(fp);
    free(q);
    cJSON_Delete(s);
    FASTTEXT_OPS.free(m);
    synth_free(&tr);
    synth_free(&dv);
}

TEST(fasttext_quantize_within_bound_of_fp32) {
    pq_bound("{}");
    pq_bound("{\"qnorm\": true, \"qout\": true}");
    pq_bound("{\"dsub\": 3}");
}

/* The cutoff keeps the rows of largest norm (and the end-of-text row), drops
 * the other words from the dictionary; those then count for nothing. */
TEST(fasttext_quantize_cutoff_keeps_largest_rows) {
    Dataset tr = synth_dataset(&PQ_TASK, 1000, 71);
    Model *model = pq_train(&tr);
    FastText *m = (FastText *)model;
    int C = m->cfg.dim, V = word_dict_size(&m->dict);
    long kept = 0;
    for (long r = 0; r < m->rows; r++) kept += m->wi_ready[r];
    float *norm = xmalloc((size_t)m->rows * sizeof *norm);
    for (long r = 0; r < m->rows; r++) {
        double s = 0;
        for (int j = 0; m->wi_ready[r] && j < C; j++) s += (double)m->wi[r * C + j] * m->wi[r * C + j];
        norm[r] = m->wi_ready[r] ? (float)sqrt(s) : -1.0f;
    }
    int eos = strmap_find(&m->dict.map, NULL, 0, FT_EOS, strlen(FT_EOS));
    norm[eos] = INFINITY;
    /* the 300th largest norm: the rows above it are kept */
    float *sorted = xmalloc((size_t)m->rows * sizeof *sorted);
    memcpy(sorted, norm, (size_t)m->rows * sizeof *sorted);
    for (int k = 0; k < 300; k++) {   /* partial selection */
        long b = k;
        for (long r = k + 1; r < m->rows; r++)
            if (sorted[r] > sorted[b]) b = r;
        float t = sorted[k];
        sorted[k] = sorted[b];
        sorted[b] = t;
    }
    float threshold = sorted[299];
    int words_kept = 0;
    for (int w = 0; w < V; w++) words_kept += norm[w] >= threshold;
    CHECK(kept > 300);
    cJSON *s = cJSON_Parse("{\"cutoff\": 300}");
    CHECK_EQ_INT(FASTTEXT_OPS.quantize(model, s, NULL), 0);
    long now = 0;
    for (long r = 0; r < m->rows; r++) now += m->wi_ready[r];
    CHECK_EQ_INT(now, 300);
    CHECK_EQ_INT(word_dict_size(&m->dict), words_kept);
    CHECK(strmap_find(&m->dict.map, NULL, 0, FT_EOS, strlen(FT_EOS)) >= 0);
    /* A text of dropped words only: no rows, the uninformed answer. */
    Encoded *e = FASTTEXT_OPS.encode(model, &tr);
    long rows = e->off[e->n];
    for (int64_t i = 0; i < rows; i++) CHECK(m->wi_ready[e->ids[i]]);
    FASTTEXT_OPS.encoded_free(e);
    /* Quantizing twice is refused. */
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = FASTTEXT_OPS.quantize(model, s, NULL);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(rc != 0 && strstr(msg, "already quantized"), "%s", msg);
    free(msg);
    cJSON_Delete(s);
    free(norm);
    free(sorted);
    FASTTEXT_OPS.free(model);
    synth_free(&tr);
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Quantized, saved, read back: the same predictions bit for bit, a version-2
 * file smaller than the fp32 one; saving the loaded model gives it again. */
static void pq_round_trip(const char *settings_json) {
    Dataset tr = synth_dataset(&PQ_TASK, 1000, 81), dv = synth_dataset(&PQ_TASK, 300, 82);
    Model *m = pq_train(&tr);
    char fp32[512], pq[512], again[512];
    temp_path(fp32, sizeof fp32, "fp32.ckpt");
    temp_path(pq, sizeof pq, "pq.ckpt");
    temp_path(again, sizeof again, "again.ckpt");
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, fp32), 0);
    cJSON *s = cJSON_Parse(settings_json);
    CHECK_EQ_INT(FASTTEXT_OPS.quantize(m, s, &tr), 0);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, pq), 0);
    CHECK_MSG(file_size(pq) * 4 < file_size(fp32), "%s: %ld bytes, fp32 %ld", settings_json, file_size(pq),
              file_size(fp32));
    unsigned char head[12] = {0};
    FILE *f = fopen(pq, "rb");
    if (f) {
        CHECK(fread(head, 1, sizeof head, f) == sizeof head);
        fclose(f);
    }
    CHECK_EQ_INT(head[8], CHECKPOINT_VERSION_INT8);
    Model *back = FASTTEXT_OPS.load(pq, &SYNTH_TASK2);
    CHECK(back != NULL);
    if (back) {
        float *a = synth_predict(&FASTTEXT_OPS, m, &dv, 0), *b = synth_predict(&FASTTEXT_OPS, back, &dv, 0);
        CHECK_MSG(memcmp(a, b, (size_t)dv.n * 2 * sizeof *a) == 0, "%s: predictions changed by the file",
                  settings_json);
        CHECK_EQ_INT(FASTTEXT_OPS.save(back, again), 0);
        Model *back2 = FASTTEXT_OPS.load(again, &SYNTH_TASK2);
        float *c = back2 ? synth_predict(&FASTTEXT_OPS, back2, &dv, 0) : NULL;
        CHECK(c && memcmp(a, c, (size_t)dv.n * 2 * sizeof *a) == 0);
        free(a);
        free(b);
        free(c);
        if (back2) FASTTEXT_OPS.free(back2);
        FASTTEXT_OPS.free(back);
    }
    cJSON_Delete(s);
    FASTTEXT_OPS.free(m);
    unlink(fp32);
    unlink(pq);
    unlink(again);
    synth_free(&tr);
    synth_free(&dv);
}

TEST(fasttext_quantize_checkpoint_round_trip) {
    pq_round_trip("{}");
    pq_round_trip("{\"cutoff\": 400, \"retrain\": true, \"qnorm\": true, \"qout\": true, \"epoch\": 2}");
}

/* ---- damaged quantized checkpoints ---- */

/* src rewritten as dst with one change: tensor `name` element `at` set to v
 * (as_f32: the tensor stored as f32 instead of int8; drop: left out), or
 * with name NULL the config's quantized.version set to v. */
static int rewrite(const char *src, const char *dst, const char *name, long at, float v, int as_f32, int drop) {
    Checkpoint *c = checkpoint_read(src);
    if (!c) return -1;
    cJSON *cfg = cJSON_Duplicate(c->config, 1);
    if (!name) cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cfg, "quantized"), "version", cJSON_CreateNumber(v));
    CkptWriter *w = checkpoint_writer_open(dst, cfg, -1);
    cJSON_Delete(cfg);
    int rc = w ? 0 : -1;
    for (int i = 0; i < c->n_tensors && rc == 0; i++) {
        CkptTensor *t = &c->tensors[i];
        int mine = name && strcmp(t->name, name) == 0, shape[CHECKPOINT_MAX_DIMS];
        if (mine && drop) continue;
        for (int d = 0; d < t->ndim; d++) shape[d] = (int)t->shape[d];
        if (mine) t->data[at] = v;
        if (t->dtype == CKPT_I8 && !(mine && as_f32)) {
            int8_t *q = malloc((size_t)t->numel + 1);
            for (long k = 0; k < t->numel; k++) q[k] = (int8_t)fmaxf(-128.0f, fminf(127.0f, t->data[k]));
            rc = checkpoint_write_tensor_i8(w, t->name, shape, t->ndim, q);
            free(q);
        } else {
            rc = checkpoint_write_tensor(w, t->name, CKPT_F32, shape, t->ndim, t->data);
        }
    }
    for (int i = 0; i < c->n_blobs && rc == 0; i++)
        rc = checkpoint_write_blob(w, c->blobs[i].name, c->blobs[i].data, c->blobs[i].size);
    checkpoint_free(c);
    if (rc) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

/* bad is refused with one message, which says want. */
static void refused(const char *bad, const char *want, const char *what) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Model *m = FASTTEXT_OPS.load(bad, &SYNTH_TASK2);
    char *msg = stderr_capture_end(&cap);
    int lines = 0;
    for (const char *p = msg; *p; p++) lines += *p == '\n';
    CHECK_MSG(!m && strstr(msg, want) && lines <= 2, "%s: want one refusal with '%s', got %s: %s", what, want,
              m ? "a model" : "", msg);
    if (m) FASTTEXT_OPS.free(m);
    free(msg);
}

TEST(fasttext_quantize_corrupt_checkpoints) {
    /* Fewer than 256 kept rows: codes at or above ksub are out of range. */
    Dataset tr = synth_dataset(&PQ_TASK, 600, 91);
    Model *m = pq_train(&tr);
    char pq[512], bad[512];
    temp_path(pq, sizeof pq, "pq.ckpt");
    temp_path(bad, sizeof bad, "bad.ckpt");
    /* The fp32 checkpoint with a NaN or infinite weight (fuzz_fasttext_ckpt found it loaded). */
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, pq), 0);
    rewrite(pq, bad, "wi_words", 1, NAN, 0, 0);
    refused(bad, "a weight is NaN or infinite", "fp32 NaN word row");
    rewrite(pq, bad, "wo", 0, -INFINITY, 0, 0);
    refused(bad, "a weight is NaN or infinite", "fp32 infinite output weight");
    cJSON *s = cJSON_Parse("{\"cutoff\": 100, \"qnorm\": true, \"qout\": true}");
    CHECK_EQ_INT(FASTTEXT_OPS.quantize(m, s, NULL), 0);
    CHECK_EQ_INT(FASTTEXT_OPS.save(m, pq), 0);
    const char *q = "not a usable fastText checkpoint";
    rewrite(pq, bad, "wi_codes", 3, 100.0f - 128.0f, 0, 0);   /* code 100 of 100 centroids */
    refused(bad, q, "code out of range");
    rewrite(pq, bad, "wi_codes", 0, 5.0f, 1, 0);
    refused(bad, q, "codes stored as f32");
    rewrite(pq, bad, "wi_centroids", 7, NAN, 0, 0);
    refused(bad, q, "NaN centroid");
    rewrite(pq, bad, "wi_norm_centroids", 0, INFINITY, 0, 0);
    refused(bad, q, "inf norm");
    rewrite(pq, bad, "wi_norm_codes", 0, 0, 0, 1);
    refused(bad, q, "norm codes missing");
    rewrite(pq, bad, "wo_codes", 0, 0, 0, 1);
    refused(bad, q, "output codes missing");
    rewrite(pq, bad, NULL, 0, 2, 0, 0);
    refused(bad, "quantized format version 2; this glue reads version 1", "a later format");
    /* Truncated and flipped files. */
    FILE *f = fopen(pq, "rb");
    static unsigned char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(n > 100 && n < sizeof buf);
    const long cuts[] = {7, 40, (long)n / 2, (long)n - 1};
    for (int i = 0; i < 4 && n > 100; i++) {
        FILE *g = fopen(bad, "wb");
        fwrite(buf, 1, (size_t)cuts[i], g);
        fclose(g);
        refused(bad, "", "truncated");
    }
    for (long at = 41; at < (long)n && n > 100; at += (long)n / 5) {
        buf[at] ^= 0x5A;
        FILE *g = fopen(bad, "wb");
        fwrite(buf, 1, n, g);
        fclose(g);
        buf[at] ^= 0x5A;
        refused(bad, "", "a flipped byte");
    }
    cJSON_Delete(s);
    FASTTEXT_OPS.free(m);
    unlink(pq);
    unlink(bad);
    synth_free(&tr);
}

/* ---- the command ---- */

/* A fixture holding a fastText run `ft` of two classes (tr.tsv, dev.tsv);
 * 0, or -1 (closed) when it cannot be made. */
static int ft_run_fixture(CliFixture *f) {
    if (cli_fixture_open(f) != 0) return -1;
    if (cli_fixture_two_class(f, "tr.tsv", 300) || cli_fixture_two_class(f, "dev.tsv", 40)) {
        cli_fixture_close(f);
        return -1;
    }
    cli_fixture_says(f, "finetune --train tr.tsv --dev dev.tsv --model fasttext --epochs 2 --threads 1 --out ft", 0, NULL);
    return 0;
}

TEST(fasttext_quantize_command) {
    CliFixture f;
    if (ft_run_fixture(&f) != 0) return;
    cli_fixture_says(&f, "quantize ft --threads 1", 0, "pq ft-pq");
    cli_fixture_says(&f, "quantize ft --threads 1 --cutoff 50 --retrain --qnorm --qout --epoch 2 --out ft-small", 0,
              "pq ft-small");
    CHECK(cli_fixture_exists(&f, "ft-pq/model.ckpt") && cli_fixture_exists(&f, "ft-pq/config.json"));
    char path[256];
    cli_fixture_path(&f, "ft-small/results.json", path, sizeof path);
    cJSON *r = json_file_read(path, 1);
    const cJSON *qz = cJSON_GetObjectItem(r, "quantized");
    CHECK_MSG(qz && cJSON_GetObjectItem(qz, "pq_checkpoint_bytes") && cJSON_GetObjectItem(qz, "settings") &&
                  cJSON_GetObjectItem(r, "best"),
              "ft-small/results.json");
    cJSON_Delete(r);
    cli_fixture_says(&f, "eval --run ft-small", 0, "dev");
    cli_fixture_says(&f, "predict --run ft-pq 'pos words here'", 0, NULL);
    cli_fixture_says(&f, "quantize ft-pq", 2, "already quantized");
    cli_fixture_says(&f, "quantize ft --dsub 0 --out ft-x", 2, "dsub");
    cli_fixture_says(&f, "quantize ft --cutoff many", 2, "takes a number");
    cli_fixture_says(&f, "quantize ft --retrain --out ft-x", 2, "--cutoff");
    /* the refused settings wrote nothing (an empty ft-x was left behind) */
    CHECK_MSG(!cli_fixture_exists(&f, "ft-x"), "a refused quantize left its output directory");
    cli_fixture_says(&f, "quantize ft", 2, "ft-pq already holds a quantized run");
    /* --out a folder of someone else's files (with or without --overwrite): refused, the files as they were;
     * its config.json was written over, and a failure left a model.ckpt among them */
    CHECK(cli_fixture_write(&f, "mine/config.json", "{\"mine\": 1}", -1) == 0 &&
          cli_fixture_write(&f, "mine/notes.txt", "notes", -1) == 0);
    cli_fixture_says(&f, "quantize ft --out mine", 2, "mine holds files but no run (");
    cli_fixture_says(&f, "quantize ft --out mine --overwrite", 2, "mine holds files but no run (");
    char mine[512];
    cli_fixture_path(&f, "mine/config.json", mine, sizeof mine);
    char *kept = file_read(mine, NULL);
    CHECK_MSG(kept && !strcmp(kept, "{\"mine\": 1}") && !cli_fixture_exists(&f, "mine/model.ckpt"),
              "a refused quantize changed the folder: %s", kept ? kept : "(config.json gone)");
    free(kept);
    /* A quantize that fails midway (its dev file gone: the checkpoint written, the scoring fails): over a
     * quantized copy with --overwrite, the old copy stays whole (the new one was made in a stage, removed);
     * into an empty folder, the folder stays empty. It wrote its model.ckpt over the old copy's, beside the
     * old results.json, and left its files in the empty folder. */
    char before[512], after[512], stage[512], moved[1024];
    cli_fixture_path(&f, "ft-pq/model.ckpt", before, sizeof before);
    size_t n_old = 0, n_new = 0;
    char *old_ckpt = file_read(before, &n_old);
    cli_fixture_path(&f, "dev.tsv", path, sizeof path);
    cli_fixture_path(&f, "dev.away", after, sizeof after);
    CHECK(rename(path, after) == 0);
    CHECK(cli_fixture_write(&f, "empty/.keep", "", 0) == 0);
    cli_fixture_path(&f, "empty/.keep", moved, sizeof moved);
    unlink(moved);
    cli_fixture_says(&f, "quantize ft --overwrite --threads 1 --cutoff 50", 74, "dev");
    char *now = file_read(before, &n_new);
    CHECK_MSG(old_ckpt && now && n_old == n_new && !memcmp(old_ckpt, now, n_old),
              "a failed quantize --overwrite changed ft-pq/model.ckpt (%zu bytes, was %zu)", n_new, n_old);
    cli_fixture_path(&f, "ft-pq.next", stage, sizeof stage);
    CHECK_MSG(!file_exists(stage) && cli_fixture_exists(&f, "ft-pq/results.json"), "ft-pq.next left, or results gone");
    cli_fixture_says(&f, "quantize ft --out empty --threads 1", 74, "dev");
    CHECK_MSG(cli_fixture_exists(&f, "empty") && !cli_fixture_exists(&f, "empty/model.ckpt") &&
                  !cli_fixture_exists(&f, "empty/config.json"),
              "a failed quantize left its files in the empty folder it was given");
    CHECK(rename(after, path) == 0);
    free(old_ckpt);
    free(now);
    cli_fixture_close(&f);
}

/* glue quantize --out as a run directory (tests/run_txn_check.h): refused
 * into a directory another run holds; --overwrite killed after any one of
 * its writes leaves the old quantized copy or the whole new one. */
TEST(fasttext_quantize_out_is_a_transaction) {
    CliFixture f;
    if (ft_run_fixture(&f) != 0) return;
    static const char *const FILES[] = {"results.json", "model.ckpt", "config.json"};
    char a[4096], b[4096], dir[4096];
    /* no `cd DIR &&`: the checks put the kill's variable before the command */
    snprintf(a, sizeof a, "'%s' quantize '%s/ft' --threads 1", cli_fixture_bin(), f.dir);
    snprintf(b, sizeof b, "%.3000s --cutoff 50", a);
    cli_fixture_path(&f, "q", dir, sizeof dir);
    TxnCase c = {.name = "quantize", .run_a = a, .run_b = b, .dir = dir, .files = FILES, .nfiles = 3,
                 .b_marker = "\"cutoff\""};
    txn_check_lock(&c);
    txn_check_overwrite_killed(&c, 3);
    cli_fixture_close(&f);
}

/* glue bench fasttext with quantization settings: both sides quantized with
 * them (the official by `fasttext quantize`), each smaller than its fp32
 * model and still learning; a bad setting is a usage error. */
TEST(fasttext_quantize_bench_runs) {
    char cmd[2048], dir[512];
    int st;
    snprintf(cmd, sizeof cmd, "%s bench fasttext --cutoff x 2>/dev/null", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    if (access("/usr/bin/fasttext", X_OK) != 0) {
        test_skip("no /usr/bin/fasttext (apt-get install fasttext)");
        return;
    }
    CHECK(scratch_dir("results", dir, sizeof dir));
    snprintf(cmd, sizeof cmd,
             "GLUE_DATA='%s/data/glue' GLUE_RESULTS='%s' %s bench fasttext --epoch 1 --reps 1 --threads 1 --json "
             "--cutoff 3000 --qnorm",
             test_shared_dir(), dir, test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 0);
    cJSON *j = cJSON_Parse(out), *q = cJSON_GetObjectItem(j, "quantized");
    CHECK_MSG(q != NULL, "no quantized rows: %s", out);
    const char *sides[] = {"official", "ours"};
    for (int i = 0; q && i < 2; i++) {
        const cJSON *s = cJSON_GetObjectItem(q, sides[i]);
        double acc = cJSON_GetObjectItem(s, "accuracy")->valuedouble, bytes = cJSON_GetObjectItem(s, "bytes")->valuedouble;
        double fp32 = cJSON_GetObjectItem(s, "fp32_bytes")->valuedouble;
        CHECK_MSG(acc > 70 && bytes > 0 && bytes * 3 < fp32, "%s: accuracy %.2f, %.0f bytes (fp32 %.0f)", sides[i], acc,
                  bytes, fp32);
    }
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(q, "size_ratio")));
    cJSON_Delete(j);
    free(out);
    char file[600];
    snprintf(file, sizeof file, "%s/bench_fasttext.json", dir);
    unlink(file);
    rmdir(dir);
}
