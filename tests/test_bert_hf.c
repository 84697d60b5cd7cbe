/* test_bert_hf.c — Hugging Face BERT directories in and out (models/bert/bert_hf.h).
 *
 * Import: tests/ref/bert_hf_ref.py writes a tiny random BERT (V 30522, C 32,
 * L 2) in each checkpoint style glue must read — BertForSequenceClassification
 * (F32, position_ids buffer), BertForMaskedLM (F16, gamma/beta names, explicit
 * tied decoder), BertModel (BF16, no "bert." prefix) — and glue's forward on
 * 100 SST-2 dev sentences (real vocabulary; every other row a pair, so segment
 * ids matter) must give PyTorch's hidden states, pooled vectors, logits and MLM
 * logits to 1e-4 relative.
 * Export: a glue model -> `glue export` -> the reference loads it strictly
 * (exactly transformers' expected names, metadata format "pt") and gives our
 * outputs; re-importing gives the same weights bit for bit.
 * Problems: missing tensors (all listed), wrong shapes, unused tensors and an
 * untied decoder (one warning), other model types, pickled weights only, a
 * damaged file, clashing names — each a clear message, never a crash.
 * Sharded weights (model.safetensors.index.json) load like one file.
 * `glue finetune --init HFDIR` fine-tunes from such a directory. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/safetensors.h"
#include "core/files.h"
#include "models/bert/bert.h"
#include "models/bert/bert_hf.h"
#include "tasks/task.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/torchref.h"
#include "models/run_config.h"
#include "text/tokenizer.h"

enum { HF_B = 100, HF_MAX_LEN = 64, HF_N_MLM = 24, HF_V = 30522, HF_C = 32, HF_K = 3 };
/* Relative error allowed per output: max |ours - torch| / max |torch|. */
#define HF_TOL 1e-4

typedef struct {
    int B, T;
    int *ids, *seg, *len;   /* (B, T), (B, T), (B) */
    int pos[HF_N_MLM];      /* flat b * T + t, all real tokens */
} HfBatch;

static void hf_batch_free(HfBatch *b) {
    free(b->ids);
    free(b->seg);
    free(b->len);
}

/* The GLUE data root: data/glue here, else the shared mirror. */
static const char *hf_data_root(char *buf, size_t cap) {
    const Task *t = task_find("sst2");
    char path[4096];
    if (task_split_path(t, task_dev_split(t), task_data_root(), path, sizeof path) == 0) return task_data_root();
    snprintf(buf, cap, "%s/data/glue", test_shared_dir());
    return buf;
}

static const char *hf_vocab_path(char *buf, size_t cap) {
    snprintf(buf, cap, "%s/models/vocab/bert-base-uncased-vocab.txt", test_shared_dir());
    return access(buf, R_OK) == 0 ? buf : tokenizer_default_vocab_path();
}

/* 100 SST-2 dev sentences, tokenized with the real vocabulary; odd rows are
 * pairs (sentence i, sentence i + 1) so token types 0 and 1 both occur.
 * 0 ok, -1 when the data or vocabulary is missing (test skipped). */
static int hf_batch_make(HfBatch *hb) {
    char rootbuf[4096], vbuf[4096];
    Dataset d;
    const Task *task = task_find("sst2");
    if (task_load(task, "dev", hf_data_root(rootbuf, sizeof rootbuf), 0, &d) != 0 || d.n < HF_B + 1) {
        test_skip("SST-2 dev is not available");
        return -1;
    }
    Vocab *v = vocab_load(hf_vocab_path(vbuf, sizeof vbuf));
    Tokenizer *tok = v ? tokenizer_create(v) : NULL;
    if (!CHECK(tok != NULL)) { vocab_free(v); dataset_free(&d); return -1; }
    CHECK_EQ_INT(vocab_size(v), HF_V);
    int ids[HF_B][HF_MAX_LEN], seg[HF_B][HF_MAX_LEN];
    hb->B = HF_B;
    hb->T = 0;
    hb->len = calloc(HF_B, sizeof(int));
    for (int b = 0; b < HF_B; b++) {
        const char *x = d.ex[b].a, *y = b % 2 ? d.ex[b + 1].a : NULL;
        hb->len[b] = tokenizer_encode(tok, x, strlen(x), y, y ? strlen(y) : 0, HF_MAX_LEN, ids[b], seg[b]);
        if (hb->len[b] > hb->T) hb->T = hb->len[b];
    }
    hb->ids = calloc((size_t)HF_B * hb->T, sizeof(int));
    hb->seg = calloc((size_t)HF_B * hb->T, sizeof(int));
    for (int b = 0; b < HF_B; b++)
        for (int t = 0; t < hb->len[b]; t++) {
            hb->ids[b * hb->T + t] = ids[b][t];
            hb->seg[b * hb->T + t] = seg[b][t];
        }
    for (int i = 0; i < HF_N_MLM; i++) {   /* spread over rows, inside each row */
        int b = (i * 37) % HF_B;
        hb->pos[i] = b * hb->T + (i * 7) % hb->len[b];
    }
    tokenizer_free(tok);
    vocab_free(v);
    dataset_free(&d);
    return 0;
}

