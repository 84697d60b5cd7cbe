/* test_checkpoint.c — checkpoint files and the fp16/bf16 conversions they use.
 *
 * Round trip (f32 bit-exact; f16/bf16 equal to the rounded values; blobs;
 * config; a tensor larger than the I/O chunk); every damage case gives NULL and
 * a message saying what is wrong, never a crash: missing file, directory, empty
 * file, wrong magic, newer version, a flipped byte at many offsets, truncation
 * at many offsets; an interrupted save (stale PATH.tmp, or a writer killed
 * mid-save) leaves the previous file intact; config comparison by value naming
 * the differing keys; loading into params with a missing tensor or a wrong
 * shape is refused. Conversions are checked against numpy (fp16) and torch
 * (bf16) on 66k bit patterns plus edge cases, and fp16 -> f32 on all 65536. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "core/checkpoint.h"
#include "core/half.h"
#include "core/params.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/torchref.h"

/* A temporary directory for one test; files are removed by ckpt_dir_free. */
typedef struct {
    char dir[SCRATCH_PATH_MAX];
    char path[192]; /* dir/model.ckpt */
} CkptDir;

static void ckpt_dir_init(CkptDir *d) {
    CHECK(scratch_dir("ckpt", d->dir, sizeof d->dir));
    snprintf(d->path, sizeof d->path, "%s/model.ckpt", d->dir);
}

static void ckpt_dir_free(CkptDir *d) {
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    CHECK(system(cmd) == 0);
}

/* "emb" (50, 8), "w" (8, 8), "b" (8), "big" (300000) > one I/O chunk. */
static Params *ckpt_params(uint64_t seed) {
    Params *p = params_create();
    params_declare(p, "emb", PARAM_SHAPE(50, 8), PARAM_INIT_NORMAL(0.02f), PARAM_SPARSE_ROWS);
    params_declare(p, "w", PARAM_SHAPE(8, 8), PARAM_INIT_UNIFORM(3.0f), 0);
    params_declare(p, "b", PARAM_SHAPE(8), PARAM_INIT_NORMAL(1.0f), PARAM_NO_DECAY);
    params_declare(p, "big", PARAM_SHAPE(300000), PARAM_INIT_NORMAL(1.0f), 0);
    Rng rng;
    rng_seed(&rng, seed);
    params_allocate(p, &rng);
    return p;
}

static cJSON *config_of(const char *size, int hidden, int layers) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "size", size);
    cJSON_AddNumberToObject(c, "hidden", hidden);
    cJSON_AddNumberToObject(c, "layers", layers);
    cJSON_AddNumberToObject(c, "dropout", 0.1);
    return c;
}

static int write_model(const char *path, const Params *p, CkptDtype dt, const char *blob_text) {
    cJSON *cfg = config_of("tiny", 128, 2);
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    checkpoint_write_params(w, p, dt);
    uint64_t rng_state[4] = {1, 2, 3, UINT64_C(0xfeedfacecafebeef)};
    checkpoint_write_blob(w, "rng", rng_state, sizeof rng_state);
    checkpoint_write_blob(w, "note", blob_text, strlen(blob_text));
    checkpoint_write_blob(w, "empty", NULL, 0);
    return checkpoint_writer_commit(w);
}

