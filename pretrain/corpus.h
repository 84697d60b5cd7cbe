/* corpus.h — streaming readers for pretraining text, in the formats we have.
 *
 * A corpus is a list of files (plain or .gz, read through core/lines.h, one
 * line in memory at a time), each in one of these formats:
 *   text           one paragraph or sentence a line; a blank line ends a
 *                  document (the convention of BERT's create_pretraining_data)
 *   wikiextractor  WikiExtractor output: `<doc id=.. title=..>`, the title line,
 *                  paragraphs, `</doc>`. The markup lines and the title are
 *                  dropped; each <doc> starts a document.
 *   brown          the NLTK Brown corpus: one sentence a line of `word/tag`
 *                  tokens. Tags are dropped (split at the LAST '/': "1/2/cd"
 *                  is the word "1/2"), `` and '' become ".
 *   wikitext       WikiText's tokenized files: a ` = Title = ` heading starts
 *                  a document, ` = = Section = = ` headings are dropped, the
 *                  split numbers are joined again (" @-@ " -> "-", " @.@ " ->
 *                  ".", " @,@ " -> ","). `<unk>` stays in the text; the token
 *                  cache turns it into [UNK] (corpus_unk_marker).
 * The reader hands out cleaned text units (a line) and says when a new
 * document starts, so packing never joins two articles into one sequence.
 * Formats are named in configs or guessed from a file's name and first line. */
#ifndef GLUE_PRETRAIN_CORPUS_H
#define GLUE_PRETRAIN_CORPUS_H

#include <stddef.h>

#include "core/lines.h"

typedef enum {
    CORPUS_TEXT,
    CORPUS_WIKIEXTRACTOR,
    CORPUS_BROWN,
    CORPUS_WIKITEXT,
    CORPUS_AUTO,   /* guess (corpus_guess_format) when the file is opened */
} CorpusFormat;

typedef struct CorpusFile {
    const char *path;
    CorpusFormat format;
} CorpusFile;

typedef struct CorpusReader {
    const CorpusFile *files;   /* not owned */
    int n_files;
    int file;                  /* index of the file the last unit came from; n_files at the end */
    CorpusFormat format;       /* of that file (resolved from CORPUS_AUTO) */
    LineReader lr;
    int open;                  /* lr is open */
    int skip_title;            /* wikiextractor: the next line is a title */
    int doc_pending;           /* the next unit starts a document */
    char *buf;                 /* the cleaned unit (brown, wikitext) */
    size_t cap;
    long units, docs;          /* handed out so far */
} CorpusReader;

/* "text", "wikiextractor", "brown", "wikitext", "auto" -> format; -1 if unknown. */
int corpus_parse_format(const char *name, CorpusFormat *f);
const char *corpus_format_name(CorpusFormat f);
/* The format of a file from its name ("brown", "wiki.*.tokens") and its first
 * line ("<doc "); text otherwise. -1 after a message if it cannot be read. */
int corpus_guess_format(const char *path, CorpusFormat *f);
/* What the format writes for an unknown word (WikiText's "<unk>"), or NULL. */
const char *corpus_unk_marker(CorpusFormat f);

/* Reads files[0..n) in order (the array must outlive the reader). */
void corpus_open(CorpusReader *r, const CorpusFile *files, int n);
/* Next non-empty text unit. Returns 1 with *text and *len (valid until the next
 * call; no NUL guaranteed inside) and *new_doc = 1 when a document starts
 * here; 0 at the end of the last file; -1 after a message on a read error
 * (missing, truncated or corrupt file). The first unit of each file starts a
 * document. */
int corpus_next(CorpusReader *r, const char **text, size_t *len, int *new_doc);
void corpus_close(CorpusReader *r);

/* The cleaning of one line, exposed for tests. Each returns the cleaned length
 * written to out (cap >= len + 1 is always enough), NUL-terminated. */
size_t corpus_clean_brown(const char *line, size_t len, char *out);
size_t corpus_clean_wikitext(const char *line, size_t len, char *out);

#endif
