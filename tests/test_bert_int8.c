/* test_bert_int8.c — BERT with int8 weights (models/bert/bert_int8.c) on the
 * shipped BERT-tiny encoder (models/bert-tiny-wiki):
 *   - the int8 forward's hidden states and classifier logits within a stated
 *     bound of fp32's (the bound: the final LayerNorm's outputs, of scale ~1,
 *     differ by at most 0.35 anywhere and 0.04 on average over the elements;
 *     logits, with the classifier scaled so that they spread over ~7, by at
 *     most 4% of that range. Measured when written: 0.066, 0.012, 0.8%; read
 *     back from the checkpoint, whose word embeddings are int8 too: 0.08,
 *     0.012, 1.3%);
 *   - an int8 checkpoint: under a third of the fp32 file, header version 2,
 *     read back as a model that runs int8 with logits within the same bound,
 *     refused for training and for a second quantization;
 *   - a damaged int8 checkpoint (a scale NaN, infinite, zero; a weight -128; an
 *     int8 tensor where glue stores none; an int8 format version from the
 *     future) refused with a message naming the problem, never loaded.
 * And the commands: glue quantize on a run, on its own output, on a corrupt
 * run and on a model without an int8 path; eval --int8 with --bf16. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/rng.h"
#include "models/bert/bert.h"
#include "tests/capture.h"
#include "tests/cli_fixture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#define TINY_CKPT "models/bert-tiny-wiki/model.ckpt"
enum { I8_B = 3, I8_T = 24, I8_LABELS = 3 };

static Bert *tiny_classifier(void) {
    Checkpoint *c = checkpoint_read(TINY_CKPT);
    if (!c) return NULL;
    Bert *m = bert_from_checkpoint(c, &(BertHeads){.pooler = 1, .num_labels = I8_LABELS}, 0, 7);
    checkpoint_free(c);
    if (!m) return NULL;
    /* A fresh classifier's logits are ~0.01: scaled so they spread like a trained one's. */
    for (int i = 0; i < I8_LABELS * m->cfg.hidden_size; i++) m->w.cls_w[i] *= 60.0f;
    bert_reserve(m, I8_B, I8_T, 0, 0);
    return m;
}

typedef struct {
    int ids[I8_B * I8_T];
    float hidden[I8_B * I8_T * 512], logits[I8_B * I8_LABELS];
} I8Out;

static void tiny_run(Bert *m, I8Out *o) {
    Rng r;
    rng_seed(&r, 11);
    for (int i = 0; i < I8_B * I8_T; i++) o->ids[i] = 1000 + (int)rng_below(&r, (uint32_t)(m->cfg.vocab_size - 1000));
    for (int b = 0; b < I8_B; b++) o->ids[b * I8_T] = 101;   /* [CLS] */
    BertBatch batch = {I8_B, I8_T, o->ids, NULL, NULL};
    bert_forward(m, &batch, NULL);
    memcpy(o->hidden, bert_hidden(m), sizeof(float) * (size_t)(I8_B * I8_T * m->cfg.hidden_size));
    bert_head_forward(m, NULL, o->logits);
}

/* The bounds of the header comment; what is measured goes to the log. */
static void check_close(const I8Out *a, const I8Out *b, int C, const char *what) {
    long n = (long)I8_B * I8_T * C;
    double worst = 0, sum = 0, lo = 1e30, hi = -1e30, lworst = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs(a->hidden[i] - b->hidden[i]);
        worst = fmax(worst, d);
        sum += d;
    }
    for (int i = 0; i < I8_B * I8_LABELS; i++) {
        lo = fmin(lo, a->logits[i]);
        hi = fmax(hi, a->logits[i]);
        lworst = fmax(lworst, fabs(a->logits[i] - b->logits[i]));
    }
    printf("  %s: hidden max %.3g mean %.3g; logits range %.2f, max diff %.3g (%.2f%%)\n", what, worst, sum / n,
           hi - lo, lworst, 100 * lworst / (hi - lo));
    CHECK_MSG(worst <= 0.35 && sum / n <= 0.04, "%s: hidden max diff %g, mean %g", what, worst, sum / n);
    CHECK_MSG(hi - lo > 1.0, "%s: the logits spread only %g (the check needs a spread)", what, hi - lo);
    CHECK_MSG(lworst <= 0.04 * (hi - lo), "%s: logits differ by %g of a range %g", what, lworst, hi - lo);
}

