/* vocab.c — loading a vocab.txt and looking tokens up (see vocab.h). */
#include "text/vocab.h"

#include "core/common.h"
#include "text/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct Vocab {
    StrMap map;           /* distinct tokens */
    int *entry_id;        /* (map.n) id of each distinct token: its last line */
    int *id_entry;        /* (size) map entry of each line */
    int size, cap;        /* lines, and room in entry_id / id_entry */
    size_t max_piece;
    VocabSpecials specials;
};

static void vocab_add_line(Vocab *v, const char *s, size_t len) {
    if (v->size == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->entry_id = xrealloc(v->entry_id, sizeof(int) * (size_t)v->cap);
        v->id_entry = xrealloc(v->id_entry, sizeof(int) * (size_t)v->cap);
    }
    int e = strmap_add(&v->map, s, len, NULL);   /* entries <= lines, so entry_id has room */
    v->entry_id[e] = v->size;
    v->id_entry[v->size++] = e;
    size_t piece = len;
    if (len >= VOCAB_CONT_PREFIX_LEN && memcmp(s, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN) == 0)
        piece -= VOCAB_CONT_PREFIX_LEN;
    if (piece > v->max_piece) v->max_piece = piece;
}

static Vocab *vocab_new(void) {
    Vocab *v = xcalloc(1, sizeof *v);
    strmap_init(&v->map);
    return v;
}

static void vocab_find_specials(Vocab *v) {
    v->specials.pad = vocab_id(v, "[PAD]");
    v->specials.unk = vocab_id(v, "[UNK]");
    v->specials.cls = vocab_id(v, "[CLS]");
    v->specials.sep = vocab_id(v, "[SEP]");
    v->specials.mask = vocab_id(v, "[MASK]");
}

static int is_strip_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Read the whole file (vocabularies are small: 30k lines, ~250 kB). */
static char *vocab_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        user_error_io("pass --vocab FILE or set $GLUE_VOCAB to a vocab.txt (one token a line)",
                   "%s: cannot open vocabulary: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, k;
    char *buf = xmalloc(cap);
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) buf = xrealloc(buf, cap *= 2);
    }
    int bad = ferror(f), err = errno;
    fclose(f);
    if (bad) {
        user_error_io(NULL, "%s: cannot read vocabulary: %s", path, strerror(err));
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

Vocab *vocab_load(const char *path) {
    size_t len;
    char *buf = vocab_read_file(path, &len);
    if (!buf) return NULL;
    /* A token with a NUL byte could never be looked up (vocab_token would
     * return it cut at the NUL): the file is not a vocabulary. */
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        long line = 1;
        for (const char *c = buf; c < nul; c++) line += *c == '\n';
        user_error_data("a vocab.txt is text, one token a line", "%s:%ld: NUL byte in the token", path, line);
        free(buf);
        return NULL;
    }
    Vocab *v = vocab_new();
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len, b = pos, e = end;
        while (b < e && is_strip_space(buf[b])) b++;
        while (e > b && is_strip_space(buf[e - 1])) e--;
        vocab_add_line(v, buf + b, e - b);
        pos = end + 1;
    }
    free(buf);
    if (v->size == 0) {
        user_error_data("a vocab.txt has one token a line", "%s: empty vocabulary", path);
        vocab_free(v);
        return NULL;
    }
    vocab_find_specials(v);
    return v;
}

Vocab *vocab_from_tokens(const char *const *tokens, int n) {
    Vocab *v = vocab_new();
    for (int i = 0; i < n; i++) vocab_add_line(v, tokens[i], strlen(tokens[i]));
    vocab_find_specials(v);
    return v;
}

void vocab_free(Vocab *v) {
    if (!v) return;
    strmap_free(&v->map);
    free(v->entry_id);
    free(v->id_entry);
    free(v);
}

int vocab_size(const Vocab *v) { return v->size; }

int vocab_id(const Vocab *v, const char *token) { return vocab_id_piece(v, token, strlen(token), 0); }

int vocab_id_piece(const Vocab *v, const char *s, size_t len, int continuation) {
    int e = continuation ? strmap_find(&v->map, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN, s, len)
                         : strmap_find(&v->map, NULL, 0, s, len);
    return e < 0 ? -1 : v->entry_id[e];
}

const char *vocab_token(const Vocab *v, int id) {
    return id >= 0 && id < v->size ? strmap_key(&v->map, v->id_entry[id]) : NULL;
}

const VocabSpecials *vocab_specials(const Vocab *v) { return &v->specials; }

size_t vocab_max_piece_bytes(const Vocab *v) { return v->max_piece; }

const VocabSpecials *vocab_tokenizer_specials(const Vocab *v, int need_pad, const char *hint) {
    const VocabSpecials *sp = &v->specials;
    const char *missing = need_pad && sp->pad < 0 ? "[PAD]"
                          : sp->unk < 0           ? "[UNK]"
                          : sp->cls < 0           ? "[CLS]"
                          : sp->sep < 0           ? "[SEP]"
                                                  : NULL;
    if (!missing) return sp;
    user_error_data(hint, "vocabulary has no %s token", missing);
    return NULL;
}
