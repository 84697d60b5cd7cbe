/* word_features.c — word vocabulary, word-id encoding of splits, and embedding
 * initialisation from a .vec file, shared by TextCNN and the BiLSTM (see
 * word_features.h). The counting and frequency order come from the shared
 * word dictionary (word_dict.h, basic tokenizer): it adds its own end and
 * separator tokens (WORD_EOS, WORD_SEP), which the basic tokenizer can never
 * produce (it splits '<', '/', '_'), so dropping them leaves exactly the words. */
#include "models/baselines/word_features.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/lines.h"
#include "text/basic_tokenizer.h"

/* The reserved words; '<' is punctuation to the basic tokenizer, so no text
 * word can collide with them. */
static const char *const WF_RESERVED[WF_NUM_RESERVED] = {"<pad>", "<unk>"};

/* ---- 1. vocabulary ---- */

static void vocab_add_reserved(WordVocab *v) {
    strmap_init(&v->dict.map);
    for (int i = 0; i < WF_NUM_RESERVED; i++) word_dict_add(&v->dict, WF_RESERVED[i], strlen(WF_RESERVED[i]), 0);
}

int word_vocab_build_from(WordVocab *v, const Dataset *train, int min_count, const char *source,
                          const char *lower_count) {
    memset(v, 0, sizeof *v);
    if (min_count < 1) min_count = 1;
    /* Count every word; the order is by count, so thresholding below is a prefix. */
    WordDict all;
    word_dict_count(&all, train, WORD_SPLIT_BASIC, 1);
    if (word_dict_size(&all) == 0) {
        word_dict_free(&all);
        user_error_data("check that it has lines of text", "word vocabulary: no words in %s (%d rows)", source,
                        train->n);
        return -1;
    }
    vocab_add_reserved(v);
    for (int i = 0; i < word_dict_size(&all) && all.count[i] >= min_count; i++) {
        const char *w = strmap_key(&all.map, i);
        if (strcmp(w, WORD_EOS) == 0 || strcmp(w, WORD_SEP) == 0) continue;
        word_dict_add(&v->dict, w, strmap_key_len(&all.map, i), all.count[i]);
    }
    word_dict_free(&all);
    if (word_vocab_size(v) == WF_NUM_RESERVED) {
        char hint[96];
        snprintf(hint, sizeof hint, "lower the minimum count (%s)", lower_count);
        user_error_data(hint, "word vocabulary: no word occurs %d times in %s", min_count, source);
        word_vocab_free(v);
        return -1;
    }
    return 0;
}

int word_vocab_build(WordVocab *v, const Dataset *train, int min_count) {
    return word_vocab_build_from(v, train, min_count, "the training split", "--set min_count=1");
}

void word_vocab_free(WordVocab *v) { word_dict_free(&v->dict); }

int word_vocab_id(const WordVocab *v, const char *w, size_t len) {
    int id = strmap_find(&v->dict.map, NULL, 0, w, len);
    return id >= 0 ? id : WF_UNK;
}

const char *word_vocab_word(const WordVocab *v, int id) { return strmap_key(&v->dict.map, id); }

static int vocab_blob_name(char *out, size_t cap, const char *prefix, const char *name) {
    return snprintf(out, cap, "%s%s", prefix ? prefix : "", name) < (int)cap ? 0 : -1;
}

int word_vocab_save(const WordVocab *v, CkptWriter *w, const char *prefix) {
    char words[128], counts[128];
    if (vocab_blob_name(words, sizeof words, prefix, "words") || vocab_blob_name(counts, sizeof counts, prefix, "counts"))
        DIE("vocabulary blob prefix too long: %s", prefix);
    const StrMap *map = &v->dict.map;   /* keys back to back in id order: the blob as is */
    int rc = checkpoint_write_blob(w, words, map->chars, map->chars_len);
    rc |= checkpoint_write_blob(w, counts, v->dict.count, (size_t)word_vocab_size(v) * sizeof *v->dict.count);
    return rc ? -1 : 0;
}

