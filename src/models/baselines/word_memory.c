/* word_memory.c — the memory estimates of the word models (word_memory.h).
 * Units: a float is 4 bytes; a trained parameter costs 4 floats (weight,
 * gradient, two optimizer moments: AdamW's or Adadelta's accumulators). The
 * vocabulary V is counted from the training split as create will build it.
 * The setting named is the one behind the largest term. */
#include "models/baselines/word_memory.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "models/baselines/word_dict.h"
#include "models/baselines/word_pair.h"
#include "models/run_config.h"

#define F4 4.0            /* bytes per float */
#define TRAINED (4 * F4)  /* bytes per trained parameter */

/* Words of train seen >= min_count times (the vocabulary create builds), + the reserved ids. */
static double word_memory_vocab(const cJSON *config, const Dataset *train) {
    WordDict d;
    word_dict_count(&d, train, WORD_SPLIT_BASIC, (int)run_config_number(config, "min_count", 1));
    double v = word_dict_size(&d) + 2;
    word_dict_free(&d);
    return v;
}

static double num(const cJSON *c, const char *k, double fallback) { return run_config_number(c, k, fallback); }

/* Rows of the batch buffers: the larger of batch and eval_batch (when the
 * model has one), no more than the training rows (word_memory_rows_cap). */
static double word_memory_rows(const cJSON *c, const Dataset *train) {
    double b = num(c, "batch", 1), e = num(c, "eval_batch", 0);
    double n = b > e ? b : e;
    if (train->n > 0 && n > train->n) n = train->n;
    return n < 1 ? 1 : n;
}

/* The term's setting: the batch buffers scale with rows x max_len; name
 * max_len when it is above its default, else the batch. */
static const char *word_memory_batch_setting(const cJSON *c, double default_len) {
    return num(c, "max_len", default_len) > default_len ? "max_len" : "batch";
}

/* fastText: the input matrix (V + bucket) x dim, updated in place by the
 * Hogwild threads (no gradient or moments), and the output K x dim; no
 * bucket rows without n-grams (wordNgrams 1, maxn 0), as create does. The
 * whole matrix is one allocation, though only the rows the texts use are
 * ever touched (calloc): the estimate is the allocation, an upper bound of
 * the resident memory. The setting: dim or bucket, whichever is further
 * above its default. */
double fasttext_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double dim = num(c, "dim", 100), bucket = num(c, "bucket", 2e6), V = word_memory_vocab(c, train);
    if (num(c, "wordNgrams", 1) <= 1 && num(c, "maxn", 0) == 0) bucket = 0;
    *setting = dim / 100 >= bucket / 2e6 ? "dim" : "bucket";
    return F4 * dim * (V + bucket + 2.0 * task->num_labels);
}

/* TextCNN: parameters V x D (x2 for multichannel, the static one untrained)
 * + F x sum(W) x C + classifier; per batch of n = min(max(batch,
 * eval_batch), rows) rows (2n sentences for pairs) the packed layout of
 * T = B (max_len + Wmax - 1) positions holds x, dx (T x C), conv, dconv
 * (T x F) and the im2col scratch (T x Wmax x C). */
double textcnn_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double D = num(c, "dim", 0), F = num(c, "filters", 100), V = word_memory_vocab(c, train);
    if (D <= 0) D = 300;
    const char *emb = run_config_string(c, "embedding", "rand");
    double ch = strcmp(emb, "multichannel") == 0 ? 2 : 1, C = ch * D;
    double sumW = 0, maxW = 1;
    const cJSON *w, *a = cJSON_GetObjectItemCaseSensitive(c, "windows");
    cJSON_ArrayForEach(w, a) {
        sumW += w->valuedouble;
        if (w->valuedouble > maxW) maxW = w->valuedouble;
    }
    double B = word_memory_rows(c, train) * (word_pair_task(train) ? 2 : 1);
    double T = B * (num(c, "max_len", 128) + maxW - 1) + maxW;
    double params = TRAINED * (V * D + F * sumW * C + 4 * F * sumW * task->num_labels) + F4 * (ch - 1) * V * D;
    double acts = F4 * T * (2 * C + 2 * F + maxW * C + 2);
    *setting = acts > params ? word_memory_batch_setting(c, 128) : F * sumW > V ? "filters" : "dim";
    return params + acts;
}

