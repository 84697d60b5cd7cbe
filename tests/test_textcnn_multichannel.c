/* test_textcnn_multichannel.c — Kim's CNN-multichannel (models/baselines/textcnn.h):
 * logits and every gradient against a PyTorch Conv2d over the two channels
 * (tests/ref/textcnn_ref.py), the frozen channel unchanged by training while
 * the other moves, save/load exact, it learns a fixture; the embedding size
 * taken from the vectors file. (The whole-model
 * finite-difference check is in test_textcnn.c.) */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "models/baselines/textcnn.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"

static const SynthTask MC_ORDER = {.name = "multichannel order", .task = &SYNTH_TASK2, .kind = SYNTH_ORDER,
                                   .noise_words = 50, .len_min = 5, .len_max = 12, .phrase = 1};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }
static void set_str(cJSON *c, const char *key, const char *v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateString(v)); }

/* A .vec file of D-dim vectors for "x", "y" and noise words n0..n9 (values from seed). */
static char *mc_vectors(int D, uint64_t seed) {
    char *p = xmalloc(SCRATCH_PATH_MAX);
    int fd = scratch_file("mc_vec", p, SCRATCH_PATH_MAX);
    FILE *f = fdopen(fd, "w");
    float v[64];
    fprintf(f, "12 %d\n", D);
    for (int i = 0; i < 12; i++) {
        gradcheck_fill(v, D, -0.5f, 0.5f, seed + (uint64_t)i);
        if (i < 2) fputs(i ? "y" : "x", f); else fprintf(f, "n%d", i - 2);
        for (int d = 0; d < D; d++) fprintf(f, " %.6f", v[d]);
        fputc('\n', f);
    }
    fclose(f);
    return p;
}

/* The config of a multichannel model: dim D, F filters per width. */
static cJSON *mc_config(int D, int F, const char *windows, const char *vec, int epochs) {
    cJSON *c = TEXTCNN_OPS.default_config(&SYNTH_TASK2);
    set_num(c, "dim", D);
    set_num(c, "filters", F);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 25);
    cJSON_ReplaceItemInObjectCaseSensitive(c, "windows", cJSON_Parse(windows));
    set_str(c, "embedding", "multichannel");
    set_str(c, "vectors", vec);
    return c;
}

static TextCnn *mc_create(const cJSON *cfg, const Dataset *d, uint64_t seed) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    TextCnn *m = (TextCnn *)TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, d, seed);
    free(stderr_capture_end(&cap));
    return m;
}

