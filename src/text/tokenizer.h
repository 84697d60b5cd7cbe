/* tokenizer.h — the full BERT tokenizer: BasicTokenizer + WordPiece + model input.
 *
 * Text goes in as bytes with a length (NUL bytes and invalid UTF-8 allowed: see
 * text/utf8.h and text/basic_tokenizer.h for what happens to them) and comes out
 * as vocabulary ids. A Tokenizer owns reusable scratch buffers, so tokenizing
 * allocates nothing per token or per text once warm; the price is that it is not
 * thread-safe — create one per thread (they can share one read-only Vocab).
 *
 *   Vocab *v = vocab_load(tokenizer_default_vocab_path());
 *   Tokenizer *t = tokenizer_create(v);
 *   int ids[128], seg[128];
 *   int T = tokenizer_encode(t, a, strlen(a), b, strlen(b), 128, ids, seg);
 *
 * Uncased (BERT's do_lower_case=True) by default; for a cased vocabulary set
 * t->basic.lowercase = 0 after tokenizer_create.
 * Words before WordPiece (for fastText, TextCNN, BiLSTM): text/basic_tokenizer.h. */
#ifndef GLUE_TOKENIZER_H
#define GLUE_TOKENIZER_H

#include "text/basic_tokenizer.h"
#include "text/vocab.h"

#include <stddef.h>

typedef struct Tokenizer {
    const Vocab *vocab;          /* not owned */
    VocabSpecials sp;
    BasicTokenizer basic;
    int *ids_a, *ids_b;          /* scratch: WordPiece ids of the two texts */
    int cap_a, cap_b;
    int last_len;                /* tokens the last tokenizer_encode would have made without max_len
                                  * (specials included): more than it returned when it truncated */
} Tokenizer;

/* NULL (after user_error) when the vocabulary lacks [UNK], [CLS] or [SEP]. */
Tokenizer *tokenizer_create(const Vocab *v);
void tokenizer_free(Tokenizer *t);

/* WordPiece ids of text[0..len), without [CLS]/[SEP]. Writes at most cap ids,
 * and when tokens != NULL the matching token strings (pointers into the vocab,
 * nothing to free); returns the total number, which may exceed cap (call again
 * with a bigger array, as with snprintf). */
int tokenizer_ids(Tokenizer *t, const char *text, size_t len, int *ids, const char **tokens, int cap);

/* Model input "[CLS] a [SEP]" or, when b != NULL, "[CLS] a [SEP] b [SEP]",
 * truncated to max_len the reference way (BERT's _truncate_seq_pair): while too
 * long, drop the last token of the longer side, of b on ties; a single text keeps
 * its first max_len - 2 tokens. ids and segments (may be NULL) have room for
 * max_len entries; segment 0 covers [CLS] a [SEP], 1 the rest. Returns the length
 * T <= max_len (padding is the caller's: the pad id is t->sp.pad).
 * max_len must be >= 3 for a pair and >= 2 for a single text. */
int tokenizer_encode(Tokenizer *t, const char *a, size_t la, const char *b, size_t lb, int max_len,
                     int *ids, int *segments);

/* The vocabulary to use when none is given: $GLUE_VOCAB if set, else
 * models/vocab.txt if it exists, else ../shared/models/vocab/bert-base-uncased-vocab.txt. */
const char *tokenizer_default_vocab_path(void);

#endif