/* Outputs of one model on the batch, laid out as the reference writes them. */
typedef struct {
    float *hidden, *pooled, *logits, *mlm;  /* (B,T,C), (B,C), (B,K), (N,V); NULL when absent */
    int K;
} HfOut;

static void hf_out_free(HfOut *o) {
    free(o->hidden);
    free(o->pooled);
    free(o->logits);
    free(o->mlm);
}

static float *hf_copy(const float *x, long n) {
    float *y = malloc((size_t)n * sizeof *y);
    memcpy(y, x, (size_t)n * sizeof *y);
    return y;
}

static void hf_forward(Bert *m, const HfBatch *hb, HfOut *o) {
    int B = hb->B, T = hb->T, C = m->cfg.hidden_size;
    memset(o, 0, sizeof *o);
    bert_reserve(m, B, T, m->heads.mlm ? HF_N_MLM : 0, 0);
    bert_forward(m, &(BertBatch){B, T, hb->ids, hb->seg, hb->len}, NULL);
    o->hidden = hf_copy(bert_hidden(m), (long)B * T * C);
    if (m->heads.pooler) o->pooled = hf_copy(bert_pooled(m), (long)B * C);
    if (m->heads.num_labels > 0) {
        o->K = m->heads.num_labels;
        o->logits = malloc(sizeof(float) * (size_t)B * o->K);
        bert_head_forward(m, NULL, o->logits);
    }
    if (m->heads.mlm) {
        int labels[HF_N_MLM];
        for (int i = 0; i < HF_N_MLM; i++) labels[i] = hb->ids[hb->pos[i]];
        bert_mlm_loss(m, hb->pos, labels, HF_N_MLM, 0, NULL);
        o->mlm = hf_copy(bert_mlm_logits(m), (long)HF_N_MLM * m->cfg.vocab_size);
    }
}

/* max |a - b| / max |b| over the rows the mask keeps (mask NULL: all). */
static double hf_rel_err(const float *a, const float *b, long rows, long width, const unsigned char *keep) {
    double worst = 0, scale = 0;
    for (long r = 0; r < rows; r++) {
        if (keep && !keep[r]) continue;
        for (long j = 0; j < width; j++) {
            double d = fabs((double)a[r * width + j] - b[r * width + j]);
            if (!(d <= worst)) worst = d;
            if (fabs(b[r * width + j]) > scale) scale = fabs(b[r * width + j]);
        }
    }
    return scale > 0 ? worst / scale : worst;
}

/* Runs the reference forward on model_dir and compares every output ours has. */
static void hf_compare_with_torch(const char *model_dir, int strict, const HfBatch *hb, const HfOut *ours, int C,
                                  int V, const char *what) {
    int B = hb->B, T = hb->T;
    float *fids = malloc(sizeof(float) * (size_t)B * T), *fseg = malloc(sizeof(float) * (size_t)B * T);
    float flen[HF_B], fpos[HF_N_MLM];
    for (long i = 0; i < (long)B * T; i++) { fids[i] = (float)hb->ids[i]; fseg[i] = (float)hb->seg[i]; }
    for (int b = 0; b < B; b++) flen[b] = (float)hb->len[b];
    for (int i = 0; i < HF_N_MLM; i++) fpos[i] = (float)hb->pos[i];
    RefTensor in[] = {{"ids", fids, (long)B * T}, {"segments", fseg, (long)B * T}, {"lengths", flen, B},
                      {"mlm_pos", fpos, HF_N_MLM}};
    HfOut ref = {0};
    RefTensor out[4];
    int n_out = 0;
    out[n_out++] = (RefTensor){"hidden", ref.hidden = malloc(sizeof(float) * (size_t)B * T * C), (long)B * T * C};
    if (ours->pooled) out[n_out++] = (RefTensor){"pooled", ref.pooled = malloc(sizeof(float) * (size_t)B * C), (long)B * C};
    if (ours->logits)
        out[n_out++] = (RefTensor){"logits", ref.logits = malloc(sizeof(float) * (size_t)B * ours->K), (long)B * ours->K};
    if (ours->mlm)
        out[n_out++] = (RefTensor){"mlm", ref.mlm = malloc(sizeof(float) * (size_t)HF_N_MLM * V), (long)HF_N_MLM * V};
    char args[4200];
    snprintf(args, sizeof args, "forward %s %d %d %d %d", model_dir, strict, B, T, ours->mlm ? HF_N_MLM : 0);
    if (torchref_run("bert_hf_ref.py", args, in, 4, out, n_out) == 1) {
        /* Hidden states at padding positions are meaningless: compare real tokens. */
        unsigned char *keep = calloc((size_t)B * T, 1);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < hb->len[b]; t++) keep[b * T + t] = 1;
        double e = hf_rel_err(ours->hidden, ref.hidden, (long)B * T, C, keep);
        CHECK_MSG(e <= HF_TOL, "%s: hidden states differ from torch by %g (relative)", what, e);
        if (ours->pooled) {
            e = hf_rel_err(ours->pooled, ref.pooled, B, C, NULL);
            CHECK_MSG(e <= HF_TOL, "%s: pooled differs from torch by %g", what, e);
        }
        if (ours->logits) {
            e = hf_rel_err(ours->logits, ref.logits, B, ours->K, NULL);
            CHECK_MSG(e <= HF_TOL, "%s: classifier logits differ from torch by %g", what, e);
        }
        if (ours->mlm) {
            e = hf_rel_err(ours->mlm, ref.mlm, HF_N_MLM, V, NULL);
            CHECK_MSG(e <= HF_TOL, "%s: MLM logits differ from torch by %g", what, e);
        }
        free(keep);
    }
    hf_out_free(&ref);
    free(fids);
    free(fseg);
}

