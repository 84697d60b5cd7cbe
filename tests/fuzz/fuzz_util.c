/* fuzz_util.c — shared helpers of the libFuzzer harnesses (see fuzz_util.h). */
#define _XOPEN_SOURCE 700
#include "tests/fuzz/fuzz_util.h"

#include "core/checkpoint_format.h"
#include "core/crc32.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

static void fuzz_cleanup(void) {
    if (dir[0]) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void) {
    if (!dir[0]) {
        /* Memory-backed when the machine has it: every input is written to a
         * file, and on a disk the page-cache writeback throttles the fuzzer
         * to a few hundred inputs a second. */
        strcpy(dir, "/dev/shm/glue_fuzz_XXXXXX");
        if (!mkdtemp(dir)) {
            strcpy(dir, "/tmp/glue_fuzz_XXXXXX");
            if (!mkdtemp(dir)) { perror("mkdtemp"); abort(); }
        }
        atexit(fuzz_cleanup);
    }
    return dir;
}

const char *fuzz_path(const char *name) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    return path;
}

void fuzz_write(const char *path, const uint8_t *data, size_t n, int gz) {
    if (gz) {
        gzFile g = gzopen(path, "wb1");
        if (!g || (n && gzwrite(g, data, (unsigned)n) != (int)n) || gzclose(g) != Z_OK) { perror(path); abort(); }
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) { perror(path); abort(); }
}

void fuzz_remove(const char *path) { unlink(path); }

int fuzz_split(const uint8_t *data, size_t n, const uint8_t **part, size_t *len, int max) {
    size_t sep = strlen(FUZZ_SEP);
    int k = 0;
    while (k < max - 1) {
        const uint8_t *at = memmem(data, n, FUZZ_SEP, sep);
        if (!at) break;
        part[k] = data;
        len[k++] = (size_t)(at - data);
        n -= (size_t)(at - data) + sep;
        data = at + sep;
    }
    part[k] = data;
    len[k++] = n;
    return k;
}

char *fuzz_strndup(const uint8_t *data, size_t n) {
    char *s = malloc(n + 1);
    if (!s) abort();
    if (n) memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

uint8_t *fuzz_ckpt_wrap(const uint8_t *payload, size_t n, uint32_t version, size_t *out_n) {
    uLongf cap = compressBound((uLong)n);
    uint8_t *buf = malloc(CKPT_HEADER_SIZE + cap);
    if (!buf || compress2(buf + CKPT_HEADER_SIZE, &cap, payload, (uLong)n, 1) != Z_OK) abort();
    uint32_t hsize = CKPT_HEADER_SIZE, zero = 0;
    uint64_t stored = cap, raw = n;
    memcpy(buf, CKPT_MAGIC, 8);
    memcpy(buf + 8, &version, 4);
    memcpy(buf + 12, &hsize, 4);
    memcpy(buf + 16, &stored, 8);
    memcpy(buf + 24, &raw, 8);
    uint32_t crc = crc32_update(crc32_update(0, buf + CKPT_HEADER_SIZE, cap), buf + 8, CKPT_CRC_HEADER_END - 8);
    memcpy(buf + 32, &crc, 4);
    memcpy(buf + 36, &zero, 4);
    *out_n = CKPT_HEADER_SIZE + cap;
    return buf;
}
