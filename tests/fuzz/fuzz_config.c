/* fuzz_config.c — the run configs a user writes: a JSON config file and
 * --set key=value settings, for fine-tuning (models/run_config.c, every model
 * and task), pretraining (pretrain/pretrain_config.c), translation
 * (s2s_run_config_build) and a BERT model config (bert_config_resolve, e.g. a
 * Hugging Face config.json). Input: byte 0 picks the reader, byte 1 the model
 * and task; then the JSON file FUZZ_SEP the settings, one a line. */
#include "models/bert/bert.h"
#include "models/model.h"
#include "models/run_config.h"
#include "train/translate.h"
#include "pretrain/pretrain_config.h"
#include "tests/fuzz/fuzz_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SETS = 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint8_t *part[2];
    size_t len[2];
    int n = fuzz_split(data + 2, size - 2, part, len, 2);
    const char *path = fuzz_path("config.json");
    fuzz_write(path, part[0], len[0], 0);
    char *text = n > 1 ? fuzz_strndup(part[1], len[1]) : NULL;
    const char *sets[MAX_SETS], *origin[MAX_SETS];
    int nsets = 0;
    for (char *line = text, *next; line && nsets < MAX_SETS; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        origin[nsets] = "--set";
        sets[nsets++] = line;
    }
    const char *file = data[0] & 4 ? NULL : path;   /* settings alone, too */
    switch (data[0] % 4) {
    case 0: {
        const ModelOps *ops = model_at(data[1] % model_count());
        const Task *task = &TASKS[(data[1] >> 3) % NUM_TASKS];
        cJSON_Delete(run_config_build(ops->default_config(task), file, sets, origin, nsets));
        break;
    }
    case 1: {
        PretrainConfig pc;
        static const char *const CORPUS[] = {"brown:corpus.txt"};
        if (pretrain_config_build(&pc, file, sets, origin, nsets, CORPUS, data[1] & 1) == 0)
            pretrain_config_free(&pc);
        break;
    }
    case 2:
        cJSON_Delete(s2s_run_config_build(file, sets, origin, nsets));
        break;
    default: {
        BertConfig c;
        if (bert_config_resolve(path, &c) == 0) bert_config_check(&c, path);
        break;
    }
    }
    free(text);
    return 0;
}
