/* test_seq2seq_attn.c — the label decoder (src/models/baselines/seq2seq_attn*):
 * the teacher-forced logits, loss and every parameter's gradient against a
 * PyTorch reference (tests/ref/seq2seq_attn_ref.py: single texts, pairs, an
 * empty text, label sets of different lengths); beam search against brute
 * force over every label set of a tiny model; learning a single-label, a pair
 * and a multi-label fixture; save/load, exact resume, batch independence; a
 * non-finite step refused; a scored task refused. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "metrics/multilabel.h"
#include "models/baselines/seq2seq_attn.h"
#include "tests/capture.h"
#include "tests/cli_fixture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"
#include "tests/zoo_checks.h"
#include "train/decision.h"

static const SynthTask SA_SINGLE = {.name = "single", .task = &SYNTH_TASK3, .kind = SYNTH_CLASS,
                                    .class_words = 4, .noise_words = 60, .len_min = 3, .len_max = 10,
                                    .signal_min = 1, .signal_max = 2};
static const SynthTask SA_TWO = {.name = "two", .task = &SYNTH_TASK2, .kind = SYNTH_CLASS,
                                 .class_words = 4, .noise_words = 60, .len_min = 3, .len_max = 10,
                                 .signal_min = 1, .signal_max = 2};
static const SynthTask SA_PAIR = {.name = "pair", .task = &SYNTH_TASK2, .kind = SYNTH_CLASS_IN_B,
                                  .class_words = 4, .noise_words = 60, .len_min = 3, .len_max = 8,
                                  .signal_min = 1, .signal_max = 1};
static const SynthTask SA_MULTI = {.name = "multi-label", .task = &SYNTH_TASKML, .kind = SYNTH_MULTI,
                                   .class_words = 6, .noise_words = 40, .len_min = 4, .len_max = 7,
                                   .signal_min = 1, .signal_max = 2};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }

static cJSON *small_config(const Task *t, int epochs) {
    cJSON *c = SEQ2SEQ_ATTN_OPS.default_config(t);
    set_num(c, "dim", 16);
    set_num(c, "hidden", 16);
    set_num(c, "label_dim", 16);
    set_num(c, "attention", 16);
    set_num(c, "max_len", 32);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 20);
    set_num(c, "eval_batch", 20);
    set_num(c, "lr", 0.01);
    set_num(c, "dropout", 0.1);
    return c;
}

/* ---- PyTorch reference ---- */

enum { REF_N = 4, REF_MAXLEN = 9 };

