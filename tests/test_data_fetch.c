/* test_data_fetch.c — `glue data fetch`: from the shared mirror into a temporary
 * folder (every file's row count and bytes checked against the mirror with zcat;
 * GoEmotions from the mirror's top into the GLUE root), the second run is a
 * no-op, a broken mirror (truncated gzip, short file) is reported and nothing
 * bad is installed, explicit requests for files the mirror
 * lacks fail, the offline download path fails with a clear message, and the MRPC
 * rebuild from the SentEval files is byte-identical to the official TSVs. */
#include "core/lines.h"
#include "data/fetch.h"
#include "tasks/task.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static char *fetch_tmpdir(void) {
    char *d = malloc(SCRATCH_PATH_MAX);
    if (d && scratch_dir("test_fetch", d, SCRATCH_PATH_MAX)) return d;
    free(d);
    return NULL;
}

static void fetch_rmdir(char *d) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    free(test_run(cmd, NULL));
    free(d);
}

/* Run `glue data fetch ARGS --json` (stderr dropped); returns the parsed object. */
static cJSON *fetch_json(const char *env, const char *args, int *status) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "env -u GLUE_MIRROR -u GLUE_DATA %s %s data fetch %s --json 2>/dev/null", env,
             test_glue_bin(), args);
    char *out = test_run(cmd, status);
    cJSON *doc = cJSON_Parse(out);
    CHECK_MSG(doc != NULL, "not one JSON object: %.300s", out);
    free(out);
    return doc;
}

