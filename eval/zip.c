/* zip.c — a minimal .zip writer (see zip.h).
 *
 * Layout, all integers little-endian: for each member a local header then its
 * raw-deflated bytes; then one central directory record per member; then the
 * end-of-central-directory record. Every member carries the same fixed
 * timestamp (1980-01-01 00:00, the DOS epoch) so the same predictions always
 * give a byte-identical archive. */
#include "eval/zip.h"

#include "core/common.h"
#include "core/files.h"
#include "core/crc32.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    ZIP_LOCAL_SIG = 0x04034b50,
    ZIP_CENTRAL_SIG = 0x02014b50,
    ZIP_END_SIG = 0x06054b50,
    ZIP_VERSION = 20,          /* 2.0: deflate */
    ZIP_METHOD_DEFLATE = 8,
    ZIP_DOS_DATE = (0 << 9) | (1 << 5) | 1, /* 1980-01-01 */
    ZIP_DOS_TIME = 0,
    ZIP_MAX_MEMBERS = 0xffff,  /* without zip64 */
};

typedef struct {
    char *name;
    uint32_t crc, csize, usize, offset;
} ZipMember;

struct ZipWriter {
    AtomicFile out;   /* the archive, written beside path until zip_close */
    FILE *f;
    ZipMember *m;
    int n, cap;
    uint32_t offset;  /* bytes written so far */
    int failed;
};

static void put16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

static int zip_write(ZipWriter *z, const void *buf, size_t n) {
    if (z->failed) return -1;
    if (n && fwrite(buf, 1, n, z->f) != n) {
        user_error_io("check the free disk space", "%s: cannot write: %s", z->out.path, strerror(errno));
        z->failed = 1;
        return -1;
    }
    if ((uint64_t)z->offset + n > UINT32_MAX) {
        user_error(NULL, "%s: archive larger than 4 GiB (no zip64)", z->out.path);
        z->failed = 1;
        return -1;
    }
    z->offset += (uint32_t)n;
    return 0;
}

ZipWriter *zip_open(const char *path) {
    ZipWriter *z = xcalloc(1, sizeof *z);
    z->f = atomic_open(&z->out, path);
    if (!z->f) { free(z); return NULL; }
    return z;
}

/* Raw deflate (no zlib header: zip stores the method in its own headers). */
static unsigned char *zip_deflate(const void *data, size_t size, uLong *out_size) {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        DIE("zlib deflateInit2 failed");
    uLong cap = deflateBound(&s, (uLong)size);
    unsigned char *out = xmalloc(cap ? cap : 1);
    s.next_in = (Bytef *)(uintptr_t)data;
    s.avail_in = (uInt)size;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    if (deflate(&s, Z_FINISH) != Z_STREAM_END) DIE("zlib deflate did not finish within deflateBound");
    *out_size = s.total_out;
    deflateEnd(&s);
    return out;
}

int zip_add(ZipWriter *z, const char *name, const void *data, size_t size) {
    size_t name_len = strlen(name);
    if (z->failed) return -1;
    if (size > UINT32_MAX || name_len > 0xffff || z->n == ZIP_MAX_MEMBERS) {
        user_error(NULL, "%s: member %s too large for a zip without zip64", z->out.path, name);
        z->failed = 1;
        return -1;
    }
    uLong csize = 0;
    unsigned char *comp = zip_deflate(data, size, &csize);
    ZipMember m = {xstrdup(name), crc32_update(0, data, size), (uint32_t)csize, (uint32_t)size, z->offset};
    unsigned char h[30];
    put32(h, ZIP_LOCAL_SIG);
    put16(h + 4, ZIP_VERSION);
    put16(h + 6, 0);
    put16(h + 8, ZIP_METHOD_DEFLATE);
    put16(h + 10, ZIP_DOS_TIME);
    put16(h + 12, ZIP_DOS_DATE);
    put32(h + 14, m.crc);
    put32(h + 18, m.csize);
    put32(h + 22, m.usize);
    put16(h + 26, (unsigned)name_len);
    put16(h + 28, 0);
    int rc = zip_write(z, h, sizeof h) || zip_write(z, name, name_len) || zip_write(z, comp, csize) ? -1 : 0;
    free(comp);
    if (rc) { free(m.name); return -1; }
    if (z->n == z->cap) {
        z->cap = z->cap ? 2 * z->cap : 16;
        z->m = xrealloc(z->m, sizeof *z->m * (size_t)z->cap);
    }
    z->m[z->n++] = m;
    return 0;
}

int zip_add_file(ZipWriter *z, const char *name, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        user_error_io(NULL, "%s: cannot open: %s", path, strerror(errno));
        z->failed = 1;
        return -1;
    }
    size_t cap = 1 << 16, n = 0, k;
    unsigned char *buf = xmalloc(cap);
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) buf = xrealloc(buf, cap *= 2);
    }
    int err = ferror(f);
    fclose(f);
    int rc = err ? -1 : zip_add(z, name, buf, n);
    if (err) {
        user_error_io(NULL, "%s: read error", path);
        z->failed = 1;
    }
    free(buf);
    return rc;
}

static void zip_free(ZipWriter *z) {
    for (int i = 0; i < z->n; i++) free(z->m[i].name);
    free(z->m);
    free(z);
}

int zip_close(ZipWriter *z) {
    uint32_t cd_start = z->offset;
    for (int i = 0; i < z->n && !z->failed; i++) {
        const ZipMember *m = &z->m[i];
        size_t name_len = strlen(m->name);
        unsigned char h[46] = {0};
        put32(h, ZIP_CENTRAL_SIG);
        put16(h + 4, ZIP_VERSION);       /* made by: MS-DOS attributes, 2.0 */
        put16(h + 6, ZIP_VERSION);
        put16(h + 10, ZIP_METHOD_DEFLATE);
        put16(h + 12, ZIP_DOS_TIME);
        put16(h + 14, ZIP_DOS_DATE);
        put32(h + 16, m->crc);
        put32(h + 20, m->csize);
        put32(h + 24, m->usize);
        put16(h + 28, (unsigned)name_len);
        put32(h + 42, m->offset);        /* extra, comment, disk, attributes stay 0 */
        if (zip_write(z, h, sizeof h) == 0) zip_write(z, m->name, name_len);
    }
    unsigned char e[22] = {0};
    put32(e, ZIP_END_SIG);
    put16(e + 8, (unsigned)z->n);
    put16(e + 10, (unsigned)z->n);
    put32(e + 12, z->offset - cd_start);
    put32(e + 16, cd_start);
    zip_write(z, e, sizeof e);
    int rc;
    if (z->failed) {
        atomic_abort(&z->out);
        rc = -1;
    } else {
        rc = atomic_commit(&z->out);
    }
    zip_free(z);
    return rc;
}
