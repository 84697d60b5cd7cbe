/* report_fixture.c — the runs and results the `glue report` tests render
 * (see report_fixture.h). */
#include "tests/report_fixture.h"

#include "core/common.h"
#include "core/rng.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const FILLER[] = {"the", "film", "was", "a", "story", "cast", "and", "it", "is", "quite"};
#define NFILLER 10

static FILE *fx_open(const ReportFixture *fx, const char *dir, const char *name) {
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", fx->root, dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    if (system(cmd) != 0) return NULL;
    snprintf(path, sizeof path, "%s/%s/%s", fx->root, dir, name);
    return fopen(path, "w");
}

int report_fixture_write(const ReportFixture *fx, const char *dir, const ReportFile *files, int n) {
    for (int i = 0; i < n; i++) {
        FILE *f = fx_open(fx, dir, files[i].name);
        if (!f) return -1;
        int ok = fputs(files[i].text, f) >= 0;
        if (fclose(f) != 0 || !ok) return -1;
    }
    return 0;
}

static int fx_write(const ReportFixture *fx, const char *dir, const char *name, const char *text) {
    ReportFile one = {name, text};
    return report_fixture_write(fx, dir, &one, 1);
}

/* SST-2: one of good/bad among filler words, labelled by it; STS-B: the
 * score is how many of five words of sentence b are "same". */
static int fx_data(const ReportFixture *fx) {
    Rng r;
    rng_seed(&r, 5);
    static const char *const SPLIT[2] = {"train.tsv", "dev.tsv"};
    static const int ROWS[2] = {400, REPORT_FX_DEV_ROWS};
    for (int k = 0; k < 2; k++) {
        FILE *s = fx_open(fx, "glue/SST-2", SPLIT[k]), *t = fx_open(fx, "glue/STS-B", SPLIT[k]);
        if (!s || !t) return -1;
        fprintf(s, "sentence\tlabel\n");
        fprintf(t, "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n");
        for (int i = 0; i < ROWS[k]; i++) {
            int y = (int)rng_below(&r, 2), same = (int)rng_below(&r, 6);
            fprintf(s, "%s %s %s %s\t%d\n", FILLER[rng_below(&r, NFILLER)], y ? "good" : "bad",
                    FILLER[rng_below(&r, NFILLER)], FILLER[rng_below(&r, NFILLER)], y);
            fprintf(t, "%d\tnews\tx\t2012\t%d\tnone\tnone\tthe %s\t", i, i, FILLER[rng_below(&r, NFILLER)]);
            for (int w = 0; w < 5; w++) fprintf(t, "%s%s", w ? " " : "", w < same ? "same" : "other");
            fprintf(t, "\t%d.000\n", same);
        }
        fclose(s);
        fclose(t);
    }
    return 0;
}

/* Every kind of results file, with numbers the tests check. compare.json is
 * over three seeds (each cell a mean, the task score's std beside it). */
