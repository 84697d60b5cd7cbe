/* test_seq2seq_train.c — the translation training run and `glue translate` on
 * a tiny synthetic corpus (English number words -> German number words,
 * written by the test in the Multi30k file layout):
 *   - a run trains its own vocabulary, writes model.ckpt / results.json and
 *     learns (dev BLEU rises well above 0);
 *   - a run stopped mid-epoch (--stop-at) and resumed ends bit-identical to an
 *     uninterrupted one (weights and every epoch's numbers);
 *   - average_last: the mean of the last epochs' weights is scored and kept;
 *   - the CLI: train, eval (BLEU JSON, the --results table), translating
 *     arguments and stdin lines, snapshot (half precision), the shipped model
 *     (models/translate-en-de-multi30k) translating real sentences,
 *     and clear errors for a bad setting, missing data and a missing model;
 *   - the run directory is a transaction (tests/run_txn_check.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/translate_results.h"
#include "core/files.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "models/seq2seq/seq2seq.h"
#include "train/translate.h"
#include "text/vocab.h"
#include "tests/kill_loop.h"
#include "tests/run_txn_check.h"
#include "tests/scratch.h"
#include "tests/test.h"

static const char *const EN[] = {"one", "two", "three", "four", "five", "six", "seven", "eight"};
static const char *const DE[] = {"eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht"};

/* n lines of 1-4 number words ending in "."; the same words in German. */
static void write_split(const char *dir, const char *split, int n, unsigned seed) {
    char pe[512], pd[512];
    snprintf(pe, sizeof pe, "%s/%s.en", dir, split);
    snprintf(pd, sizeof pd, "%s/%s.de", dir, split);
    FILE *fe = fopen(pe, "w"), *fd = fopen(pd, "w");
    for (int i = 0; i < n; i++) {
        int k = 1 + (int)((seed + (unsigned)i * 7u) % 4u);
        for (int w = 0; w < k; w++) {
            int x = (int)((seed * 31u + (unsigned)i * 13u + (unsigned)w * 5u) % 8u);
            fprintf(fe, "%s%s", w ? " " : "", w == 0 ? (x % 2 ? "One" : EN[x]) : EN[x]);
            fprintf(fd, "%s%s", w ? " " : "", w == 0 ? (x % 2 ? "Eins" : DE[x]) : DE[x]);
        }
        fputs(".\n", fe);
        fputs(".\n", fd);
    }
    fclose(fe);
    fclose(fd);
}

static char g_dir[SCRATCH_PATH_MAX];

/* The fixture corpus and a tiny run config; returns the data dir. */
static const char *fixture(void) {
    if (g_dir[0]) return g_dir;
    if (!scratch_dir("mt", g_dir, sizeof g_dir)) return NULL;
    write_split(g_dir, "train", 160, 1);
    write_split(g_dir, "val", 12, 2);
    write_split(g_dir, "test_2016_flickr", 12, 3);
    char cfg[256];
    snprintf(cfg, sizeof cfg, "%s/config.json", g_dir);
    FILE *f = fopen(cfg, "w");
    fprintf(f, "{\"d_model\": 16, \"heads\": 2, \"ffn\": 32, \"encoder_layers\": 1, \"decoder_layers\": 1,\n"
               " \"max_len\": 32, \"dropout\": 0.1, \"epochs\": 12, \"max_tokens\": 96, \"lr\": 0.005,\n"
               " \"warmup\": 10, \"vocab_tokens\": 60, \"eval_batch\": 5, \"save_minutes\": 0, \"dev_beam\": 1,\n"
               " \"beam\": 3, \"average_last\": 0, \"data_dir\": \"%s\"}\n", g_dir);
    fclose(f);
    return g_dir;
}

static cJSON *fixture_config(const char *set) {
    char cfg[256];
    snprintf(cfg, sizeof cfg, "%s/config.json", fixture());
    return s2s_run_config_build(cfg, &set, NULL, set ? 1 : 0);
}