static int hf_mkdtemp(char *dir, size_t cap) {
    return CHECK(scratch_dir("bert_hf", dir, cap));
}

static void hf_rmdir(const char *dir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Writes a reference checkpoint of `style` into dir; 1 ok, 0 skipped, -1 failed. */
static int hf_make_reference(const char *dir, const char *style, int seed) {
    char cmd[4400];
    snprintf(cmd, sizeof cmd,
             "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/ref/bert_hf_ref.py make %s %s %d 2>&1", dir, style, seed);
    int status = -1;
    char *log = test_run(cmd, &status);
    int rc = status == 77 ? 0 : CHECK_MSG(status == 0, "%s:\n%s", cmd, log) ? 1 : -1;
    if (rc == 0) test_skip("python3-torch is not installed");
    free(log);
    return rc;
}

/* Loads a reference-written directory, checks the heads found, compares with torch. */
static void hf_import_case(const char *style, BertHeads want, int seed) {
    HfBatch hb;
    if (hf_batch_make(&hb) != 0) return;
    char dir[SCRATCH_PATH_MAX];
    if (hf_mkdtemp(dir, sizeof dir) && hf_make_reference(dir, style, seed) == 1) {
        CHECK(bert_hf_is_dir(dir));
        StderrCapture cap;
        stderr_capture_begin(&cap);
        Checkpoint *c = bert_hf_read(dir);
        char *msg = stderr_capture_end(&cap);
        /* Only the known extras are dropped silently: nothing to warn about. */
        CHECK_MSG(msg && msg[0] == '\0', "%s: unexpected messages: %s", style, msg ? msg : "");
        free(msg);
        Bert *m = c ? bert_from_checkpoint(c, NULL, 1, 1) : NULL;
        checkpoint_free(c);
        CHECK_MSG(m != NULL, "%s: not loaded", style);
        if (m) {
            CHECK(m->cfg.vocab_size == HF_V && m->cfg.hidden_size == HF_C && m->cfg.num_layers == 2 &&
                  m->cfg.intermediate_size == 64 && m->cfg.max_position == 128);
            CHECK_MSG(m->heads.mlm == want.mlm && m->heads.pooler == want.pooler &&
                          m->heads.num_labels == want.num_labels,
                      "%s: heads mlm %d pooler %d K %d", style, m->heads.mlm, m->heads.pooler, m->heads.num_labels);
            HfOut o;
            hf_forward(m, &hb, &o);
            hf_compare_with_torch(dir, 0, &hb, &o, HF_C, HF_V, style);
            hf_out_free(&o);
            bert_free(m);
        }
    }
    hf_rmdir(dir);
    hf_batch_free(&hb);
}

TEST(bert_hf_import_seqcls_matches_torch) { hf_import_case("seqcls", (BertHeads){.mlm = 0, .pooler = 1, .num_labels = HF_K}, 11); }
TEST(bert_hf_import_masked_lm_f16_matches_torch) { hf_import_case("mlm", (BertHeads){.mlm = 1, .pooler = 0, .num_labels = 0}, 12); }
TEST(bert_hf_import_base_model_bf16_matches_torch) { hf_import_case("base", (BertHeads){.mlm = 0, .pooler = 1, .num_labels = 0}, 13); }

/* A tiny BERT whose weights are far from init (so every tensor matters). */
static Bert *hf_random_bert(BertHeads heads, uint64_t seed) {
    BertConfig cfg = {HF_V, HF_C, 2, 4, 64, 128, 2, 0.1f, 0.1f, 1e-12f, 0, 0, 0};
    Bert *m = bert_create(&cfg, &heads, seed);
    Rng rng;
    rng_seed(&rng, seed + 100);
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        const ParamTensor *pt = params_tensor(m->params, h);
        float *x = params_data(m->params, h);
        int gain = strstr(pt->name, "LayerNorm.weight") != NULL;
        for (long i = 0; i < pt->numel; i++) x[i] = (gain ? 1.0f : 0.0f) + 0.2f * rng_normal(&rng);
    }
    return m;
}