static void sa_compare_torch(const SynthTask *st) {
    Dataset d = synth_dataset(st, REF_N, 3);
    free(d.ex[1].a);
    d.ex[1].a = xstrdup("");
    cJSON *cfg = SEQ2SEQ_ATTN_OPS.default_config(st->task);
    set_num(cfg, "dim", 4);
    set_num(cfg, "hidden", 3);
    set_num(cfg, "label_dim", 5);
    set_num(cfg, "attention", 6);
    set_num(cfg, "max_len", REF_MAXLEN);
    set_num(cfg, "max_labels", 3);
    Seq2SeqAttn *m = (Seq2SeqAttn *)SEQ2SEQ_ATTN_OPS.create(cfg, st->task, &d, 7);
    if (!CHECK(m != NULL)) goto done;
    Params *p = m->base.params;
    SaEncoded *e = (SaEncoded *)SEQ2SEQ_ATTN_OPS.encode((Model *)m, &d);
    int rows[REF_N] = {2, 1, 3, 0}, n = REF_N, ld = m->cfg.max_labels + 1, tl[REF_N], tg[REF_N * 8];
    for (int i = 0; i < n; i++) {
        tl[i] = e->tgt_len[rows[i]];
        memcpy(tg + i * ld, e->tgt + rows[i] * ld, sizeof(int) * (size_t)ld);
    }
    params_zero_grad(p);
    float loss = sa_forward_backward(m, e->words, rows, n, tg, ld, tl, 0, 1);
    const SaWork *w = &m->w;
    int Rs = w->Rs, T = w->T, Td = w->Td, Vo = m->Vo;
    if (st->kind == SYNTH_MULTI) CHECK_MSG(Td >= 3, "label sets of one length only (%d steps)", Td);
    float *ids = xcalloc((size_t)Rs * T, sizeof(float)), lens[2 * REF_N], yin[8 * REF_N], yout[8 * REF_N];
    for (int j = 0; j < Rs; j++) {
        lens[j] = (float)w->lens[j];
        for (int t = 0; t < T; t++) ids[j * T + t] = (float)w->ids[j * T + t];
    }
    for (int i = 0; i < Td * n; i++) {
        yin[i] = (float)w->y_in[i];
        yout[i] = (float)w->y_out[i];
    }
    int np = params_num_tensors(p), ni = 0, no = 0;
    RefTensor *in = xcalloc((size_t)np + 4, sizeof *in), *out = xcalloc((size_t)np + 2, sizeof *out);
    char (*gname)[PARAM_NAME_MAX + 8] = xcalloc((size_t)np, sizeof *gname);
    float **grads = xcalloc((size_t)np, sizeof *grads), *logits = xmalloc(sizeof(float) * (size_t)Td * n * Vo), rloss;
    for (int h = 0; h < np; h++) {
        const ParamTensor *t = params_tensor(p, h);
        in[ni++] = (RefTensor){t->name, params_data(p, h), t->numel};
        snprintf(gname[h], sizeof gname[h], "grad.%s", t->name);
        grads[h] = xmalloc((size_t)t->numel * sizeof **grads);
        out[no++] = (RefTensor){gname[h], grads[h], t->numel};
    }
    in[ni++] = (RefTensor){"ids", ids, (long)Rs * T};
    in[ni++] = (RefTensor){"lengths", lens, Rs};
    in[ni++] = (RefTensor){"y_in", yin, (long)Td * n};
    in[ni++] = (RefTensor){"y_out", yout, (long)Td * n};
    out[no++] = (RefTensor){"logits", logits, (long)Td * n * Vo};
    out[no++] = (RefTensor){"loss", &rloss, 1};
    char args[160];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d %d", word_vocab_size(&m->base.vocab), m->cfg.dim,
             m->cfg.hidden, m->cfg.label_dim, m->cfg.attention, m->K, m->base.pair, n, T, Td);
    if (torchref_run("seq2seq_attn_ref.py", args, in, ni, out, no) == 1) {
        double err = torchref_max_diff(w->logits, logits, (long)Td * n * Vo);
        CHECK_MSG(err <= 1e-4, "%s logits: max diff %g", st->name, err);
        CHECK_NEAR(loss, rloss, 1e-5);
        for (int h = 0; h < np; h++) {
            const ParamTensor *t = params_tensor(p, h);
            long skip = strcmp(t->name, "emb") == 0 ? m->cfg.dim : 0;   /* the padding row is held at zero */
            err = torchref_max_diff(params_grad(p, h) + skip, grads[h] + skip, t->numel - skip);
            CHECK_MSG(err <= 1e-4, "%s gradient of %s: max diff %g", st->name, t->name, err);
        }
    }
    for (int h = 0; h < np; h++) free(grads[h]);
    free(grads); free(gname); free(in); free(out); free(ids); free(logits);
    SEQ2SEQ_ATTN_OPS.encoded_free((Encoded *)e);
    SEQ2SEQ_ATTN_OPS.free((Model *)m);
done:
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(seq2seq_attn_matches_torch_single) { sa_compare_torch(&SA_SINGLE); }
TEST(seq2seq_attn_matches_torch_pair) { sa_compare_torch(&SA_PAIR); }
TEST(seq2seq_attn_matches_torch_label_sets) { sa_compare_torch(&SA_MULTI); }

/* ---- beam search against brute force ---- */

/* log P(set) of row `row` by the teacher-forced path: -loss x tokens. */
static double sa_set_logprob(Seq2SeqAttn *m, const SaEncoded *e, int row, unsigned mask) {
    int tg[TASK_MAX_LABELS + 1], n = 0;
    for (int r = 0; r < m->K; r++)
        if (mask >> m->order[r] & 1) tg[n++] = m->order[r];
    tg[n++] = m->K;
    return -(double)sa_forward_backward(m, e->words, &row, 1, tg, n, &n, 0, 0) * n;
}