static int fx_results(const ReportFixture *fx) {
    static const ReportFile FILES[] = {
        {"compare.json",
         "{\"seed\": 7, \"seeds\": [7, 8, 9], \"provenance\": {\"commit\": \"" REPORT_FX_COMMIT "\", \"date\": \"2026-01-02\"},\n"
         " \"tasks\": [\"sst2\", \"stsb\"],\n"
         " \"models\": [\n"
         "  {\"model\": \"majority\", \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 50.125}},\n"
         "    \"stsb\": {\"dev\": {\"pearson\": 0, \"spearman\": 0}}},\n"
         "   \"glue\": {\"glue_score\": 25.0625, \"num_tasks\": 2}},\n"
         "  {\"model\": \"alpha\", \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 91.234567890123}, \"seed_scores\": [90, 91, "
         "92.703703670369], \"score_std\": " REPORT_FX_COMPARE_SD_TEXT "},\n"
         "    \"stsb\": {\"dev\": {\"pearson\": 55.5551, \"spearman\": 54.4449}, \"seed_scores\": [54, 55, 56], \"score_std\": 1}},\n"
         "   \"glue\": {\"glue_score\": 73.1172839450615, \"num_tasks\": 2}, \"glue_seeds\": [72, 73, 74.35], \"glue_std\": "
         REPORT_FX_COMPARE_GLUE_SD_TEXT "},\n"
         "  {\"model\": \"beta\", \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 88.8765}, \"seed_scores\": [88, 89, 89.6295], "
         "\"score_std\": 0.81},\n"
         "    \"stsb\": {\"dev\": {\"pearson\": 60.125, \"spearman\": 61.875}, \"seed_scores\": [60, 61, 62], \"score_std\": 1}},\n"
         "   \"glue\": {\"glue_score\": 74.93825, \"num_tasks\": 2}, \"glue_seeds\": [74, 75, 75.8], \"glue_std\": 0.9}]}\n"},
        /* alpha's single run: the seeds files below never borrow its tasks */
        {"glue_alpha.json", "{\"model\": \"alpha\", \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 89.5}}, "
                            "\"stsb\": {\"dev\": {\"pearson\": 10, \"spearman\": 20}}}}\n"},
        {"seeds_alpha_sst2.json",
         "{\"task\": \"sst2\", \"model\": \"alpha\", \"command\": \"glue finetune sst2 --seeds 1,2\",\n"
         " \"runs\": [{\"seed\": 1, \"best\": {\"dev\": {\"accuracy\": 90}}},\n"
         "          {\"seed\": 2, \"best\": {\"dev\": {\"accuracy\": 92}}}],\n"
         " \"summary\": {\"dev\": {\"accuracy\": {\"mean\": 91, \"std\": 1.4142135623730951, \"min\": 90, "
         "\"max\": 92}}}}\n"},
        {"seeds_alpha_stsb.json",
         "{\"task\": \"stsb\", \"model\": \"alpha\", \"command\": \"glue finetune stsb --seeds 1,2\",\n"
         " \"runs\": [{\"seed\": 1, \"best\": {\"dev\": {\"pearson\": 50, \"spearman\": 60}}},\n"
         "          {\"seed\": 2, \"best\": {\"dev\": {\"pearson\": 54, \"spearman\": 58}}}],\n"
         " \"summary\": {\"dev\": {\"pearson\": {\"mean\": 52, \"std\": 2.8284271247461903, \"min\": 50, \"max\": 54},\n"
         "   \"spearman\": {\"mean\": 59, \"std\": 1.4142135623730951, \"min\": 58, \"max\": 60}}}}\n"},
        {"finetune_protocol.json",
         "{\"title\": \"Fine-tuning protocol\", \"encoder\": \"fixture encoder\", \"tasks\": [\"sst2\", \"stsb\"],\n"
         " \"seeds\": [1, 2], \"command\": \"glue protocol --tasks sst2,stsb --seeds 1,2 --change long:epochs=9\",\n"
         " \"rows\": [{\"name\": \"baseline\", \"settings\": [], \"score\": 70.125, \"std\": 0.375,\n"
         "   \"tasks\": {\"sst2\": {\"metrics\": {\"accuracy\": 85.5}, \"seed_scores\": [85, 86], \"score\": 85.5, "
         "\"std\": 0.7071067811865476},\n"
         "     \"stsb\": {\"metrics\": {\"pearson\": 54, \"spearman\": 55.5}, \"seed_scores\": [54, 55.5], \"score\": 54.75, "
         "\"std\": 1.0606601717798212}}},\n"
         "  {\"name\": \"long\", \"settings\": [\"epochs=9\"], \"score\": 71.3125, \"std\": 0.4375,\n"
         "   \"tasks\": {\"sst2\": {\"metrics\": {\"accuracy\": 86.5}, \"seed_scores\": [86, 87], \"score\": 86.5, "
         "\"std\": 0.7071067811865476},\n"
         "     \"stsb\": {\"metrics\": {\"pearson\": 55.25, \"spearman\": 57}, \"seed_scores\": [56, 56.25], \"score\": "
         "56.125, \"std\": 0.17677669529663689}}}]}\n"},
        {"pretrain_screen.json",
         "{\"title\": \"Pretraining screen\", \"command\": \"glue pretrain screen a b --seeds 1,2\",\n"
         " \"proxy\": {\"tasks\": [\"sst2\"], \"seeds\": [1, 2], \"recipe\": \"fixture recipe\"},\n"
         " \"runs\": [{\"run\": \"screen-a\", \"objective\": \"mlm\", \"settings\": {\"steps\": 10, \"lr\": 0.001},\n"
         "   \"tokens\": 1500000, \"train_seconds\": 3600, \"tokens_per_sec\": 416.625, \"threads\": 1, \"cpu\": \"not recorded\",\n"
         "   \"heldout_mlm\": {\"loss\": 5.8125, \"accuracy\": 20.75, \"model\": \"encoder\"},\n"
         "   \"tasks\": {\"sst2\": {\"metrics\": {\"accuracy\": 80.875}, \"seed_scores\": [80.5, 81.25], \"score\": 80.875, "
         "\"std\": 0.53033008588991}},\n"
         "   \"proxy_score\": " REPORT_FX_PROXY_TEXT "}]}\n"},
        {"translation.json",
         "{\"task\": \"translation\", \"bleu\": \"fixture BLEU note\", \"runs\": [{\"run\": \"fx-sin\", "
         "\"positions\": \"sinusoid\", \"dev_bleu\": 33.3333, \"cpu_hours\": 0.5, \"splits\": "
         "{\"test_2016_flickr\": {\"bleu\": 37.777, \"bleu_tok_lc\": 38.111, \"command\": \"glue translate eval\"}}}]}\n"},
        {"bench_fasttext.json",
         "{\"official\": {\"implementation\": \"official\", \"accuracy\": 80.1, \"train_seconds\": {\"median\": 1.5}},\n"
         " \"ours\": {\"implementation\": \"glue fasttext\", \"accuracy\": 80.3, \"train_seconds\": {\"median\": 0.75}},\n"
         " \"time_ratio\": 0.5, \"accuracy_diff\": 0.2}\n"},
        {"bench_scaling.json",
         "{\"cpu\": \"" REPORT_FX_CPU "\", \"cores_used\": 2, \"reps\": 3, \"corpus\": \"fixture corpus\",\n"
         " \"configs\": [{\"config\": \"tiny\", \"batch\": 64, \"measured_steps\": 6,\n"
         "   \"ranks1_threads2_tokens_per_sec\": {\"median\": 5283.5}, \"ranks2_threads1_tokens_per_sec\": {\"median\": 5231.25},\n"
         "   \"ranks_over_threads\": {\"median\": " REPORT_FX_SCALING_TEXT ", \"min\": 0.95, \"max\": 1.33},\n"
         "   \"allreduce_seconds_per_step\": {\"median\": 0.0363}, \"allreduce_bytes_per_step\": {\"median\": 17666816},\n"
         "   \"wait_for_slowest_rank_seconds_per_step\": {\"median\": 0.0878}}]}\n"},
        {"fuzz.json",
         "{\"what\": \"fixture fuzzing\", \"date\": \"2026-01-02\", \"harnesses\": [\n"
         "  {\"harness\": \"fuzz_a\", \"seconds\": 60, \"executions\": 50042, \"exec_per_sec\": 820, \"cov\": 363, \"ft\": "
         "1757, \"corpus\": 256, \"crashes\": 0}],\n"
         " \"total_executions\": " REPORT_FX_FUZZ_EXECS_TEXT ", \"total_crashes\": 0}\n"},
        {"fuzz_campaign.json",
         "{\"what\": \"fixture campaign\", \"harnesses\": [\n"
         "  {\"harness\": \"fuzz_b\", \"segments\": 17, \"executions\": 4635113, \"cpu_seconds\": 3608.2, \"target_met\": true,"
         " \"crashes_found\": 1, \"open_crashes\": [], \"cpus\": [\"" REPORT_FX_CPU "\"]}],\n"
         " \"total_executions\": 4635113, \"total_cpu_seconds\": 3608.2, \"total_crashes_found\": 1, \"open_crashes\": 0,"
         " \"complete\": true}\n"},
        /* a run's results.json copied here, at 100% dev accuracy every epoch (a flat line on a percentage axis) */
        {"rte_perfect.json",
         "{\"task\": \"rte\", \"model\": \"flat\", \"epochs\": [{\"epoch\": 1, \"loss\": 0.5, \"dev\": {\"accuracy\": 100}},\n"
         "  {\"epoch\": 2, \"loss\": 0.25, \"dev\": {\"accuracy\": 100}}], \"best\": {\"epoch\": 1, \"dev\": {\"accuracy\": 100}}}\n"},
        {"broken.json", "{\"models\": [1, 2,\n"},
    };
    /* `glue bench bert` writes one directory per CPU */
    static const ReportFile BENCH[] = {
        {"bench_bert_tiny.json",
         "{\"benchmark\": \"bert\", \"config\": \"tiny\", \"machine\": {\"cpu\": \"" REPORT_FX_CPU "\", \"cores\": 2},\n"
         " \"train\": {\"ours_tokens_per_s\": {\"median\": 1234.5}, \"torch_tokens_per_s\": {\"median\": 617.25},\n"
         "  \"speedup_vs_torch\": {\"median\": 2.0001, \"min\": 1.5, \"max\": 2.5}},\n"
         " \"infer\": {\"ours_tokens_per_s\": {\"median\": 478343.75}, \"torch_tokens_per_s\": {\"median\": 269787.8},\n"
         "  \"speedup_vs_torch\": {\"median\": 1.773, \"min\": 1.5, \"max\": 2}}}\n"},
    };
    return report_fixture_write(fx, "results", FILES, (int)(sizeof FILES / sizeof FILES[0])) ||
           report_fixture_write(fx, "results/bench/" REPORT_FX_CPU_DIR, BENCH, 1);
}

