/* fuzz_checkpoint.c — glue checkpoint files (core/checkpoint_read.c) and the
 * configs stored in them. Byte 0, bit 0: 0 = the rest is the file as is
 * (header, sizes and CRC fuzzed too); 1 = the rest is the raw payload records,
 * deflated and wrapped in a valid header with the right CRC, so the fuzzer
 * reaches the record parser behind the checksum. A checkpoint that reads is
 * then taken apart by BERT's and the translation model's config readers; the
 * header peek of the memory check (checkpoint_peek_loaded_bytes) sees every file. */
#include "core/checkpoint.h"
#include "models/bert/bert.h"
#include "models/seq2seq/seq2seq.h"
#include "tests/fuzz/fuzz_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *path = fuzz_path("model.ckpt");
    if (data[0] & 1) {
        size_t n;
        uint8_t *file = fuzz_ckpt_wrap(data + 1, size - 1, CHECKPOINT_VERSION, &n);
        fuzz_write(path, file, n, 0);
        free(file);
    } else {
        fuzz_write(path, data + 1, size - 1, 0);
    }
    /* The header peek eval/predict do before a load: any bytes, no crash, never negative but -1. */
    double loaded = checkpoint_peek_loaded_bytes(path);
    if (!(loaded >= 0 || loaded == -1)) abort();
    Checkpoint *c = checkpoint_read(path);
    if (!c) return 0;
    for (int i = 0; i < c->n_tensors; i++) {
        const CkptTensor *t = &c->tensors[i];
        long numel = 1;
        for (int d = 0; d < t->ndim; d++) numel *= t->shape[d];
        if (numel != t->numel || checkpoint_find_tensor(c, t->name) == NULL) __builtin_trap();
    }
    BertConfig cfg;
    BertHeads heads;
    bert_checkpoint_read_config(c, &cfg, &heads);
    const cJSON *s2s = cJSON_GetObjectItemCaseSensitive(c->config, "config");
    if (cJSON_IsObject(s2s)) {
        S2sConfig sc = s2s_config_default();
        if (s2s_config_from_json(&sc, s2s) == 0) s2s_config_check(&sc);
    }
    checkpoint_free(c);
    return 0;
}