/* Logits of 4 rows and the gradients of sum(logits * R) against torch. */
TEST(textcnn_multichannel_matches_torch) {
    enum { D = 4, F = 3, K = 2, B = 4, NW = 2 };
    const int widths[NW] = {2, 3};
    Dataset d = synth_dataset(&MC_ORDER, 20, 7);
    char *vec = mc_vectors(D, 100);
    cJSON *cfg = mc_config(D, F, "[2, 3]", vec, 1);
    TextCnn *m = mc_create(cfg, &d, 5);
    if (!CHECK(m != NULL && m->emb_static != NULL)) goto done;
    {
        int V = word_vocab_size(&m->base.vocab);
        gradcheck_fill(m->out_w, (long)K * m->FC, -1, 1, 9);
        gradcheck_fill(m->out_b, K, -0.5f, 0.5f, 10);
        for (int k = 0; k < NW; k++) gradcheck_fill(m->conv_b[k], F, -0.1f, 0.1f, 11 + (uint64_t)k);
        /* the trained channel moved away from the frozen one, as after training */
        float *noise = xmalloc((size_t)V * D * sizeof *noise);
        gradcheck_fill(noise, (long)V * D, -0.1f, 0.1f, 13);
        for (long i = D; i < (long)V * D; i++) m->emb[i] += noise[i];
        free(noise);
        WordSeqs *s = (WordSeqs *)TEXTCNN_OPS.encode((Model *)m, &d);
        int rows[B] = {3, 0, 7, 12}, L = 0;
        for (int b = 0; b < B; b++) if (s->len_a[rows[b]] > L) L = s->len_a[rows[b]];
        float *ids = xcalloc((size_t)B * L, sizeof *ids), lens[B], r[B * K];
        for (int b = 0; b < B; b++) {
            lens[b] = (float)s->len_a[rows[b]];
            for (int t = 0; t < s->len_a[rows[b]]; t++) ids[b * L + t] = (float)word_seqs_a(s, rows[b])[t];
        }
        gradcheck_fill(r, B * K, -1, 1, 14);
        params_zero_grad(m->base.params);
        tc_batch_forward(m, s, rows, B, 0);
        memcpy(m->w.dlogits, r, sizeof r);
        tc_batch_backward(m);
        Params *p = m->base.params;
        long nemb = (long)V * D, ncw[NW];
        float ref_logits[B * K], *ref_demb = xmalloc((size_t)nemb * sizeof(float)), *ref_cw[NW], ref_cb[NW][F],
              *ref_ow = xmalloc((size_t)K * m->FC * sizeof(float)), ref_ob[K];
        RefTensor in[5 + 2 * NW + 2] = {{"emb", m->emb, nemb}, {"emb_static", m->emb_static, nemb}, {"ids", ids, (long)B * L},
                                        {"lengths", lens, B}, {"r", r, B * K}};
        RefTensor out[4 + 2 * NW] = {{"logits", ref_logits, B * K}, {"demb", ref_demb, nemb},
                                     {"dout_w", ref_ow, (long)K * m->FC}, {"dout_b", ref_ob, K}};
        int n_in = 5, n_out = 4;
        char names[NW][4][24];   /* "dconv" + an int + "_w": room for any int (-O1 warns otherwise) */
        for (int k = 0; k < NW; k++) {
            ncw[k] = (long)F * widths[k] * 2 * D;
            ref_cw[k] = xmalloc((size_t)ncw[k] * sizeof(float));
            snprintf(names[k][0], sizeof names[k][0], "conv%d_w", k);
            snprintf(names[k][1], sizeof names[k][0], "conv%d_b", k);
            snprintf(names[k][2], sizeof names[k][0], "dconv%d_w", k);
            snprintf(names[k][3], sizeof names[k][0], "dconv%d_b", k);
            in[n_in++] = (RefTensor){names[k][0], m->conv_w[k], ncw[k]};
            in[n_in++] = (RefTensor){names[k][1], m->conv_b[k], F};
            out[n_out++] = (RefTensor){names[k][2], ref_cw[k], ncw[k]};
            out[n_out++] = (RefTensor){names[k][3], ref_cb[k], F};
        }
        in[n_in++] = (RefTensor){"out_w", m->out_w, (long)K * m->FC};
        in[n_in++] = (RefTensor){"out_b", m->out_b, K};
        char args[128];
        snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d", V, D, F, K, B, L, widths[0], widths[1]);
        if (torchref_run("textcnn_ref.py", args, in, n_in, out, n_out) == 1) {
            double dl = torchref_max_diff(m->w.logits, ref_logits, B * K);
            CHECK_MSG(dl < 1e-5, "logits: max diff %g", dl);
            /* torch's padding row gets gradient from no window: ours is held at 0 too */
            double de = torchref_max_diff(params_grad(p, m->h_emb), ref_demb, nemb);
            CHECK_MSG(de < 1e-5, "emb grad: max diff %g", de);
            for (int k = 0; k < NW; k++) {
                double dw = torchref_max_diff(params_grad(p, m->h_conv_w[k]), ref_cw[k], ncw[k]);
                double db = torchref_max_diff(params_grad(p, m->h_conv_b[k]), ref_cb[k], F);
                CHECK_MSG(dw < 1e-5 && db < 1e-5, "conv%d grad: max diff w %g b %g", k, dw, db);
            }
            double dw = torchref_max_diff(params_grad(p, m->h_out_w), ref_ow, (long)K * m->FC);
            double db = torchref_max_diff(params_grad(p, m->h_out_b), ref_ob, K);
            CHECK_MSG(dw < 1e-5 && db < 1e-5, "out grad: max diff w %g b %g", dw, db);
            float *zero = xcalloc((size_t)nemb, sizeof *zero);
            CHECK(memcmp(params_grad(p, m->h_emb_static), zero, (size_t)nemb * sizeof *zero) == 0);
            free(zero);
        }
        for (int k = 0; k < NW; k++) free(ref_cw[k]);
        free(ref_demb);
        free(ref_ow);
        free(ids);
        TEXTCNN_OPS.encoded_free((Encoded *)s);
    }
done:
    if (m) TEXTCNN_OPS.free((Model *)m);
    unlink(vec);
    free(vec);
    cJSON_Delete(cfg);
    synth_free(&d);
}

/* Training moves the trained channel and never the frozen one; a saved model
 * loads (without the vectors file) to the same predictions. */
