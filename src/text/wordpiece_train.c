/* wordpiece_train.c — WordPiece vocabulary training by incremental BPE merges
 * over counted words (see wordpiece_train.h). */
#include "text/wordpiece_train.h"

#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "text/basic_tokenizer.h"
#include "text/strmap.h"
#include "text/utf8.h"
#include "text/vocab.h"
#include "text/wordpiece.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const WPT_SPECIALS[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
#define WPT_NUM_SPECIALS 5

typedef struct { int *v; int n, cap; } IntVec;

typedef struct {
    int a, b;              /* token ids, in order */
    int64_t count;         /* occurrences, weighted by word counts */
    IntVec words;          /* words it (may) occur in; stale entries are re-checked */
    int touched;           /* merge number that last created occurrences */
} Pair;

typedef struct { int64_t count; int pair; } HeapItem;

/* State of one training run, freed at its end. */
typedef struct {
    int *sym;              /* all words' symbol ids back to back */
    size_t *wstart;        /* (W) start of word w in sym */
    int *wlen;             /* (W) its current number of symbols */
    int *stamp;            /* (W) last merge that visited the word */
    Pair *pairs;
    int npairs, pairs_cap;
    int32_t *slots;        /* pair hash table: index into pairs or -1 */
    size_t slot_mask;
    HeapItem *heap;
    int heap_n, heap_cap;
    IntVec touched;        /* pairs whose count grew during the current merge */
    char *scratch;         /* the merged token's text */
    size_t scratch_cap;
} MergeState;

struct WordpieceTrainer {
    BasicTokenizer bt;
    StrMap words;          /* distinct words */
    int64_t *word_count;   /* (words.n) */
    int word_cap;
    long total_words;
    StrMap tokens;         /* the vocabulary: entry index = token id */
    int num_merges;
    int mark_joins;        /* joined words are counted as "##" + word */
    char *join_buf;        /* scratch for that key */
    size_t join_cap;
};

/* Where a counted word's characters start: after the "##" of a joined word.
 * A plain word never starts with "##" ('#' is punctuation, a word of its own),
 * so a key longer than the prefix that starts with it is always a joined word. */
static size_t wpt_body_start(const char *s, size_t len) {
    return len > VOCAB_CONT_PREFIX_LEN && memcmp(s, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN) == 0
               ? VOCAB_CONT_PREFIX_LEN : 0;
}

static void intvec_push(IntVec *iv, int x) {
    if (iv->n == iv->cap) {
        iv->cap = iv->cap ? 2 * iv->cap : 4;
        iv->v = xrealloc(iv->v, sizeof(int) * (size_t)iv->cap);
    }
    iv->v[iv->n++] = x;
}

/* ---- pair table --------------------------------------------------------------- */

static size_t pair_slot(const MergeState *ms, int a, int b) {
    uint64_t k = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * 0x9E3779B97F4A7C15ull;
    return (size_t)(k ^ (k >> 29)) & ms->slot_mask;
}

static int pair_find(const MergeState *ms, int a, int b) {
    for (size_t s = pair_slot(ms, a, b);; s = (s + 1) & ms->slot_mask) {
        int p = ms->slots[s];
        if (p < 0 || (ms->pairs[p].a == a && ms->pairs[p].b == b)) return p;
    }
}

static void pair_rehash(MergeState *ms, size_t nslots) {
    free(ms->slots);
    ms->slots = xmalloc(sizeof(int32_t) * nslots);
    memset(ms->slots, 0xFF, sizeof(int32_t) * nslots);
    ms->slot_mask = nslots - 1;
    for (int p = 0; p < ms->npairs; p++) {
        size_t s = pair_slot(ms, ms->pairs[p].a, ms->pairs[p].b);
        while (ms->slots[s] >= 0) s = (s + 1) & ms->slot_mask;
        ms->slots[s] = p;
    }
}

static int pair_get(MergeState *ms, int a, int b) {
    int p = pair_find(ms, a, b);
    if (p >= 0) return p;
    if (ms->npairs == ms->pairs_cap) {
        ms->pairs_cap = ms->pairs_cap ? 2 * ms->pairs_cap : 1024;
        ms->pairs = xrealloc(ms->pairs, sizeof(Pair) * (size_t)ms->pairs_cap);
    }
    p = ms->npairs++;
    ms->pairs[p] = (Pair){.a = a, .b = b, .touched = -1};
    if ((size_t)ms->npairs * 2 > ms->slot_mask + 1) pair_rehash(ms, (ms->slot_mask + 1) * 2);
    else {
        size_t s = pair_slot(ms, a, b);
        while (ms->slots[s] >= 0) s = (s + 1) & ms->slot_mask;
        ms->slots[s] = p;
    }
    return p;
}

/* ---- max-heap of (count, pair): larger count first, then smaller (a, b) ------ */