/* A file entry's string field, "" when absent (so a failed check cannot crash). */
static const char *json_str(const cJSON *o, const char *key) {
    const cJSON *v = o ? cJSON_GetObjectItem(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int json_int(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

/* The entry of files[] whose path ends with suffix. */
static cJSON *file_entry(cJSON *doc, const char *suffix) {
    cJSON *f;
    size_t k = strlen(suffix);
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "files")) {
        const char *p = json_str(f, "path");
        if (strlen(p) >= k && strcmp(p + strlen(p) - k, suffix) == 0) return f;
    }
    return NULL;
}

static int same_as_zcat(const char *gz, const char *plain) {
    char cmd[4096];
    int st = -1;
    snprintf(cmd, sizeof cmd, "zcat '%s' | cmp -s - '%s'", gz, plain);
    free(test_run(cmd, &st));
    return st == 0;
}

TEST(fetch_mirror_all_then_noop) {
    char *dir = fetch_tmpdir(), args[1024], a[1024], b[1024];
    snprintf(args, sizeof args, "all --mirror '%s/data' --dest '%s'", test_shared_dir(), dir);
    int st = -1;
    cJSON *doc = fetch_json("", args, &st);
    CHECK_EQ_INT(st, 0);                 /* with "all", what the mirror lacks is not an error */
    if (doc) {
        CHECK_EQ_INT(json_int(doc, "copied"), 21 + 24 + 8 + 3); /* GLUE splits + Multi30k raw/tok en/de + subsets + GoEmotions */
        CHECK_EQ_INT(json_int(doc, "up_to_date"), 1);       /* qnli-9k's dev: QNLI's, copied just before */
        cJSON *sub = file_entry(doc, "/glue/subsets/QNLI/train.json");
        CHECK(sub && json_int(sub, "rows") == 8999 && strcmp(json_str(sub, "status"), "copied") == 0);
        sub = file_entry(doc, "/glue/subsets/SNLI/dev.json");
        CHECK(sub && json_int(sub, "rows") == 1000);
        CHECK_EQ_INT(json_int(doc, "linked"), 7);           /* pretraining text */
        CHECK_EQ_INT(json_int(doc, "missing"), 9);          /* QQP x3, MNLI x5, QNLI train */
        CHECK_EQ_INT(json_int(doc, "failed"), 0);
        cJSON *f = file_entry(doc, "/glue/MNLI/dev_matched.tsv");
        CHECK(f && strstr(json_str(f, "message"),
                          "https://dl.fbaipublicfiles.com/glue/data/MNLI.zip"));
        f = file_entry(doc, "/glue/goemotions/train.tsv");
        CHECK(f && json_int(f, "rows") == 43410 && strcmp(json_str(f, "status"), "copied") == 0);
        f = file_entry(doc, "/mt/multi30k/raw/test_2017_mscoco.de");
        CHECK(f && json_int(f, "rows") == 461);
        cJSON_Delete(doc);
    }
    /* Every GLUE split present in the mirror: installed decompressed, same bytes,
     * and it loads with the official count. */
    int checked = 0;
    for (int i = 0; i < NUM_TASKS; i++)
        for (int k = 0; k < TASKS[i].num_splits; k++) {
            const Task *t = &TASKS[i];
            const TaskSplit *s = &t->splits[k];
            snprintf(a, sizeof a, "%s/data/glue/%s/%s.gz", test_shared_dir(), t->dir, s->file);
            snprintf(b, sizeof b, "%s/glue/%s/%s", dir, t->dir, s->file);
            FILE *probe = fopen(a, "rb");
            if (!probe) continue;
            fclose(probe);
            CHECK_MSG(same_as_zcat(a, b), "%s differs from the mirror", b);
            checked++;
        }
    CHECK_EQ_INT(checked, 21);
    /* The subsets: decompressed, same bytes, 8,999 + 1,000 entries that load. */
    for (int i = 0; i < NUM_SUBSET_TASKS; i++) {
        const Task *t = &SUBSET_TASKS[i];
        const char *dir_name = strchr(t->dir, '/') + 1;
        for (int k = 0; k < 2; k++) {
            snprintf(a, sizeof a, "%s/data/glue-subsets/%s/%s.json.gz", test_shared_dir(), dir_name, k ? "dev" : "train");
            snprintf(b, sizeof b, "%s/glue/%s/%s.json", dir, t->dir, k ? "dev" : "train");
            CHECK_MSG(same_as_zcat(a, b), "%s differs from the mirror", b);
        }
    }
    /* GoEmotions: the mirror's top-level goemotions/ into the GLUE root, same bytes. */
    for (int k = 0; k < EXTRA_TASKS[0].num_splits; k++) {
        snprintf(a, sizeof a, "%s/data/goemotions/%s.gz", test_shared_dir(), EXTRA_TASKS[0].splits[k].file);
        snprintf(b, sizeof b, "%s/glue/goemotions/%s", dir, EXTRA_TASKS[0].splits[k].file);
        CHECK_MSG(same_as_zcat(a, b), "%s differs from the mirror", b);
    }
    snprintf(a, sizeof a, "%s/data/mt/multi30k/tok/val.lc.norm.tok.de.gz", test_shared_dir());
    snprintf(b, sizeof b, "%s/mt/multi30k/tok/val.lc.norm.tok.de", dir);
    CHECK(same_as_zcat(a, b));
    snprintf(b, sizeof b, "%s/glue", dir);
    Dataset d;
    CHECK_EQ_INT(task_load(task_find("mrpc"), "dev", b, 1, &d), 0);
    CHECK_EQ_INT(d.n, 408);
    dataset_free(&d);
    long lines = 0;
    snprintf(b, sizeof b, "%s/pretrain/wikitext-2/wiki.valid.tokens.gz", dir);   /* a symlink */
    CHECK_EQ_INT(lines_count(b, &lines, NULL, 0), LINES_OK);
    CHECK_EQ_INT(lines, 3760);

    doc = fetch_json("", args, &st);                     /* second run: nothing to do */
    CHECK_EQ_INT(st, 0);
    if (doc) {
        CHECK_EQ_INT(json_int(doc, "up_to_date"), 52 + 9 + 3);
        CHECK_EQ_INT(json_int(doc, "copied") + json_int(doc, "linked") + json_int(doc, "failed"), 0);
        cJSON_Delete(doc);
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s data fetch glue mt --mirror '%s/data' --dest '%s' 2>&1", test_glue_bin(),
             test_shared_dir(), dir);
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 1);                 /* "glue" asked for MNLI too, which the mirror lacks */
    CHECK_MSG(strstr(out, "up to date: nothing copied") && strstr(out, "0 copied") &&
              strstr(out, "9 requested files are not available"), "%s", out);
    free(out);
    fetch_rmdir(dir);
}