/* glue model -> glue export -> strict torch load, and -> bert_hf_read again. */
static void hf_export_case(BertHeads heads, const char *arch, uint64_t seed) {
    HfBatch hb;
    if (hf_batch_make(&hb) != 0) return;
    char dir[SCRATCH_PATH_MAX], ckpt[192], out[192], vbuf[4096], cmd[8400];
    Bert *m = hf_random_bert(heads, seed);
    if (hf_mkdtemp(dir, sizeof dir)) {
        snprintf(ckpt, sizeof ckpt, "%s/model.ckpt", dir);
        snprintf(out, sizeof out, "%s/hf", dir);
        CHECK(bert_save(m, ckpt) == 0);
        snprintf(cmd, sizeof cmd, "%s export %s %s --vocab %s 2>&1", test_glue_bin(), ckpt, out,
                 hf_vocab_path(vbuf, sizeof vbuf));
        int status = -1;
        char *log = test_run(cmd, &status);
        CHECK_MSG(status == 0, "%s:\n%s", cmd, log);
        free(log);
        char path[256];
        cJSON *cfg = (snprintf(path, sizeof path, "%s/config.json", out), json_file_read(path, 1));
        const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cfg, "architectures"), 0);
        CHECK_MSG(cJSON_IsString(a) && strcmp(a->valuestring, arch) == 0, "architecture for %s", arch);
        cJSON_Delete(cfg);
        snprintf(path, sizeof path, "%s/vocab.txt", out);
        CHECK(file_exists(path));
        /* Again into the same folder: refused (exit 2) unless --overwrite; it wrote over an earlier export,
         * or another model's folder, silently. */
        cmd[strlen(cmd) - 5] = '\0';   /* without " 2>&1" */
        char again[8500];
        snprintf(again, sizeof again, "%s 2>&1", cmd);
        log = test_run(again, &status);
        CHECK_MSG(status == 2 && log && strstr(log, "already holds config.json"), "%s: exit %d:\n%s", again, status, log);
        free(log);
        snprintf(again, sizeof again, "%s --overwrite 2>&1", cmd);
        log = test_run(again, &status);
        CHECK_MSG(status == 0, "%s: exit %d:\n%s", again, status, log);
        free(log);
        /* A vocabulary of another size is the input's contents: 65 (it was 1), nothing written. */
        char small[192];
        snprintf(small, sizeof small, "%s/small-vocab.txt", dir);
        FILE *sv = fopen(small, "w");
        if (sv) fputs("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", sv), fclose(sv);
        snprintf(again, sizeof again, "%s export %s %s/hf-small --vocab %s 2>&1", test_glue_bin(), ckpt, dir, small);
        log = test_run(again, &status);
        CHECK_MSG(status == 65 && log && strstr(log, "has 5 tokens"), "%s: exit %d:\n%s", again, status, log);
        free(log);
        HfOut o;
        hf_forward(m, &hb, &o);
        hf_compare_with_torch(out, 1, &hb, &o, HF_C, HF_V, arch);
        hf_out_free(&o);
        /* Back in: the same tensors, bit for bit. */
        Checkpoint *c = bert_hf_read(out);
        Bert *back = c ? bert_from_checkpoint(c, NULL, 1, 99) : NULL;
        checkpoint_free(c);
        CHECK(back != NULL);
        if (back) {
            CHECK(back->heads.mlm == heads.mlm && back->heads.num_labels == heads.num_labels);
            CHECK_EQ_INT(params_num_tensors(back->params), params_num_tensors(m->params));
            for (int h = 0; h < params_num_tensors(m->params); h++) {
                const ParamTensor *pt = params_tensor(m->params, h);
                int j = params_find(back->params, pt->name);
                CHECK_MSG(j >= 0 && memcmp(params_data(back->params, j), params_data(m->params, h),
                                           sizeof(float) * (size_t)pt->numel) == 0,
                          "%s: %s differs after export + import", arch, pt->name);
            }
            bert_free(back);
        }
    }
    bert_free(m);
    hf_rmdir(dir);
    hf_batch_free(&hb);
}

TEST(bert_hf_export_seqcls_read_by_torch) {
    hf_export_case((BertHeads){.mlm = 0, .pooler = 1, .num_labels = HF_K}, "BertForSequenceClassification", 21);
}
TEST(bert_hf_export_masked_lm_read_by_torch) {
    hf_export_case((BertHeads){.mlm = 1, .pooler = 1, .num_labels = 0}, "BertForMaskedLM", 22);
}
TEST(bert_hf_export_base_model_read_by_torch) { hf_export_case((BertHeads){.mlm = 0, .pooler = 1, .num_labels = 0}, "BertModel", 23); }

