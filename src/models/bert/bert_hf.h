/* bert_hf.h — Hugging Face BERT model directories in and out:
 *   config.json         HF BertConfig keys (bert_config_from_json / _to_json)
 *   model.safetensors   the weights under HF parameter names (core/safetensors.h)
 *   vocab.txt           the WordPiece vocabulary (+ tokenizer_config.json on export)
 *
 * Import (bert_hf.c) accepts what transformers' save_pretrained writes for
 * BertModel (names without the "bert." prefix), BertForMaskedLM,
 * BertForPreTraining and BertForSequenceClassification, in F32, F16 or BF16
 * (one model.safetensors, or shards with model.safetensors.index.json),
 * and what older exports contain: TF-style LayerNorm "gamma"/"beta" names, the
 * I64 "embeddings.position_ids" buffer, the tied MLM decoder stored explicitly
 * ("cls.predictions.decoder.weight" equal to the word embeddings, its bias equal
 * to "cls.predictions.bias"). The result is a glue BERT checkpoint in memory —
 * the config record of bert_checkpoint_config and tensors under glue's names —
 * so bert_from_checkpoint (bert.h) builds the model exactly as from a glue file:
 *
 *   Checkpoint *c = bert_hf_read("models/bert-base-uncased");
 *   Bert *m = c ? bert_from_checkpoint(c, &heads, 0, seed) : NULL;
 *
 * DIR/vocab.txt, when present, becomes the checkpoint's vocabulary blob
 * (BERT_VOCAB_BLOB, read back by bert_checkpoint_vocab).
 * The heads are those the file has: the MLM head when it has cls.predictions.*,
 * the pooler when it has bert.pooler.*, a classifier of K labels when it has
 * classifier.weight (K, C). Every tensor a BERT of config.json's size with those
 * heads needs must be there: otherwise one message lists the missing names.
 * Tensors glue has no use for (the next-sentence head cls.seq_relationship.*,
 * an untied decoder, anything else) are named in one warning and dropped.
 *
 * Export (bert_hf_export.c) writes a model so that transformers'
 * from_pretrained loads it without missing or unexpected weights: the
 * architecture is BertForSequenceClassification with a classifier,
 * BertForMaskedLM with an MLM head, else BertModel (names without "bert.");
 * the tied decoder is left out, as save_pretrained does. */
#ifndef GLUE_BERT_HF_H
#define GLUE_BERT_HF_H

#include "core/checkpoint.h"
#include "models/bert/bert.h"

#define BERT_HF_CONFIG "config.json"
#define BERT_HF_WEIGHTS "model.safetensors"
#define BERT_HF_WEIGHTS_INDEX "model.safetensors.index.json"
#define BERT_HF_PICKLE "pytorch_model.bin"
#define BERT_HF_VOCAB "vocab.txt"
#define BERT_HF_TOKENIZER_CONFIG "tokenizer_config.json"

/* 1 when path is a directory with Hugging Face weights (model.safetensors, a
 * shard index, or pytorch_model.bin — the last so that loading can say how to
 * convert it), as opposed to a glue checkpoint file or run directory. */
int bert_hf_is_dir(const char *path);

/* The directory's model as a glue BERT checkpoint (see above); c->path is the
 * .safetensors file, for messages. NULL after a message naming the file. */
Checkpoint *bert_hf_read(const char *dir);

/* The weights of a HF directory as stored (original names, no checks of
 * them): model.safetensors, or the shards listed by model.safetensors.index.json
 * (its "weight_map"; every name it lists must be in its shard). Integer
 * buffers come as blobs (SAFETENSORS_OTHER_AS_BLOBS). c->path names the file
 * (or the index). NULL after a message; pickled pytorch_model.bin only is
 * refused with the way to convert it. (bert_hf_weights.c) */
Checkpoint *bert_hf_read_weights(const char *dir);

/* DIR/vocab.txt into out (cap bytes) and 0 when that file exists (the
 * vocabulary the model was trained with); -1 when it does not. */
int bert_hf_vocab_path(const char *dir, char *out, size_t cap);

/* Writes dir (created if needed): config.json, model.safetensors and, when
 * vocab != NULL, vocab.txt and tokenizer_config.json (uncased, model_max_length
 * = max positions). labels (num_labels strings, or NULL for LABEL_0, ...)
 * become config.json's id2label / label2id. 0 ok, -1 after a message. */
int bert_hf_export(const Bert *m, const char *dir, const Vocab *vocab, const char *const *labels);

#endif