TEST(fetch_env_mirror_and_glue_data) {
    char *dir = fetch_tmpdir(), env[1024], cmd[2048];
    int st = -1;
    snprintf(env, sizeof env, "GLUE_MIRROR='%s/data' GLUE_DATA='%s/g'", test_shared_dir(), dir);
    cJSON *doc = fetch_json(env, "WNLI", &st);
    CHECK_EQ_INT(st, 0);
    if (doc) {
        CHECK_EQ_INT(json_int(doc, "copied"), 3);
        cJSON_Delete(doc);
    }
    snprintf(cmd, sizeof cmd, "env GLUE_DATA='%s/g' %s tasks wnli", dir, test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "train 635, dev 71, test 146"), "%s", out);
    free(out);
    fetch_rmdir(dir);
}

/* A mirror with a truncated .gz and a short file: both reported, neither
 * installed, the good file copied; an existing short file is replaced. */
TEST(fetch_bad_mirror_reported) {
    char *dir = fetch_tmpdir(), cmd[4096], args[1024], path[1024];
    const char *sh = test_shared_dir();
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/m/glue/CoLA' '%s/m/glue/WNLI' '%s/d/glue/WNLI' && "
             "head -c 40000 '%s/data/glue/CoLA/train.tsv.gz' > '%s/m/glue/CoLA/train.tsv.gz' && "
             "zcat '%s/data/glue/CoLA/dev.tsv.gz' | head -n 100 > '%s/m/glue/CoLA/dev.tsv' && "
             "cp '%s/data/glue/CoLA/test.tsv.gz' '%s/m/glue/CoLA/' && "
             "cp '%s'/data/glue/WNLI/*.gz '%s/m/glue/WNLI/' && "
             "zcat '%s/data/glue/WNLI/dev.tsv.gz' | head -n 4 > '%s/d/glue/WNLI/dev.tsv'",
             dir, dir, dir, sh, dir, sh, dir, sh, dir, sh, dir, sh, dir);
    int st = -1;
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 0);
    snprintf(args, sizeof args, "cola wnli --mirror '%s/m' --dest '%s/d'", dir, dir);
    cJSON *doc = fetch_json("", args, &st);
    CHECK_EQ_INT(st, 1);
    if (doc) {
        cJSON *f = file_entry(doc, "/CoLA/train.tsv");
        CHECK(f && strcmp(json_str(f, "status"), "failed") == 0);
        CHECK(f && strstr(json_str(f, "message"), "truncated gzip stream"));
        f = file_entry(doc, "/CoLA/dev.tsv");
        CHECK(f && strcmp(json_str(f, "status"), "failed") == 0);
        CHECK(f && strstr(json_str(f, "message"), "has 100 rows, official 1043"));
        f = file_entry(doc, "/CoLA/test.tsv");
        CHECK(f && strcmp(json_str(f, "status"), "copied") == 0);
        f = file_entry(doc, "/WNLI/dev.tsv");                 /* had 3 rows: replaced */
        CHECK(f && strcmp(json_str(f, "status"), "copied") == 0 && json_int(f, "rows") == 71);
        CHECK_EQ_INT(json_int(doc, "failed"), 2);
        CHECK_EQ_INT(json_int(doc, "copied"), 4);
        cJSON_Delete(doc);
    }
    snprintf(path, sizeof path, "%s/d/glue/CoLA/train.tsv", dir);
    char found[1024];
    CHECK_MSG(lines_find(path, found, sizeof found) != 0, "a truncated file was installed");
    snprintf(cmd, sizeof cmd, "find '%s/d' -name '*.part*' | wc -l", dir);
    char *out = test_run(cmd, NULL);
    CHECK_MSG(atoi(out) == 0, "temporary files left behind: %s", out);
    free(out);
    fetch_rmdir(dir);
}