TEST(textcnn_multichannel_frozen_and_save_load) {
    Dataset tr = synth_dataset(&MC_ORDER, 300, 71);
    char *vec = mc_vectors(8, 200);
    cJSON *cfg = mc_config(8, 6, "[3, 4, 5]", vec, 2);
    TextCnn *m = mc_create(cfg, &tr, 3);
    char *path = xmalloc(SCRATCH_PATH_MAX);
    close(scratch_file("mc_ckpt", path, SCRATCH_PATH_MAX));
    if (CHECK(m != NULL)) {
        int V = word_vocab_size(&m->base.vocab), x = word_vocab_id(&m->base.vocab, "x", 1);
        size_t bytes = (size_t)V * 8 * sizeof(float);
        CHECK(memcmp(m->emb, m->emb_static, bytes) == 0);   /* both channels start the same */
        float *before = xmalloc(bytes);
        memcpy(before, m->emb_static, bytes);
        Encoded *e = TEXTCNN_OPS.encode((Model *)m, &tr);
        synth_train_epochs(&TEXTCNN_OPS, (Model *)m, &tr, e, cfg, 1, 0, 2);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(memcmp(before, m->emb_static, bytes) == 0);           /* frozen */
        CHECK(m->emb[x * 8] != m->emb_static[x * 8]);                /* trained */
        free(before);
        unlink(vec);   /* the checkpoint holds both channels */
        CHECK(TEXTCNN_OPS.save((Model *)m, path) == 0);
        Model *l = TEXTCNN_OPS.load(path, &SYNTH_TASK2);
        if (CHECK(l != NULL)) {
            float *a = synth_predict(&TEXTCNN_OPS, (Model *)m, &tr, 0), *b = synth_predict(&TEXTCNN_OPS, l, &tr, 0);
            CHECK(memcmp(a, b, (size_t)tr.n * 2 * sizeof *a) == 0);
            CHECK_EQ_INT(TEXTCNN_OPS.num_params(l), TEXTCNN_OPS.num_params((Model *)m));
            free(a);
            free(b);
            TEXTCNN_OPS.free(l);
        }
        TEXTCNN_OPS.free((Model *)m);
    }
    unlink(path);
    free(path);
    unlink(vec);
    free(vec);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* The order task (a bag of words scores 50%) is learnt with the two channels. */
TEST(textcnn_multichannel_learns_word_order) {
    char *vec = mc_vectors(16, 300);
    cJSON *cfg = mc_config(16, 12, "[3, 4, 5]", vec, 4);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    double acc = synth_learn(&TEXTCNN_OPS, &MC_ORDER, cfg, 2000, 400, 1);
    free(stderr_capture_end(&cap));
    CHECK_MSG(acc >= 95.0, "order task: dev accuracy %.1f", acc);
    unlink(vec);
    free(vec);
    cJSON_Delete(cfg);
}

/* dim left at 0: the vectors' size (a 6-d file), written into the config so a
 * saved model loads with it; rand without dim is Kim's 300. */
TEST(textcnn_dim_from_vectors) {
    Dataset tr = synth_dataset(&MC_ORDER, 60, 81);
    char *vec = mc_vectors(6, 400);
    cJSON *cfg = mc_config(6, 4, "[3, 4, 5]", vec, 1);
    set_num(cfg, "dim", 0);
    set_str(cfg, "embedding", "non-static");
    TextCnn *m = mc_create(cfg, &tr, 3);
    char *path = xmalloc(SCRATCH_PATH_MAX);
    close(scratch_file("mc_dim", path, SCRATCH_PATH_MAX));
    if (CHECK(m != NULL)) {
        CHECK_EQ_INT(m->cfg.dim, 6);
        CHECK(TEXTCNN_OPS.save((Model *)m, path) == 0);
        TextCnn *l = (TextCnn *)TEXTCNN_OPS.load(path, &SYNTH_TASK2);
        if (CHECK(l != NULL)) {
            CHECK_EQ_INT(l->cfg.dim, 6);
            TEXTCNN_OPS.free((Model *)l);
        }
        TEXTCNN_OPS.free((Model *)m);
    }
    set_str(cfg, "embedding", "rand");
    set_str(cfg, "vectors", "");
    m = mc_create(cfg, &tr, 3);
    if (CHECK(m != NULL)) {
        CHECK_EQ_INT(m->cfg.dim, 300);
        TEXTCNN_OPS.free((Model *)m);
    }
    unlink(path);
    free(path);
    unlink(vec);
    free(vec);
    cJSON_Delete(cfg);
    synth_free(&tr);
}