static int heap_before(const MergeState *ms, HeapItem x, HeapItem y) {
    if (x.count != y.count) return x.count > y.count;
    const Pair *p = &ms->pairs[x.pair], *q = &ms->pairs[y.pair];
    return p->a != q->a ? p->a < q->a : p->b < q->b;
}

static void heap_push(MergeState *ms, int64_t count, int pair) {
    if (ms->heap_n == ms->heap_cap) {
        ms->heap_cap = ms->heap_cap ? 2 * ms->heap_cap : 1024;
        ms->heap = xrealloc(ms->heap, sizeof(HeapItem) * (size_t)ms->heap_cap);
    }
    int i = ms->heap_n++;
    HeapItem it = {count, pair};
    while (i > 0 && heap_before(ms, it, ms->heap[(i - 1) / 2])) {
        ms->heap[i] = ms->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    ms->heap[i] = it;
}

static HeapItem heap_pop(MergeState *ms) {
    HeapItem top = ms->heap[0], last = ms->heap[--ms->heap_n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= ms->heap_n) break;
        if (c + 1 < ms->heap_n && heap_before(ms, ms->heap[c + 1], ms->heap[c])) c++;
        if (!heap_before(ms, ms->heap[c], last)) break;
        ms->heap[i] = ms->heap[c];
        i = c;
    }
    if (ms->heap_n > 0) ms->heap[i] = last;
    return top;
}

/* ---- word counting -------------------------------------------------------------- */

WordpieceTrainer *wordpiece_trainer_create(void) {
    WordpieceTrainer *tr = xcalloc(1, sizeof *tr);
    basic_tokenizer_init(&tr->bt, 1);
    strmap_init(&tr->words);
    strmap_init(&tr->tokens);
    return tr;
}

void wordpiece_trainer_free(WordpieceTrainer *tr) {
    if (!tr) return;
    basic_tokenizer_free(&tr->bt);
    strmap_free(&tr->words);
    strmap_free(&tr->tokens);
    free(tr->word_count);
    free(tr->join_buf);
    free(tr);
}

void wordpiece_trainer_set_options(WordpieceTrainer *tr, int cased, int mark_joins) {
    tr->bt.lowercase = !cased;
    tr->mark_joins = mark_joins != 0;
}

void wordpiece_trainer_add_text(WordpieceTrainer *tr, const char *text, size_t len) {
    int nw = basic_tokenize(&tr->bt, text, len);
    for (int i = 0; i < nw; i++) {
        const BasicWord *w = &tr->bt.words[i];
        if (w->nchars > WORDPIECE_MAX_WORD_CHARS) continue;
        const char *key = basic_word(&tr->bt, i);
        size_t klen = w->len;
        if (tr->mark_joins && w->joined) {
            if (klen + VOCAB_CONT_PREFIX_LEN > tr->join_cap)
                tr->join_buf = xrealloc(tr->join_buf, tr->join_cap = 2 * (klen + VOCAB_CONT_PREFIX_LEN));
            memcpy(tr->join_buf, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN);
            memcpy(tr->join_buf + VOCAB_CONT_PREFIX_LEN, key, klen);
            key = tr->join_buf;
            klen += VOCAB_CONT_PREFIX_LEN;
        }
        int added, e = strmap_add(&tr->words, key, klen, &added);
        if (added) {
            if (e == tr->word_cap) {
                tr->word_cap = tr->word_cap ? 2 * tr->word_cap : 4096;
                tr->word_count = xrealloc(tr->word_count, sizeof(int64_t) * (size_t)tr->word_cap);
            }
            tr->word_count[e] = 0;
        }
        tr->word_count[e]++;
        tr->total_words++;
    }
}

int wordpiece_trainer_add_file(WordpieceTrainer *tr, const char *path, long *lines) {
    LineReader r;
    if (lines_open_or_report(&r, path)) return 1;
    char *line;
    size_t len;
    int got;
    while ((got = lines_next(&r, &line, &len)) == 1) wordpiece_trainer_add_text(tr, line, len);
    if (got < 0) lines_report(&r);
    *lines += r.line_no;
    lines_close(&r);
    return got < 0;
}

/* ---- training --------------------------------------------------------------------- */

typedef struct { int cont; int32_t cp; int entry; } AlphaChar;

static int alpha_cmp(const void *x, const void *y) {
    const AlphaChar *a = x, *b = y;
    if (a->cont != b->cont) return a->cont - b->cont;
    return (a->cp > b->cp) - (a->cp < b->cp);
}

