/* crc32.h — CRC-32 (the zlib/PNG/gzip polynomial) over buffers of any size and
 * over files. A thin layer on zlib's crc32_z: zlib's table-driven code is fast
 * and well tested, so we do not keep our own table. Used by checkpoints to
 * detect corrupt bytes before anything is parsed. */
#ifndef GLUE_CRC32_H
#define GLUE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc (start from 0) over buf[0..n). */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t n);
/* CRC-32 of a file's bytes [offset, offset + len) (len < 0: to the end).
 * 0 ok; -1 after a message naming the path when it cannot be read whole. */
int crc32_file(const char *path, long offset, long len, uint32_t *crc);

#endif
