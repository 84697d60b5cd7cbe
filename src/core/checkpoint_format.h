/* checkpoint_format.h — constants of the checkpoint file format shared by the
 * writer (checkpoint.c) and the reader (checkpoint_read.c); the layout itself
 * is documented in checkpoint.h. Internal: only those two files include it. */
#ifndef GLUE_CHECKPOINT_FORMAT_H
#define GLUE_CHECKPOINT_FORMAT_H

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoints store host-order numbers and assume a little-endian machine"
#endif

#define CKPT_MAGIC "GLUECKPT" /* 8 bytes, no terminator on disk */

enum {
    CKPT_HEADER_SIZE = 40,
    CKPT_CRC_HEADER_END = 32,   /* the CRC covers header bytes [8, 32) */
    CKPT_IO_CHUNK = 1 << 18,    /* file I/O and zlib buffer size */
    CKPT_CONVERT_CHUNK = 1 << 16, /* f16/bf16 elements converted at a time */
    CKPT_NAME_MAX = 4096,
};

enum { CKPT_REC_END = 0, CKPT_REC_CONFIG = 1, CKPT_REC_TENSOR = 2, CKPT_REC_BLOB = 3 };

#endif