TEST(bert_int8_logits_close_to_fp32) {
    Bert *f = tiny_classifier(), *q = tiny_classifier();
    if (!CHECK_MSG(f && q, "%s did not load", TINY_CKPT)) return;
    static I8Out a, b;
    tiny_run(f, &a);
    CHECK(bert_use_int8(q, 1) == 0);
    tiny_run(q, &b);
    check_close(&a, &b, f->cfg.hidden_size, "int8 forward");
    /* As eval and predict run it: the last layer only at [CLS] (cross-attention,
     * int8 on the weights' row panels): the same integer products, so the same
     * logits up to the fp32 attention's summation order. */
    float pooled[I8_B * I8_LABELS];
    bert_forward_pooled(q, &(BertBatch){I8_B, I8_T, b.ids, NULL, NULL}, NULL);
    bert_head_forward(q, NULL, pooled);
    for (int i = 0; i < I8_B * I8_LABELS; i++)
        CHECK_MSG(fabsf(pooled[i] - b.logits[i]) <= 1e-4f * (1.0f + fabsf(b.logits[i])), "pooled int8 logit %d: %g vs %g",
                  i, pooled[i], b.logits[i]);
    /* Off again: the fp32 forward, bit for bit. */
    bert_use_int8(q, 0);
    tiny_run(q, &b);
    CHECK(memcmp(a.logits, b.logits, sizeof a.logits) == 0);
    bert_free(f);
    bert_free(q);
}

static long file_bytes(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fclose(fp);
    return n;
}

/* Loads path expecting failure with one message, containing want. */
static void check_refused(const char *path, const char *want) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Bert *m = bert_load(path);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(!m && strstr(msg, want), "want a refusal with '%s', got %s: %s", want, m ? "a model" : "", msg);
    int errors = 0;
    for (const char *e = msg; (e = strstr(e, "error:")) != NULL; e++) errors++;
    CHECK_MSG(errors == 1, "want one message, got %d: %s", errors, msg);
    bert_free(m);
    free(msg);
}

/* Rewrites the int8 checkpoint src as dst with one change: tensor `name`'s
 * element 0 set to v (int8 tensors keep their dtype), or, with name NULL, the
 * config's quantized.version set to v; the tensors whose names contain drop
 * (NULL: none) left out. Every other tensor as stored. */
static int rewrite_ckpt(const char *src, const char *dst, const char *name, float v, int as_i8, const char *drop) {
    Checkpoint *c = checkpoint_read(src);
    if (!c) return -1;
    cJSON *cfg = cJSON_Duplicate(c->config, 1);
    if (!name) cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cfg, "quantized"), "version", cJSON_CreateNumber(v));
    CkptWriter *w = checkpoint_writer_open(dst, cfg, -1);
    cJSON_Delete(cfg);
    int rc = w ? 0 : -1;
    for (int i = 0; i < c->n_tensors && rc == 0; i++) {
        CkptTensor *t = &c->tensors[i];
        if (drop && strstr(t->name, drop)) continue;
        int shape[CHECKPOINT_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++) shape[d] = (int)t->shape[d];
        if (name && strcmp(t->name, name) == 0) t->data[0] = v;
        if (t->dtype == CKPT_I8 || (as_i8 && name && strcmp(t->name, name) == 0)) {
            int8_t *q = malloc((size_t)t->numel + 1);
            for (long k = 0; k < t->numel; k++) q[k] = (int8_t)fmaxf(-128.0f, fminf(127.0f, rintf(t->data[k])));
            rc = checkpoint_write_tensor_i8(w, t->name, shape, t->ndim, q);
            free(q);
        } else {
            rc = checkpoint_write_tensor(w, t->name, CKPT_F32, shape, t->ndim, t->data);
        }
    }
    for (int i = 0; i < c->n_blobs && rc == 0; i++) rc = checkpoint_write_blob(w, c->blobs[i].name, c->blobs[i].data, c->blobs[i].size);
    checkpoint_free(c);
    if (rc) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