static int run_train(const char *out, long stop_at, int resume) {
    cJSON *c = fixture_config(NULL);
    S2sTrainOptions o = {.config = c, .seed = 3, .threads = 1, .out_dir = out, .resume = resume, .stop_at = stop_at};
    int rc = s2s_train(&o);
    cJSON_Delete(c);
    return rc;
}

static cJSON *read_results(const char *dir) {
    char p[512];
    file_join(dir, RUN_RESULTS, p, sizeof p);
    return json_file_read(p, 1);
}

TEST(seq2seq_train_learns_and_resumes_exactly) {
    if (!CHECK(fixture() != NULL)) return;
    char a[192], b[192];
    snprintf(a, sizeof a, "%s/runA", g_dir);
    snprintf(b, sizeof b, "%s/runB", g_dir);
    CHECK_EQ_INT(run_train(a, 0, 0), 0);
    /* B stops in the middle of epoch 2, then resumes. */
    CHECK_EQ_INT(run_train(b, 20, 0), TRAIN_STOPPED);
    char p[512];
    file_join(b, RUN_RESUME_DIR "/" RUN_TRAINER_STATE, p, sizeof p);
    CHECK(file_exists(p));
    CHECK_EQ_INT(run_train(b, 0, 1), 0);
    CHECK(!file_exists(p));   /* a finished run drops its resume state */
    cJSON *ra = read_results(a), *rb = read_results(b);
    if (CHECK(ra && rb)) {
        const cJSON *ea = cJSON_GetObjectItemCaseSensitive(ra, "epochs"), *eb = cJSON_GetObjectItemCaseSensitive(rb, "epochs");
        CHECK_EQ_INT(cJSON_GetArraySize(ea), 12);
        CHECK_EQ_INT(cJSON_GetArraySize(eb), 12);
        for (int e = 0; e < cJSON_GetArraySize(ea) && e < cJSON_GetArraySize(eb); e++) {
            const cJSON *x = cJSON_GetArrayItem(ea, e), *y = cJSON_GetArrayItem(eb, e);
            const char *keys[] = {"train_loss", "dev_loss", "dev_bleu", "step"};
            for (int k = 0; k < 4; k++)
                CHECK_MSG(cJSON_GetObjectItemCaseSensitive(x, keys[k])->valuedouble ==
                              cJSON_GetObjectItemCaseSensitive(y, keys[k])->valuedouble,
                          "epoch %d %s differs after resume", e + 1, keys[k]);
        }
        double best = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ra, "best"), "dev_bleu")->valuedouble;
        CHECK_MSG(best > 30, "dev BLEU %g: the number words were not learned", best);
    }
    cJSON_Delete(ra);
    cJSON_Delete(rb);
    char ca[512], cb[512];
    file_join(a, RUN_CKPT, ca, sizeof ca);
    file_join(b, RUN_CKPT, cb, sizeof cb);
    Seq2Seq *ma = s2s_load(ca), *mb = s2s_load(cb);
    if (CHECK(ma && mb))
        CHECK_MSG(memcmp(ma->params->data, mb->params->data, sizeof(float) * ma->params->total) == 0,
                  "weights differ after resume");
    s2s_free(ma);
    s2s_free(mb);
}

/* A resume point of an older glue (one file, <out>/last.ckpt): --resume
 * refuses it with one message (exit 2) and writes nothing, never misreads it
 * or starts over silently. */
TEST(seq2seq_train_old_resume_point_refused) {
    if (!CHECK(fixture() != NULL)) return;
    char dir[192], cmd[1024];
    snprintf(dir, sizeof dir, "%s/old", g_dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && echo old > %s/last.ckpt", dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s translate train --config %s/config.json --out %s --resume 2>&1", test_glue_bin(),
             g_dir, dir);
    int st;
    char *said = test_run(cmd, &st);
    CHECK_MSG(st == 2 && said && strstr(said, "older glue") && strstr(said, "without --resume"), "exit %d: %s", st,
              said ? said : "");
    free(said);
    char path[512];
    file_join(dir, RUN_CONFIG, path, sizeof path);
    CHECK(!file_exists(path));
}