/* Specials, then word-initial characters, then "##" characters, each sorted. */
static void wpt_build_alphabet(WordpieceTrainer *tr) {
    for (int i = 0; i < WPT_NUM_SPECIALS; i++) strmap_add(&tr->tokens, WPT_SPECIALS[i], strlen(WPT_SPECIALS[i]), NULL);
    StrMap alpha;
    strmap_init(&alpha);
    char key[VOCAB_CONT_PREFIX_LEN + UTF8_MAX_BYTES];
    memcpy(key, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN);
    for (int w = 0; w < strmap_count(&tr->words); w++) {
        const char *s = strmap_key(&tr->words, w);
        size_t len = strmap_key_len(&tr->words, w);
        for (size_t pos = wpt_body_start(s, len); pos < len;) {
            size_t at = pos;
            utf8_decode(s, len, &pos);
            memcpy(key + VOCAB_CONT_PREFIX_LEN, s + at, pos - at);
            if (at == 0) strmap_add(&alpha, key + VOCAB_CONT_PREFIX_LEN, pos - at, NULL);
            else strmap_add(&alpha, key, VOCAB_CONT_PREFIX_LEN + pos - at, NULL);
        }
    }
    int n = strmap_count(&alpha);
    AlphaChar *chars = xmalloc(sizeof(AlphaChar) * (size_t)(n ? n : 1));
    for (int e = 0; e < n; e++) {
        const char *k = strmap_key(&alpha, e);
        size_t len = strmap_key_len(&alpha, e), pos = 0;
        int cont = len > VOCAB_CONT_PREFIX_LEN && memcmp(k, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN) == 0 &&
                   utf8_count(k, len) > 1;
        if (cont) pos = VOCAB_CONT_PREFIX_LEN;
        chars[e] = (AlphaChar){cont, utf8_decode(k, len, &pos), e};
    }
    qsort(chars, (size_t)n, sizeof *chars, alpha_cmp);
    for (int i = 0; i < n; i++)
        strmap_add(&tr->tokens, strmap_key(&alpha, chars[i].entry), strmap_key_len(&alpha, chars[i].entry), NULL);
    free(chars);
    strmap_free(&alpha);
}

/* Spell every word in single-character symbols and count the adjacent pairs. */
static void wpt_init_words(WordpieceTrainer *tr, MergeState *ms) {
    int W = strmap_count(&tr->words);
    size_t total = 0;
    for (int w = 0; w < W; w++) total += strmap_key_len(&tr->words, w);
    ms->sym = xmalloc(sizeof(int) * (total ? total : 1));
    ms->wstart = xmalloc(sizeof(size_t) * (size_t)(W ? W : 1));
    ms->wlen = xmalloc(sizeof(int) * (size_t)(W ? W : 1));
    ms->stamp = xmalloc(sizeof(int) * (size_t)(W ? W : 1));
    pair_rehash(ms, 1 << 16);
    size_t at = 0;
    for (int w = 0; w < W; w++) {
        const char *s = strmap_key(&tr->words, w);
        size_t len = strmap_key_len(&tr->words, w);
        ms->wstart[w] = at;
        ms->stamp[w] = -1;
        int n = 0;
        for (size_t pos = wpt_body_start(s, len); pos < len;) {
            size_t from = pos;
            utf8_decode(s, len, &pos);
            int id = strmap_find(&tr->tokens, VOCAB_CONT_PREFIX, from ? VOCAB_CONT_PREFIX_LEN : 0, s + from, pos - from);
            CHECK_OR_DIE(id >= 0);
            ms->sym[at + (size_t)n++] = id;
        }
        ms->wlen[w] = n;
        at += (size_t)n;
        for (int i = 0; i + 1 < n; i++) {
            int p = pair_get(ms, ms->sym[ms->wstart[w] + (size_t)i], ms->sym[ms->wstart[w] + (size_t)i + 1]);
            ms->pairs[p].count += tr->word_count[w];
            IntVec *iv = &ms->pairs[p].words;
            if (iv->n == 0 || iv->v[iv->n - 1] != w) intvec_push(iv, w);
        }
    }
    for (int p = 0; p < ms->npairs; p++) heap_push(ms, ms->pairs[p].count, p);
}

/* Replace every (A, B) in word w by N, updating the pair counts. */
static void wpt_merge_word(MergeState *ms, int w, int64_t c, int A, int B, int N, int merge_no) {
    int *s = ms->sym + ms->wstart[w], n = ms->wlen[w], found = 0;
    for (int i = 0; i + 1 < n && !found; i++) found = s[i] == A && s[i + 1] == B;
    if (!found) return;
    for (int i = 0; i + 1 < n; i++) ms->pairs[pair_find(ms, s[i], s[i + 1])].count -= c;
    int k = 0;
    for (int i = 0; i < n;) {
        if (i + 1 < n && s[i] == A && s[i + 1] == B) { s[k++] = N; i += 2; }
        else s[k++] = s[i++];
    }
    ms->wlen[w] = k;
    for (int i = 0; i + 1 < k; i++) {
        int p = pair_get(ms, s[i], s[i + 1]);
        Pair *pr = &ms->pairs[p];
        pr->count += c;
        if (s[i] != N && s[i + 1] != N) continue;
        if (pr->words.n == 0 || pr->words.v[pr->words.n - 1] != w) intvec_push(&pr->words, w);
        if (pr->touched != merge_no) { pr->touched = merge_no; intvec_push(&ms->touched, p); }
    }
}