TEST(bert_int8_checkpoint_round_trip_and_damage) {
    Bert *f = tiny_classifier();
    if (!CHECK_MSG(f != NULL, "%s did not load", TINY_CKPT)) return;
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("int8", dir, sizeof dir))) return;
    char fp32[256], q8[256], bad[256];
    snprintf(fp32, sizeof fp32, "%s/fp32.ckpt", dir);
    snprintf(q8, sizeof q8, "%s/int8.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    CHECK(bert_save(f, fp32) == 0);
    CHECK(bert_save_int8(f, q8, NULL, NULL) == 0);
    long a = file_bytes(fp32), b = file_bytes(q8);
    printf("  checkpoint: fp32 %ld bytes, int8 %ld (%.2f)\n", a, b, (double)b / (double)a);
    CHECK_MSG(b > 0 && b * 3 < a, "int8 checkpoint %ld bytes against fp32 %ld", b, a);
    FILE *fp = fopen(q8, "rb");
    unsigned char h[12] = {0};
    if (fp) { CHECK(fread(h, 1, 12, fp) == 12); fclose(fp); }
    CHECK_MSG(h[8] == CHECKPOINT_VERSION_INT8 && h[9] == 0, "int8 file format version %d", h[8]);
    /* Read back: int8 inference, within the bound of fp32. */
    Bert *q = bert_load(q8);
    if (CHECK(q != NULL)) {
        CHECK(q->int8 != NULL && q->int8_stored);
        bert_reserve(q, I8_B, I8_T, 0, 0);
        static I8Out ra, rb;
        tiny_run(f, &ra);
        tiny_run(q, &rb);
        check_close(&ra, &rb, f->cfg.hidden_size, "int8 checkpoint");
        StderrCapture cap;
        stderr_capture_begin(&cap);
        int rc = bert_save_int8(q, bad, NULL, NULL);
        char *msg = stderr_capture_end(&cap);
        CHECK_MSG(rc != 0 && strstr(msg, "already int8"), "quantizing an int8 model: %d %s", rc, msg);
        free(msg);
        /* Not a starting point for training. */
        Checkpoint *c = checkpoint_read(q8);
        stderr_capture_begin(&cap);
        Bert *t = c ? bert_from_checkpoint(c, &(BertHeads){.pooler = 1, .num_labels = 2}, 0, 1) : NULL;
        msg = stderr_capture_end(&cap);
        CHECK_MSG(!t && strstr(msg, "inference only"), "training from int8: %s", msg);
        bert_free(t);
        free(msg);
        checkpoint_free(c);
        bert_free(q);
    }
    const char *scale = "bert.encoder.layer.1.intermediate.dense.weight_scale";
    const float BAD[] = {NAN, INFINITY, 0.0f, -1.0f};
    for (int i = 0; i < 4; i++) {
        if (!CHECK(rewrite_ckpt(q8, bad, scale, BAD[i], 0, NULL) == 0)) continue;
        check_refused(bad, "weight_scale[0] is");
    }
    CHECK(rewrite_ckpt(q8, bad, "bert.encoder.layer.0.output.dense.weight", -128.0f, 0, NULL) == 0);
    check_refused(bad, "-128");
    CHECK(rewrite_ckpt(q8, bad, "bert.embeddings.word_embeddings.weight", -128.0f, 0, NULL) == 0);
    check_refused(bad, "-128");
    CHECK(rewrite_ckpt(q8, bad, "bert.pooler.dense.weight", 3.0f, 1, NULL) == 0);
    check_refused(bad, "bert.pooler.dense.weight is int8");
    CHECK(rewrite_ckpt(q8, bad, NULL, 3.0f, 0, NULL) == 0);
    check_refused(bad, "int8 format version 3; this glue reads versions 1 to 2");
    /* The smoothing factors (version 2): missing or damaged, refused naming them. */
    const char *smooth = "bert.encoder.layer.1.output.dense.input_smooth";
    CHECK(rewrite_ckpt(q8, bad, NULL, 2.0f, 0, smooth) == 0);
    check_refused(bad, "output.dense.input_smooth is missing");
    for (int i = 0; i < 4; i++) {
        if (!CHECK(rewrite_ckpt(q8, bad, smooth, BAD[i], 0, NULL) == 0)) continue;
        check_refused(bad, "input_smooth[0] is");
    }
    /* Version 1 (before smoothing, no input_smooth at all): read as factors of 1. */
    CHECK(rewrite_ckpt(q8, bad, NULL, 1.0f, 0, "input_smooth") == 0);
    Bert *v1 = bert_load(bad);
    CHECK_MSG(v1 != NULL && v1->int8_stored, "a version 1 int8 checkpoint is not read");
    if (v1) {
        static I8Out ra, rb;
        Bert *v2 = bert_load(q8);
        bert_reserve(v1, I8_B, I8_T, 0, 0);
        if (CHECK(v2 != NULL)) {
            bert_reserve(v2, I8_B, I8_T, 0, 0);
            tiny_run(v1, &ra);
            tiny_run(v2, &rb);
            CHECK_MSG(memcmp(ra.logits, rb.logits, sizeof ra.logits) == 0, "version 1 and uncalibrated version 2 differ");
        }
        bert_free(v2);
    }
    bert_free(v1);
    CHECK(rewrite_ckpt(q8, bad, "bert.encoder.layer.0.attention.self.key.weight_scale", 1.0f, 0, NULL) == 0);
    Bert *ok = bert_load(bad);
    CHECK_MSG(ok != NULL, "a changed but valid scale is refused");
    bert_free(ok);
    remove(fp32); remove(q8); remove(bad);
    remove(dir);
    bert_free(f);
}