TEST(seq2seq_train_averages_last_epochs) {
    if (!CHECK(fixture() != NULL)) return;
    char dir[192], path[512];
    snprintf(dir, sizeof dir, "%s/avg", g_dir);
    cJSON *c = fixture_config("average_last=3");
    S2sTrainOptions o = {.config = c, .seed = 4, .threads = 1, .out_dir = dir};
    CHECK_EQ_INT(s2s_train(&o), 0);
    cJSON_Delete(c);
    cJSON *res = read_results(dir);
    const cJSON *avg = cJSON_GetObjectItemCaseSensitive(res, "averaged");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(avg, "averaged_epochs")) == 3);
    cJSON_Delete(res);
    /* averaged.ckpt is the element-wise mean of epochs 10, 11, 12. */
    Seq2Seq *e[3], *a;
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/epoch%d.ckpt", dir, 10 + k);
        e[k] = s2s_load(path);
    }
    snprintf(path, sizeof path, "%s/averaged.ckpt", dir);
    a = s2s_load(path);
    if (CHECK(e[0] && e[1] && e[2] && a)) {
        double worst = 0;
        for (size_t i = 0; i < a->params->total; i++) {
            double m = ((double)e[0]->params->data[i] + e[1]->params->data[i] + e[2]->params->data[i]) / 3;
            double d = fabs(m - a->params->data[i]);
            worst = d > worst ? d : worst;
        }
        CHECK_MSG(worst < 1e-6, "averaged weights differ from the mean by %g", worst);
    }
    for (int k = 0; k < 3; k++) s2s_free(e[k]);
    s2s_free(a);
}

/* Runs `glue translate ...`; returns stdout (caller frees), *status the exit code. */
static char *glue(const char *args, int *status) {
    char cmd[2048];
    /* The runs root: the cli test's run (beside which eval writes its
     * hypotheses; a model outside it, such as the snapshot's sibling folder,
     * has them written under it), never the working directory's runs/. */
    snprintf(cmd, sizeof cmd, "GLUE_RUNS='%s/cli' %s translate %s 2>/dev/null", g_dir, test_glue_bin(), args);
    char *out = test_run(cmd, status);
    return out ? out : calloc(1, 1);
}

/* eval --results: one entry per run, one object per split, updated in place
 * when a split is scored again; the Markdown twin shows the same numbers; a
 * file that is not a results table is refused and left as it was. */
static void check_results_table(const char *dir, double bleu2016) {
    char args[1024], file[256], md[256], want[64];
    snprintf(file, sizeof file, "%s/translation.json", g_dir);
    snprintf(md, sizeof md, "%s/translation.md", g_dir);
    int st;
    const char *splits[] = {"test2016", "val", "test2016"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "eval --model %s --split %s --results %s", dir, splits[i], file);
        free(glue(args, &st));
        CHECK_EQ_INT(st, 0);
    }
    cJSON *doc = json_file_read(file, 1);
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
    CHECK_EQ_INT(cJSON_GetArraySize(runs), 1);
    const cJSON *run = cJSON_GetArrayItem(runs, 0);
    const cJSON *scored = cJSON_GetObjectItemCaseSensitive(run, "splits");
    CHECK_EQ_INT(cJSON_GetArraySize(scored), 2);
    const cJSON *t16 = cJSON_GetObjectItemCaseSensitive(scored, "test_2016_flickr");
    CHECK_MSG(fabs(run_config_number(t16, "bleu", -2) - bleu2016) < 1e-9, "table %g, eval --json %g",
              run_config_number(t16, "bleu", -2), bleu2016);
    CHECK(run_config_number(t16, "beam", 0) == 3);
    CHECK(strcmp(run_config_string(run, "run", ""), "cli") == 0);
    CHECK(strcmp(run_config_string(run, "positions", ""), "sinusoid") == 0);
    CHECK(run_config_number(run, "steps", 0) > 0 && run_config_number(run, "dev_bleu", -1) >= 0);
    CHECK(strstr(run_config_string(t16, "command", ""), "--split test2016") != NULL);
    cJSON_Delete(doc);
    size_t len;
    char *text = file_read(md, &len);
    snprintf(want, sizeof want, " %.2f |", bleu2016);
    CHECK_MSG(text && strstr(text, "test_2016_flickr BLEU") && strstr(text, "val BLEU") && strstr(text, want),
              "translation.md: %s", text ? text : "(missing)");
    free(text);
    FILE *f = fopen(file, "w");
    fputs("{\"not\": \"a table\"}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "eval --model %s --split val --results %s", dir, file);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 65);   /* not a results table: the file's contents */
    text = file_read(file, &len);
    CHECK(text && strcmp(text, "{\"not\": \"a table\"}\n") == 0);
    free(text);
}