/* A gzip log of three logged steps, one held-out record and one bad line. */
static int fx_pretrain_log(const ReportFixture *fx) {
    char path[512];
    if (fx_write(fx, "pt", "config.json", "{\"steps\": 30}\n") != 0) return -1;
    snprintf(path, sizeof path, "%s/pt/log.jsonl.gz", fx->root);
    gzFile g = gzopen(path, "wb");
    if (!g) return -1;
    gzputs(g, "{\"step\":10,\"loss\":9.5,\"mlm_acc\":0.01,\"tokens\":1000}\n"
              "{\"step\":20,\"loss\":8.25,\"mlm_acc\":0.05,\"tokens\":2000}\n"
              "this line is not JSON\n"
              "{\"step\":20,\"eval_loss\":8.125,\"eval_acc\":0.0625,\"eval_masked\":100}\n"
              "{\"step\":30,\"loss\":7.75,\"mlm_acc\":0.075,\"tokens\":3000}\n");
    if (gzclose(g) != Z_OK) return -1;
    /* ELECTRA's log: "loss" is generator + 50 x discriminator; the curve is the generator's. */
    if (fx_write(fx, "pt-electra", "log.jsonl",
                 "{\"step\":10,\"loss\":24.5,\"gen_loss\":6.875,\"mlm_acc\":0.125,\"disc_loss\":0.35,\"tokens\":1000}\n"
                 "{\"step\":20,\"loss\":23.5,\"gen_loss\":6.625,\"mlm_acc\":0.15,\"disc_loss\":0.34,\"tokens\":2000}\n") != 0)
        return -1;
    return 0;
}

