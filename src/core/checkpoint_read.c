/* checkpoint_read.c — reading glue checkpoints: verify header, sizes and CRC
 * first, then inflate and parse the records with every length bounds-checked,
 * so a damaged or foreign file gives one clear message, never a crash
 * (format in checkpoint.h). */
#define ZLIB_CONST
#include "core/checkpoint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/checkpoint_format.h"
#include "core/common.h"
#include "core/crc32.h"
#include "core/half.h"

/* deflate never expands data more than ~1032x: a larger raw size is corrupt. */
enum { CKPT_MAX_RATIO = 1100 };

static const char *const HINT_DAMAGED =
    "the file is damaged (interrupted copy or save?): copy it again or retrain";

typedef struct {
    uint32_t version, header_size, crc, reserved;
    uint64_t stored, raw;
} CkptHeader;

/* Header checks in the order that gives the most useful message. */
static int ckr_check_header(const char *path, const unsigned char *h, size_t got, uint64_t file_size,
                            CkptHeader *hd) {
    if (file_size == 0) {
        user_error_data("delete it and save again (an interrupted save?)", "%s: empty file, not a checkpoint", path);
        return -1;
    }
    size_t cmp = got < 8 ? got : 8;
    if (memcmp(h, CKPT_MAGIC, cmp) != 0) {
        user_error_data("pass a model file written by glue (model.ckpt)", "%s: not a glue checkpoint (wrong magic bytes)", path);
        return -1;
    }
    if (got < CKPT_HEADER_SIZE) {
        user_error_data(HINT_DAMAGED, "%s: truncated: %zu bytes, shorter than the %d-byte header", path, got, CKPT_HEADER_SIZE);
        return -1;
    }
    memcpy(&hd->version, h + 8, 4);
    memcpy(&hd->header_size, h + 12, 4);
    memcpy(&hd->stored, h + 16, 8);
    memcpy(&hd->raw, h + 24, 8);
    memcpy(&hd->crc, h + 32, 4);
    memcpy(&hd->reserved, h + 36, 4);
    if (hd->version != CHECKPOINT_VERSION && hd->version != CHECKPOINT_VERSION_INT8) {
        user_error_data("read it with the glue version that wrote it, or retrain",
                   "%s: checkpoint format version %u; this glue reads versions %d and %d", path, hd->version,
                   CHECKPOINT_VERSION, CHECKPOINT_VERSION_INT8);
        return -1;
    }
    if (hd->header_size != CKPT_HEADER_SIZE || hd->reserved != 0) {
        user_error_data(HINT_DAMAGED, "%s: corrupt: bad header fields", path);
        return -1;
    }
    uint64_t want = CKPT_HEADER_SIZE + hd->stored;
    if (hd->stored > file_size || want > file_size) {
        user_error_data(HINT_DAMAGED, "%s: truncated: %llu bytes, the header announces %llu", path,
                   (unsigned long long)file_size, (unsigned long long)want);
        return -1;
    }
    if (want != file_size || hd->raw == 0 || hd->raw / CKPT_MAX_RATIO > hd->stored) {
        user_error_data(HINT_DAMAGED, "%s: corrupt: sizes in the header do not match the file (%llu bytes)", path,
                   (unsigned long long)file_size);
        return -1;
    }
    return 0;
}

/* Magic, version, sizes and the CRC over the whole file; 0 ok. */
static int ckr_verify(const char *path, CkptHeader *hd) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        user_error_io(errno == ENOENT ? "check the path, or train a model first ('glue finetune')" : NULL,
                   "%s: cannot open checkpoint: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    unsigned char h[CKPT_HEADER_SIZE];
    size_t got = fread(h, 1, sizeof h, f);
    int rc = fstat(fileno(f), &st) == 0 ? 0 : -1;
    fclose(f);
    if (rc == 0 && S_ISDIR(st.st_mode)) {
        user_error_io("pass the checkpoint file inside it (model.ckpt)", "%s: is a directory", path);
        return -1;
    }
    if (rc != 0 || ckr_check_header(path, h, got, (uint64_t)st.st_size, hd)) return -1;
    uint32_t crc;
    if (crc32_file(path, CKPT_HEADER_SIZE, -1, &crc)) return -1;
    crc = crc32_update(crc, h + 8, CKPT_CRC_HEADER_END - 8);
    if (crc != hd->crc) {
        user_error_data(HINT_DAMAGED, "%s: corrupt: checksum mismatch (stored %08x, computed %08x)", path, hd->crc, crc);
        return -1;
    }
    return 0;
}

