/* test_bench_bert.c — `glue bench bert` end to end on a very small config
 * (ours only, one repetition, one call: the numbers are not checked, only that
 * every measurement is made and reported, in the table and in the results
 * JSON with positive, consistent values), and its user errors (unknown config,
 * bad --reps, unreadable PyTorch script) exit 2 with a message. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kernels.h"
#include "core/provenance.h"
#include "eval/bench/bench.h"
#include "tests/scratch.h"
#include "tests/test.h"

/* V 1000, C 32, L 1, 2 heads: a train step takes milliseconds. */
static const char *const SMALL_CONFIG =
    "{\"vocab_size\": 1000, \"hidden_size\": 32, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
    " \"intermediate_size\": 64}\n";

static double stat_median(const cJSON *section, const char *key) {
    const cJSON *s = cJSON_GetObjectItem(section, key);
    const cJSON *m = s ? cJSON_GetObjectItem(s, "median") : NULL;
    return cJSON_IsNumber(m) ? m->valuedouble : -1.0;
}

TEST(bench_bert_runs_and_reports_every_measurement) {
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("bench_bert", dir, sizeof dir))) return;
    char cfg[256], cmd[1024], json_path[600];
    snprintf(cfg, sizeof cfg, "%s/small_bert.json", dir);
    FILE *f = fopen(cfg, "w");
    if (!CHECK(f)) return;
    fputs(SMALL_CONFIG, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "GLUE_KERNELS=portable GLUE_RESULTS=%s %s bench bert --config %s --no-torch --reps 1 --steps 1 --threads 1 2>&1",
             dir, test_glue_bin(), cfg);
    int st = -1;
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0, "bench bert failed (%d):\n%s", st, out ? out : "");
    CHECK_MSG(out && strstr(out, "train ") && strstr(out, "infer ") && strstr(out, "latency ") &&
                  strstr(out, "peak memory"), "missing lines:\n%s", out ? out : "");
    free(out);
    char cpu_dir[256];
    bench_cpu_dir(cpu_dir, sizeof cpu_dir);   /* results per CPU: bench/<cpu>/ */
    snprintf(json_path, sizeof json_path, "%s/%s/bench_bert_small_bert.json", dir, cpu_dir);
    f = fopen(json_path, "r");
    if (CHECK_MSG(f, "no %s", json_path)) {
        char buf[16384];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
        cJSON *j = cJSON_Parse(buf);
        if (CHECK(j)) {
            const cJSON *train = cJSON_GetObjectItem(j, "train"), *infer = cJSON_GetObjectItem(j, "infer");
            const cJSON *lat = cJSON_GetObjectItem(j, "latency");
            CHECK(train && infer && lat);
            CHECK(stat_median(train, "ours_tokens_per_s") > 0 && stat_median(infer, "ours_tokens_per_s") > 0);
            CHECK(stat_median(lat, "ours_ms") > 0);
            /* The int8 rows, with their speed-up over our fp32 rows, and the int8 kernel (portable here). */
            const cJSON *i8 = cJSON_GetObjectItem(j, "infer_int8"), *l8 = cJSON_GetObjectItem(j, "latency_int8");
            CHECK(i8 && l8 && stat_median(i8, "ours_tokens_per_s") > 0 && stat_median(l8, "speedup_vs_ours_fp32") > 0);
            const cJSON *k8 = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "machine"), "int8_gemm");
            CHECK_MSG(cJSON_IsString(k8) && strcmp(k8->valuestring, "portable") == 0, "int8_gemm: %s",
                      cJSON_IsString(k8) ? k8->valuestring : "(none)");
            /* Achieved GFLOP/s = FLOPs per call / time per call. */
            const cJSON *gf = cJSON_GetObjectItem(train, "gflop_per_call");
            double want = cJSON_IsNumber(gf) ? gf->valuedouble / (stat_median(train, "ours_ms") * 1e-3) : -1;
            CHECK_NEAR(stat_median(train, "ours_gflops"), want, 1e-6 * want + 1e-9);
            CHECK(stat_median(train, "sgemm_gflops") > 0 && stat_median(train, "fraction_of_sgemm") > 0);
            CHECK(cJSON_GetObjectItem(j, "ours_peak_mib") && cJSON_GetObjectItem(j, "machine"));
            /* The machine names the CPU and the kernels the run used (GLUE_KERNELS=portable here). */
            const cJSON *mach = cJSON_GetObjectItem(j, "machine");
            const cJSON *cpu = cJSON_GetObjectItem(mach, "cpu"), *kern = cJSON_GetObjectItem(mach, "kernels");
            CHECK(cJSON_IsString(cpu) && strcmp(cpu->valuestring, kernels_cpu_model()) == 0);
            CHECK_MSG(cJSON_IsString(kern) && strcmp(kern->valuestring, "portable") == 0, "kernels: %s",
                      cJSON_IsString(kern) ? kern->valuestring : "(none)");
            /* The build measured: the commit it was made from. */
            const cJSON *prov = cJSON_GetObjectItem(j, "provenance");
            const cJSON *commit = cJSON_GetObjectItem(prov, "commit");
            CHECK(cJSON_IsString(commit) && strcmp(commit->valuestring, provenance_commit()) == 0);
            /* The timed steps allocate nothing (test_bert_no_alloc.c shows the count counts). */
            const cJSON *allocs = cJSON_GetObjectItem(j, "ours_allocations_in_timed_calls");
            CHECK_MSG(cJSON_IsNumber(allocs) && allocs->valuedouble == 0, "allocations in timed calls: %g",
                      cJSON_IsNumber(allocs) ? allocs->valuedouble : -1);
            cJSON_Delete(j);
        }
    }
    unlink(json_path);
    unlink(cfg);
    char sub_dir[600];
    snprintf(sub_dir, sizeof sub_dir, "%s/%s", dir, cpu_dir);
    rmdir(sub_dir);
    snprintf(sub_dir, sizeof sub_dir, "%s/bench", dir);
    rmdir(sub_dir);
    rmdir(dir);
}

TEST(bench_bert_user_errors) {
    char cmd[512];
    int st = -1;
    snprintf(cmd, sizeof cmd, "%s bench bert --config nosuch 2>&1", test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 2 && out && strstr(out, "nosuch"), "unknown config: %d\n%s", st, out ? out : "");
    free(out);
    snprintf(cmd, sizeof cmd, "%s bench bert --reps 0 2>&1", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    snprintf(cmd, sizeof cmd, "%s bench bert --script /nonexistent/bench_bert.py 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 2 && out && strstr(out, "/nonexistent/bench_bert.py"), "missing script: %d\n%s", st,
              out ? out : "");
    free(out);
}