/* What became model.ckpt is named by the averaged epochs when the checkpoint
 * average won, else by its epoch; `translate train` prints it. */
TEST(seq2seq_best_checkpoint_described) {
    char out[160];
    cJSON *best = cJSON_Parse("{\"epoch\": 7, \"dev_bleu\": 31.254}");
    translate_best_describe(best, out, sizeof out);
    CHECK_MSG(strcmp(out, "best dev BLEU 31.25 at epoch 7") == 0, "%s", out);
    cJSON_Delete(best);
    best = cJSON_Parse("{\"averaged_epochs\": [18, 19, 20, 21, 22], \"dev_bleu\": 39.031}");
    translate_best_describe(best, out, sizeof out);
    CHECK_MSG(strcmp(out, "best dev BLEU 39.03, the average of epochs 18-22") == 0, "%s", out);
    cJSON_Delete(best);
}

TEST(seq2seq_translate_cli) {
    if (!CHECK(fixture() != NULL)) return;
    char args[1024], dir[192];
    snprintf(dir, sizeof dir, "%s/cli", g_dir);
    int st;
    snprintf(args, sizeof args,
             "train --config %s/config.json --set epochs=3 --set average_last=2 --out %s --seed 2 --quiet", g_dir, dir);
    char *said = glue(args, &st);
    CHECK_EQ_INT(st, 0);
    CHECK_MSG(strstr(said, "translate: best dev BLEU ") != NULL, "no summary line in: %s", said);
    free(said);
    snprintf(args, sizeof args, "eval --model %s --split test2016 --json", dir);
    char *out = glue(args, &st);
    CHECK_EQ_INT(st, 0);
    cJSON *j = cJSON_Parse(out);
    CHECK_MSG(j && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "bleu")), "eval printed: %s", out);
    CHECK(j && cJSON_GetObjectItemCaseSensitive(j, "sentences")->valueint == 12);
    double bleu2016 = j ? run_config_number(j, "bleu", -1) : -1;
    cJSON_Delete(j);
    free(out);
    check_results_table(dir, bleu2016);
    char hyp[256];
    snprintf(hyp, sizeof hyp, "%s/test_2016_flickr.beam3.hyp.de", dir);
    CHECK(file_exists(hyp));
    /* Arguments: one line each; stdin: one line per input line. */
    snprintf(args, sizeof args, "--model %s \"two three.\" \"One four.\"", dir);
    out = glue(args, &st);
    CHECK_EQ_INT(st, 0);
    int lines = 0;
    for (char *c = out; *c; c++) lines += *c == '\n';
    CHECK_MSG(lines == 2, "expected 2 lines, got: %s", out);
    free(out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "printf 'one.\\nfive six.\\nseven.\\n' | %s translate --model %s --beam 1", test_glue_bin(), dir);
    out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 0);
    lines = 0;
    for (char *c = out ? out : ""; *c; c++) lines += *c == '\n';
    CHECK_MSG(lines == 3, "stdin: expected 3 lines, got: %s", out ? out : "");
    free(out);
    /* Errors: a clear message and the right exit code, never a crash. */
    free(glue("train --set no_such_key=1 --quiet", &st));
    CHECK_EQ_INT(st, 2);
    snprintf(args, sizeof args, "train --set data_dir=%s/missing --out %s/x --quiet", g_dir, g_dir);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 74);   /* missing files */
    snprintf(args, sizeof args, "--model %s/nothing \"one\"", g_dir);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 74);
    snprintf(args, sizeof args, "eval --model %s --split nosuch", dir);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 2);
}