/* WNLI from the shared mirror into dest, where `file` cannot be written: an
 * I/O failure (exit 74), the file "failed" with a message holding `says`. */
static void fetch_wnli_io_failure(const char *dest, const char *file, const char *says) {
    char args[2048];
    int st = -1;
    snprintf(args, sizeof args, "wnli --mirror '%s/data' --dest '%s'", test_shared_dir(), dest);
    cJSON *doc = fetch_json("", args, &st);
    CHECK_EQ_INT(st, 74);
    const cJSON *f = doc ? file_entry(doc, file) : NULL;
    CHECK_MSG(f && strcmp(json_str(f, "status"), "failed") == 0 && strstr(json_str(f, "message"), says),
              "%s: not failed with '%s'", file, says);
    cJSON_Delete(doc);
}

TEST(fetch_missing_offline_and_usage_errors) {
    char *dir = fetch_tmpdir(), args[1024], cmd[2048];
    int st = -1;
    snprintf(args, sizeof args, "mnli --mirror '%s/data' --dest '%s'", test_shared_dir(), dir);
    cJSON *doc = fetch_json("", args, &st);
    CHECK_EQ_INT(st, 1);                 /* asked for MNLI by name: missing is an error */
    if (doc) { CHECK_EQ_INT(json_int(doc, "missing"), 5); cJSON_Delete(doc); }

    /* No mirror: the official URLs. Offline here, so curl fails and says why. */
    snprintf(args, sizeof args, "wnli --dest '%s'", dir);
    doc = fetch_json("", args, &st);
    if (doc) {
        cJSON *f = file_entry(doc, "/WNLI/train.tsv");
        const char *msg = json_str(f, "message");
        if (st == 0) test_skip("the internet is reachable: WNLI was downloaded");
        else CHECK_MSG(st == 1 && strstr(msg, "WNLI.zip failed (curl exit"), "status %d: %s", st, msg);
        cJSON_Delete(doc);
    }
    snprintf(args, sizeof args, "goemotions --dest '%s'", dir);
    doc = fetch_json("", args, &st);
    if (doc) {
        const char *msg = json_str(file_entry(doc, "/glue/goemotions/train.tsv"), "message");
        if (st == 0) test_skip("the internet is reachable: GoEmotions was downloaded");
        else CHECK_MSG(st == 1 && strstr(msg, "google-research/master/goemotions/data/train.tsv failed (curl exit"),
                       "status %d: %s", st, msg);
        cJSON_Delete(doc);
    }
    snprintf(args, sizeof args, "rte --dest '%s'", dir);
    doc = fetch_json("PATH=/nonexistent", args, &st);
    CHECK_EQ_INT(st, 1);
    if (doc) {
        cJSON *f = file_entry(doc, "/RTE/dev.tsv");
        CHECK(f && strstr(json_str(f, "message"), "curl not found on PATH"));
        cJSON_Delete(doc);
    }
    const char *usage[] = {"data fetch imdb", "data", "data fletch", "data fetch --mirror /nonexistent/dir",
                           "data fetch --bogus"};
    for (int i = 0; i < 5; i++) {
        snprintf(cmd, sizeof cmd, "%s %s 2>&1", test_glue_bin(), usage[i]);
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == 2, "'glue %s' exit %d: %s", usage[i], st, out);
        free(out);
    }
    /* A --dest that cannot be written (a file here): an I/O failure, 74 (it was 1). */
    snprintf(cmd, sizeof cmd, "touch '%s/file'", dir);
    free(test_run(cmd, &st));
    snprintf(args, sizeof args, "%s/file", dir);
    fetch_wnli_io_failure(args, "/WNLI/train.tsv", "cannot create the folder");
    /* A file that cannot be put in its place (a folder there): 74 as well, where a failed write or rename (a
     * full disk: "write failed: No space left on device") ended with 1. */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/d2/glue/WNLI/dev.tsv/x'", dir);
    free(test_run(cmd, &st));
    snprintf(args, sizeof args, "%s/d2", dir);
    fetch_wnli_io_failure(args, "/WNLI/dev.tsv", "cannot rename");
    fetch_rmdir(dir);
}