TEST(seq2seq_attn_beam_equals_brute_force) {
    Dataset d = synth_dataset(&SA_MULTI, 30, 5);
    cJSON *cfg = small_config(&SYNTH_TASKML, 1);
    set_num(cfg, "max_labels", 4);
    set_num(cfg, "dim", 6);
    set_num(cfg, "hidden", 5);
    Seq2SeqAttn *m = (Seq2SeqAttn *)SEQ2SEQ_ATTN_OPS.create(cfg, &SYNTH_TASKML, &d, 11);
    if (!CHECK(m != NULL)) goto done;
    float *ow = params_data(m->base.params, m->p.out_w);   /* sharper distributions than the init's */
    for (long i = 0; i < (long)m->Vo * m->S; i++) ow[i] *= 8;
    SaEncoded *e = (SaEncoded *)SEQ2SEQ_ATTN_OPS.encode((Model *)m, &d);
    int K = m->K, rows[6] = {0, 3, 7, 12, 19, 29}, n = 6, differs = 0;
    float out[6 * 4], narrow[6 * 4];
    unsigned char best[6 * 4], best1[6 * 4];
    sa_decode(m, e->words, rows, n, 16, out, best);   /* 16 >= every prefix: exhaustive */
    sa_decode(m, e->words, rows, n, 1, narrow, best1);
    for (int i = 0; i < n; i++) {
        double lp[16], mx = -INFINITY, z = 0, marg[4] = {0};
        unsigned arg = 0;
        for (unsigned s = 0; s < 16; s++) {
            lp[s] = sa_set_logprob(m, e, rows[i], s);
            if (lp[s] > mx) { mx = lp[s]; arg = s; }
        }
        for (unsigned s = 0; s < 16; s++) z += exp(lp[s] - mx);
        for (unsigned s = 0; s < 16; s++)
            for (int k = 0; k < K; k++) marg[k] += (s >> k & 1) * exp(lp[s] - mx) / z;
        for (int k = 0; k < K; k++) {
            CHECK_MSG(best[i * K + k] == (arg >> k & 1), "row %d: beam's best set differs from brute force's", i);
            CHECK_MSG(fabs(out[i * K + k] - marg[k]) <= 1e-4, "row %d label %d: beam marginal %g, exact %g", i, k,
                      out[i * K + k], marg[k]);
            differs |= best1[i * K + k] != best[i * K + k];
            CHECK_MSG(narrow[i * K + k] == best1[i * K + k], "beam 1 reports its one set");
        }
    }
    printf("  beam 1 %s the exhaustive search on these rows\n", differs ? "differs from" : "agrees with");
    SEQ2SEQ_ATTN_OPS.encoded_free((Encoded *)e);
    SEQ2SEQ_ATTN_OPS.free((Model *)m);
done:
    cJSON_Delete(cfg);
    synth_free(&d);
}

/* Single-label: the decoded label is the first step's arg-max, which predict reports. */
TEST(seq2seq_attn_single_label_decodes_argmax) {
    Dataset d = synth_dataset(&SA_SINGLE, 30, 5);
    cJSON *cfg = small_config(&SYNTH_TASK3, 1);
    Seq2SeqAttn *m = (Seq2SeqAttn *)SEQ2SEQ_ATTN_OPS.create(cfg, &SYNTH_TASK3, &d, 11);
    if (CHECK(m != NULL)) {
        float *ow = params_data(m->base.params, m->p.out_w);
        for (long i = 0; i < (long)m->Vo * m->S; i++) ow[i] *= 8;
        SaEncoded *e = (SaEncoded *)SEQ2SEQ_ATTN_OPS.encode((Model *)m, &d);
        int rows[30];
        for (int i = 0; i < 30; i++) rows[i] = i;
        float p[30 * 3], marg[30 * 3];
        unsigned char best[30 * 3];
        SEQ2SEQ_ATTN_OPS.predict((Model *)m, (Encoded *)e, rows, 30, p);
        sa_decode(m, e->words, rows, 30, 3, marg, best);
        for (int i = 0; i < 30; i++) {
            int arg = 0, nb = 0;
            for (int k = 0; k < 3; k++) {
                if (p[i * 3 + k] > p[i * 3 + arg]) arg = k;
                nb += best[i * 3 + k];
            }
            CHECK_MSG(nb == 1 && best[i * 3 + arg], "row %d: decoded set is not the arg-max label", i);
        }
        SEQ2SEQ_ATTN_OPS.encoded_free((Encoded *)e);
        SEQ2SEQ_ATTN_OPS.free((Model *)m);
    }
    cJSON_Delete(cfg);
    synth_free(&d);
}

/* ---- learning ---- */

