/* test_safetensors.c — .safetensors reading and writing (src/core/safetensors.h).
 *
 * Round trip (bit-exact, scalar and empty tensors, metadata, the on-disk layout:
 * 8-aligned space-padded header, sorted keys, data in key order); files written
 * by hand in Python (tests/ref/safetensors_ref.py: F32, F16, BF16, an I64 buffer,
 * header keys unsorted and data in yet another order) read back to the exact
 * values numpy/torch give; our files read back by that Python reader; and every
 * kind of malformed file (truncated at many offsets, bad JSON, offsets out of
 * range / overlapping / leaving gaps, shape vs span, huge header length, huge
 * shapes, duplicate names, unknown dtypes) gives NULL and a message naming the
 * file, never a crash (run under ASan too). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/safetensors.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#define ST_PYTHON "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/ref/safetensors_ref.py"
enum { ST_SKIP = 77 };

/* Runs `safetensors_ref.py MODE DIR`: 1 ok (its output in *log, to free), 0
 * skipped (no torch), -1 failed (CHECK'd). */
static int st_python(const char *mode, const char *dir, char **log) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, ST_PYTHON " %s %s 2>&1", mode, dir);
    int status = -1;
    *log = test_run(cmd, &status);
    if (status == ST_SKIP) {
        test_skip("python3-torch is not installed");
        return 0;
    }
    return CHECK_MSG(status == 0, "%s:\n%s", cmd, *log) ? 1 : -1;
}

typedef struct {
    char dir[SCRATCH_PATH_MAX];
    char path[192];
} StDir;

static void st_dir_init(StDir *d, const char *file) {
    CHECK(scratch_dir("st", d->dir, sizeof d->dir));
    snprintf(d->path, sizeof d->path, "%s/%s", d->dir, file);
}

static void st_dir_free(StDir *d) {
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    CHECK(system(cmd) == 0);
}

static char *st_slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*len + 1);
    if (fread(b, 1, (size_t)*len, f) != (size_t)*len) *len = -1;
    b[*len > 0 ? *len : 0] = 0;
    fclose(f);
    return b;
}

static void st_write_bytes(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(b, 1, n, f) == n);
    fclose(f);
}

/* A file from a header text, an announced header length (0: the true one) and
 * `data` bytes of data (values 0..255 repeating). */
static void st_write_raw(const char *path, const char *header, uint64_t announced, size_t data) {
    size_t hn = strlen(header), total = 8 + hn + data;
    unsigned char *b = malloc(total);
    uint64_t h = announced ? announced : hn;
    memcpy(b, &h, 8);
    memcpy(b + 8, header, hn);
    for (size_t i = 0; i < data; i++) b[8 + hn + i] = (unsigned char)i;
    st_write_bytes(path, b, total);
    free(b);
}

/* Reading path must fail with a message containing `want` and the path. */
static void st_expect_error(const char *path, int flags, const char *want, const char *what) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Checkpoint *c = safetensors_read(path, flags);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(c == NULL, "%s: was accepted", what);
    CHECK_MSG(msg && strstr(msg, want), "%s: message lacks '%s': %s", what, want, msg ? msg : "");
    CHECK_MSG(msg && strstr(msg, path), "%s: message does not name the file: %s", what, msg ? msg : "");
    checkpoint_free(c);
    free(msg);
}

/* Three tensors with distinctive values, metadata, a scalar and an empty one. */
static float ST_W[12], ST_B[3], ST_S[1] = {-2.25f};

static int st_write_sample(const char *path) {
    for (int i = 0; i < 12; i++) ST_W[i] = sinf((float)i) * 1e3f + 1e-30f * (float)i;
    ST_B[0] = -0.0f;
    ST_B[1] = 1.17549435e-38f;
    ST_B[2] = 3.4028235e38f;
    SafeTensorOut t[] = {
        {"zeta.weight", 3, {2, 3, 2}, ST_W},
        {"alpha.bias", 1, {3}, ST_B},
        {"mid.empty", 2, {0, 4}, NULL},
        {"Scalar", 0, {0}, ST_S},
    };
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "format", "pt");
    cJSON_AddStringToObject(meta, "source", "glue test");
    int rc = safetensors_write(path, t, 4, meta);
    cJSON_Delete(meta);
    return rc;
}

