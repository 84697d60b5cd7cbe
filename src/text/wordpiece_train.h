/* wordpiece_train.h — learning a WordPiece vocabulary from text.
 *
 * The standard recipe (Hugging Face tokenizers' WordPieceTrainer, which is BPE
 * training with a continuation prefix):
 *   1. count the words the BERT BasicTokenizer produces (uncased, accents
 *      stripped, punctuation split);
 *   2. the vocabulary starts with [PAD] [UNK] [CLS] [SEP] [MASK], then every
 *      character seen at the start of a word, then "##c" for every character
 *      seen inside a word (each group sorted by code point), so any training
 *      word can always be spelled and WordPiece never needs [UNK] for it;
 *   3. every word is a sequence of those symbols ("w", "##o", "##r", "##d");
 *      repeatedly merge the most frequent adjacent pair (ties: the pair of
 *      smaller ids) into a new token ("w" + "##o" -> "wo", "##o" + "##r" -> "##or")
 *      until the vocabulary has the requested size or no pair occurs at least
 *      min_count times.
 * Pair counts are kept incrementally (each pair remembers the words it occurs
 * in, and a max-heap with lazy updates picks the next merge), so a merge costs
 * time in proportion to the words it touches, not to the corpus.
 * Words longer than WORDPIECE_MAX_WORD_CHARS are skipped: WordPiece maps them to
 * [UNK] whatever the vocabulary. */
#ifndef GLUE_WORDPIECE_TRAIN_H
#define GLUE_WORDPIECE_TRAIN_H

#include <stddef.h>

typedef struct WordpieceTrainer WordpieceTrainer;

WordpieceTrainer *wordpiece_trainer_create(void);
void wordpiece_trainer_free(WordpieceTrainer *tr);
/* Before any text: cased != 0 keeps case and accents (the BasicTokenizer with
 * lowercase = 0: cased models, translation into German); mark_joins != 0 counts
 * a word joined to the previous one (no space between, see text/subword.h) in
 * its continuation spelling, "dog." -> "dog" + "##.", so the vocabulary has the
 * pieces an exactly reversible tokenisation needs. Default: uncased, no joins. */
void wordpiece_trainer_set_options(WordpieceTrainer *tr, int cased, int mark_joins);
/* Count the words of one text (a line of the corpus). */
void wordpiece_trainer_add_text(WordpieceTrainer *tr, const char *text, size_t len);
/* Count every line of a text file (plain or .gz) and add its line count to
 * *lines; 0, or 1 after reporting a missing or unreadable file. */
int wordpiece_trainer_add_file(WordpieceTrainer *tr, const char *path, long *lines);
/* Learn the vocabulary; returns its size, which is more than vocab_size only
 * when the specials and single characters alone exceed it (all are kept). */
int wordpiece_trainer_train(WordpieceTrainer *tr, int vocab_size, long min_count);

/* After training: the tokens, id order (specials first). */
int wordpiece_trainer_num_tokens(const WordpieceTrainer *tr);
const char *wordpiece_trainer_token(const WordpieceTrainer *tr, int id);
/* Statistics: word occurrences counted, distinct words, merges done. */
long wordpiece_trainer_total_words(const WordpieceTrainer *tr);
int wordpiece_trainer_distinct_words(const WordpieceTrainer *tr);
int wordpiece_trainer_num_merges(const WordpieceTrainer *tr);
/* Write vocab.txt (one token a line) atomically: a temporary file renamed over
 * path. 0 on success; -1 after user_error. */
int wordpiece_trainer_save(const WordpieceTrainer *tr, const char *path);

#endif
