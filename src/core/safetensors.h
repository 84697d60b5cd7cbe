/* safetensors.h — Hugging Face's .safetensors tensor files, read and written.
 *
 * Format (https://github.com/huggingface/safetensors, little-endian):
 *   0   u64 N: length of the JSON header
 *   8   N bytes of JSON: {"__metadata__": {str: str} (optional),
 *                         NAME: {"dtype": "F32", "shape": [d0, ...],
 *                                "data_offsets": [begin, end]}, ...}
 *   8+N the data buffer; offsets are relative to it, row-major, little-endian.
 * As the reference implementation demands, the tensors' byte spans must tile
 * the data buffer exactly: no overlap, no gap, nothing after the last one.
 *
 * Reading gives a Checkpoint (core/checkpoint.h) so everything that works on
 * glue's own files works here too: checkpoint_find_tensor, checkpoint_load_params,
 * checkpoint_free. Its config is the "__metadata__" object (an empty object when
 * absent). F32, F16 and BF16 tensors are converted to f32 (CkptTensor.dtype says
 * how each was stored). Any other dtype is refused with a message naming the
 * tensor, unless SAFETENSORS_OTHER_AS_BLOBS is given: such tensors (for example
 * the I64 "position_ids" buffer older BERT exports carry) then become blobs of
 * their raw bytes under their names, for the caller to inspect or ignore.
 *
 * Every field is validated before any data is read — header length against the
 * file size (and a 100 MB cap, as the reference has), the JSON, each entry's
 * dtype/shape/offsets, shape x dtype size == byte span, spans tiling the buffer
 * — so a truncated or malformed file gives one message naming the file, never a
 * crash or a huge allocation.
 *
 * Writing stores F32 tensors with the header keys in byte order ("__metadata__"
 * first, as the reference writes it), data in the same order, and the header
 * padded with spaces to a multiple of 8 bytes so the data buffer is aligned.
 * The file is written to PATH.tmp, fsynced and renamed over PATH. */
#ifndef GLUE_SAFETENSORS_H
#define GLUE_SAFETENSORS_H

#include "core/checkpoint.h"

/* The reference implementation's limit on the JSON header. */
#define SAFETENSORS_MAX_HEADER 100000000ULL

enum {
    SAFETENSORS_OTHER_AS_BLOBS = 1 << 0, /* keep non-float tensors as raw blobs */
};

/* Reads and validates the whole file. NULL after one message naming the path. */
Checkpoint *safetensors_read(const char *path, int flags);

/* One tensor to write: data (numel of shape), f32. */
typedef struct {
    const char *name;
    int ndim;                            /* 0 = a scalar */
    long shape[CHECKPOINT_MAX_DIMS];
    const float *data;
} SafeTensorOut;

/* Writes t[0..n) (names must be distinct and not "__metadata__") and, when
 * metadata != NULL, that object (of strings) as "__metadata__". 0 ok; -1 after
 * a message, PATH untouched. */
int safetensors_write(const char *path, const SafeTensorOut *t, int n, const cJSON *metadata);

#endif