/* Inflating reader over the payload, bounded by the raw size. */
typedef struct {
    FILE *f;
    z_stream z;
    unsigned char *in;      /* (CKPT_IO_CHUNK) */
    uint64_t stored_left;   /* compressed bytes still in the file */
    uint64_t raw_left;      /* payload bytes not yet handed out */
    uint32_t version;       /* the header's: int8 tensors only in version 2 */
} CkptIn;

/* More compressed input when zlib has used up what it had; -1 on a read error. */
static int ckin_refill(CkptIn *r) {
    if (r->z.avail_in > 0 || r->stored_left == 0) return 0;
    size_t want = r->stored_left < CKPT_IO_CHUNK ? (size_t)r->stored_left : CKPT_IO_CHUNK;
    if (fread(r->in, 1, want, r->f) != want) return -1;
    r->stored_left -= want;
    r->z.next_in = r->in;
    r->z.avail_in = (uInt)want;
    return 0;
}

/* Exactly n payload bytes into dst; -1 when the payload ends first or is bad. */
static int ckin_read(CkptIn *r, void *dst, size_t n) {
    if (n > r->raw_left) return -1;
    r->raw_left -= n;
    unsigned char *out = dst;
    while (n > 0) {
        size_t chunk = n > UINT_MAX ? UINT_MAX : n;
        r->z.next_out = out;
        r->z.avail_out = (uInt)chunk;
        while (r->z.avail_out > 0) {
            if (ckin_refill(r)) return -1;
            int ret = inflate(&r->z, Z_NO_FLUSH);
            if (ret == Z_STREAM_END && r->z.avail_out > 0) return -1;
            if (ret != Z_OK && ret != Z_STREAM_END) return -1;
        }
        out += chunk;
        n -= chunk;
    }
    return 0;
}

/* 0 when the payload was consumed exactly and the zlib stream ends there
 * (inflate may still have the stream's trailer to read). */
static int ckin_finish(CkptIn *r) {
    unsigned char extra;
    if (r->raw_left != 0) return -1;
    for (;;) {
        r->z.next_out = &extra;
        r->z.avail_out = 1;
        if (ckin_refill(r)) return -1;
        int ret = inflate(&r->z, Z_NO_FLUSH);
        if (r->z.avail_out == 0) return -1; /* more data than announced */
        if (ret == Z_STREAM_END) return r->stored_left == 0 && r->z.avail_in == 0 ? 0 : -1;
        if (ret != Z_OK) return -1;
    }
}

static int ckin_u8(CkptIn *r, uint8_t *v) { return ckin_read(r, v, 1); }
static int ckin_u16(CkptIn *r, uint16_t *v) { return ckin_read(r, v, 2); }
static int ckin_u32(CkptIn *r, uint32_t *v) { return ckin_read(r, v, 4); }
static int ckin_u64(CkptIn *r, uint64_t *v) { return ckin_read(r, v, 8); }

/* A record name: 1..CKPT_NAME_MAX bytes, no NUL. NULL when malformed. */
static char *ckin_name(CkptIn *r) {
    uint16_t len;
    if (ckin_u16(r, &len) || len == 0 || len > CKPT_NAME_MAX || len > r->raw_left) return NULL;
    char *s = xmalloc((size_t)len + 1);
    if (ckin_read(r, s, len) || memchr(s, '\0', len)) {
        free(s);
        return NULL;
    }
    s[len] = '\0';
    return s;
}

static size_t ckpt_dtype_size(CkptDtype d) { return d == CKPT_F32 ? 4 : d == CKPT_I8 ? 1 : 2; }

