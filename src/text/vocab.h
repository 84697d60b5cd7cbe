/* vocab.h — a WordPiece vocabulary: vocab.txt, one token a line, id = line number.
 *
 * Loading follows the reference BERT load_vocab(): each line is stripped of
 * surrounding whitespace (so CRLF files work), an empty line is still a token
 * (keeping later ids aligned), and when a token repeats the last line wins for
 * token -> id while id -> token keeps every line. Lookups are hash-table probes,
 * never scans. The special tokens are found by name; a missing one has id -1. */
#ifndef GLUE_VOCAB_H
#define GLUE_VOCAB_H

#include <stddef.h>

/* Continuation pieces (word-internal WordPiece tokens) carry this prefix. */
#define VOCAB_CONT_PREFIX "##"
#define VOCAB_CONT_PREFIX_LEN 2

typedef struct Vocab Vocab;

typedef struct VocabSpecials {
    int pad, unk, cls, sep, mask;   /* ids of [PAD] [UNK] [CLS] [SEP] [MASK], or -1 */
} VocabSpecials;

/* NULL (after user_error) when the file cannot be read or is empty. */
Vocab *vocab_load(const char *path);
/* A vocabulary from an in-memory token list (ids 0..n-1), e.g. a trained one. */
Vocab *vocab_from_tokens(const char *const *tokens, int n);
void vocab_free(Vocab *v);

int vocab_size(const Vocab *v);
/* Id of a NUL-terminated token, or -1. */
int vocab_id(const Vocab *v, const char *token);
/* Id of s[0..len), with "##" prepended when continuation != 0; -1 if absent. */
int vocab_id_piece(const Vocab *v, const char *s, size_t len, int continuation);
/* Token of an id in [0, vocab_size); NULL outside. */
const char *vocab_token(const Vocab *v, int id);
const VocabSpecials *vocab_specials(const Vocab *v);
/* The specials of v when it has every one a tokenizer needs ([PAD] when
 * need_pad, [UNK], [CLS], [SEP]); otherwise NULL after the message "vocabulary
 * has no X token" with `hint` (how to get a vocabulary that has them). */
const VocabSpecials *vocab_tokenizer_specials(const Vocab *v, int need_pad, const char *hint);
/* Longest token in bytes, not counting a "##" prefix: WordPiece never needs to
 * try a longer piece. */
size_t vocab_max_piece_bytes(const Vocab *v);

#endif