TEST(checkpoint_round_trip_f32_f16_bf16) {
    CkptDir d;
    ckpt_dir_init(&d);
    Params *p = ckpt_params(1);
    for (int dt = CKPT_F32; dt <= CKPT_BF16; dt++) {
        CHECK_EQ_INT(write_model(d.path, p, (CkptDtype)dt, "epoch 3 row 1200"), 0);
        struct stat st;
        CHECK(stat(d.path, &st) == 0);
        char tmp[224];
        snprintf(tmp, sizeof tmp, "%s.tmp", d.path);
        CHECK(access(tmp, F_OK) != 0); /* renamed away */
        Checkpoint *c = checkpoint_read(d.path);
        if (!CHECK(c != NULL)) continue;
        cJSON *want = config_of("tiny", 128, 2);
        CHECK(cJSON_Compare(c->config, want, 1));
        cJSON_Delete(want);
        CHECK_EQ_INT(c->n_tensors, 4);
        for (int h = 0; h < params_num_tensors(p); h++) {
            const ParamTensor *pt = params_tensor(p, h);
            const CkptTensor *t = checkpoint_find_tensor(c, pt->name);
            if (!CHECK_MSG(t != NULL, "tensor %s", pt->name)) continue;
            CHECK(t->dtype == (CkptDtype)dt && t->ndim == pt->ndim && t->numel == pt->numel);
            const float *x = params_data(p, h);
            long bad = 0;
            for (long i = 0; i < t->numel; i++) {
                float want_x = dt == CKPT_F32   ? x[i]
                               : dt == CKPT_F16 ? half_to_float(half_from_float(x[i]))
                                                : bf16_to_float(bf16_from_float(x[i]));
                bad += memcmp(&t->data[i], &want_x, sizeof want_x) != 0;
            }
            CHECK_MSG(bad == 0, "dtype %d tensor %s: %ld values differ", dt, pt->name, bad);
        }
        const CkptBlob *b = checkpoint_find_blob(c, "rng");
        CHECK(b && b->size == 32 && ((uint64_t *)b->data)[3] == UINT64_C(0xfeedfacecafebeef));
        b = checkpoint_find_blob(c, "note");
        CHECK(b && b->size == 16 && memcmp(b->data, "epoch 3 row 1200", 16) == 0);
        b = checkpoint_find_blob(c, "empty");
        CHECK(b && b->size == 0);
        CHECK(checkpoint_find_blob(c, "nope") == NULL && checkpoint_find_tensor(c, "nope") == NULL);
        /* Back into a fresh arena of the same model. */
        Params *q = ckpt_params(2);
        CHECK_EQ_INT(checkpoint_load_params(c, q), 0);
        if (dt == CKPT_F32) CHECK(memcmp(p->data, q->data, p->total * sizeof(float)) == 0);
        params_free(q);
        checkpoint_free(c);
    }
    params_free(p);
    ckpt_dir_free(&d);
}

/* 1 when msg contains one of the '|'-separated alternatives of `what`. */
static int message_has(const char *msg, const char *what) {
    char alt[128];
    snprintf(alt, sizeof alt, "%s", what);
    for (char *tok = strtok(alt, "|"); tok; tok = strtok(NULL, "|"))
        if (strstr(msg, tok)) return 1;
    return 0;
}

/* checkpoint_read(path) must fail with one message containing `what`. */
static void expect_read_error(const char *path, const char *what, const char *why) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Checkpoint *c = checkpoint_read(path);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(c == NULL, "%s: read succeeded", why);
    CHECK_MSG(msg && message_has(msg, what) && strstr(msg, "glue: error:") && strstr(msg, path),
              "%s: message lacks '%s': %s", why, what, msg ? msg : "");
    checkpoint_free(c);
    free(msg);
}

static unsigned char *file_slurp(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)*n + 1);
    if (fread(b, 1, (size_t)*n, f) != (size_t)*n) *n = -1;
    fclose(f);
    return b;
}