static int vocab_bad(const char *path, const char *what) {
    user_error_data("re-train the model", "%s: word vocabulary %s", path, what);
    return -1;
}

int word_vocab_load(WordVocab *v, const Checkpoint *c, const char *prefix, const char *path) {
    char wname[128], cname[128];
    memset(v, 0, sizeof *v);
    if (vocab_blob_name(wname, sizeof wname, prefix, "words") || vocab_blob_name(cname, sizeof cname, prefix, "counts"))
        DIE("vocabulary blob prefix too long: %s", prefix);
    const CkptBlob *w = checkpoint_find_blob(c, wname), *n = checkpoint_find_blob(c, cname);
    if (!w || !n || n->size % sizeof(int64_t) != 0 || (w->size && w->data[w->size - 1] != '\0'))
        return vocab_bad(path, "missing or damaged");
    long V = (long)(n->size / sizeof(int64_t));
    if (V < WF_NUM_RESERVED) return vocab_bad(path, "too small");
    strmap_init(&v->dict.map);
    size_t pos = 0;
    for (long i = 0; i < V; i++) {
        int64_t count;
        memcpy(&count, n->data + i * sizeof count, sizeof count);   /* blob bytes need not be aligned */
        if (pos >= w->size) { word_vocab_free(v); return vocab_bad(path, "has fewer words than counts"); }
        const char *s = (const char *)w->data + pos;
        size_t len = strlen(s);
        word_dict_add(&v->dict, s, len, count);
        if (word_vocab_size(v) != i + 1) { word_vocab_free(v); return vocab_bad(path, "has a word twice"); }
        pos += len + 1;
    }
    int ok = pos == w->size;
    for (int i = 0; ok && i < WF_NUM_RESERVED; i++) ok = strcmp(word_vocab_word(v, i), WF_RESERVED[i]) == 0;
    if (!ok) { word_vocab_free(v); return vocab_bad(path, "is inconsistent"); }
    return 0;
}

/* ---- 2. encoded splits ---- */

typedef struct {
    int32_t *ids;
    int64_t n, cap;
} IdList;

/* Appends the ids of text's first max_len words; returns how many. *words
 * gets how many the text had. */
static int32_t encode_text(IdList *b, BasicTokenizer *bt, const WordVocab *v, const char *text, int max_len,
                           int64_t *unknown, int *words) {
    *words = 0;
    if (!text) return 0;
    int nw = *words = basic_tokenize(bt, text, strlen(text));
    if (nw > max_len) nw = max_len;
    if (b->n + nw > b->cap) {
        b->cap = 2 * (b->n + nw) + 1024;
        b->ids = xrealloc(b->ids, (size_t)b->cap * sizeof *b->ids);
    }
    for (int i = 0; i < nw; i++) {
        int id = word_vocab_id(v, basic_word(bt, i), bt->words[i].len);
        *unknown += id == WF_UNK;
        b->ids[b->n++] = id;
    }
    return nw;
}

WordSeqs *word_seqs_encode(const WordVocab *v, const Dataset *d, int max_len) {
    CHECK_OR_DIE(max_len >= 1);
    WordSeqs *s = xcalloc(1, sizeof *s);
    size_t n1 = (size_t)d->n + 1;   /* +1: no zero-size allocations for an empty split */
    s->n = d->n;
    s->max_len = max_len;
    s->pair = d->task && d->split ? d->split->col_b >= 0 : 0;
    s->off = xmalloc(n1 * sizeof *s->off);
    s->len_a = xmalloc(n1 * sizeof *s->len_a);
    s->len_b = xmalloc(n1 * sizeof *s->len_b);
    IdList b = {0};
    BasicTokenizer bt;
    basic_tokenizer_init(&bt, 1);
    s->off[0] = 0;
    long cut = 0, longest = 0;   /* rows with a text cut to max_len, and the longest text's words */
    for (int r = 0; r < d->n; r++) {
        const Example *x = &d->ex[r];
        if (x->b) s->pair = 1;
        int wa, wb;
        s->len_a[r] = encode_text(&b, &bt, v, x->a, max_len, &s->unknown, &wa);
        s->len_b[r] = encode_text(&b, &bt, v, x->b, max_len, &s->unknown, &wb);
        cut += wa > max_len || wb > max_len;
        if (wa > max_len && wa > longest) longest = wa;
        if (wb > max_len && wb > longest) longest = wb;
        s->off[r + 1] = b.n;
    }
    basic_tokenizer_free(&bt);
    dataset_report_truncated(d, cut, max_len, "words", longest);
    s->tokens = b.n;
    s->ids = b.ids ? b.ids : xmalloc(sizeof *s->ids);
    return s;
}

