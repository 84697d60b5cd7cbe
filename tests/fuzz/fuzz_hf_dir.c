/* fuzz_hf_dir.c — a Hugging Face model directory (models/bert/bert_hf*.c):
 * config.json, then either model.safetensors or model.safetensors.index.json
 * with two shards. Input: config FUZZ_SEP weights-or-index [FUZZ_SEP shard1
 * FUZZ_SEP shard2]; three or more parts mean the sharded layout. */
#include "models/bert/bert_hf.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdio.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[4];
    size_t len[4];
    int n = fuzz_split(data, size, part, len, 4);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/hf", fuzz_dir());
    mkdir(dir, 0700);
    static const char *const FILES[] = {BERT_HF_CONFIG, BERT_HF_WEIGHTS, BERT_HF_WEIGHTS_INDEX,
                                        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
    char path[700];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
        fuzz_remove(path);
    }
    const char *names[4] = {FILES[0], n >= 3 ? FILES[2] : FILES[1], FILES[3], FILES[4]};
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        fuzz_write(path, part[i], len[i], 0);
    }
    if (bert_hf_is_dir(dir)) checkpoint_free(bert_hf_read(dir));
    return 0;
}