static void file_spit(const char *path, const unsigned char *b, long n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    CHECK(fwrite(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
}

TEST(checkpoint_damage_is_reported) {
    CkptDir d;
    ckpt_dir_init(&d);
    Params *p = ckpt_params(3);
    CHECK_EQ_INT(write_model(d.path, p, CKPT_F16, "x"), 0);
    long n = 0;
    unsigned char *good = file_slurp(d.path, &n);
    CHECK(good != NULL && n > 1000);
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad.ckpt", d.dir);

    expect_read_error(bad, "No such file", "missing file");
    expect_read_error(d.dir, "directory", "directory");
    file_spit(bad, good, 0);
    expect_read_error(bad, "empty", "empty file");
    file_spit(bad, (const unsigned char *)"PK\3\4 this is a zip file, not ours", 34);
    expect_read_error(bad, "not a glue checkpoint", "wrong magic");

    unsigned char *b = malloc((size_t)n);
    memcpy(b, good, (size_t)n);
    b[8] = 9; /* format version 9 */
    file_spit(bad, b, n);
    expect_read_error(bad, "version 9", "newer version");

    /* A flipped byte anywhere after the magic is caught, with the reason. */
    struct { long at; const char *what; } flips[] = {
        {12, "bad header fields"}, {36, "bad header fields"},
        {16, "sizes in the header|truncated"}, {20, "truncated"}, /* payload size: shorter or longer file */
        {28, "sizes in the header"},                            /* raw size beyond any deflate ratio */
        {24, "checksum mismatch"}, {32, "checksum mismatch"}, {40, "checksum mismatch"},
        {41, "checksum mismatch"}, {100, "checksum mismatch"}, {n / 2, "checksum mismatch"},
        {n - 5, "checksum mismatch"}, {n - 1, "checksum mismatch"},
    };
    for (int i = 0; i < (int)(sizeof flips / sizeof flips[0]); i++) {
        memcpy(b, good, (size_t)n);
        b[flips[i].at] ^= 0x10;
        file_spit(bad, b, n);
        char why[64];
        snprintf(why, sizeof why, "byte %ld flipped", flips[i].at);
        expect_read_error(bad, flips[i].what, why);
    }
    /* Truncated at many lengths, including inside the magic and the header. */
    long cuts[] = {1, 5, 8, 20, 39, 40, 41, 200, n / 3, n - 1};
    for (int i = 0; i < (int)(sizeof cuts / sizeof cuts[0]); i++) {
        file_spit(bad, good, cuts[i]);
        char why[64];
        snprintf(why, sizeof why, "cut at %ld", cuts[i]);
        expect_read_error(bad, "truncated", why);
    }
    /* Trailing garbage after a valid file. */
    memcpy(b, good, (size_t)n);
    unsigned char *longer = malloc((size_t)n + 3);
    memcpy(longer, good, (size_t)n);
    memcpy(longer + n, "xyz", 3);
    file_spit(bad, longer, n + 3);
    expect_read_error(bad, "corrupt", "trailing bytes");
    /* And the untouched file still reads. */
    Checkpoint *c = checkpoint_read(d.path);
    CHECK(c != NULL);
    checkpoint_free(c);
    free(longer);
    free(b);
    free(good);
    params_free(p);
    ckpt_dir_free(&d);
}

/* Builds a checkpoint around an arbitrary raw payload exactly as checkpoint.h
 * documents the layout (an independent writer: if the format and the docs
 * drift apart, the forged files stop reading). */
static void forge_file(const char *path, const unsigned char *raw, size_t raw_len) {
    uLongf stored = compressBound(raw_len);
    unsigned char *z = malloc(stored);
    CHECK(compress2(z, &stored, raw, raw_len, 6) == Z_OK);
    unsigned char h[40] = "GLUECKPT";
    uint32_t version = 1, hsize = 40, zero = 0;
    uint64_t st = stored, rw = raw_len;
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &hsize, 4);
    memcpy(h + 16, &st, 8);
    memcpy(h + 24, &rw, 8);
    uint32_t crc = (uint32_t)crc32(crc32(0, z, (uInt)stored), h + 8, 24);
    memcpy(h + 32, &crc, 4);
    memcpy(h + 36, &zero, 4);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(h, 1, 40, f) == 40 && fwrite(z, 1, stored, f) == stored);
    if (f) fclose(f);
    free(z);
}

/* Appends bytes to a growing payload. */
static size_t put(unsigned char *buf, size_t at, const void *x, size_t n) {
    memcpy(buf + at, x, n);
    return at + n;
}

