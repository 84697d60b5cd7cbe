/* safetensors.c — reading and writing .safetensors files (format and
 * guarantees in safetensors.h). Reading validates the whole header before it
 * allocates or reads any tensor data, so a damaged file costs one message. */
#include "core/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/common.h"
#include "core/files.h"
#include "core/half.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian and is read in host order"
#endif

enum {
    ST_LEN_BYTES = 8,            /* the u64 header length */
    ST_ALIGN = 8,                /* header padded so the data starts 8-byte aligned */
    ST_CONVERT_CHUNK = 1 << 16,  /* f16/bf16 elements converted at a time */
};
/* Largest integer a JSON number (a double) holds exactly. */
#define ST_MAX_EXACT 9007199254740992.0

static const char *const HINT_BAD =
    "the file is damaged or not a safetensors file: download or export it again";

/* ---- dtypes ---- */

typedef struct {
    const char *name;
    int size;        /* bytes per element */
    int ckpt;        /* CkptDtype when glue loads it as f32, else -1 */
} StDtype;

/* Every dtype of the reference implementation with a whole-byte element. */
static const StDtype ST_DTYPES[] = {
    {"F32", 4, CKPT_F32}, {"F16", 2, CKPT_F16}, {"BF16", 2, CKPT_BF16},
    {"F64", 8, -1},       {"I64", 8, -1},       {"I32", 4, -1},   {"I16", 2, -1},
    {"I8", 1, -1},        {"U64", 8, -1},       {"U32", 4, -1},   {"U16", 2, -1},
    {"U8", 1, -1},        {"BOOL", 1, -1},      {"F8_E4M3", 1, -1}, {"F8_E5M2", 1, -1},
};

static const StDtype *st_dtype_find(const char *name) {
    for (size_t i = 0; i < sizeof ST_DTYPES / sizeof ST_DTYPES[0]; i++)
        if (strcmp(ST_DTYPES[i].name, name) == 0) return &ST_DTYPES[i];
    return NULL;
}

/* ---- header parsing ---- */

/* One header entry after validation. */
typedef struct {
    const char *name;      /* points into the parsed JSON */
    const StDtype *dtype;
    int ndim;
    long shape[CHECKPOINT_MAX_DIMS];
    long numel;
    uint64_t begin, end;   /* in the data buffer */
} StEntry;

/* A JSON number that is a non-negative integer (exact in a double); 0 ok. */
static int st_json_uint(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!isfinite(d) || d < 0 || d > ST_MAX_EXACT || d != floor(d)) return -1;
    *out = (uint64_t)d;
    return 0;
}

/* dtype, shape and data_offsets of one entry, checked against the buffer size. */
static int st_entry_parse(const char *path, const cJSON *item, uint64_t data_size, StEntry *e) {
    e->name = item->string;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsObject(item) || !cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs)) {
        user_error_data(HINT_BAD, "%s: tensor '%s': header entry needs \"dtype\" (string), \"shape\" and "
                   "\"data_offsets\" (arrays)", path, e->name);
        return -1;
    }
    e->dtype = st_dtype_find(dt->valuestring);
    if (!e->dtype) {
        user_error_data("glue reads F32, F16 and BF16 (and skips integer buffers); convert the file with PyTorch",
                   "%s: tensor '%s' has unknown dtype '%s'", path, e->name, dt->valuestring);
        return -1;
    }
    e->ndim = cJSON_GetArraySize(shape);
    if (e->ndim > CHECKPOINT_MAX_DIMS) {
        user_error_data(NULL, "%s: tensor '%s' has %d dimensions; glue supports at most %d", path, e->name, e->ndim,
                   CHECKPOINT_MAX_DIMS);
        return -1;
    }
    /* numel * size must equal the span, which is at most data_size: multiplying
     * with that bound in view cannot overflow. A zero dimension wins. */
    uint64_t numel = 1, dims[CHECKPOINT_MAX_DIMS], limit = data_size / (uint64_t)e->dtype->size;
    int zero = 0, too_big = 0, d = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, shape) {
        if (st_json_uint(v, &dims[d])) {
            user_error_data(HINT_BAD, "%s: tensor '%s': shape entries must be non-negative integers", path, e->name);
            return -1;
        }
        e->shape[d] = dims[d] > (uint64_t)LONG_MAX ? LONG_MAX : (long)dims[d];
        if (dims[d] == 0) zero = 1;
        else if (!too_big && numel > limit / dims[d]) too_big = 1;
        else if (!too_big) numel *= dims[d];
        d++;
    }
    uint64_t begin, end;
    if (cJSON_GetArraySize(offs) != 2 || st_json_uint(cJSON_GetArrayItem(offs, 0), &begin) ||
        st_json_uint(cJSON_GetArrayItem(offs, 1), &end) || end < begin) {
        user_error_data(HINT_BAD, "%s: tensor '%s': data_offsets must be [begin, end] with 0 <= begin <= end", path,
                   e->name);
        return -1;
    }
    if (end > data_size) {
        user_error_data(HINT_BAD, "%s: tensor '%s': data_offsets [%llu, %llu] run past the data (%llu bytes; truncated file?)",
                   path, e->name, (unsigned long long)begin, (unsigned long long)end, (unsigned long long)data_size);
        return -1;
    }
    if (zero) numel = 0;
    if (too_big && !zero) {
        user_error_data(HINT_BAD, "%s: tensor '%s': its shape needs more bytes than the whole file has", path, e->name);
        return -1;
    }
    if (numel * (uint64_t)e->dtype->size != end - begin) {
        user_error_data(HINT_BAD, "%s: tensor '%s': shape needs %llu bytes of %s but data_offsets span %llu", path,
                   e->name, (unsigned long long)(numel * (uint64_t)e->dtype->size), e->dtype->name,
                   (unsigned long long)(end - begin));
        return -1;
    }
    e->numel = (long)numel;
    e->begin = begin;
    e->end = end;
    return 0;
}