/* ---- problems: directories built here from a glue model, no Python needed ---- */

/* Writes m as a HF directory (export), then lets edit() change the tensor
 * list before model.safetensors is rewritten. */
typedef struct {
    SafeTensorOut t[64];
    int n;
} HfList;

static void hf_list_of(const Bert *m, HfList *l) {
    l->n = 0;
    for (int h = 0; h < params_num_tensors(m->params) && l->n < 64; h++) {
        const ParamTensor *pt = params_tensor(m->params, h);
        SafeTensorOut *t = &l->t[l->n++];
        t->name = pt->name;
        t->ndim = pt->ndim;
        for (int d = 0; d < pt->ndim; d++) t->shape[d] = pt->shape[d];
        t->data = params_data(m->params, h);
    }
}

static void hf_list_remove(HfList *l, const char *name) {
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->t[i].name, name) == 0) { l->t[i] = l->t[--l->n]; return; }
    CHECK_MSG(0, "no %s to remove", name);
}

static void hf_write_list(const char *dir, const HfList *l) {
    char path[256];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(safetensors_write(path, l->t, l->n, NULL) == 0);
}

/* bert_hf_read(dir) result and what it printed. */
static Checkpoint *hf_read_capture(const char *dir, char **msg) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Checkpoint *c = bert_hf_read(dir);
    *msg = stderr_capture_end(&cap);
    return c;
}

static void hf_expect_error(const char *dir, const char *want, const char *what) {
    char *msg = NULL;
    Checkpoint *c = hf_read_capture(dir, &msg);
    CHECK_MSG(c == NULL, "%s: accepted", what);
    CHECK_MSG(msg && strstr(msg, want), "%s: message lacks '%s': %s", what, want, msg ? msg : "");
    checkpoint_free(c);
    free(msg);
}