TEST(checkpoint_malformed_payload_never_crashes) {
    CkptDir d;
    ckpt_dir_init(&d);
    /* A valid hand-made payload: config, one f16 tensor (2, 2), one blob, end. */
    unsigned char raw[256];
    size_t at = 0;
    uint8_t k = 1, dt = 1, nd = 2, end = 0;
    uint32_t clen = 12;
    uint16_t nlen = 1;
    uint64_t dims[2] = {2, 2}, blen = 3;
    uint16_t halves[4] = {0x3c00, 0xc000, 0x3800, 0x0001}; /* 1, -2, 0.5, 2^-24 */
    at = put(raw, at, &k, 1), at = put(raw, at, &clen, 4), at = put(raw, at, "{\"hidden\":8}", 12);
    k = 2, at = put(raw, at, &k, 1), at = put(raw, at, &nlen, 2), at = put(raw, at, "t", 1);
    at = put(raw, at, &dt, 1), at = put(raw, at, &nd, 1), at = put(raw, at, dims, 16), at = put(raw, at, halves, 8);
    k = 3, at = put(raw, at, &k, 1), at = put(raw, at, &nlen, 2), at = put(raw, at, "r", 1);
    at = put(raw, at, &blen, 8), at = put(raw, at, "abc", 3), at = put(raw, at, &end, 1);
    forge_file(d.path, raw, at);
    Checkpoint *c = checkpoint_read(d.path);
    if (CHECK(c != NULL)) {
        const CkptTensor *t = checkpoint_find_tensor(c, "t");
        CHECK(t && t->dtype == CKPT_F16 && t->ndim == 2 && t->numel == 4);
        CHECK(t && t->data[0] == 1.0f && t->data[1] == -2.0f && t->data[2] == 0.5f && t->data[3] == ldexpf(1, -24));
        const CkptBlob *b = checkpoint_find_blob(c, "r");
        CHECK(b && b->size == 3 && memcmp(b->data, "abc", 3) == 0);
        CHECK(cJSON_GetObjectItem(c->config, "hidden") && cJSON_GetObjectItem(c->config, "hidden")->valueint == 8);
    }
    checkpoint_free(c);
    /* Every single-byte corruption and every truncation of the payload: the
     * checksum passes, so only the record parser stands between the bytes and
     * a crash. Each must read as an error (or, rarely, as a valid file). */
    unsigned char m[256];
    int errors = 0, cases = 0;
    for (size_t i = 0; i < at; i++)
        for (int v = 0; v < 3; v++) {
            memcpy(m, raw, at);
            m[i] = v == 0 ? 0xff : v == 1 ? 0x00 : (unsigned char)(m[i] + 1);
            if (m[i] == raw[i]) continue;
            forge_file(d.path, m, at);
            StderrCapture cap;
            stderr_capture_begin(&cap);
            c = checkpoint_read(d.path);
            char *msg = stderr_capture_end(&cap);
            cases++;
            if (!c) errors += strstr(msg, "corrupt") != NULL;
            else errors++; /* e.g. a changed data byte: still a valid file */
            checkpoint_free(c);
            free(msg);
        }
    CHECK_EQ_INT(errors, cases);
    for (size_t cut = 0; cut < at; cut++) {
        forge_file(d.path, raw, cut);
        StderrCapture cap;
        stderr_capture_begin(&cap);
        c = checkpoint_read(d.path);
        char *msg = stderr_capture_end(&cap);
        CHECK_MSG(c == NULL && strstr(msg, "corrupt"), "payload cut at %zu: %s", cut, msg);
        checkpoint_free(c);
        free(msg);
    }
    ckpt_dir_free(&d);
}