static int fx_train(const ReportFixture *fx, const char *task) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s %s finetune %s --model fasttext --epochs 3 --set bucket=1000 --set dim=8 --threads 1 "
             ">%s/train.log 2>&1", fx->env, test_glue_bin(), task, fx->root);
    int st;
    free(test_run(cmd, &st));
    if (st != 0) fprintf(stderr, "report fixture: training %s failed (see %s/train.log)\n", task, fx->root);
    return st == 0 ? 0 : -1;
}

int report_fixture_make(ReportFixture *fx) {
    if (!scratch_dir("report", fx->root, sizeof fx->root)) DIE("no scratch folder");
    snprintf(fx->env, sizeof fx->env, "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results", fx->root,
             fx->root, fx->root);
    int rc = fx_data(fx) || fx_results(fx) || fx_pretrain_log(fx) || fx_train(fx, "sst2") || fx_train(fx, "stsb") ||
             fx_write(fx, "runs/rte/fasttext", "config.json", "{}\n");
    if (CHECK_MSG(rc == 0, "the report fixture could not be made in %s", fx->root)) return 0;
    report_fixture_remove(fx);
    return -1;
}

void report_fixture_remove(ReportFixture *fx) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fx->root);
}

char *report_fixture_read(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, k;
    char *s = xmalloc(cap);
    while ((k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) s = xrealloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = '\0';
    return s;
}

char *report_fixture_page(const ReportFixture *fx, const char *args, int *status) {
    char cmd[8192], out[256];
    snprintf(out, sizeof out, "%s/report.html", fx->root);
    remove(out);
    /* From the fixture's root, so that the page names runs/..., results/... */
    char bin[4096];
    if (!realpath(test_glue_bin(), bin)) snprintf(bin, sizeof bin, "%s", test_glue_bin());
    snprintf(cmd, sizeof cmd, "cd '%s' && GLUE_DATA=%s/glue %s report %s %s 2>report.err", fx->root, fx->root, bin,
             strstr(args, "--out") ? "" : "--out report.html", args);
    free(test_run(cmd, status));
    return report_fixture_read(out);
}
