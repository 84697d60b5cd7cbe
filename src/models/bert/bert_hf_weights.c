/* bert_hf_weights.c — finding and reading the weights of a Hugging Face model
 * directory: one model.safetensors, or the shards that save_pretrained writes
 * for a large model (model-00001-of-0000N.safetensors, listed by
 * model.safetensors.index.json), merged into one Checkpoint. A directory with
 * only pickled weights (pytorch_model.bin) is refused with the way to convert:
 * unpickling is executing Python, which glue does not do. */
#include "models/bert/bert_hf.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "core/safetensors.h"

static const char *const HINT_INDEX = "the index does not match its shards: download or save the model again";

/* Moves every tensor and blob of `from` to the end of `to`; frees `from`. */
static void hfw_merge(Checkpoint *to, Checkpoint *from) {
    to->tensors = xrealloc(to->tensors, ((size_t)to->n_tensors + (size_t)from->n_tensors + 1) * sizeof *to->tensors);
    memcpy(to->tensors + to->n_tensors, from->tensors, (size_t)from->n_tensors * sizeof *from->tensors);
    to->n_tensors += from->n_tensors;
    to->blobs = xrealloc(to->blobs, ((size_t)to->n_blobs + (size_t)from->n_blobs + 1) * sizeof *to->blobs);
    memcpy(to->blobs + to->n_blobs, from->blobs, (size_t)from->n_blobs * sizeof *from->blobs);
    to->n_blobs += from->n_blobs;
    from->n_tensors = from->n_blobs = 0;   /* now owned by `to` */
    checkpoint_free(from);
}

static int hfw_has(const Checkpoint *c, const char *name) {
    return checkpoint_find_tensor(c, name) || checkpoint_find_blob(c, name);
}

/* Reads each shard of the index's weight_map once, in order of first mention,
 * and checks that every listed name came with it. */
static Checkpoint *hfw_read_sharded(const char *dir, const char *index) {
    cJSON *j = json_file_read(index, 1);
    if (!j) return NULL;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(j, "weight_map");
    Checkpoint *all = xcalloc(1, sizeof *all);
    all->path = xstrdup(index);
    all->config = cJSON_CreateObject();
    int ok = cJSON_IsObject(map);
    if (!ok) user_error_data(HINT_INDEX, "%s: no \"weight_map\" object", index);
    const char **loaded = xmalloc(((size_t)cJSON_GetArraySize(map) + 1) * sizeof *loaded);
    int n_loaded = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, map) {
        if (!ok) break;
        if (!cJSON_IsString(it)) {
            user_error_data(HINT_INDEX, "%s: weight_map[\"%s\"] is not a file name", index, it->string);
            ok = 0;
            break;
        }
        int seen = 0;
        for (int k = 0; k < n_loaded && !seen; k++) seen = strcmp(loaded[k], it->valuestring) == 0;
        if (seen) continue;
        loaded[n_loaded++] = it->valuestring;
        char path[4096];
        file_join(dir, it->valuestring, path, sizeof path);
        Checkpoint *shard = safetensors_read(path, SAFETENSORS_OTHER_AS_BLOBS);
        if (!shard) { ok = 0; break; }
        hfw_merge(all, shard);
    }
    cJSON_ArrayForEach(it, map) {
        if (!ok) break;
        if (!hfw_has(all, it->string)) {
            user_error_data(HINT_INDEX, "%s: lists '%s' in %s, which does not have it", index, it->string, it->valuestring);
            ok = 0;
        }
    }
    free(loaded);
    cJSON_Delete(j);
    if (ok) return all;
    checkpoint_free(all);
    return NULL;
}

Checkpoint *bert_hf_read_weights(const char *dir) {
    char path[4096];
    file_join(dir, BERT_HF_WEIGHTS, path, sizeof path);
    if (file_exists(path)) return safetensors_read(path, SAFETENSORS_OTHER_AS_BLOBS);
    file_join(dir, BERT_HF_WEIGHTS_INDEX, path, sizeof path);
    if (file_exists(path)) return hfw_read_sharded(dir, path);
    file_join(dir, BERT_HF_PICKLE, path, sizeof path);
    if (file_exists(path))
        user_error("convert it once in Python: model.save_pretrained(DIR, safe_serialization=True)",
                   "%s: has pytorch_model.bin (a pickle) but no %s; glue reads safetensors only", dir,
                   BERT_HF_WEIGHTS);
    else
        user_error_io("glue reads Hugging Face BERT directories: config.json + model.safetensors (+ vocab.txt)",
                   "%s: no %s in this directory", dir, BERT_HF_WEIGHTS);
    return NULL;
}