TEST(checkpoint_interrupted_save_keeps_previous) {
    CkptDir d;
    ckpt_dir_init(&d);
    Params *p = ckpt_params(4), *q = ckpt_params(5);
    CHECK_EQ_INT(write_model(d.path, p, CKPT_F32, "first"), 0);
    char tmp[224];
    snprintf(tmp, sizeof tmp, "%s.tmp", d.path);

    /* A writer killed mid-save: the child writes half a checkpoint and exits. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        CkptWriter *w = checkpoint_writer_open(d.path, NULL, -1);
        if (w) checkpoint_write_params(w, q, CKPT_F32);
        _exit(0); /* no commit: as if killed */
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(access(tmp, F_OK) == 0); /* the partial file is there ... */
    Checkpoint *c = checkpoint_read(d.path); /* ... and the previous file is intact */
    if (CHECK(c != NULL)) {
        const CkptBlob *b = checkpoint_find_blob(c, "note");
        CHECK(b && b->size == 5 && memcmp(b->data, "first", 5) == 0);
        Params *r = ckpt_params(6);
        CHECK(checkpoint_load_params(c, r) == 0 && memcmp(r->data, p->data, p->total * sizeof(float)) == 0);
        params_free(r);
    }
    checkpoint_free(c);
    /* The next save goes through despite the stale .tmp, and removes it. */
    CHECK_EQ_INT(write_model(d.path, q, CKPT_F32, "second"), 0);
    CHECK(access(tmp, F_OK) != 0);
    c = checkpoint_read(d.path);
    if (CHECK(c != NULL)) {
        const CkptBlob *b = checkpoint_find_blob(c, "note");
        CHECK(b && b->size == 6 && memcmp(b->data, "second", 6) == 0);
    }
    checkpoint_free(c);
    /* An aborted writer leaves neither a .tmp nor a changed file. */
    CkptWriter *w = checkpoint_writer_open(d.path, NULL, -1);
    CHECK(w != NULL);
    checkpoint_write_params(w, p, CKPT_F32);
    checkpoint_writer_abort(w);
    CHECK(access(tmp, F_OK) != 0);
    c = checkpoint_read(d.path);
    CHECK(c && checkpoint_find_blob(c, "note")->size == 6);
    checkpoint_free(c);
    /* A directory that does not exist: one message, NULL. */
    char nodir[200];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/model.ckpt", d.dir);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    w = checkpoint_writer_open(nodir, NULL, -1);
    char *msg = stderr_capture_end(&cap);
    CHECK(w == NULL && msg && strstr(msg, "cannot create"));
    free(msg);
    params_free(p);
    params_free(q);
    ckpt_dir_free(&d);
}

/* A disk that fills up during a save (PATH.tmp a link to /dev/full): the
 * caller that gives up on a failed write (checkpoint_writer_abort, as every
 * model's saver does) and a commit that fails both say why, once, and leave
 * the previous file as it was. The savers aborted without a word: a full
 * disk ended `glue finetune` with exit 1 and no message. */
TEST(checkpoint_disk_full_is_said) {
    if (access("/dev/full", W_OK) != 0) {
        test_skip("no /dev/full");
        return;
    }
    CkptDir d;
    ckpt_dir_init(&d);
    Params *p = ckpt_params(4);
    CHECK_EQ_INT(write_model(d.path, p, CKPT_F32, "first"), 0);
    char tmp[224];
    snprintf(tmp, sizeof tmp, "%s.tmp", d.path);
    for (int at_commit = 0; at_commit < 2; at_commit++) {
        if (!CHECK(symlink("/dev/full", tmp) == 0)) break;
        StderrCapture cap;
        stderr_capture_begin(&cap);
        CkptWriter *w = checkpoint_writer_open(d.path, NULL, -1);
        int rc = -1;
        if (w && at_commit) {   /* a few bytes: they fail only when flushed */
            rc = checkpoint_write_blob(w, "note", "x", 1) == 0 ? checkpoint_writer_commit(w) : -2;
        } else if (w) {         /* more than one I/O chunk: a write fails, the caller gives up */
            rc = checkpoint_write_params(w, p, CKPT_F32);
            checkpoint_writer_abort(w);
        }
        char *msg = stderr_capture_end(&cap);
        CHECK_MSG(w && rc == -1, "%s: the save did not fail where it should (%d)", at_commit ? "commit" : "write", rc);
        const char *said = msg ? strstr(msg, "could not write the checkpoint: No space left on device") : NULL;
        CHECK_MSG(said && !strstr(said + 1, "could not write"), "%s: not said once: %s",
                  at_commit ? "commit" : "write", msg ? msg : "(none)");
        free(msg);
        CHECK(access(tmp, F_OK) != 0 && errno == ENOENT);
        Checkpoint *c = checkpoint_read(d.path);
        const CkptBlob *b = c ? checkpoint_find_blob(c, "note") : NULL;
        CHECK_MSG(b && b->size == 5 && memcmp(b->data, "first", 5) == 0, "the previous file changed");
        checkpoint_free(c);
    }
    params_free(p);
    ckpt_dir_free(&d);
}

