/* word_memory.h — what the word models (fastText, TextCNN, the recurrent
 * family, DPCNN, the Transformer classifier, the DMN, the entity network) will allocate for their
 * settings, before they allocate it (models/model.h memory_bytes). Each
 * estimate counts parameters with their gradient and optimizer state, and
 * the batch buffers; the formulas are beside each function. */
#ifndef GLUE_WORD_MEMORY_H
#define GLUE_WORD_MEMORY_H

#include "models/model.h"

/* The rows a model's batch buffers hold: the configured rows, but no more
 * than the training split has (a larger batch never runs; evaluation goes
 * in buffer-sized chunks, and a larger training batch grows them once). */
static inline int word_memory_rows_cap(int rows, const Dataset *train) {
    return train && train->n > 0 && rows > train->n ? train->n : rows;
}

double fasttext_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double textcnn_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double textrnn_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double dpcnn_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double seq2seq_attn_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double transformer_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double dmn_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);
double entnet_memory_bytes(const cJSON *config, const Task *task, const Dataset *train, const char **setting);

#endif
