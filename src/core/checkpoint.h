/* checkpoint.h — glue's own model files: config + named tensors + extra blobs,
 * compressed, checksummed and written atomically.
 *
 * File layout (little-endian):
 *   0   "GLUECKPT"                          magic
 *   8   u32 format version: 1 (CHECKPOINT_VERSION), or 2 (CHECKPOINT_VERSION_INT8)
 *         when the file holds an int8 tensor, so that a glue that predates
 *         int8 tensors refuses the file by its version instead of misreading it
 *   12  u32 header size (40)
 *   16  u64 stored payload bytes (after the header, zlib stream)
 *   24  u64 raw payload bytes (after inflating)
 *   32  u32 CRC-32 of the stored payload followed by header bytes [8, 32)
 *   36  u32 reserved, 0
 *   40  payload: zlib stream of records, each a u8 kind then
 *         CONFIG  u32 length, JSON text (always the first record)
 *         TENSOR  u16 name length, name, u8 dtype, u8 ndim, i64 shape[ndim],
 *                 numel * dtype size bytes of data (int8: one byte each)
 *         BLOB    u16 name length, name, u64 length, bytes
 *         END
 * The CRC is checked before anything is parsed, so a flipped byte anywhere
 * after the magic is reported as corruption, never misread.
 *
 * Saving writes PATH.tmp, fsyncs it and renames it over PATH, so an
 * interrupted save leaves the previous PATH intact (and at worst a stale
 * PATH.tmp, which the next save overwrites).
 *
 * Blobs hold everything that is not a tensor: RNG states, data position,
 * optimizer step counters (optim.h writes its own). Their bytes are stored as
 * given (host order; glue targets little-endian machines).
 *
 * Errors: every function that can fail because of the file or the disk prints
 * one message naming the path (user_error) and returns -1 / NULL. */
#ifndef GLUE_CHECKPOINT_H
#define GLUE_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "core/params.h"

typedef struct cJSON cJSON;

enum { CHECKPOINT_VERSION = 1, CHECKPOINT_VERSION_INT8 = 2, CHECKPOINT_MAX_DIMS = 8 };
/* zlib level for checkpoint_writer_open(level < 0). The stream is deflated
 * with Huffman coding only (Z_HUFFMAN_ONLY): float weights shrink ~7-8% that
 * way, as much as with string matching, at ~100 MB/s instead of ~35 MB/s. */
enum { CHECKPOINT_DEFAULT_LEVEL = 1 };

/* CKPT_I8: signed bytes (quantized weights, models/bert/bert_int8.c), read
 * back as the same whole numbers in f32; only in version-2 files. */
typedef enum { CKPT_F32 = 0, CKPT_F16 = 1, CKPT_BF16 = 2, CKPT_I8 = 3 } CkptDtype;

typedef struct {
    char *name;
    CkptDtype dtype;                /* how it was stored; data is always f32 */
    int ndim;
    long shape[CHECKPOINT_MAX_DIMS];
    long numel;
    float *data;                    /* (numel) */
} CkptTensor;

typedef struct {
    char *name;
    size_t size;
    unsigned char *data;            /* (size) */
} CkptBlob;

typedef struct Checkpoint {
    char *path;
    cJSON *config;                  /* the stored config (a JSON value) */
    CkptTensor *tensors;
    int n_tensors;
    CkptBlob *blobs;
    int n_blobs;
} Checkpoint;

/* ---- writing ---- */
typedef struct CkptWriter CkptWriter;

/* Starts PATH.tmp with the config (NULL: {}); level < 0: the default. */
CkptWriter *checkpoint_writer_open(const char *path, const cJSON *config, int level);
/* data (numel of shape), stored as dtype (rounded to nearest even for f16/bf16). */
int checkpoint_write_tensor(CkptWriter *w, const char *name, CkptDtype dtype, const int *shape,
                            int ndim, const float *data);
/* data (numel of shape) stored as int8 (CKPT_I8); the file becomes version 2. */
int checkpoint_write_tensor_i8(CkptWriter *w, const char *name, const int *shape, int ndim, const int8_t *data);
int checkpoint_write_blob(CkptWriter *w, const char *name, const void *data, size_t size);
/* Every tensor of p (its data), by name, in declaration order. */
int checkpoint_write_params(CkptWriter *w, const Params *p, CkptDtype dtype);
/* Finishes, fsyncs and renames PATH.tmp to PATH; frees w. 0 ok. If any write
 * failed, removes PATH.tmp, leaves PATH alone and returns -1. */
int checkpoint_writer_commit(CkptWriter *w);
/* Gives up: removes PATH.tmp, frees w; a write of w's that failed (disk
 * full, an I/O error) is said there (user_error_io: exit 74). */
void checkpoint_writer_abort(CkptWriter *w);
/* checkpoint_writer_commit when the caller's writes went well (failed 0),
 * else checkpoint_writer_abort and -1. */
int checkpoint_writer_finish(CkptWriter *w, int failed);

/* Every tensor of p taken from `mirror` (p->data, p->grad or a state slot,
 * all with the same offsets), named prefix + tensor name. */
int checkpoint_write_params_mirror(CkptWriter *w, const Params *p, const char *prefix,
                                   const float *mirror, CkptDtype dtype);
/* One call: config + params (+ no blobs). 0 ok. */
int checkpoint_save_params(const char *path, const cJSON *config, const Params *p, CkptDtype dtype);

/* ---- reading ---- */
/* Reads and verifies (magic, version, sizes, CRC) the whole file; NULL after a
 * message for a missing, empty, truncated, corrupt or foreign file. */
Checkpoint *checkpoint_read(const char *path);
void checkpoint_free(Checkpoint *c);
/* Only the stored config (the first record), without verifying the rest of
 * the file: what a command reads to learn which model wrote a checkpoint
 * before loading it (the load verifies everything). NULL, silently, when path
 * is not a readable glue checkpoint. Caller frees (cJSON_Delete). */
cJSON *checkpoint_peek_config(const char *path);
/* About the bytes checkpoint_read will hold once path is read, from the
 * header alone: the raw payload's size (f32 tensors and blobs as they are;
 * a version-2 file, which may hold int8 tensors read into f32, counted 4x;
 * f16 tensors, which double, counted as stored). What a command checks
 * against the memory available before it loads a model. -1, silently, when
 * path is not a readable glue checkpoint (the load then says why). */
double checkpoint_peek_loaded_bytes(const char *path);
const CkptTensor *checkpoint_find_tensor(const Checkpoint *c, const char *name);
const CkptBlob *checkpoint_find_blob(const Checkpoint *c, const char *name);

/* Compares the stored config with `expected` semantically (numbers by value,
 * objects regardless of key order). keys (n) names the top-level keys that
 * must agree; keys == NULL: all keys of both. 0 when they agree; otherwise one
 * message naming every differing key with both values, and -1. */
int checkpoint_check_config(const Checkpoint *c, const cJSON *expected, const char *const *keys, int n);

/* Copies every tensor of p from the checkpoint (same name, same shape; f16/bf16
 * storage is already f32). Extra checkpoint tensors are ignored (models may
 * keep more than their params). -1 after a message naming a missing tensor or
 * a shape mismatch. */
int checkpoint_load_params(const Checkpoint *c, Params *p);
/* The same for a mirror written by checkpoint_write_params_mirror with prefix. */
int checkpoint_load_params_mirror(const Checkpoint *c, const Params *p, const char *prefix,
                                  float *mirror);

#endif
