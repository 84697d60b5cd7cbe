/* fuzz_safetensors.c — a .safetensors file (core/safetensors.c): header
 * length, JSON header, dtypes, shapes and offsets. Byte 0 picks the flags. */
#include "core/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *path = fuzz_path("model.safetensors");
    fuzz_write(path, data + 1, size - 1, 0);
    Checkpoint *c = safetensors_read(path, data[0] & 1 ? SAFETENSORS_OTHER_AS_BLOBS : 0);
    checkpoint_free(c);
    return 0;
}