/* The recurrent family (textrnn, bilstm, rcnn, han): embedding V x dim, two
 * directions of an LSTM of H = hidden (4 gates of H x (dim + H + 1) each),
 * rcnn's context and han's attention of the same order, the MLP; per batch
 * of n = min(batch, rows) rows (2n sentences for pairs), every time step keeps the
 * input (dim) and each direction's gates, cell and output (6H), with their
 * gradients: n x max_len x (dim + 12 H) x 2 floats. */
double textrnn_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double D = num(c, "dim", 300), H = num(c, "hidden", 512), X = num(c, "context", 0) + num(c, "attention", 0);
    double mlp = num(c, "mlp", 0), V = word_memory_vocab(c, train);
    double pair = word_pair_task(train) ? 2 : 1;
    double params = TRAINED * (V * D + 8 * H * (D + H + 1) + 2 * X * (D + X + H) +
                               (mlp + 1) * (4 * 2 * H + task->num_labels));
    double acts = F4 * word_memory_rows(c, train) * pair * num(c, "max_len", 128) * (D + 12 * H + 2 * X) * 2;
    *setting = acts > params ? word_memory_batch_setting(c, 128) : V * D > 8 * H * (D + H) ? "dim" : "hidden";
    return params + acts;
}

/* DPCNN: embedding V x dim, the region layer and two convolutions of
 * F x 3 x F per level (about log2(max_len) levels); per batch of
 * n = min(max(batch, eval_batch), rows) rows (2n for pairs) the first level's
 * activations and gradients, n x max_len x (dim + 6 F) floats (later levels
 * halve: x2). */
double dpcnn_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double D = num(c, "dim", 300), F = num(c, "filters", 250), L = num(c, "max_len", 128), V = word_memory_vocab(c, train);
    double levels = 1;
    for (double t = L; t > 2; t /= 2) levels++;
    double params = TRAINED * (V * D + 3 * D * F + levels * 2 * 3 * F * F + 4 * F * task->num_labels);
    double acts = F4 * word_memory_rows(c, train) * (word_pair_task(train) ? 2 : 1) * L * (D + 6 * F) * 2;
    *setting = acts > params ? word_memory_batch_setting(c, 128) : V * D > levels * 6 * F * F ? "dim" : "filters";
    return params + acts;
}

/* The Transformer classifier: embedding V x dim, per layer 4 dim^2 of
 * attention and 2 dim x ff; per batch of n = min(max(batch, eval_batch), rows) rows
 * (2n for pairs) and T = max_len, each layer keeps about 10 dim + 2 ff
 * floats per token and heads x T attention weights per token, with their
 * gradients (x2). */
double transformer_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double D = num(c, "dim", 128), FF = num(c, "ff", 512), NL = num(c, "layers", 2), NH = num(c, "heads", 4);
    double T = num(c, "max_len", 128), V = word_memory_vocab(c, train);
    double params = TRAINED * (V * D + T * D + NL * (4 * D * D + 2 * D * FF) + 4 * D * task->num_labels);
    double tokens = word_memory_rows(c, train) * (word_pair_task(train) ? 2 : 1) * T;
    double acts = F4 * tokens * NL * (10 * D + 2 * FF + 2 * NH * T) * 2;
    *setting = acts > params ? word_memory_batch_setting(c, 128) : V * D > NL * D * (4 * D + 2 * FF) ? "dim" : "ff";
    return params + acts;
}