static void hf_set_config(const char *dir, const char *key, const char *value) {
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    cJSON *j = json_file_read(path, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(j, key);
    if (value) cJSON_AddStringToObject(j, key, value);
    CHECK(json_file_write(path, j) == 0);
    cJSON_Delete(j);
}

TEST(bert_hf_reports_problems) {
    char dir[SCRATCH_PATH_MAX];
    if (!hf_mkdtemp(dir, sizeof dir)) return;
    Bert *m = hf_random_bert((BertHeads){.mlm = 1, .pooler = 1, .num_labels = 0}, 5);
    CHECK(bert_hf_export(m, dir, NULL, NULL) == 0);
    HfList l;

    /* Missing tensors: all named in one message. */
    hf_list_of(m, &l);
    hf_list_remove(&l, "bert.encoder.layer.1.output.dense.bias");
    hf_list_remove(&l, "bert.embeddings.LayerNorm.weight");
    hf_write_list(dir, &l);
    hf_expect_error(dir, "missing 2 tensors", "missing");
    hf_expect_error(dir, "bert.encoder.layer.1.output.dense.bias", "missing names the layer tensor");

    /* Extra tensors (the next-sentence head) and an untied decoder: one warning, still loads. */
    hf_list_of(m, &l);
    float nsp[2 * HF_C] = {0}, *decoder = malloc(sizeof(float) * HF_V * HF_C);
    memcpy(decoder, m->w.word_emb, sizeof(float) * HF_V * HF_C);
    decoder[7] += 1.0f;
    l.t[l.n++] = (SafeTensorOut){"cls.seq_relationship.weight", 2, {2, HF_C}, nsp};
    l.t[l.n++] = (SafeTensorOut){"cls.predictions.decoder.weight", 2, {HF_V, HF_C}, decoder};
    hf_write_list(dir, &l);
    char *msg = NULL;
    Checkpoint *c = hf_read_capture(dir, &msg);
    CHECK(c != NULL);
    CHECK_MSG(msg && strstr(msg, "warning") && strstr(msg, "ignoring 2 tensors") &&
                  strstr(msg, "cls.seq_relationship.weight") && strstr(msg, "untied"),
              "warning: %s", msg ? msg : "");
    free(msg);
    if (c) CHECK(checkpoint_find_tensor(c, "cls.seq_relationship.weight") == NULL);
    checkpoint_free(c);
    free(decoder);

    /* A tensor whose shape disagrees with config.json. */
    hf_list_of(m, &l);
    for (int i = 0; i < l.n; i++)
        if (strcmp(l.t[i].name, "bert.pooler.dense.weight") == 0) { l.t[i].shape[0] = 16; l.t[i].shape[1] = 64; }
    hf_write_list(dir, &l);
    hf_expect_error(dir, "'bert.pooler.dense.weight' has shape (16, 64), config.json implies (32, 32)", "shape");

    /* Both spellings of one tensor. */
    hf_list_of(m, &l);
    l.t[l.n] = l.t[0];
    l.t[l.n].name = strncmp(l.t[0].name, "bert.", 5) == 0 ? l.t[0].name + 5 : "bert.x";
    l.n++;
    hf_write_list(dir, &l);
    hf_expect_error(dir, "two tensors map to", "clash");

    /* A damaged weights file. */
    hf_list_of(m, &l);
    hf_write_list(dir, &l);
    char path[256];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(truncate(path, 5000) == 0);
    hf_expect_error(dir, "truncated", "truncated weights");

    /* Other model types, an activation BERT does not have, no config at all. */
    hf_write_list(dir, &l);
    hf_set_config(dir, "model_type", "roberta");
    hf_expect_error(dir, "model_type is roberta", "roberta");
    hf_set_config(dir, "model_type", "bert");
    hf_set_config(dir, "hidden_act", "relu");
    hf_expect_error(dir, "hidden_act", "relu");
    snprintf(path, sizeof path, "%s/config.json", dir);
    unlink(path);
    hf_expect_error(dir, "config.json", "no config");

    /* A model with ALiBi is not a BertModel: the export refuses, naming why. */
    m->cfg.alibi = 1;
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = bert_hf_export(m, dir, NULL, NULL);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(rc == -1 && err && strstr(err, "ALiBi"), "exporting an ALiBi model: rc %d, %s", rc, err ? err : "");
    free(err);
    m->cfg.alibi = 0;

    /* Pickled PyTorch weights only. */
    bert_hf_export(m, dir, NULL, NULL);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    char bin[256];
    snprintf(bin, sizeof bin, "%s/pytorch_model.bin", dir);
    CHECK(rename(path, bin) == 0);
    CHECK(bert_hf_is_dir(dir));
    hf_expect_error(dir, "safetensors only", "pickle");
    /* A glue run directory (config.json + model.ckpt) is not a HF directory. */
    CHECK(unlink(bin) == 0);
    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    CHECK(bert_save(m, path) == 0);
    CHECK(!bert_hf_is_dir(dir));

    bert_free(m);
    hf_rmdir(dir);
}

/* Writes l as two shards plus model.safetensors.index.json (as save_pretrained
 * does for big models); extra (name -> shard 1) is listed but not stored. */
static void hf_write_sharded(const char *dir, const HfList *l, const char *extra) {
    static const char *const SHARD[2] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
    char path[256];
    int half = l->n / 2;
    cJSON *index = cJSON_CreateObject(), *map = cJSON_AddObjectToObject(index, "weight_map");
    cJSON_AddItemToObject(index, "metadata", cJSON_CreateObject());
    for (int s = 0; s < 2; s++) {
        const SafeTensorOut *t = l->t + (s ? half : 0);
        int n = s ? l->n - half : half;
        snprintf(path, sizeof path, "%s/%s", dir, SHARD[s]);
        CHECK(safetensors_write(path, t, n, NULL) == 0);
        for (int i = 0; i < n; i++) cJSON_AddStringToObject(map, t[i].name, SHARD[s]);
    }
    if (extra) cJSON_AddStringToObject(map, extra, SHARD[0]);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    CHECK(json_file_write(path, index) == 0);
    cJSON_Delete(index);
}

TEST(bert_hf_reads_sharded_weights) {
    char dir[SCRATCH_PATH_MAX], path[256];
    if (!hf_mkdtemp(dir, sizeof dir)) return;
    Bert *m = hf_random_bert((BertHeads){.mlm = 1, .pooler = 1, .num_labels = 0}, 8);
    CHECK(bert_hf_export(m, dir, NULL, NULL) == 0);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    unlink(path);
    HfList l;
    hf_list_of(m, &l);
    hf_write_sharded(dir, &l, NULL);
    Checkpoint *c = bert_hf_read(dir);
    Bert *back = c ? bert_from_checkpoint(c, NULL, 1, 77) : NULL;
    checkpoint_free(c);
    CHECK(back != NULL);
    for (int h = 0; back && h < params_num_tensors(m->params); h++) {
        const ParamTensor *pt = params_tensor(m->params, h);
        int j = params_find(back->params, pt->name);
        CHECK_MSG(j >= 0 && memcmp(params_data(back->params, j), params_data(m->params, h),
                                   sizeof(float) * (size_t)pt->numel) == 0, "%s differs", pt->name);
    }
    bert_free(back);
    /* An index naming a tensor its shard lacks; a missing shard. */
    hf_write_sharded(dir, &l, "bert.extra.weight");
    hf_expect_error(dir, "lists 'bert.extra.weight' in model-00001-of-00002.safetensors", "index vs shard");
    hf_write_sharded(dir, &l, NULL);
    snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dir);
    unlink(path);
    hf_expect_error(dir, "model-00002-of-00002.safetensors: cannot open", "missing shard");
    bert_free(m);
    hf_rmdir(dir);
}

/* `glue finetune sst2 --init DIR` with a Hugging Face directory (here written
 * by bert_hf_export with the real vocabulary, an MLM head and a pooler) on the
 * first rows of the real SST-2: the encoder's config and vocabulary come from
 * the directory, the MLM head is dropped, the classifier is new. */