/* Tensor data (numel) of dtype into dst as f32. */
static int ckin_floats(CkptIn *r, float *dst, size_t numel, CkptDtype dtype) {
    if (dtype == CKPT_F32) return ckin_read(r, dst, numel * sizeof(float));
    if (dtype == CKPT_I8) {   /* read into the float array's tail, widened front to back */
        int8_t *bytes = (int8_t *)(dst + numel) - numel;
        int rc = ckin_read(r, bytes, numel);
        for (size_t i = 0; i < numel && rc == 0; i++) dst[i] = (float)bytes[i];
        return rc;
    }
    uint16_t *buf = xmalloc(CKPT_CONVERT_CHUNK * sizeof *buf);
    int rc = 0;
    for (size_t i = 0; i < numel && rc == 0; i += CKPT_CONVERT_CHUNK) {
        size_t k = numel - i < CKPT_CONVERT_CHUNK ? numel - i : CKPT_CONVERT_CHUNK;
        rc = ckin_read(r, buf, k * sizeof *buf);
        if (rc == 0 && dtype == CKPT_F16) half_to_float_array(dst + i, buf, k);
        else if (rc == 0) bf16_to_float_array(dst + i, buf, k);
    }
    free(buf);
    return rc;
}

static int ckin_tensor(CkptIn *r, CkptTensor *t) {
    uint8_t dtype, ndim;
    memset(t, 0, sizeof *t);
    if (!(t->name = ckin_name(r))) return -1;
    if (ckin_u8(r, &dtype) || dtype > CKPT_I8 || (dtype == CKPT_I8 && r->version < CHECKPOINT_VERSION_INT8) || ckin_u8(r, &ndim) || ndim > CHECKPOINT_MAX_DIMS) return -1;
    t->dtype = (CkptDtype)dtype;
    t->ndim = ndim;
    uint64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        uint64_t dim;
        if (ckin_u64(r, &dim) || dim > (uint64_t)INT_MAX) return -1;
        t->shape[d] = (long)dim;
        numel *= dim; /* no overflow: each factor < 2^31 and the product is checked next */
        if (numel > r->raw_left) return -1;
    }
    if (numel * ckpt_dtype_size(t->dtype) > r->raw_left) return -1;
    t->numel = (long)numel;
    t->data = xaligned_alloc((size_t)numel * sizeof(float));
    return ckin_floats(r, t->data, (size_t)numel, t->dtype);
}

static int ckin_blob(CkptIn *r, CkptBlob *b) {
    uint64_t size;
    memset(b, 0, sizeof *b);
    if (!(b->name = ckin_name(r))) return -1;
    if (ckin_u64(r, &size) || size > r->raw_left) return -1;
    b->size = (size_t)size;
    b->data = xmalloc(b->size);
    return ckin_read(r, b->data, b->size);
}

static int ckin_config(CkptIn *r, Checkpoint *c) {
    uint8_t kind;
    uint32_t len;
    if (ckin_u8(r, &kind) || kind != CKPT_REC_CONFIG || ckin_u32(r, &len) || len > r->raw_left) return -1;
    char *text = xmalloc((size_t)len + 1);
    int rc = ckin_read(r, text, len);
    text[len] = '\0';
    if (rc == 0) c->config = cJSON_ParseWithLength(text, len);
    free(text);
    return rc == 0 && c->config ? 0 : -1;
}

/* Every record after the config, up to END. */
static int ckin_records(CkptIn *r, Checkpoint *c) {
    int cap_t = 0, cap_b = 0;
    for (;;) {
        uint8_t kind;
        if (ckin_u8(r, &kind)) return -1;
        if (kind == CKPT_REC_END) return ckin_finish(r);
        if (kind == CKPT_REC_TENSOR) {
            if (c->n_tensors == cap_t) {
                cap_t = cap_t ? 2 * cap_t : 16;
                c->tensors = xrealloc(c->tensors, (size_t)cap_t * sizeof *c->tensors);
            }
            if (ckin_tensor(r, &c->tensors[c->n_tensors++])) return -1;
        } else if (kind == CKPT_REC_BLOB) {
            if (c->n_blobs == cap_b) {
                cap_b = cap_b ? 2 * cap_b : 4;
                c->blobs = xrealloc(c->blobs, (size_t)cap_b * sizeof *c->blobs);
            }
            if (ckin_blob(r, &c->blobs[c->n_blobs++])) return -1;
        } else {
            return -1;
        }
    }
}