TEST(seq2seq_attn_learns_single_label) {
    cJSON *cfg = small_config(&SYNTH_TASK3, 6);
    double acc = synth_learn(&SEQ2SEQ_ATTN_OPS, &SA_SINGLE, cfg, 1200, 300, 1);
    CHECK_MSG(acc >= 90.0, "3 classes (majority about 33%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(seq2seq_attn_learns_pairs) {
    cJSON *cfg = small_config(&SYNTH_TASK2, 6);
    double acc = synth_learn(&SEQ2SEQ_ATTN_OPS, &SA_PAIR, cfg, 1200, 300, 1);
    CHECK_MSG(acc >= 90.0, "the class in text b (majority about 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(seq2seq_attn_learns_label_sets) {
    cJSON *cfg = small_config(&SYNTH_TASKML, 8);
    double f1 = synth_learn(&SEQ2SEQ_ATTN_OPS, &SA_MULTI, cfg, 1200, 400, 7);
    /* every label (the better trivial predictor, test_multilabel_train.c) scores ~57 */
    CHECK_MSG(f1 >= 90.0, "label sets: dev macro-F1 %.1f", f1);
    cJSON_Delete(cfg);
}

/* ---- checkpoints, resume, batches, divergence, refusals ---- */

TEST(seq2seq_attn_save_load_resume_batch) {
    cJSON *cfg = small_config(&SYNTH_TASK2, 2);
    zoo_check_save_load(&SEQ2SEQ_ATTN_OPS, &SA_TWO, cfg);
    zoo_check_resume_exact(&SEQ2SEQ_ATTN_OPS, &SA_PAIR, cfg);
    zoo_check_batch_independent(&SEQ2SEQ_ATTN_OPS, &SA_PAIR, cfg, 1e-6);
    cJSON_Delete(cfg);
    cfg = small_config(&SYNTH_TASKML, 2);
    zoo_check_batch_independent(&SEQ2SEQ_ATTN_OPS, &SA_MULTI, cfg, 1e-6);
    cJSON_Delete(cfg);
}

TEST(seq2seq_attn_refuses_divergence_and_scores) {
    Dataset d = synth_dataset(&SA_TWO, 8, 51);
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
    Model *m = SEQ2SEQ_ATTN_OPS.create(cfg, &SYNTH_TASK2, &d, 3);
    if (CHECK(m != NULL)) {
        Seq2SeqAttn *s = (Seq2SeqAttn *)m;
        Encoded *e = SEQ2SEQ_ATTN_OPS.encode(m, &d);
        const Params *p = s->base.params;
        params_data(p, s->p.out_w)[1] = NAN;
        float *before = xmalloc(p->total * sizeof *before);
        memcpy(before, p->data, p->total * sizeof *before);
        int rows[4] = {0, 1, 2, 3};
        TrainState ts = {.total_steps = 1, .lr = 1e-3f, .share = 1};
        CHECK(isnan(SEQ2SEQ_ATTN_OPS.train_step(m, e, rows, 4, &ts)));
        CHECK_MSG(memcmp(before, p->data, p->total * sizeof *before) == 0, "weights changed on a NaN gradient");
        free(before);
        SEQ2SEQ_ATTN_OPS.encoded_free(e);
        SEQ2SEQ_ATTN_OPS.free(m);
    }
    cJSON_Delete(cfg);
    synth_free(&d);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Dataset r = synth_dataset(&(SynthTask){.name = "count", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                           .class_words = 4, .noise_words = 20, .len_min = 6, .len_max = 6,
                                           .signal_min = 0, .signal_max = 5}, 8, 1);
    cfg = SEQ2SEQ_ATTN_OPS.default_config(&SYNTH_TASKR);
    Model *bad = SEQ2SEQ_ATTN_OPS.create(cfg, &SYNTH_TASKR, &r, 1);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(!bad && strstr(err, "has a score"), "%s", err);
    free(err);
    cJSON_Delete(cfg);
    synth_free(&r);
}

/* A regression dataset: glue finetune refuses seq2seq_attn before writing
 * anything (2); glue compare leaves its cell empty, says why, and exits 0
 * (it failed the whole compare, exit 1, after training the other models). */
TEST(seq2seq_attn_regression_refused_by_finetune_skipped_by_compare) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    char text[4096];
    int len = snprintf(text, sizeof text, "text\tlabel\n");
    for (int i = 0; i < 24; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "%s day %d\t%d\n", i % 2 ? "good" : "bad", i, (i % 2) * 4);
    CHECK(cli_fixture_write(&f, "scores.tsv", text, len) == 0);
    int st = -1;
    char *out = cli_fixture_glue(&f, "finetune --train scores.tsv --dev scores.tsv --regression --model seq2seq_attn --out s", &st);
    CHECK_MSG(st == 2 && strstr(out, "decodes labels") && !cli_fixture_exists(&f, "s"), "finetune: exit %d: %s", st, out);
    free(out);
    out = cli_fixture_glue(&f, "finetune --train scores.tsv --dev scores.tsv --regression --model fasttext --epochs 1 "
                               "--set bucket=1000", &st);
    CHECK_MSG(st == 0, "finetune fasttext: exit %d: %s", st, out);
    free(out);
    out = cli_fixture_glue(&f, "compare scores --models fasttext,seq2seq_attn --set epochs=1 --set bucket=1000", &st);
    CHECK_MSG(st == 0 && strstr(out, "seq2seq_attn on scores: not run (seq2seq_attn decodes labels"),
              "compare: exit %d: %s", st, out);
    free(out);
    /* The majority row has no cell for a score either (its constant has no correlation: it was NaN). */
    char path[PATH_MAX];
    cli_fixture_path(&f, "results/compare.json", path, sizeof path);
    cJSON *table = json_file_read(path, 1);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(table, "models"), 0);
    CHECK_MSG(row && strcmp(cJSON_GetObjectItemCaseSensitive(row, "model")->valuestring, "majority") == 0 &&
                  !cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "tasks"), "scores"),
              "the majority row has a cell for a scored task");
    cJSON_Delete(table);
    cli_fixture_close(&f);
}