void word_seqs_free(WordSeqs *s) {
    if (!s) return;
    free(s->ids);
    free(s->off);
    free(s->len_a);
    free(s->len_b);
    free(s);
}

/* ---- 3. pretrained vectors ---- */

#define WF_VEC_HINT "give a word-vectors file in fastText .vec format: a line \"N D\", then \"word v1 ... vD\" per line"

/* How a vocabulary row got its vector. */
enum { ROW_RANDOM = 0, ROW_LOWERED = 1, ROW_EXACT = 2 };

/* Parses exactly D numbers from p (after the word); 0 ok, -1 if fewer, more,
 * or not finite. */
static int parse_vector(const char *p, float *out, int D) {
    char *end;
    for (int k = 0; k < D; k++) {
        float x = strtof(p, &end);
        if (end == p || !isfinite(x)) return -1;
        out[k] = x;
        p = end;
    }
    while (*p == ' ' || *p == '\t') p++;
    return *p == '\0' ? 0 : -1;
}

int word_vec_fields(const char *p) {
    int n = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        n++;
        while (*p && *p != ' ' && *p != '\t') p++;
    }
    return n;
}

/* Vocabulary row for a file word not found as is: its lower-cased, accent-free
 * form when that is one single word (only words with upper-case ASCII or
 * non-ASCII bytes can change), else -1. */
static int lowered_row(const WordVocab *v, BasicTokenizer *bt, const char *w, size_t len) {
    int may_change = 0;
    for (size_t i = 0; i < len && !may_change; i++) may_change = (unsigned char)w[i] >= 0x80 || isupper((unsigned char)w[i]);
    if (!may_change || basic_tokenize(bt, w, len) != 1) return -1;
    return strmap_find(&v->dict.map, NULL, 0, basic_word(bt, 0), bt->words[0].len);
}

typedef struct {
    const WordVocab *v;
    float *emb;          /* (V, D) */
    int D;
    uint8_t *how;        /* (V) ROW_* */
    float *vec;          /* (D) the line's vector */
    BasicTokenizer bt;
    long read;
} VecLoad;

/* One "word v1 ... vD" line; 0 ok, -1 malformed. */
static int vec_line(VecLoad *L, char *line) {
    char *sp = line;
    while (*sp && *sp != ' ' && *sp != '\t') sp++;
    if (sp == line || !*sp) return -1;
    size_t len = (size_t)(sp - line);
    if (parse_vector(sp, L->vec, L->D) != 0) return -1;
    L->read++;
    int row = strmap_find(&L->v->dict.map, NULL, 0, line, len), how = ROW_EXACT;
    if (row < 0) {
        row = lowered_row(L->v, &L->bt, line, len);
        how = ROW_LOWERED;
    }
    /* first exact match wins; a lower-cased match only fills a row nothing matched yet */
    if (row < WF_NUM_RESERVED || L->how[row] >= how) return 0;
    memcpy(L->emb + (size_t)row * L->D, L->vec, (size_t)L->D * sizeof *L->emb);
    L->how[row] = (uint8_t)how;
    return 0;
}

/* The header "N D" if the first line is one (it may also be a vector: GloVe
 * files have no header). 1 = header consumed, 0 = a vector line, -1 = error. */