/* BLEU of `glue translate eval --model where --split test2016`, -1 on failure. */
static double eval_bleu(const char *where) {
    char args[512];
    snprintf(args, sizeof args, "eval --model %s --split test2016 --json", where);
    int st;
    char *out = glue(args, &st);
    cJSON *j = st == 0 ? cJSON_Parse(out) : NULL;
    double bleu = j ? run_config_number(j, "bleu", -1) : -1;
    cJSON_Delete(j);
    free(out);
    return bleu;
}

static long file_bytes(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* `glue translate snapshot` of the cli test's run into g_dir/<name> (path in
 * out); the run's checkpoint path in run_ckpt. 0 ok. */
static int snapshot_cli_run(const char *name, char *out, size_t cap, char *run_ckpt, size_t ckpt_cap) {
    char run[192], args[512];
    snprintf(run, sizeof run, "%s/cli", g_dir);
    snprintf(out, cap, "%s/%s", g_dir, name);
    file_join(run, RUN_CKPT, run_ckpt, ckpt_cap);
    if (!CHECK_MSG(file_exists(run_ckpt), "needs the run of seq2seq_translate_cli")) return -1;
    int st;
    snprintf(args, sizeof args, "snapshot %s %s", run, out);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 0);
    return st == 0 ? 0 : -1;
}

/* `glue translate snapshot`: the cli test's run in half precision (about half
 * the bytes) translates as well as the float one, with the run's config and
 * results beside it. */
TEST(seq2seq_translate_snapshot) {
    if (!CHECK(fixture() != NULL)) return;
    char run[192], snap[192], args[512], a[256], b[256];
    snprintf(run, sizeof run, "%s/cli", g_dir);
    if (snapshot_cli_run("cli-f16", snap, sizeof snap, a, sizeof a) != 0) return;
    int st;
    file_join(snap, RUN_CKPT, b, sizeof b);
    long full = file_bytes(a), half = file_bytes(b);
    CHECK_MSG(half > 0 && half < full * 0.7, "snapshot %ld bytes, the run's %ld", half, full);
    file_join(snap, RUN_CONFIG, b, sizeof b);
    CHECK(file_exists(b));
    file_join(snap, RUN_RESULTS, b, sizeof b);
    CHECK(file_exists(b));
    double bleu32 = eval_bleu(run), bleu16 = eval_bleu(snap);
    CHECK_MSG(bleu32 >= 0 && fabs(bleu16 - bleu32) <= 1.0, "BLEU float %.2f, half %.2f", bleu32, bleu16);
    /* eval writes its hypotheses beside a run under the runs root (cli/), and
     * never into another model's folder (a shipped one): under the root. */
    char hyp[512];
    snprintf(hyp, sizeof hyp, "%s/test_2016_flickr.beam3.hyp.de", snap);
    CHECK_MSG(!file_exists(hyp), "eval wrote into the model's folder %s", snap);
    snprintf(hyp, sizeof hyp, "%s/cli/translate/eval/cli-f16/test_2016_flickr.beam3.hyp.de", g_dir);
    CHECK_MSG(file_exists(hyp), "no hypotheses at %s", hyp);
    snprintf(hyp, sizeof hyp, "%s/test_2016_flickr.beam3.hyp.de", run);
    CHECK_MSG(file_exists(hyp), "no hypotheses beside the run %s", hyp);
    /* A hand-edited decoding setting out of range: one message naming the
     * file and the key, exit 2, nothing decoded. */
    file_join(snap, RUN_CONFIG, b, sizeof b);
    cJSON *cfg = json_file_read(b, 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "beam", cJSON_CreateNumber(0));
    CHECK(cfg && json_file_write(b, cfg) == 0);
    cJSON_Delete(cfg);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s translate --model %s \"one two.\" 2>&1", test_glue_bin(), snap);
    char *said = test_run(cmd, &st);
    CHECK_EQ_INT(st, 2);   /* a setting out of its range */
    CHECK_MSG(said && strstr(said, "config.json") && strstr(said, "beam"), "said: %s", said ? said : "");
    free(said);
    snprintf(args, sizeof args, "snapshot %s", run);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 2);
    snprintf(args, sizeof args, "snapshot %s/none %s/none-out", g_dir, g_dir);
    free(glue(args, &st));
    CHECK_EQ_INT(st, 74);
}