/* The DMN: embedding V x dim, three GRUs (input, episode, memory: 3H x
 * (C + H + 2) each), the gate A x 4H; per batch of n = min(max(batch,
 * eval_batch), rows) rows (2n texts for pairs) of up to max_len words, the
 * input GRU keeps x, dx (dim) and its states, gates and gradients (6H) per
 * word, each fact (at most a word) its input projection (6H) and per pass
 * the gate's input (4H), hidden layer (A) and the episode's states (6H). */
double dmn_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double D = num(c, "dim", 100), H = num(c, "hidden", 100), A = num(c, "attention", 300), P = num(c, "passes", 2);
    double L = num(c, "max_len", 128), V = word_memory_vocab(c, train), pair = word_pair_task(train) ? 2 : 1;
    double params = TRAINED * (V * D + 3 * H * (D + H + 2) + 6 * H * (2 * H + 2) + 4 * A * H + 2 * H * task->num_labels);
    double acts = F4 * word_memory_rows(c, train) * L * (pair * (2 * D + 6 * H) + 8 * H + P * (10 * H + A));
    *setting = acts > params ? word_memory_batch_setting(c, 128) : V * D > 9 * H * H ? "dim" : "hidden";
    return params + acts;
}

/* The Recurrent Entity Network: embedding V x dim (H), the position mask
 * max_len x H, M = blocks keys, four H x H matrices; per batch of n =
 * min(max(batch, eval_batch), rows) rows of up to max_len words (2 texts for
 * pairs), each word's embedding and gradient (2H), and at most one memory
 * update per word (a sentence of one word each, the upper bound), each
 * keeping the blocks' states and pre-activations (2 M H). */
double entnet_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double H = num(c, "dim", 100), M = num(c, "blocks", 20), L = num(c, "max_len", 128), V = word_memory_vocab(c, train);
    double pair = word_pair_task(train) ? 2 : 1;
    double params = TRAINED * (V * H + L * H + M * H + 4 * H * H + (task->num_labels + 3) * H);
    double acts = F4 * word_memory_rows(c, train) * L * (pair * 2 * H + 2 * M * H + 2 * M);
    *setting = acts > params ? (M * H > 2 * pair * H ? "blocks" : word_memory_batch_setting(c, 128))
                             : "dim";
    return params + acts;
}

/* seq2seq_attn: parameters V x D, the BiGRU 6H(D + H), the decoder GRU
 * 3S(E + 2H + S) (S = 2H), attention A(S + 2H), labels (K + 1)(E + S); per
 * batch of n = min(max(batch, eval_batch), rows) rows (2n texts for pairs) of
 * L = max_len words, the encoder keeps about 2D + 16H floats per word and its
 * gradients, the memory and its keys (2H + A) x 2 per position of the
 * (2L for pairs) memory, and each of the max_labels + 1 decoder steps
 * E + 2H + A + 8S + K + 1 per row plus the attention weights; the beam
 * multiplies a step's by its width. */
double seq2seq_attn_memory_bytes(const cJSON *c, const Task *task, const Dataset *train, const char **setting) {
    double D = num(c, "dim", 100), H = num(c, "hidden", 100), E = num(c, "label_dim", 200);
    double A = num(c, "attention", 200), L = num(c, "max_len", 100), V = word_memory_vocab(c, train);
    double Td = num(c, "max_labels", 5) + 1, beam = num(c, "beam", 3), K = task->num_labels, S = 2 * H;
    double params = TRAINED * (V * D + 6 * H * (D + H + 2) + 3 * S * (E + 2 * H + S + 2) + A * (S + 2 * H + 2) +
                               (K + 1) * (E + S + 1) + S * (H + 1));
    double texts = word_pair_task(train) ? 2 : 1, n = word_memory_rows(c, train), Tm = texts * L;
    double step = E + 2 * H + A + 8 * S + K + 1 + Tm;
    double acts = F4 * n * (texts * L * (2 * D + 16 * H) + Tm * (2 * H + A) * 2 + Td * step * 2 + beam * step);
    *setting = acts > params ? word_memory_batch_setting(c, 100) : V * D > params / TRAINED / 2 ? "dim" : "hidden";
    return params + acts;
}