/* The stored input_smooth factors of every layer and product of the int8
 * checkpoint path: how many there are, and how many differ from 1 (-1: a
 * tensor missing). */
static long stored_factors(const char *path, const Bert *m, long *not_one) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    static const char *const WHERE[4] = {"attention.self", "attention.output.dense", "intermediate.dense", "output.dense"};
    long n = 0;
    *not_one = 0;
    for (int l = 0; l < m->cfg.num_layers && n >= 0; l++)
        for (int j = 0; j < 4 && n >= 0; j++) {
            char name[128];
            snprintf(name, sizeof name, "bert.encoder.layer.%d.%s.input_smooth", l, WHERE[j]);
            const CkptTensor *t = checkpoint_find_tensor(c, name);
            if (!t) { n = -1; break; }
            const float *want = m->int8_smooth ? bert_int8_channels(m, m->int8_smooth, l, j) : NULL;
            for (long k = 0; k < t->numel; k++) {
                *not_one += t->data[k] != 1.0f;
                float w = want ? want[k] : 1.0f;   /* uncalibrated: 1 */
                CHECK_MSG(t->data[k] == w, "%s[%ld]: stored %g, want %g", name, k, (double)t->data[k], (double)w);
            }
            n += t->numel;
        }
    checkpoint_free(c);
    return n;
}

/* Calibration factors from sequences (lengths len[b] <= T) in a batch of length T. */
static void calibrate_padded(Bert *m, int T, const int *ids, const int *len, float *out, long n) {
    static int padded[I8_B * I8_T];
    for (int b = 0; b < I8_B; b++)
        for (int t = 0; t < T; t++) padded[b * T + t] = t < len[b] ? ids[b * I8_T + t] : 0;
    BertBatch batch = {I8_B, T, padded, NULL, len};
    CHECK(bert_int8_calibrate(m, 1, 0) == 0);
    bert_forward(m, &batch, NULL);
    CHECK(bert_int8_calibrate(m, 0, I8_B) == 0);
    if (CHECK(m->int8_smooth != NULL)) memcpy(out, m->int8_smooth, sizeof(float) * (size_t)n);
}

/* The factors count real tokens only: the same sequences padded to another
 * length give the same factors (they moved with batching when padded
 * positions counted). */
TEST(bert_int8_calibration_ignores_padding) {
    Bert *m = tiny_classifier();
    if (!CHECK_MSG(m, "%s did not load", TINY_CKPT)) return;
    static I8Out o;
    tiny_run(m, &o);   /* the ids */
    int len[I8_B];
    for (int b = 0; b < I8_B; b++) len[b] = 2 + b % (I8_T / 2 - 2);   /* at most I8_T / 2 */
    long C = m->cfg.hidden_size, n = m->cfg.num_layers * (3 * C + m->cfg.intermediate_size);
    float *a = xmalloc(sizeof(float) * (size_t)n), *b = xmalloc(sizeof(float) * (size_t)n);
    calibrate_padded(m, I8_T / 2, o.ids, len, a, n);
    calibrate_padded(m, I8_T, o.ids, len, b, n);
    CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t)n) == 0, "padding to %d changed the factors", I8_T);
    free(a);
    free(b);
    bert_free(m);
}