TEST(bert_hf_finetune_init_from_hf_dir) {
    char root[SCRATCH_PATH_MAX], rootbuf[4096], vbuf[4096], src[4096], cmd[16384];
    const Task *task = task_find("sst2");
    const char *data = hf_data_root(rootbuf, sizeof rootbuf);
    Vocab *v = vocab_load(hf_vocab_path(vbuf, sizeof vbuf));
    if (task_split_path(task, task_split(task, "train"), data, src, sizeof src) != 0 || !v) {
        test_skip("SST-2 train or the vocabulary is not available");
        vocab_free(v);
        return;
    }
    if (!hf_mkdtemp(root, sizeof root)) { vocab_free(v); return; }
    /* A small SST-2: the first 256 training and 128 dev rows. */
    snprintf(cmd, sizeof cmd, "mkdir -p %s/glue/SST-2 && zcat -f '%s' | head -n 257 > %s/glue/SST-2/train.tsv",
             root, src, root);
    CHECK(system(cmd) == 0);
    CHECK(task_split_path(task, task_dev_split(task), data, src, sizeof src) == 0);
    snprintf(cmd, sizeof cmd, "zcat -f '%s' | head -n 129 > %s/glue/SST-2/dev.tsv", src, root);
    CHECK(system(cmd) == 0);
    BertConfig cfg = {HF_V, 16, 1, 2, 32, 64, 2, 0.1f, 0.1f, 1e-12f, 0, 0, 0};
    Bert *m = bert_create(&cfg, &(BertHeads){.mlm = 1, .pooler = 1}, 3);
    char dir[192];
    snprintf(dir, sizeof dir, "%s/hf", root);
    CHECK(bert_hf_export(m, dir, v, NULL) == 0);
    long C = cfg.hidden_size, mlm_head = C * C + C + 2 * C + cfg.vocab_size;
    long want = bert_num_params(m) - mlm_head + 2 * C + 2;   /* + a 2-label classifier */
    snprintf(cmd, sizeof cmd,
             "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results %s finetune sst2 --threads 1 --init %s "
             "--max-len 32 --batch 32 --epochs 1 --json 2>%s/err.txt",
             root, root, root, test_glue_bin(), dir, root);
    int status = -1;
    char *out = test_run(cmd, &status);
    char errpath[192];
    snprintf(errpath, sizeof errpath, "%s/err.txt", root);
    size_t elen = 0;
    char *err = file_read(errpath, &elen);
    CHECK_MSG(status == 0, "finetune --init %s failed (%d): %s", dir, status, err ? err : "");
    CHECK_MSG(err && !strstr(err, "ignoring"), "tensors reported unused: %s", err ? err : "");
    cJSON *j = cJSON_Parse(out);
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(j, "num_params");
    CHECK_MSG(cJSON_IsNumber(np) && (long)np->valuedouble == want, "num_params %g, want %ld (encoder + pooler + "
              "classifier)", cJSON_IsNumber(np) ? np->valuedouble : -1.0, want);
    cJSON_Delete(j);
    free(out);
    free(err);
    bert_free(m);
    vocab_free(v);
    hf_rmdir(root);
}

/* `glue predict TASK --init DIR` scores a Hugging Face classifier directory as
 * it is: the probabilities of the reference's logits (MNLI, 3 labels) for the
 * batch's pairs, through the CLI; id2label names in another order permute the
 * outputs to the task's labels; a directory that does not fit the task is one
 * clear error. */