TEST(safetensors_round_trip) {
    StDir d;
    st_dir_init(&d, "out.safetensors");
    CHECK(st_write_sample(d.path) == 0);
    char tmp[224];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", d.path, (long)getpid());   /* core/files.h names it so */
    CHECK(access(tmp, F_OK) != 0);
    Checkpoint *c = safetensors_read(d.path, 0);
    CHECK(c != NULL);
    if (c) {
        CHECK_EQ_INT(c->n_tensors, 4);
        CHECK_EQ_INT(c->n_blobs, 0);
        const CkptTensor *w = checkpoint_find_tensor(c, "zeta.weight");
        const CkptTensor *b = checkpoint_find_tensor(c, "alpha.bias");
        const CkptTensor *e = checkpoint_find_tensor(c, "mid.empty");
        const CkptTensor *s = checkpoint_find_tensor(c, "Scalar");
        CHECK(w && b && e && s);
        if (w && b && e && s) {
            CHECK(w->ndim == 3 && w->shape[0] == 2 && w->shape[1] == 3 && w->shape[2] == 2 && w->numel == 12);
            CHECK(w->dtype == CKPT_F32);
            CHECK(memcmp(w->data, ST_W, sizeof ST_W) == 0);
            CHECK(b->ndim == 1 && memcmp(b->data, ST_B, sizeof ST_B) == 0);
            CHECK(e->ndim == 2 && e->numel == 0 && e->shape[1] == 4);
            CHECK(s->ndim == 0 && s->numel == 1 && s->data[0] == -2.25f);
        }
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(c->config, "source");
        CHECK(cJSON_IsString(src) && strcmp(src->valuestring, "glue test") == 0);
        checkpoint_free(c);
    }
    /* Layout: aligned header, metadata first, keys in byte order. */
    long len = 0;
    char *raw = st_slurp(d.path, &len);
    CHECK(raw && len > 8);
    if (raw && len > 8) {
        uint64_t n;
        memcpy(&n, raw, 8);
        CHECK(n % 8 == 0 && 8 + n <= (uint64_t)len);
        CHECK(strncmp(raw + 8, "{\"__metadata__\":", 16) == 0);
        char *pS = strstr(raw + 8, "\"Scalar\""), *pa = strstr(raw + 8, "\"alpha.bias\"");
        char *pm = strstr(raw + 8, "\"mid.empty\""), *pz = strstr(raw + 8, "\"zeta.weight\"");
        CHECK(pS && pa && pm && pz && pS < pa && pa < pm && pm < pz);
        CHECK(8 + n + 4 * (1 + 3 + 0 + 12) == (uint64_t)len);
        /* The scalar, first in key order, starts the data. */
        float first;
        memcpy(&first, raw + 8 + n, 4);
        CHECK(first == -2.25f);
    }
    free(raw);
    st_dir_free(&d);
}

TEST(safetensors_write_refuses_duplicates) {
    StDir d;
    st_dir_init(&d, "dup.safetensors");
    float x[2] = {1, 2};
    SafeTensorOut t[] = {{"a", 1, {2}, x}, {"a", 1, {2}, x}};
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = safetensors_write(d.path, t, 2, NULL);
    SafeTensorOut m[] = {{"__metadata__", 1, {2}, x}};
    int rc2 = safetensors_write(d.path, m, 1, NULL);
    char *msg = stderr_capture_end(&cap);
    CHECK(rc == -1 && rc2 == -1);
    CHECK(access(d.path, F_OK) != 0);
    CHECK(msg && strstr(msg, "'a'"));
    free(msg);
    st_dir_free(&d);
}

/* Compares tensor `name` of c with the Python-written DIR/name.f32, bit for bit. */
static void st_check_against(const Checkpoint *c, const char *dir, const char *name, CkptDtype dt, long numel) {
    const CkptTensor *t = checkpoint_find_tensor(c, name);
    if (!CHECK_MSG(t != NULL, "no tensor %s", name)) return;
    CHECK_EQ_INT(t->dtype, dt);
    CHECK_EQ_INT(t->numel, numel);
    char path[192];
    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    long len = 0;
    char *want = st_slurp(path, &len);
    CHECK_MSG(want && len == numel * 4, "%s: %ld bytes", path, len);
    if (want && len == numel * 4) CHECK_MSG(memcmp(want, t->data, (size_t)len) == 0, "%s values differ", name);
    free(want);
}

TEST(safetensors_reads_python_written_file) {
    StDir d;
    st_dir_init(&d, "ref.safetensors");
    char *log = NULL;
    if (st_python("write", d.dir, &log) == 1) {
        /* An I64 tensor is refused by default ... */
        st_expect_error(d.path, 0, "tensor 'pos' has dtype I64", "I64 without the flag");
        /* ... and kept as raw bytes when asked. */
        Checkpoint *c = safetensors_read(d.path, SAFETENSORS_OTHER_AS_BLOBS);
        CHECK(c != NULL);
        if (c) {
            CHECK_EQ_INT(c->n_tensors, 5);
            st_check_against(c, d.dir, "a.f32", CKPT_F32, 6);
            st_check_against(c, d.dir, "b.f16", CKPT_F16, 20);
            st_check_against(c, d.dir, "c.bf16", CKPT_BF16, 7);
            st_check_against(c, d.dir, "s.scalar", CKPT_F32, 1);
            const CkptTensor *z = checkpoint_find_tensor(c, "z.empty");
            CHECK(z && z->numel == 0 && z->ndim == 2 && z->shape[1] == 3);
            const CkptBlob *pos = checkpoint_find_blob(c, "pos");
            CHECK(pos && pos->size == 6 * 8);
            if (pos && pos->size == 48) {
                int64_t v[6];
                memcpy(v, pos->data, sizeof v);
                CHECK(v[0] == 0 && v[5] == 5);
            }
            const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(c->config, "format");
            CHECK(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "pt") == 0);
            checkpoint_free(c);
        }
    }
    free(log);
    st_dir_free(&d);
}