/* checkpoint_check_config result and message. */
static int check_config(const Checkpoint *c, const cJSON *want, const char *const *keys, int n, char **msg) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = checkpoint_check_config(c, want, keys, n);
    *msg = stderr_capture_end(&cap);
    return rc;
}

TEST(checkpoint_config_mismatch_names_keys) {
    CkptDir d;
    ckpt_dir_init(&d);
    Params *p = ckpt_params(7);
    CHECK_EQ_INT(write_model(d.path, p, CKPT_F32, "x"), 0); /* config: tiny, 128, 2, 0.1 */
    Checkpoint *c = checkpoint_read(d.path);
    if (!CHECK(c != NULL)) return;
    char *msg;
    /* Same values, other key order, 128 written as 128.0: equal. */
    cJSON *same = cJSON_Parse("{\"dropout\": 0.1, \"layers\": 2, \"hidden\": 128.0, \"size\": \"tiny\"}");
    CHECK_EQ_INT(check_config(c, same, NULL, 0, &msg), 0);
    CHECK(msg && msg[0] == '\0');
    free(msg);
    cJSON *mini = cJSON_Parse("{\"size\": \"mini\", \"hidden\": 256, \"layers\": 2, \"dropout\": 0.1, \"heads\": 4}");
    CHECK_EQ_INT(check_config(c, mini, NULL, 0, &msg), -1);
    CHECK_MSG(msg && strstr(msg, "size: \"tiny\" (checkpoint) vs \"mini\" (model)") &&
                  strstr(msg, "hidden: 128 (checkpoint) vs 256 (model)") && strstr(msg, "heads: missing") &&
                  !strstr(msg, "layers") && strstr(msg, d.path),
              "message: %s", msg);
    free(msg);
    /* Only the architecture keys asked for. */
    const char *arch[] = {"layers", "dropout"};
    CHECK_EQ_INT(check_config(c, mini, arch, 2, &msg), 0);
    free(msg);
    const char *arch2[] = {"layers", "hidden"};
    CHECK_EQ_INT(check_config(c, mini, arch2, 2, &msg), -1);
    CHECK(msg && strstr(msg, "hidden") && !strstr(msg, "size"));
    free(msg);
    cJSON_Delete(same);
    cJSON_Delete(mini);
    checkpoint_free(c);
    params_free(p);
    ckpt_dir_free(&d);
}

TEST(checkpoint_load_params_checks_names_and_shapes) {
    CkptDir d;
    ckpt_dir_init(&d);
    Params *p = ckpt_params(8);
    CHECK_EQ_INT(write_model(d.path, p, CKPT_F32, "x"), 0);
    Checkpoint *c = checkpoint_read(d.path);
    if (!CHECK(c != NULL)) return;
    Rng rng;
    rng_seed(&rng, 1);
    Params *wrong = params_create();
    params_declare(wrong, "emb", PARAM_SHAPE(50, 8), PARAM_INIT_ZEROS, 0);
    params_declare(wrong, "w", PARAM_SHAPE(8, 16), PARAM_INIT_ZEROS, 0);
    params_allocate(wrong, &rng);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = checkpoint_load_params(c, wrong);
    char *msg = stderr_capture_end(&cap);
    CHECK(rc == -1 && msg && strstr(msg, "'w' has shape (8, 8), the model expects (8, 16)"));
    free(msg);
    params_free(wrong);
    Params *more = params_create();
    params_declare(more, "emb", PARAM_SHAPE(50, 8), PARAM_INIT_ZEROS, 0);
    params_declare(more, "pooler", PARAM_SHAPE(8), PARAM_INIT_ZEROS, 0);
    params_allocate(more, &rng);
    stderr_capture_begin(&cap);
    rc = checkpoint_load_params(c, more);
    msg = stderr_capture_end(&cap);
    CHECK(rc == -1 && msg && strstr(msg, "no tensor 'pooler'"));
    free(msg);
    params_free(more);
    checkpoint_free(c);
    params_free(p);
    ckpt_dir_free(&d);
}