static int ckr_parse(const char *path, const CkptHeader *hd, Checkpoint *c) {
    CkptIn r = {.stored_left = hd->stored, .raw_left = hd->raw, .version = hd->version};
    r.f = fopen(path, "rb");
    if (!r.f || fseek(r.f, CKPT_HEADER_SIZE, SEEK_SET) != 0) {
        user_error_io(NULL, "%s: cannot read checkpoint: %s", path, strerror(errno));
        if (r.f) fclose(r.f);
        return -1;
    }
    r.in = xmalloc(CKPT_IO_CHUNK);
    if (inflateInit(&r.z) != Z_OK) DIE("checkpoint: inflateInit failed");
    int rc = ckin_config(&r, c) == 0 && ckin_records(&r, c) == 0 ? 0 : -1;
    uint64_t at = hd->raw - r.raw_left;
    inflateEnd(&r.z);
    free(r.in);
    fclose(r.f);
    if (rc)
        user_error_data("the file passed its checksum but is malformed: it was not written by this glue; retrain or re-export",
                   "%s: corrupt checkpoint: bad record near payload byte %llu", path, (unsigned long long)at);
    return rc;
}

Checkpoint *checkpoint_read(const char *path) {
    CkptHeader hd;
    if (ckr_verify(path, &hd)) return NULL;
    Checkpoint *c = xcalloc(1, sizeof *c);
    c->path = xstrdup(path);
    if (ckr_parse(path, &hd, c)) {
        checkpoint_free(c);
        return NULL;
    }
    return c;
}

double checkpoint_peek_loaded_bytes(const char *path) {
    FILE *f = fopen(path, "rb");
    unsigned char h[CKPT_HEADER_SIZE];
    size_t got = f ? fread(h, 1, sizeof h, f) : 0;
    if (f) fclose(f);
    uint32_t version;
    uint64_t raw;
    if (got < CKPT_HEADER_SIZE || memcmp(h, CKPT_MAGIC, 8) != 0) return -1;
    memcpy(&version, h + 8, 4);
    memcpy(&raw, h + 24, 8);
    /* int8 tensors (only in version 2) are read into f32: 4x; f16 ones are counted as stored */
    return (double)raw * (version == CHECKPOINT_VERSION_INT8 ? 4.0 : 1.0);
}

void checkpoint_free(Checkpoint *c) {
    if (!c) return;
    for (int i = 0; i < c->n_tensors; i++) {
        free(c->tensors[i].name);
        free(c->tensors[i].data);
    }
    for (int i = 0; i < c->n_blobs; i++) {
        free(c->blobs[i].name);
        free(c->blobs[i].data);
    }
    free(c->tensors);
    free(c->blobs);
    cJSON_Delete(c->config);
    free(c->path);
    free(c);
}

const CkptTensor *checkpoint_find_tensor(const Checkpoint *c, const char *name) {
    for (int i = 0; i < c->n_tensors; i++)
        if (c->tensors[i].name && strcmp(c->tensors[i].name, name) == 0) return &c->tensors[i];
    return NULL;
}

const CkptBlob *checkpoint_find_blob(const Checkpoint *c, const char *name) {
    for (int i = 0; i < c->n_blobs; i++)
        if (c->blobs[i].name && strcmp(c->blobs[i].name, name) == 0) return &c->blobs[i];
    return NULL;
}

cJSON *checkpoint_peek_config(const char *path) {
    unsigned char h[CKPT_HEADER_SIZE];
    CkptHeader hd;
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t got = fread(h, 1, sizeof h, f);
    int ok = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && got == sizeof h &&
             memcmp(h, CKPT_MAGIC, 8) == 0;
    fclose(f);
    if (!ok) return NULL;
    memcpy(&hd.stored, h + 16, 8);
    memcpy(&hd.raw, h + 24, 8);
    if (hd.stored > (uint64_t)st.st_size) return NULL;
    /* The config is the first record: inflate only as far as its end. */
    CkptIn r = {.stored_left = hd.stored, .raw_left = hd.raw};
    Checkpoint c = {0};
    if (!(r.f = fopen(path, "rb")) || fseek(r.f, CKPT_HEADER_SIZE, SEEK_SET) != 0) {
        if (r.f) fclose(r.f);
        return NULL;
    }
    r.in = xmalloc(CKPT_IO_CHUNK);
    if (inflateInit(&r.z) != Z_OK) DIE("checkpoint: inflateInit failed");
    if (ckin_config(&r, &c) != 0) c.config = NULL;
    inflateEnd(&r.z);
    free(r.in);
    fclose(r.f);
    return c.config;
}