/* A model that translates everything as nothing (its last decoder layer's
 * output made constant and aligned with [SEP], so the first token is the end)
 * prints an empty line and says so on stderr; a blank input line is a blank
 * translation, no warning. */
TEST(seq2seq_translate_warns_on_empty_output) {
    if (!CHECK(fixture() != NULL)) return;
    char dir[192], ckpt[256], cmd[1024];
    if (snapshot_cli_run("mute", dir, sizeof dir, ckpt, sizeof ckpt) != 0) return;
    int st;
    file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
    Seq2Seq *m = s2s_load(ckpt);
    if (!CHECK(m != NULL)) return;
    int C = m->cfg.d_model, sep = vocab_id(m->vocab, "[SEP]");
    CHECK(sep >= 0);
    float *e = m->w.embed + (long)sep * C, norm = 0, top = 0;
    for (int c = 0; c < C; c++) norm += e[c] * e[c];
    for (int v = 0; v < m->cfg.vocab_size; v++) {
        float n2 = 0;
        for (int c = 0; c < C; c++) n2 += m->w.embed[(long)v * C + c] * m->w.embed[(long)v * C + c];
        top = n2 > top ? n2 : top;
    }
    /* logits = y E^T with y = 10 sqrt(top / norm) e: [SEP]'s is 10 sqrt(top norm), every other at most sqrt(top norm). */
    BlockFfnParams *last = &m->w.dec[m->cfg.decoder_layers - 1].ffn;
    for (int c = 0; c < C; c++) {
        last->ln_g[c] = 0.0f;
        last->ln_b[c] = 10.0f * sqrtf(top / norm) * e[c];
    }
    CHECK(s2s_save(m, ckpt, CKPT_F32) == 0);
    s2s_free(m);
    snprintf(cmd, sizeof cmd, "printf 'one two.\\n\\nthree.\\n' | %s translate --model %s --beam 1 2>&1", test_glue_bin(),
             dir);
    char *said = test_run(cmd, &st);
    CHECK_EQ_INT(st, 0);
    int warnings = 0;
    for (const char *p = said ? said : ""; (p = strstr(p, "as nothing")) != NULL; p++) warnings++;
    CHECK_MSG(warnings == 2 && strstr(said, "\"one two.\" as nothing") && strstr(said, "\"three.\" as nothing"),
              "said: %s", said ? said : "");
    free(said);
}

/* The shipped model (models/translate-en-de-multi30k, committed): `glue
 * translate "text"` with no run of the user's ($GLUE_RUNS empty) loads it and
 * translates Multi30k-like sentences into the German a reader expects. */
TEST(seq2seq_shipped_model_translates) {
    char runs[SCRATCH_PATH_MAX], cmd[1024];
    if (!CHECK(scratch_dir("no_runs", runs, sizeof runs))) return;
    snprintf(cmd, sizeof cmd,
             "GLUE_RUNS=%s %s translate \"A man is riding a bicycle down the street.\" "
             "\"Two dogs are playing in the snow.\" 2>&1",
             runs, test_glue_bin());
    int st;
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && out, "translate exited %d: %s", st, out ? out : "");
    char *second = out ? strchr(out, '\n') : NULL;
    CHECK_MSG(second && strstr(out, "Mann") && strstr(out, "Fahrrad") && strstr(out, "Mann") < second,
              "first sentence: %s", out ? out : "");
    CHECK_MSG(second && strstr(second, "Hunde") && strstr(second, "Schnee"), "second sentence: %s", out ? out : "");
    free(out);
    rmdir(runs);
}