/* SmoothQuant calibration: recording the fp32 forward's inputs gives factors
 * (finite, positive, not all 1) that the int8 checkpoint stores; uncalibrated,
 * it stores 1s. Calibrated, the int8 forward (in memory and read back) stays
 * within the bound of the header comment; calibrating an int8 model is refused. */
TEST(bert_int8_calibration_stored_and_close) {
    Bert *f = tiny_classifier(), *q = tiny_classifier();
    if (!CHECK_MSG(f && q, "%s did not load", TINY_CKPT)) return;
    static I8Out a, b;
    tiny_run(f, &a);
    CHECK(bert_int8_calibrate(q, 1, 0) == 0);
    tiny_run(q, &b);   /* fp32, recording */
    CHECK_MSG(memcmp(a.logits, b.logits, sizeof a.logits) == 0, "recording changed the fp32 forward");
    CHECK(bert_int8_calibrate(q, 0, I8_B) == 0);
    long C = q->cfg.hidden_size, n = q->cfg.num_layers * (3 * C + q->cfg.intermediate_size), moved = 0;
    if (!CHECK(q->int8_smooth != NULL && q->int8_calibrated == I8_B)) return;
    for (long i = 0; i < n; i++) {
        CHECK_MSG(isfinite(q->int8_smooth[i]) && q->int8_smooth[i] > 0, "factor %ld is %g", i, (double)q->int8_smooth[i]);
        moved += q->int8_smooth[i] != 1.0f;
    }
    printf("  calibrated on %d sequences: %ld of %ld factors differ from 1\n", I8_B, moved, n);
    CHECK_MSG(moved > n / 2, "only %ld of %ld factors differ from 1", moved, n);
    CHECK(bert_use_int8(q, 1) == 0);
    tiny_run(q, &b);
    check_close(&a, &b, C, "calibrated int8 forward");
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = bert_int8_calibrate(q, 1, 0);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(rc != 0 && strstr(msg, "runs int8"), "calibrating an int8 model: %d %s", rc, msg);
    free(msg);
    bert_use_int8(q, 0);
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("int8c", dir, sizeof dir))) return;
    char plain[256], cal[256];
    snprintf(plain, sizeof plain, "%s/plain.ckpt", dir);
    snprintf(cal, sizeof cal, "%s/cal.ckpt", dir);
    CHECK(bert_save_int8(f, plain, NULL, NULL) == 0 && bert_save_int8(q, cal, NULL, NULL) == 0);
    long ones_moved = -1, cal_moved = -1;
    CHECK_MSG(stored_factors(plain, f, &ones_moved) == n && ones_moved == 0, "uncalibrated: %ld factors differ from 1",
              ones_moved);
    CHECK_MSG(stored_factors(cal, q, &cal_moved) == n && cal_moved == moved, "calibrated: %ld stored differ from 1, "
              "want %ld", cal_moved, moved);
    Bert *r = bert_load(cal);
    if (CHECK(r != NULL && r->int8_stored)) {
        bert_reserve(r, I8_B, I8_T, 0, 0);
        tiny_run(r, &b);
        check_close(&a, &b, C, "calibrated int8 checkpoint");
    }
    bert_free(r);
    remove(plain); remove(cal);
    remove(dir);
    bert_free(f);
    bert_free(q);
}

/* The modification time of dir/name in ns, or -1. */
static long long int8_mtime_ns(const CliFixture *f, const char *name) {
    char path[1024];
    struct stat st;
    cli_fixture_path(f, name, path, sizeof path);
    return stat(path, &st) == 0 ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : -1;
}