static int st_cmp_begin(const void *a, const void *b) {
    const StEntry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static int st_cmp_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names are distinct (cJSON keeps duplicate keys; which one would win is unclear). */
static int st_check_unique(const char *path, const StEntry *e, int n) {
    const char **names = xmalloc((size_t)(n ? n : 1) * sizeof *names);
    for (int i = 0; i < n; i++) names[i] = e[i].name;
    qsort(names, (size_t)n, sizeof *names, st_cmp_name);
    int rc = 0;
    for (int i = 1; i < n && !rc; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            user_error_data(HINT_BAD, "%s: tensor '%s' appears twice in the header", path, names[i]);
            rc = -1;
        }
    free(names);
    return rc;
}

/* Sorted by begin, the spans must tile [0, data_size) exactly. */
static int st_check_tiling(const char *path, StEntry *e, int n, uint64_t data_size) {
    qsort(e, (size_t)n, sizeof *e, st_cmp_begin);
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        if (e[i].begin < at) {
            user_error_data(HINT_BAD, "%s: tensor '%s' overlaps '%s' in the data (offsets %llu < %llu)", path, e[i].name,
                       e[i - 1].name, (unsigned long long)e[i].begin, (unsigned long long)at);
            return -1;
        }
        if (e[i].begin > at) {
            user_error_data(HINT_BAD, "%s: data bytes [%llu, %llu) belong to no tensor", path, (unsigned long long)at,
                       (unsigned long long)e[i].begin);
            return -1;
        }
        at = e[i].end;
    }
    if (at != data_size) {
        user_error_data(HINT_BAD, "%s: %llu bytes after the last tensor belong to no tensor", path,
                   (unsigned long long)(data_size - at));
        return -1;
    }
    return 0;
}

/* The parsed header's entries (metadata moved to *meta); NULL after a message. */
static StEntry *st_parse_entries(const char *path, cJSON *root, uint64_t data_size, int *n_out, cJSON **meta) {
    int cap = cJSON_GetArraySize(root), n = 0;
    StEntry *e = xcalloc((size_t)(cap ? cap : 1), sizeof *e);
    int seen_meta = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (strcmp(item->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(item) || seen_meta++) {
                user_error_data(HINT_BAD, "%s: \"__metadata__\" must be one JSON object", path);
                free(e);
                return NULL;
            }
            continue;
        }
        if (st_entry_parse(path, item, data_size, &e[n])) { free(e); return NULL; }
        n++;
    }
    if (st_check_unique(path, e, n) || st_check_tiling(path, e, n, data_size)) { free(e); return NULL; }
    cJSON *m = cJSON_DetachItemFromObjectCaseSensitive(root, "__metadata__");
    *meta = m ? m : cJSON_CreateObject();
    *n_out = n;
    return e;
}

/* ---- reading ---- */