static int vec_header(const char *line, int D, const char *path, long *declared) {
    if (word_vec_fields(line) != 2) return 0;
    long n, d;
    char tail;
    if (sscanf(line, "%ld %ld %c", &n, &d, &tail) != 2 || n < 0) return 0;
    if (d != D) {
        user_error("train or pick vectors of the model's embedding size, or set the size (--set dim=N)",
                   "%s: vectors have %ld dimensions, the model's embeddings %d", path, d, D);
        return -1;
    }
    *declared = n;
    return 1;
}

int word_vectors_dim(const char *path) {
    LineReader r;
    if (lines_open_or_report(&r, path)) return -1;
    char *line;
    size_t len;
    int got, d = -1;
    while ((got = lines_next(&r, &line, &len)) == 1 && len == 0) {}
    if (got == 1) {
        long n, dim;
        char tail;
        int fields = word_vec_fields(line);
        d = fields == 2 && sscanf(line, "%ld %ld %c", &n, &dim, &tail) == 2 ? (dim >= 1 && dim <= (1 << 20) ? (int)dim : -1)
                                                                            : fields - 1;
        if (d < 1) {
            user_error_data(WF_VEC_HINT, "%s:%ld: neither a header \"N D\" nor a word and its numbers", path, r.line_no);
            d = -1;
        }
    } else if (got < 0) {
        lines_report(&r);
    } else {
        user_error_data(WF_VEC_HINT, "%s: no word vectors in the file", path);
    }
    lines_close(&r);
    return d;
}

static void vec_report(const VecLoad *L, const char *path, WordVecCoverage *cov) {
    const WordVocab *v = L->v;
    WordVecCoverage c = {.words = word_vocab_size(v) - WF_NUM_RESERVED, .file_words = L->read};
    int64_t tok = 0, tok_found = 0;
    for (int i = WF_NUM_RESERVED; i < word_vocab_size(v); i++) {
        tok += v->dict.count[i];
        if (L->how[i] != ROW_RANDOM) {
            c.found++;
            tok_found += v->dict.count[i];
        }
    }
    c.token_frac = tok ? (double)tok_found / (double)tok : 0.0;
    fprintf(stderr, "vectors: %d of %d words (%.1f%% of training tokens) found among %ld vectors of %s\n", c.found,
            c.words, 100.0 * c.token_frac, c.file_words, path);
    if (cov) *cov = c;
}

int word_vectors_load(const WordVocab *v, const char *path, float *emb, int D, WordVecCoverage *cov) {
    LineReader r;
    if (lines_open_or_report(&r, path)) return -1;
    VecLoad L = {.v = v, .emb = emb, .D = D};
    L.how = xcalloc((size_t)word_vocab_size(v), 1);
    L.vec = xmalloc((size_t)D * sizeof *L.vec);
    basic_tokenizer_init(&L.bt, 1);
    long declared = -1;
    int rc = 0, got = 0;
    char *line;
    size_t len;
    while (rc == 0 && (got = lines_next(&r, &line, &len)) == 1) {
        if (len == 0) continue;
        if (r.line_no == 1) {
            int h = vec_header(line, D, path, &declared);
            if (h < 0) { rc = -1; break; }
            if (h == 1) continue;
        }
        if (vec_line(&L, line) != 0) {
            int fields = word_vec_fields(line);
            user_error_data(WF_VEC_HINT, "%s:%ld: expected a word and %d numbers, got %d field%s%s", path, r.line_no, D,
                       fields, fields == 1 ? "" : "s", fields == D + 1 ? " (a value is not a finite number)" : "");
            rc = -1;
        }
    }
    if (rc == 0 && got < 0) {
        lines_report(&r);
        rc = -1;
    }
    if (rc == 0 && L.read == 0) {
        user_error_data(WF_VEC_HINT, "%s: no word vectors in the file", path);
        rc = -1;
    }
    if (rc == 0 && declared >= 0 && declared != L.read)
        user_warning("%s: header announces %ld vectors, the file has %ld", path, declared, L.read);
    if (rc == 0) vec_report(&L, path, cov);
    lines_close(&r);
    basic_tokenizer_free(&L.bt);
    free(L.how);
    free(L.vec);
    return rc;
}