/* download_glue_data.py's MRPC split, redone from the SentEval files in the
 * mirror, gives the official train/dev/test.tsv byte for byte. */
TEST(fetch_mrpc_build_matches_official) {
    char *dir = fetch_tmpdir(), cmd[2048], err[512], a[1024], b[1024];
    const char *sh = test_shared_dir();
    snprintf(cmd, sizeof cmd, "cp '%s'/data/glue/MRPC/msr_paraphrase_t*.txt.gz '%s'/data/glue/MRPC/dev_ids.tsv.gz '%s/'",
             sh, sh, dir);
    int st = -1;
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 0);
    CHECK_MSG(data_mrpc_build(dir, err, sizeof err) == 0, "%s", err);
    const char *files[] = {"train.tsv", "dev.tsv", "test.tsv"};
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/data/glue/MRPC/%s.gz", sh, files[i]);
        snprintf(b, sizeof b, "%s/%s", dir, files[i]);
        CHECK_MSG(same_as_zcat(a, b), "MRPC %s differs from the official file", files[i]);
    }
    snprintf(cmd, sizeof cmd, "rm '%s/dev_ids.tsv.gz'", dir);
    free(test_run(cmd, NULL));
    CHECK(data_mrpc_build(dir, err, sizeof err) != 0 && strstr(err, "dev_ids.tsv: no such file"));
    fetch_rmdir(dir);
}

static void write_bytes(const char *dir, const char *name, const char *bytes) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) { fputs(bytes, f); fclose(f); }
    CHECK_MSG(f != NULL, "cannot write %s", path);
}

static int file_equals(const char *dir, const char *name, const char *want) {
    char path[1024], got[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    if (f) fclose(f);
    got[n] = '\0';
    return strcmp(got, want) == 0;
}

/* The script's Python semantics on awkward input: universal newlines (CRLF read
 * as LF), row.strip() before the split, the BOM header copied as is, the test
 * file renumbered from 0 without its label. */
TEST(fetch_mrpc_build_python_semantics) {
    char *dir = fetch_tmpdir(), err[512];
    const char *H = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String";
    char header[128];
    snprintf(header, sizeof header, "\xEF\xBB\xBF%s", H);
    char train[512], test_in[512], want_train[512], want_dev[512];
    snprintf(train, sizeof train, "%s\r\n1\t11\t12\tA cat sat .\tThe cat sat . \r\n"
             "0\t21\t22\tDogs bark .\tA dog barked .\n1\t31\t32\tRain fell .\tIt rained .  \t\n", header);
    snprintf(test_in, sizeof test_in, "%s\n1\t41\t42\tX .\tY . \r\n0\t51\t52\tP .\tQ .", header);
    write_bytes(dir, "msr_paraphrase_train.txt", train);
    write_bytes(dir, "msr_paraphrase_test.txt", test_in);
    write_bytes(dir, "dev_ids.tsv", "21\t22\r\n");
    CHECK_MSG(data_mrpc_build(dir, err, sizeof err) == 0, "%s", err);
    snprintf(want_train, sizeof want_train, "%s\n1\t11\t12\tA cat sat .\tThe cat sat .\n"
             "1\t31\t32\tRain fell .\tIt rained .\n", header);
    snprintf(want_dev, sizeof want_dev, "%s\n0\t21\t22\tDogs bark .\tA dog barked .\n", header);
    CHECK(file_equals(dir, "train.tsv", want_train));
    CHECK(file_equals(dir, "dev.tsv", want_dev));
    CHECK(file_equals(dir, "test.tsv", "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                                       "0\t41\t42\tX .\tY .\n1\t51\t52\tP .\tQ .\n"));
    write_bytes(dir, "msr_paraphrase_test.txt", "header\n1\t2\t3\tonly four\n");   /* malformed row */
    CHECK(data_mrpc_build(dir, err, sizeof err) != 0 && strstr(err, "msr_paraphrase_test.txt:2: expected 5"));
    fetch_rmdir(dir);
}