TEST(bert_hf_predict_init_matches_torch) {
    HfBatch hb;
    if (hf_batch_make(&hb) != 0) return;
    char dir[SCRATCH_PATH_MAX], vbuf[4096], rootbuf[4096], cmd[8192];
    Dataset d;
    const Task *sst2 = task_find("sst2"), *mnli = task_find("mnli");
    if (task_load(sst2, "dev", hf_data_root(rootbuf, sizeof rootbuf), 0, &d) != 0) return;
    if (hf_mkdtemp(dir, sizeof dir) && hf_make_reference(dir, "seqcls", 31) == 1) {
        snprintf(cmd, sizeof cmd, "cp '%s' %s/vocab.txt", hf_vocab_path(vbuf, sizeof vbuf), dir);
        CHECK(system(cmd) == 0);
        /* The reference's logits for every row of the batch. */
        int B = hb.B, T = hb.T;
        float *fids = malloc(sizeof(float) * (size_t)B * T), *fseg = malloc(sizeof(float) * (size_t)B * T);
        float flen[HF_B], fpos[HF_N_MLM] = {0}, logits[HF_B * HF_K];
        for (long i = 0; i < (long)B * T; i++) { fids[i] = (float)hb.ids[i]; fseg[i] = (float)hb.seg[i]; }
        for (int b = 0; b < B; b++) flen[b] = (float)hb.len[b];
        RefTensor in[] = {{"ids", fids, (long)B * T}, {"segments", fseg, (long)B * T}, {"lengths", flen, B},
                          {"mlm_pos", fpos, HF_N_MLM}};
        float *hidden = malloc(sizeof(float) * (size_t)B * T * HF_C), pooled[HF_B * HF_C];
        RefTensor out[] = {{"hidden", hidden, (long)B * T * HF_C}, {"pooled", pooled, (long)B * HF_C},
                           {"logits", logits, (long)B * HF_K}};
        char args[256];
        snprintf(args, sizeof args, "forward %s 0 %d %d 0", dir, B, T);
        if (torchref_run("bert_hf_ref.py", args, in, 4, out, 3) == 1) {
            /* The pairs (odd rows) that fit in HF_MAX_LEN unshortened, as stdin lines. */
            char input[192];
            snprintf(input, sizeof input, "%s/in.tsv", dir);
            FILE *f = fopen(input, "w");
            int rows[HF_B], n = 0;
            for (int b = 1; b < B && n < 12; b += 2)
                if (hb.len[b] < HF_MAX_LEN) {
                    fprintf(f, "%s\t%s\n", d.ex[b].a, d.ex[b + 1].a);
                    rows[n++] = b;
                }
            fclose(f);
            for (int perm = 0; perm < 2; perm++) {
                /* perm 1: id2label names the outputs neutral, contradiction, entailment. */
                static const int MAP[2][3] = {{0, 1, 2}, {2, 0, 1}};
                if (perm) {
                    snprintf(cmd, sizeof cmd,
                             "sed -i 's/\"LABEL_0\"/\"neutral\"/; s/\"LABEL_1\"/\"contradiction\"/; "
                             "s/\"LABEL_2\"/\"entailment\"/' %s/config.json",
                             dir);
                    CHECK(system(cmd) == 0);
                }
                snprintf(cmd, sizeof cmd, "%s predict mnli --init %s --json < %s 2>&1", test_glue_bin(), dir, input);
                int st;
                char *o = test_run(cmd, &st);
                cJSON *j = cJSON_Parse(o);
                const cJSON *preds = cJSON_GetObjectItemCaseSensitive(j, "predictions");
                CHECK_MSG(st == 0 && cJSON_GetArraySize(preds) == n, "predict --init (%d): %s", st, o);
                double worst = 0;
                for (int i = 0; i < n && cJSON_GetArraySize(preds) == n; i++) {
                    const float *z = logits + rows[i] * HF_K;
                    double mx = fmax(z[0], fmax(z[1], z[2])), e[3], s = 0;
                    for (int k = 0; k < 3; k++) s += e[k] = exp(z[k] - mx);
                    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(preds, i), "probabilities");
                    for (int k = 0; k < 3; k++) {   /* output k is task label MAP[perm][k] */
                        double got = run_config_number(p, mnli->labels[MAP[perm][k]], -1);
                        worst = fmax(worst, fabs(got - e[k] / s));
                    }
                }
                CHECK_MSG(worst < 1e-5, "id2label order %d: probabilities differ from torch's by %g", perm, worst);
                cJSON_Delete(j);
                free(o);
            }
            /* Not this task's model: a 3-class head for SST-2, a label it does not know,
             * a fourth label over the 3-row classifier (accepted before issue 42). The
             * model files' contents: exit 65. */
            static const char *const BAD[][3] = {{"sst2", "a", "needs 2 classes"},
                                                 {"mnli", "a b", "does not match"},
                                                 {"mnli", "a b", "id2label names 4 labels but the classifier has 3"}};
            for (int k = 0; k < 3; k++) {
                if (k == 1) {
                    snprintf(cmd, sizeof cmd, "sed -i 's/\"neutral\"/\"maybe\"/' %s/config.json", dir);
                    CHECK(system(cmd) == 0);
                }
                if (k == 2) {   /* "maybe" back to "neutral", and a 4th name */
                    snprintf(cmd, sizeof cmd, "python3 -c \"import json; p='%s/config.json'; c=json.load(open(p)); "
                             "c['id2label'] = {k: ('neutral' if v == 'maybe' else v) for k, v in c['id2label'].items()}; "
                             "c['id2label']['3'] = 'unsure'; json.dump(c, open(p, 'w'))\"", dir);
                    CHECK(system(cmd) == 0);
                }
                snprintf(cmd, sizeof cmd, "%s predict %s --init %s %s 2>&1", test_glue_bin(), BAD[k][0], dir, BAD[k][1]);
                int st;
                char *o = test_run(cmd, &st);
                CHECK_MSG(st == 65 && strstr(o, BAD[k][2]), "%s: status %d: %s", BAD[k][0], st, o);
                free(o);
            }
        }
        free(fids);
        free(fseg);
        free(hidden);
    }
    hf_rmdir(dir);
    dataset_free(&d);
    hf_batch_free(&hb);
}
