/* fuzz_fasttext_ckpt.c — fastText checkpoints as FASTTEXT_OPS.load reads them
 * (models/baselines/fasttext_io.c, and fasttext_io_pq.c for the product-
 * quantized ones `glue quantize` writes: int8 codes, centroids, norms, the
 * pruned dictionary and kept bucket rows). Byte 0: bit 0 as fuzz_checkpoint
 * (0 = the rest is the file as is; 1 = the rest is the payload records,
 * wrapped in a valid version-2 header with the right CRC, so the fuzzer
 * reaches the loaders behind the checksum); bits 1-2 pick the task the model
 * is loaded for (SST-2: 2 classes, MNLI: 3, STS-B: regression, RTE: 2). A
 * model that loads then encodes and predicts two texts (every kept row it
 * touches is read). The loaders refuse NaN and infinite weights; finite ones
 * may still overflow in the products, so the outputs are not checked.
 * A config asking for more than FUZZ_FT_MAX_FLOATS input floats (dim x
 * bucket: 2M x 100 is 800 MB, allocated lazily) is skipped: libFuzzer's 2 GB
 * malloc limit, not the loader, would stop it. */
#include "core/checkpoint.h"
#include "models/baselines/fasttext.h"
#include "tasks/task.h"
#include "tests/fuzz/fuzz_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#define FUZZ_FT_MAX_FLOATS 2.5e8

static const char *const TASK_NAMES[4] = {"sst2", "mnli", "stsb", "rte"};

/* dim x bucket of the stored config (the defaults where it says none). */
static double input_floats(const char *path) {
    cJSON *j = checkpoint_peek_config(path);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "config");
    const cJSON *dim = cJSON_GetObjectItemCaseSensitive(c, "dim"), *bucket = cJSON_GetObjectItemCaseSensitive(c, "bucket");
    double n = (cJSON_IsNumber(dim) ? dim->valuedouble : 100) * (cJSON_IsNumber(bucket) ? bucket->valuedouble : 2e6);
    cJSON_Delete(j);
    return n;
}

static void predict_two(Model *m, const Task *t) {
    Example ex[2] = {{.a = "a good film </s> not bad", .label = 0}, {.a = "the", .b = "x y z", .label = 1}};
    Dataset d = {.task = t, .ex = ex, .n = 2};
    Encoded *e = FASTTEXT_OPS.encode(m, &d);
    float out[2 * TASK_MAX_LABELS];
    int rows[2] = {0, 1};
    FASTTEXT_OPS.predict(m, e, rows, 2, out);
    FASTTEXT_OPS.encoded_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *path = fuzz_path("model.ckpt");
    if (data[0] & 1) {
        size_t n;
        uint8_t *file = fuzz_ckpt_wrap(data + 1, size - 1, CHECKPOINT_VERSION_INT8, &n);
        fuzz_write(path, file, n, 0);
        free(file);
    } else {
        fuzz_write(path, data + 1, size - 1, 0);
    }
    const Task *t = task_find(TASK_NAMES[(data[0] >> 1) & 3]);
    if (!t) __builtin_trap();
    if (input_floats(path) > FUZZ_FT_MAX_FLOATS) return 0;
    Model *m = FASTTEXT_OPS.load(path, t);
    if (!m) return 0;
    predict_two(m, t);
    FASTTEXT_OPS.free(m);
    return 0;
}