/* The token a merge of A and B creates: A's text + B's without its "##". */
static int wpt_merged_token(WordpieceTrainer *tr, MergeState *ms, int A, int B) {
    size_t la = strmap_key_len(&tr->tokens, A), lb = strmap_key_len(&tr->tokens, B) - VOCAB_CONT_PREFIX_LEN;
    if (la + lb > ms->scratch_cap) ms->scratch = xrealloc(ms->scratch, ms->scratch_cap = 2 * (la + lb));
    memcpy(ms->scratch, strmap_key(&tr->tokens, A), la);
    memcpy(ms->scratch + la, strmap_key(&tr->tokens, B) + VOCAB_CONT_PREFIX_LEN, lb);
    return strmap_add(&tr->tokens, ms->scratch, la + lb, NULL);
}

static void wpt_apply_merge(WordpieceTrainer *tr, MergeState *ms, int p, int merge_no) {
    int A = ms->pairs[p].a, B = ms->pairs[p].b;
    int N = wpt_merged_token(tr, ms, A, B);
    CHECK_OR_DIE(N != A && N != B);
    ms->touched.n = 0;
    /* Pair p's list never grows here (new pairs all contain N), but ms->pairs may
     * move as pairs are added, so it is re-read through the index every time. */
    for (int i = 0; i < ms->pairs[p].words.n; i++) {
        int w = ms->pairs[p].words.v[i];
        if (ms->stamp[w] == merge_no) continue;
        ms->stamp[w] = merge_no;
        wpt_merge_word(ms, w, tr->word_count[w], A, B, N, merge_no);
    }
    CHECK_OR_DIE(ms->pairs[p].count == 0);
    free(ms->pairs[p].words.v);
    ms->pairs[p].words = (IntVec){0};
    for (int i = 0; i < ms->touched.n; i++) {
        int q = ms->touched.v[i];
        if (ms->pairs[q].count > 0) heap_push(ms, ms->pairs[q].count, q);
    }
}

static void wpt_free_state(MergeState *ms) {
    for (int p = 0; p < ms->npairs; p++) free(ms->pairs[p].words.v);
    free(ms->pairs);
    free(ms->slots);
    free(ms->heap);
    free(ms->touched.v);
    free(ms->sym);
    free(ms->wstart);
    free(ms->wlen);
    free(ms->stamp);
    free(ms->scratch);
}

int wordpiece_trainer_train(WordpieceTrainer *tr, int vocab_size, long min_count) {
    strmap_free(&tr->tokens);
    strmap_init(&tr->tokens);
    tr->num_merges = 0;
    if (min_count < 1) min_count = 1;
    wpt_build_alphabet(tr);
    MergeState ms = {0};
    wpt_init_words(tr, &ms);
    while (strmap_count(&tr->tokens) < vocab_size && ms.heap_n > 0) {
        HeapItem it = heap_pop(&ms);
        int64_t now = ms.pairs[it.pair].count;
        if (now != it.count) {           /* stale entry: re-queue with the true count */
            if (now > 0) heap_push(&ms, now, it.pair);
            continue;
        }
        if (now < min_count) break;
        wpt_apply_merge(tr, &ms, it.pair, tr->num_merges++);
    }
    wpt_free_state(&ms);
    return strmap_count(&tr->tokens);
}

int wordpiece_trainer_num_tokens(const WordpieceTrainer *tr) { return strmap_count(&tr->tokens); }
const char *wordpiece_trainer_token(const WordpieceTrainer *tr, int id) { return strmap_key(&tr->tokens, id); }
long wordpiece_trainer_total_words(const WordpieceTrainer *tr) { return tr->total_words; }
int wordpiece_trainer_distinct_words(const WordpieceTrainer *tr) { return strmap_count(&tr->words); }
int wordpiece_trainer_num_merges(const WordpieceTrainer *tr) { return tr->num_merges; }

int wordpiece_trainer_save(const WordpieceTrainer *tr, const char *path) {
    AtomicFile a;
    FILE *f = atomic_open(&a, path);
    if (!f) return -1;
    for (int i = 0; i < strmap_count(&tr->tokens); i++) {
        fwrite(strmap_key(&tr->tokens, i), 1, strmap_key_len(&tr->tokens, i), f);
        fputc('\n', f);
    }
    return atomic_commit(&a);
}