/* Interruption: `glue translate train` killed with SIGKILL at random moments
 * (checkpoint every step), resumed after each kill, ends with the losses, dev
 * BLEU and model.ckpt of an uninterrupted run (tests/kill_loop.h; the long
 * version: GLUE_KILL_TEST_KILLS=N). */
TEST(seq2seq_translate_killed_resumes_bit_identical) {
    if (!CHECK(fixture() != NULL)) return;
    char cmd[1024], dir[192], ref[256], cut[256];
    snprintf(cmd, sizeof cmd, "%s translate train --config %s/config.json --set epochs=3 --seed 2", test_glue_bin(),
             g_dir);
    snprintf(dir, sizeof dir, "%s/kill", g_dir);
    mkdir(dir, 0700);
    KillTest t = {.name = "translate train", .command = cmd, .killed = "--checkpoint-every 1", .dir = dir,
                  .watch = RUN_RESUME_DIR "/" RUN_TRAINER_STATE, .sigterm = 1, .seed = 12};
    kill_test(&t);
    snprintf(ref, sizeof ref, "%s/ref", dir);
    snprintf(cut, sizeof cut, "%s/cut", dir);
    CHECK_MSG(kill_loop_same_results(ref, cut), "losses or dev BLEU differ from the uninterrupted run");
}

/* `glue translate train`'s run directory is a transaction, as fine-tuning's
 * (train/run_txn.h, tests/run_txn_check.h): locked (a second run refused
 * naming the owner's pid, nothing written), a finished or interrupted run
 * refused before anything is written, a failing --overwrite keeps the old
 * run, an --overwrite killed after any of its writes leaves the old run or
 * the whole new one. */
static const char *const TRANSLATE_RUN_FILES[] = {RUN_CONFIG, RUN_CKPT, RUN_RESULTS, "vocab.txt"};

static TxnCase translate_txn_case(char *a, char *b, char *fail, char *dir, size_t cap) {
    snprintf(a, cap, "%s translate train --config %s/config.json --set epochs=2 --quiet --threads 1", test_glue_bin(),
             g_dir);
    snprintf(b, cap, "%.*s --set warmup=7", (int)cap - 200, a);
    snprintf(fail, cap, "%.*s --set data_dir=%s/none", (int)cap - 200, b, g_dir);
    snprintf(dir, cap, "%s/txn", g_dir);
    return (TxnCase){.name = "translate train", .run_a = a, .run_b = b, .fail_b = fail, .dir = dir,
                     .files = TRANSLATE_RUN_FILES, .nfiles = 4, .b_marker = "\"warmup\":\t7,"};
}

TEST(seq2seq_translate_run_dir_is_a_transaction) {
    if (!CHECK(fixture() != NULL)) return;
    char a[1024], b[1024], fail[1024], dir[256];
    TxnCase c = translate_txn_case(a, b, fail, dir, sizeof a);
    txn_check_lock(&c);
    txn_check_refusals(&c);
    txn_check_interrupted(&c);
}

TEST(seq2seq_translate_overwrite_killed_at_every_write) {
    if (!CHECK(fixture() != NULL)) return;
    char a[1024], b[1024], fail[1024], dir[256];
    TxnCase c = translate_txn_case(a, b, fail, dir, sizeof a);
    txn_check_overwrite_killed(&c, 8);
}

/* Last test of the file (tests run in file order): remove the fixture. */
TEST(seq2seq_train_zz_cleanup) {
    if (!g_dir[0]) return;
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    CHECK_EQ_INT(system(cmd), 0);
}