/* Reads and parses the JSON header; fills *data_start and *data_size. */
static cJSON *st_read_header(const char *path, FILE *f, uint64_t file_size, uint64_t *data_start,
                             uint64_t *data_size) {
    unsigned char lenb[ST_LEN_BYTES];
    size_t got = fread(lenb, 1, sizeof lenb, f);
    if (file_size == 0) {
        user_error_data(HINT_BAD, "%s: empty file, not a safetensors file", path);
        return NULL;
    }
    if (got < ST_LEN_BYTES) {
        user_error_data(HINT_BAD, "%s: truncated: %zu bytes, shorter than the 8-byte header length", path, got);
        return NULL;
    }
    uint64_t hlen;
    memcpy(&hlen, lenb, sizeof hlen);
    if (hlen > SAFETENSORS_MAX_HEADER) {
        user_error_data(HINT_BAD, "%s: header length %llu exceeds the 100 MB limit (not a safetensors file?)", path,
                   (unsigned long long)hlen);
        return NULL;
    }
    if (hlen > file_size - ST_LEN_BYTES) {
        user_error_data(HINT_BAD, "%s: truncated: the header announces %llu bytes, the file has %llu after the length",
                   path, (unsigned long long)hlen, (unsigned long long)(file_size - ST_LEN_BYTES));
        return NULL;
    }
    char *text = xmalloc((size_t)hlen + 1);
    if (fread(text, 1, (size_t)hlen, f) != (size_t)hlen) {
        user_error_io(NULL, "%s: read error: %s", path, strerror(errno));
        free(text);
        return NULL;
    }
    text[hlen] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)hlen, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        size_t at = root ? 0 : (end && end >= text ? (size_t)(end - text) : 0);
        if (root) user_error_data(HINT_BAD, "%s: the header is JSON but not an object", path);
        else user_error_data(HINT_BAD, "%s: the header is not valid JSON (error near byte %zu of %llu)", path, at,
                        (unsigned long long)hlen);
        cJSON_Delete(root);
        free(text);
        return NULL;
    }
    /* Only the reference's padding may follow the object. */
    for (const char *p = end; p < text + hlen; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            user_error_data(HINT_BAD, "%s: the header has bytes after its JSON object", path);
            cJSON_Delete(root);
            free(text);
            return NULL;
        }
    free(text);
    *data_start = ST_LEN_BYTES + hlen;
    *data_size = file_size - *data_start;
    return root;
}

/* One validated float entry into an f32 tensor. */
static int st_load_float(const char *path, FILE *f, uint64_t data_start, const StEntry *e, CkptTensor *t) {
    t->name = xstrdup(e->name);
    t->dtype = (CkptDtype)e->dtype->ckpt;
    t->ndim = e->ndim;
    for (int d = 0; d < e->ndim; d++) t->shape[d] = e->shape[d];
    t->numel = e->numel;
    t->data = xmalloc((size_t)(e->numel ? e->numel : 1) * sizeof(float));
    if (fseeko(f, (off_t)(data_start + e->begin), SEEK_SET) != 0) goto fail;
    if (t->dtype == CKPT_F32) {
        if (fread(t->data, sizeof(float), (size_t)e->numel, f) != (size_t)e->numel) goto fail;
        return 0;
    }
    uint16_t *buf = xmalloc(ST_CONVERT_CHUNK * sizeof *buf);
    for (long i = 0; i < e->numel; i += ST_CONVERT_CHUNK) {
        size_t k = (size_t)(e->numel - i < ST_CONVERT_CHUNK ? e->numel - i : ST_CONVERT_CHUNK);
        if (fread(buf, sizeof *buf, k, f) != k) { free(buf); goto fail; }
        if (t->dtype == CKPT_F16) half_to_float_array(t->data + i, buf, k);
        else bf16_to_float_array(t->data + i, buf, k);
    }
    free(buf);
    return 0;
fail:
    user_error_data(HINT_BAD, "%s: could not read tensor '%s': %s", path, e->name,
               ferror(f) ? strerror(errno) : "unexpected end of file");
    return -1;
}

/* A non-float entry kept as its raw bytes. */
static int st_load_blob(const char *path, FILE *f, uint64_t data_start, const StEntry *e, CkptBlob *b) {
    b->name = xstrdup(e->name);
    b->size = (size_t)(e->end - e->begin);
    b->data = xmalloc(b->size ? b->size : 1);
    if (fseeko(f, (off_t)(data_start + e->begin), SEEK_SET) == 0 && fread(b->data, 1, b->size, f) == b->size)
        return 0;
    user_error_data(HINT_BAD, "%s: could not read tensor '%s'", path, e->name);
    return -1;
}

/* The entries' data, in file order. */
static int st_load_entries(Checkpoint *c, FILE *f, uint64_t data_start, const StEntry *e, int n, int flags) {
    for (int i = 0; i < n; i++)
        if (e[i].dtype->ckpt < 0 && !(flags & SAFETENSORS_OTHER_AS_BLOBS)) {
            user_error_data("glue reads F32, F16 and BF16 tensors; convert the file with PyTorch",
                       "%s: tensor '%s' has dtype %s", c->path, e[i].name, e[i].dtype->name);
            return -1;
        }
    c->tensors = xcalloc((size_t)(n ? n : 1), sizeof *c->tensors);
    c->blobs = xcalloc((size_t)(n ? n : 1), sizeof *c->blobs);
    for (int i = 0; i < n; i++) {
        if (e[i].dtype->ckpt >= 0) {
            if (st_load_float(c->path, f, data_start, &e[i], &c->tensors[c->n_tensors++])) return -1;
        } else if (st_load_blob(c->path, f, data_start, &e[i], &c->blobs[c->n_blobs++])) {
            return -1;
        }
    }
    return 0;
}

