/* crc32.c — CRC-32 over buffers and files via zlib (see crc32.h). */
#include "core/crc32.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/common.h"

/* Read size for crc32_file: large enough to run at memory speed. */
enum { CRC32_CHUNK = 1 << 20 };

uint32_t crc32_update(uint32_t crc, const void *buf, size_t n) {
    return (uint32_t)crc32_z(crc, buf, n);
}

int crc32_file(const char *path, long offset, long len, uint32_t *crc) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        user_error_io("check the path", "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char *buf = xmalloc(CRC32_CHUNK);
    uint32_t c = 0;
    int rc = fseek(f, offset, SEEK_SET) == 0 ? 0 : -1;
    while (rc == 0 && len != 0) {
        size_t want = len < 0 || len > CRC32_CHUNK ? CRC32_CHUNK : (size_t)len;
        size_t got = fread(buf, 1, want, f);
        c = crc32_update(c, buf, got);
        if (len > 0) len -= (long)got;
        if (got < want) {
            if (ferror(f) || len > 0) rc = -1;
            break;
        }
    }
    if (rc) user_error_io("the file is truncated or unreadable", "%s: could not read the bytes to check", path);
    free(buf);
    fclose(f);
    *crc = c;
    return rc;
}