TEST(bert_int8_commands_refuse_bad_input) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (cli_fixture_two_class(&f, "tr.tsv", 40) || cli_fixture_two_class(&f, "dev.tsv", 12)) {
        cli_fixture_close(&f);
        return;
    }
    char args[1024];
    snprintf(args, sizeof args, "finetune --train tr.tsv --dev dev.tsv --model bert --init none --set "
             "vocab=%s/models/vocab/bert-base-uncased-vocab.txt --epochs 1 --threads 1 --out b", test_shared_dir());
    cli_fixture_says(&f, args, 0, NULL);
    cli_fixture_says(&f, "quantize b --threads 1", 0, "int8 b-int8");
    CHECK(cli_fixture_exists(&f, "b-int8/model.ckpt") && cli_fixture_exists(&f, "b-int8/config.json"));
    char path[256];
    cli_fixture_path(&f, "b-int8/results.json", path, sizeof path);
    cJSON *r = json_file_read(path, 1);
    CHECK_MSG(r && cJSON_GetObjectItem(r, "quantized") && cJSON_GetObjectItem(r, "best"), "b-int8/results.json");
    cJSON_Delete(r);
    cli_fixture_says(&f, "eval --run b-int8", 0, "tr (acc)");
    cli_fixture_says(&f, "predict --run b-int8 'pos words here'", 0, NULL);
    cli_fixture_says(&f, "eval --run b --int8", 0, "tr (acc)");
    /* Calibrated: the factors' source said in the checkpoint and results.json. */
    cli_fixture_says(&f, "quantize b --calibrate 16 --out bc --threads 1", 0, "int8 bc");
    cli_fixture_path(&f, "bc/model.ckpt", path, sizeof path);
    Checkpoint *ck = checkpoint_read(path);
    const cJSON *qd = ck ? cJSON_GetObjectItem(ck->config, "quantized") : NULL;
    CHECK_MSG(cJSON_GetNumberValue(cJSON_GetObjectItem(qd, "calibration_examples")) == 16 &&
                  cJSON_GetNumberValue(cJSON_GetObjectItem(qd, "version")) == 2,
              "bc/model.ckpt: quantized.calibration_examples / version");
    checkpoint_free(ck);
    cli_fixture_says(&f, "eval --run bc", 0, "tr (acc)");
    cli_fixture_says(&f, "quantize b --calibrate many --out bd", 2, "--calibrate takes a number");
    cli_fixture_says(&f, "quantize b --calibrate -3 --out bd", 2, "--calibrate takes a number");
    /* Already int8; both precisions at once; the run itself as --out. */
    cli_fixture_says(&f, "quantize b-int8", 2, "already int8");
    cli_fixture_says(&f, "eval --run b --int8 --bf16", 2, "--bf16 and --int8");
    cli_fixture_says(&f, "quantize b --out b/", 2, "is the run itself");
    cli_fixture_says(&f, "quantize nowhere", 74, "nowhere");
    /* Several runs into one table; a later call adds its rows and keeps the others. */
    char cp[1024];
    snprintf(cp, sizeof cp, "cd %s && cp -r b b2", f.dir);
    int cst;
    free(test_run(cp, &cst));
    cli_fixture_says(&f, "quantize b b2 --out x", 2, "--out with one only");
    cli_fixture_says(&f, "quantize b --overwrite --threads 1 --results t.json", 0, "int8 b-int8");
    cli_fixture_says(&f, "quantize b2 --threads 1 --results t.json", 0, "int8 b2-int8");
    cli_fixture_path(&f, "t.json", path, sizeof path);
    cJSON *t = json_file_read(path, 1);
    const cJSON *rows = cJSON_GetObjectItem(t, "rows");
    CHECK_MSG(cJSON_GetArraySize(rows) == 2, "t.json: %d rows, want b-int8's kept beside b2-int8's", cJSON_GetArraySize(rows));
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "int8")));
    cJSON_Delete(t);
    /* A quantized copy is never written over unless asked; a refusal writes nothing. */
    long long before = int8_mtime_ns(&f, "b-int8/model.ckpt");
    cli_fixture_says(&f, "quantize b b2 --threads 1 --results t.json", 2, "b-int8 already holds a quantized run");
    CHECK_MSG(before > 0 && int8_mtime_ns(&f, "b-int8/model.ckpt") == before, "the refusal changed b-int8");
    cli_fixture_says(&f, "quantize b b2 --overwrite --threads 1 --results t.json", 0, "int8 b2-int8");
    t = json_file_read(path, 1);
    CHECK_MSG(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")) == 2, "rows of the same runs replaced, not added");
    cJSON_Delete(t);
    CHECK(cli_fixture_exists(&f, "t.md"));
    /* A calibrated copy is its own row and says so in the format column. */
    cli_fixture_says(&f, "quantize b --calibrate 8 --out b-cal --threads 1 --results t.json", 0, "int8 b-cal");
    cli_fixture_path(&f, "t.md", path, sizeof path);
    char cat[1200];
    snprintf(cat, sizeof cat, "cat %s", path);
    int mst;
    char *md = test_run(cat, &mst);
    CHECK_MSG(md && strstr(md, "(int8, SmoothQuant 8)") && strstr(md, "(int8)"), "t.md: %.600s", md ? md : "");
    free(md);
    /* A corrupt run: one byte of its checkpoint changed. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && cp -r b c && printf 'Z' | dd of=c/model.ckpt bs=1 seek=200 conv=notrunc 2>/dev/null",
             f.dir);
    int st;
    free(test_run(cmd, &st));
    cli_fixture_says(&f, "quantize c", 65, "corrupt");
    CHECK(!cli_fixture_exists(&f, "c-int8/model.ckpt"));
    /* fastText's product quantization settings are not int8's. */
    cli_fixture_says(&f, "quantize b --dsub 4 --out bx", 2, "fastText's product quantization settings");
    /* A model without an int8 path; one without any quantized path. */
    cli_fixture_says(&f, "finetune --train tr.tsv --dev dev.tsv --model fasttext --epochs 1 --threads 1 --out ft", 0, NULL);
    cli_fixture_says(&f, "eval --run ft --model fasttext --int8", 2, "fasttext has no int8 inference path");
    cli_fixture_says(&f, "quantize ft --calibrate 8", 2, "fasttext takes none");
    cli_fixture_says(&f, "finetune --train tr.tsv --dev dev.tsv --model textcnn --set dim=8 --epochs 1 --threads 1 --out tc", 0,
              NULL);
    cli_fixture_says(&f, "quantize tc", 2, "textcnn has no quantized path");
    cli_fixture_close(&f);
}