TEST(safetensors_python_reads_ours) {
    StDir d;
    st_dir_init(&d, "out.safetensors");
    CHECK(st_write_sample(d.path) == 0);
    /* The raw values for the Python side to compare with. */
    struct { const char *name; const float *v; size_t n; } raw[] = {
        {"zeta.weight", ST_W, 12}, {"alpha.bias", ST_B, 3}, {"mid.empty", ST_W, 0}, {"Scalar", ST_S, 1}};
    for (int i = 0; i < 4; i++) {
        char p[192];
        snprintf(p, sizeof p, "%s/%s.f32", d.dir, raw[i].name);
        st_write_bytes(p, raw[i].v, raw[i].n * 4);
    }
    char *log = NULL;
    if (st_python("check", d.dir, &log) == 1) CHECK_MSG(strstr(log, "ok 4 tensors"), "%s", log);
    free(log);
    st_dir_free(&d);
}

TEST(safetensors_truncated_anywhere_is_an_error) {
    StDir d;
    st_dir_init(&d, "cut.safetensors");
    CHECK(st_write_sample(d.path) == 0);
    long len = 0;
    char *raw = st_slurp(d.path, &len);
    CHECK(raw != NULL);
    for (long cut = 0; raw && cut < len; cut += (cut < 16 ? 1 : 7)) {
        st_write_bytes(d.path, raw, (size_t)cut);
        StderrCapture cap;
        stderr_capture_begin(&cap);
        Checkpoint *c = safetensors_read(d.path, 0);
        char *msg = stderr_capture_end(&cap);
        CHECK_MSG(c == NULL, "cut at %ld of %ld accepted", cut, len);
        CHECK_MSG(msg && strstr(msg, d.path), "cut at %ld: %s", cut, msg ? msg : "");
        checkpoint_free(c);
        free(msg);
    }
    free(raw);
    st_dir_free(&d);
}

TEST(safetensors_malformed_files_are_errors) {
    StDir d;
    st_dir_init(&d, "bad.safetensors");
    const char *p = d.path;
    static const struct {
        const char *what, *header;
        uint64_t announced;
        size_t data;
        const char *want;
    } cases[] = {
        {"huge header length", "{}", 1ULL << 40, 0, "exceeds the 100 MB limit"},
        {"header longer than file", "{}", 1000, 0, "truncated"},
        {"bad JSON", "{\"a\": {\"dtype\": \"F32\", ", 0, 0, "not valid JSON"},
        {"not an object", "[1, 2, 3]", 0, 0, "not an object"},
        {"garbage after JSON", "{} x", 0, 0, "bytes after its JSON"},
        {"missing dtype", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, "needs \"dtype\""},
        {"entry not an object", "{\"a\":3}", 0, 0, "needs \"dtype\""},
        {"unknown dtype", "{\"a\":{\"dtype\":\"F4\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, "unknown dtype"},
        {"offsets past the end", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 0, 8, "run past"},
        {"offsets reversed", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 0, 4, "begin <= end"},
        {"offsets not two", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 0, 4, "data_offsets"},
        {"negative offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 0, 4, "data_offsets"},
        {"shape vs span", "{\"a\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,8]}}", 0, 8, "shape needs 6 bytes"},
        {"huge shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,8]}}", 0, 8,
         "more bytes than"},
        {"fractional shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 0, 4, "non-negative integers"},
        {"negative shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 0, 4, "non-negative integers"},
        {"too many dims", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 0, 4,
         "9 dimensions"},
        {"overlap", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 0, 8, "overlaps"},
        {"gap", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 0, 12, "belong to no tensor"},
        {"trailing data", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 8, "after the last tensor"},
        {"duplicate name", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                           "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 0, 8, "appears twice"},
        {"metadata not object", "{\"__metadata__\":\"x\"}", 0, 0, "__metadata__"},
        {"I64 without the flag", "{\"a\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0, 8, "dtype I64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st_write_raw(p, cases[i].header, cases[i].announced, cases[i].data);
        st_expect_error(p, 0, cases[i].want, cases[i].what);
    }
    /* Fewer than 8 bytes, an empty file, a missing file, a directory. */
    st_write_bytes(p, "\x10\0\0", 3);
    st_expect_error(p, 0, "truncated", "3 bytes");
    st_write_bytes(p, "", 0);
    st_expect_error(p, 0, "empty file", "empty");
    unlink(p);
    st_expect_error(p, 0, "cannot open", "missing");
    st_expect_error(d.dir, 0, "is a directory", "directory");
    /* Valid edge cases: no tensors at all, and padding after the JSON. */
    st_write_raw(p, "{}      ", 0, 0);
    Checkpoint *c = safetensors_read(p, 0);
    CHECK(c && c->n_tensors == 0 && cJSON_IsObject(c->config));
    checkpoint_free(c);
    st_dir_free(&d);
}