static float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

TEST(checkpoint_half_conversions_match_numpy_and_torch) {
    /* 65536 bit patterns spread over all exponents, plus edge cases. */
    const uint32_t edges[] = {
        0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, /* 65504, just under/at/over 65520, 65536 */
        0x38800000, 0x387fffff, 0x33800000, 0x33000000, 0x33000001, /* 2^-14, below it, 2^-24, 2^-25 (tie), above */
        0x337fffff, 0x3f801000, 0x3f803000, 0x3f800fff, 0x3f801001, /* fp16 ties to even around 1 */
        0x3f808000, 0x3f818000, 0x3f817fff, 0x00000001, 0x80000000, /* bf16 ties, f32 denormal, -0 */
        0x7f800000, 0xff800000, 0x7f7fffff, 0xc7800000, 0x3c00ffff, /* inf, -inf, FLT_MAX, -65536 */
    };
    const int NE = (int)(sizeof edges / sizeof edges[0]), N = 65536 + NE;
    float *x = malloc(sizeof(float) * N), *h16 = malloc(sizeof(float) * N), *b16 = malloc(sizeof(float) * N);
    float *up = malloc(sizeof(float) * 65536);
    for (int i = 0; i < 65536; i++) x[i] = bits_to_float((uint32_t)i * 65537u + (uint32_t)(i % 3));
    for (int i = 0; i < NE; i++) x[65536 + i] = bits_to_float(edges[i]);
    RefTensor in[] = {{"x", x, N}};
    RefTensor out[] = {{"h16", h16, N}, {"b16", b16, N}, {"up", up, 65536}};
    char args[32];
    snprintf(args, sizeof args, "%d", N);
    if (torchref_run("half_ref.py", args, in, 1, out, 3) == 1) {
        long bad16 = 0, badb = 0, badup = 0, nan_ok = 1;
        for (int i = 0; i < N; i++) {
            if (isnan(x[i])) {
                nan_ok &= isnan(half_to_float(half_from_float(x[i]))) && isnan(bf16_to_float(bf16_from_float(x[i])));
                continue;
            }
            if (half_from_float(x[i]) != (uint16_t)h16[i] && bad16++ < 5)
                printf("  f16 of %08x: %04x vs numpy %04x\n", *(uint32_t *)&x[i], half_from_float(x[i]),
                       (unsigned)h16[i]);
            if (bf16_from_float(x[i]) != (uint16_t)b16[i] && badb++ < 5)
                printf("  bf16 of %08x: %04x vs torch %04x\n", *(uint32_t *)&x[i], bf16_from_float(x[i]),
                       (unsigned)b16[i]);
        }
        for (int h = 0; h < 65536; h++) {
            float f = half_to_float((uint16_t)h);
            if (isnan(up[h]) ? !isnan(f) : memcmp(&f, &up[h], sizeof f) != 0) badup++;
            /* Every non-NaN half survives the round trip. */
            if (!isnan(f) && half_from_float(f) != h) badup++;
        }
        CHECK_MSG(bad16 == 0 && badb == 0 && badup == 0 && nan_ok, "f16 %ld, bf16 %ld, f16->f32 %ld mismatches",
                  bad16, badb, badup);
    }
    free(x);
    free(h16);
    free(b16);
    free(up);
}