/* n lines of a four-topic multi-label file in fastText's format (a third of
 * them with two labels), into f/name. */
static int write_topics(const CliFixture *f, const char *name, int n, unsigned seed) {
    static const char *const TOPIC[4] = {"sport", "music", "food", "news"};
    static const char *const WORD[4][3] = {{"goal", "match", "team"}, {"song", "guitar", "band"},
                                           {"pizza", "bread", "soup"}, {"election", "vote", "minister"}};
    static char text[200 * 80];
    size_t len = 0;
    for (int i = 0; i < n && len + 100 < sizeof text; i++) {
        seed = seed * 1103515245u + 12345u;
        int a = (int)(seed >> 16) % 4, two = (seed >> 8) % 3 == 0, b = (a + 1 + (int)(seed >> 20) % 3) % 4;
        len += (size_t)snprintf(text + len, sizeof text - len, "__label__%s%s%s the %s today%s%s\n", TOPIC[a],
                                two ? " __label__" : "", two ? TOPIC[b] : "", WORD[a][(seed >> 5) % 3], two ? " " : "",
                                two ? WORD[b][(seed >> 9) % 3] : "");
    }
    return cli_fixture_write(f, name, text, (long)len);
}

/* A multi-label run with tuned thresholds: its int8 copy keeps thresholds.json
 * and is scored under them, as its fp32 best was (so eval of the int8 run
 * works and says what quantize recorded). */
TEST(bert_int8_quantize_keeps_tuned_thresholds) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (write_topics(&f, "tr.txt", 120, 7) || write_topics(&f, "dv.txt", 40, 8)) {
        cli_fixture_close(&f);
        return;
    }
    char args[1024], path[256];
    snprintf(args, sizeof args, "finetune --train tr.txt --dev dv.txt --format fasttext --name topics --model bert "
             "--init none --set vocab=%s/models/vocab/bert-base-uncased-vocab.txt --set threshold=tuned --epochs 2 "
             "--threads 1 --out m", test_shared_dir());
    cli_fixture_says(&f, args, 0, NULL);
    cli_fixture_says(&f, "quantize m --calibrate 30 --threads 1", 0, "int8 m-int8");
    CHECK_MSG(cli_fixture_exists(&f, "m-int8/thresholds.json"), "m-int8 has no thresholds.json");
    cli_fixture_path(&f, "m-int8/results.json", path, sizeof path);
    cJSON *r = json_file_read(path, 1);
    const cJSON *dev = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "best"), "dev");
    char want[64];
    snprintf(want, sizeof want, "%.2f/%.2f", cJSON_GetNumberValue(cJSON_GetObjectItem(dev, "macro_f1")),
             cJSON_GetNumberValue(cJSON_GetObjectItem(dev, "micro_f1")));
    cJSON_Delete(r);
    cli_fixture_says(&f, "eval --run m-int8", 0, want);
    cli_fixture_close(&f);
}