Checkpoint *safetensors_read(const char *path, int flags) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        user_error_io(errno == ENOENT ? "check the path" : NULL, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        user_error_io("pass the .safetensors file inside it", "%s: is a directory", path);
        fclose(f);
        return NULL;
    }
    uint64_t data_start = 0, data_size = 0;
    cJSON *root = st_read_header(path, f, (uint64_t)st.st_size, &data_start, &data_size);
    Checkpoint *c = NULL;
    StEntry *e = NULL;
    int n = 0;
    cJSON *meta = NULL;
    if (root) e = st_parse_entries(path, root, data_size, &n, &meta);
    if (e) {
        c = xcalloc(1, sizeof *c);
        c->path = xstrdup(path);
        c->config = meta;
        if (st_load_entries(c, f, data_start, e, n, flags)) {
            checkpoint_free(c);
            c = NULL;
        }
    }
    free(e); /* entry names point into root: free it last */
    cJSON_Delete(root);
    fclose(f);
    return c;
}

/* ---- writing ---- */

static int st_cmp_out(const void *a, const void *b) {
    return strcmp((*(const SafeTensorOut *const *)a)->name, (*(const SafeTensorOut *const *)b)->name);
}

/* Pointers to t[0..n) in name (byte) order, the order of header and data. */
static const SafeTensorOut **st_sort_outputs(const SafeTensorOut *t, int n) {
    const SafeTensorOut **order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = &t[i];
    qsort(order, (size_t)n, sizeof *order, st_cmp_out);
    return order;
}

static long st_out_numel(const SafeTensorOut *t) {
    long numel = 1;
    for (int d = 0; d < t->ndim; d++) numel *= t->shape[d];
    return numel;
}

/* The header JSON, space-padded to a multiple of ST_ALIGN; NULL after a message. */
static char *st_header_text(const char *path, const SafeTensorOut *const *order, int n, const cJSON *metadata,
                            size_t *len) {
    cJSON *root = cJSON_CreateObject();
    if (metadata) cJSON_AddItemToObject(root, "__metadata__", cJSON_Duplicate(metadata, 1));
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        const SafeTensorOut *t = order[i];
        if (strcmp(t->name, "__metadata__") == 0 || (i > 0 && strcmp(order[i - 1]->name, t->name) == 0) ||
            t->ndim < 0 || t->ndim > CHECKPOINT_MAX_DIMS) {
            user_error(NULL, "%s: cannot write tensor '%s' (duplicate or reserved name, or bad shape)", path, t->name);
            cJSON_Delete(root);
            return NULL;
        }
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "dtype", "F32");
        cJSON *shape = cJSON_AddArrayToObject(e, "shape");
        for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
        uint64_t end = at + (uint64_t)st_out_numel(t) * sizeof(float);
        cJSON *offs = cJSON_AddArrayToObject(e, "data_offsets");
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)end));
        cJSON_AddItemToObject(root, t->name, e);
        at = end;
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) DIE("safetensors: out of memory printing the header");
    size_t n_json = strlen(json), padded = (n_json + ST_ALIGN - 1) / ST_ALIGN * ST_ALIGN;
    json = xrealloc(json, padded + 1);
    memset(json + n_json, ' ', padded - n_json);
    json[padded] = '\0';
    *len = padded;
    return json;
}

int safetensors_write(const char *path, const SafeTensorOut *t, int n, const cJSON *metadata) {
    const SafeTensorOut **order = st_sort_outputs(t, n);
    size_t hlen = 0;
    char *header = st_header_text(path, order, n, metadata, &hlen);
    if (!header) { free(order); return -1; }
    AtomicFile out;
    errno = 0;
    FILE *f = atomic_open(&out, path);
    if (!f) { free(header); free(order); return -1; }
/* errno of a failed call, never 0 (a short fwrite need not set it). */
#define ST_ERRNO (errno ? errno : EIO)
    int err = 0;
    uint64_t hlen64 = hlen;
    if (!err && (fwrite(&hlen64, sizeof hlen64, 1, f) != 1 || fwrite(header, 1, hlen, f) != hlen)) err = ST_ERRNO;
    for (int i = 0; i < n && !err; i++) {
        size_t numel = (size_t)st_out_numel(order[i]);
        if (numel && fwrite(order[i]->data, sizeof(float), numel, f) != numel) err = ST_ERRNO;
    }
#undef ST_ERRNO
    int rc;
    if (err) {
        atomic_abort(&out);
        user_error_io("check free disk space and permissions", "%s: could not write: %s", path, strerror(err));
        rc = -1;
    } else {
        rc = atomic_commit(&out);
    }
    free(header);
    free(order);
    return rc;
}
