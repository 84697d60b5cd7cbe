/* seq2seq_data.c — parallel corpora and length-bucketed batches (see
 * seq2seq_data.h). */
#include "models/seq2seq/seq2seq_data.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/lines.h"
#include "core/rng.h"

/* Mixed into the run seed so the batch streams never coincide with the
 * model's initialisation or dropout streams. */
#define S2S_BATCH_SALT 0x42415443484553ull

static int *s2s_encode_line(SubwordTokenizer *tok, const char *line, size_t len, int *n_out, long *unk) {
    int cap = 64, *ids = xmalloc(sizeof(int) * (size_t)cap);
    int n = subword_encode(tok, line, len, ids, cap);
    if (n > cap) {
        ids = xrealloc(ids, sizeof(int) * (size_t)n);
        subword_encode(tok, line, len, ids, n);
    }
    for (int i = 0; i < n; i++) *unk += ids[i] == tok->sp.unk;
    *n_out = n;
    return ids;
}

static void s2s_corpus_push(S2sCorpus *c, int *cap, int side_tgt, int *ids, int len, const char *text, size_t tlen,
                            int keep) {
    if (!side_tgt && c->n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        c->src = xrealloc(c->src, sizeof(int *) * (size_t)*cap);
        c->tgt = xrealloc(c->tgt, sizeof(int *) * (size_t)*cap);
        c->src_len = xrealloc(c->src_len, sizeof(int) * (size_t)*cap);
        c->tgt_len = xrealloc(c->tgt_len, sizeof(int) * (size_t)*cap);
        if (keep) {
            c->src_text = xrealloc(c->src_text, sizeof(char *) * (size_t)*cap);
            c->tgt_text = xrealloc(c->tgt_text, sizeof(char *) * (size_t)*cap);
        }
    }
    int i = side_tgt ? c->n - 1 : c->n++;
    if (side_tgt) { c->tgt[i] = ids; c->tgt_len[i] = len; }
    else { c->src[i] = ids; c->src_len[i] = len; c->tgt[i] = NULL; c->tgt_len[i] = 0; }
    if (keep) {
        if (side_tgt) c->tgt_text[i] = xstrndup(text, tlen);
        else { c->src_text[i] = xstrndup(text, tlen); c->tgt_text[i] = NULL; }
    }
}

int s2s_corpus_load(S2sCorpus *c, const char *src_path, const char *tgt_path, SubwordTokenizer *tok, int keep_text) {
    memset(c, 0, sizeof *c);
    LineReader rs, rt;
    int have_t = tgt_path != NULL, rc = 0, cap = 0;
    if (lines_open_or_report(&rs, src_path)) return 1;
    if (have_t && lines_open_or_report(&rt, tgt_path)) { lines_close(&rs); return 1; }
    for (;;) {
        char *ls, *lt;
        size_t ns, nt;
        int gs = lines_next(&rs, &ls, &ns), gt = have_t ? lines_next(&rt, &lt, &nt) : gs;
        if (gs < 0) { lines_report(&rs); rc = 1; break; }
        if (gt < 0) { lines_report(&rt); rc = 1; break; }
        if (gs != gt) {
            user_error_data("the two sides of a parallel corpus must have one line per sentence pair",
                       "%s and %s have different numbers of lines", src_path, tgt_path);
            rc = 1;
            break;
        }
        if (gs == 0) break;
        int n, *ids = s2s_encode_line(tok, ls, ns, &n, &c->src_unk);
        s2s_corpus_push(c, &cap, 0, ids, n, ls, ns, keep_text);
        if (have_t) {
            ids = s2s_encode_line(tok, lt, nt, &n, &c->tgt_unk);
            s2s_corpus_push(c, &cap, 1, ids, n, lt, nt, keep_text);
        }
    }
    lines_close(&rs);
    if (have_t) lines_close(&rt);
    if (rc) s2s_corpus_free(c);
    return rc;
}

void s2s_corpus_free(S2sCorpus *c) {
    for (int i = 0; i < c->n; i++) {
        free(c->src[i]);
        free(c->tgt[i]);
        if (c->src_text) { free(c->src_text[i]); free(c->tgt_text[i]); }
    }
    free(c->src); free(c->tgt); free(c->src_len); free(c->tgt_len); free(c->src_text); free(c->tgt_text);
    memset(c, 0, sizeof *c);
}

/* ---- batches ---- */

typedef struct { int s, t, key, idx; } S2sSortItem;

static int s2s_sort_cmp(const void *a, const void *b) {
    const S2sSortItem *x = a, *y = b;
    if (x->s != y->s) return x->s - y->s;
    if (x->t != y->t) return x->t - y->t;
    return x->key - y->key;
}

void s2s_batches_make(S2sBatches *out, const S2sCorpus *c, int max_tokens, int max_len, uint64_t seed, int epoch,
                      int shuffle) {
    memset(out, 0, sizeof *out);
    Rng rng;
    rng_seed_stream(&rng, seed ^ S2S_BATCH_SALT, (uint64_t)epoch);
    int *key = xmalloc(sizeof(int) * (size_t)(c->n ? c->n : 1));
    for (int i = 0; i < c->n; i++) key[i] = i;
    if (shuffle) rng_shuffle_int(&rng, key, c->n);
    S2sSortItem *items = xmalloc(sizeof(S2sSortItem) * (size_t)(c->n ? c->n : 1));
    int m = 0;
    for (int i = 0; i < c->n; i++) {
        int s = c->src_len[i] + 1, t = c->tgt_len[i] + 1;   /* with [SEP] / [CLS] */
        if (s > max_len || t > max_len || s > max_tokens || t > max_tokens) { out->skipped++; continue; }
        items[m++] = (S2sSortItem){s, t, key[i], i};
    }
    qsort(items, (size_t)m, sizeof *items, s2s_sort_cmp);
    out->order = xmalloc(sizeof(int) * (size_t)(m ? m : 1));
    out->start = xmalloc(sizeof(int) * (size_t)(m ? m : 1));
    out->count = xmalloc(sizeof(int) * (size_t)(m ? m : 1));
    int S = 0, T = 0;
    for (int i = 0; i < m; i++) {
        int s = items[i].s, t = items[i].t;
        int nb = out->n > 0 ? out->count[out->n - 1] : 0;
        int S2 = s > S ? s : S, T2 = t > T ? t : T;
        if (out->n == 0 || (long)(nb + 1) * S2 > max_tokens || (long)(nb + 1) * T2 > max_tokens) {
            out->start[out->n] = i;
            out->count[out->n++] = 0;
            S2 = s;
            T2 = t;
        }
        out->count[out->n - 1]++;
        S = S2;
        T = T2;
        out->order[i] = items[i].idx;
        out->max_len = s > out->max_len ? s : out->max_len;
        out->max_len = t > out->max_len ? t : out->max_len;
    }
    if (shuffle && out->n > 1) {
        int *perm = xmalloc(sizeof(int) * (size_t)out->n), *st = xmalloc(sizeof(int) * (size_t)out->n),
            *ct = xmalloc(sizeof(int) * (size_t)out->n);
        for (int b = 0; b < out->n; b++) perm[b] = b;
        rng_shuffle_int(&rng, perm, out->n);
        for (int b = 0; b < out->n; b++) { st[b] = out->start[perm[b]]; ct[b] = out->count[perm[b]]; }
        free(out->start); free(out->count); free(perm);
        out->start = st;
        out->count = ct;
    }
    free(key);
    free(items);
}

void s2s_batches_free(S2sBatches *b) {
    free(b->order); free(b->start); free(b->count);
    memset(b, 0, sizeof *b);
}

void s2s_batch_buf_init(S2sBatchBuf *buf, int max_tokens) {
    size_t n = (size_t)max_tokens;
    buf->src = xmalloc(sizeof(int) * n);
    buf->src_len = xmalloc(sizeof(int) * n);
    buf->tgt_in = xmalloc(sizeof(int) * n);
    buf->tgt_out = xmalloc(sizeof(int) * n);
    buf->tgt_len = xmalloc(sizeof(int) * n);
}

void s2s_batch_buf_free(S2sBatchBuf *buf) {
    free(buf->src); free(buf->src_len); free(buf->tgt_in); free(buf->tgt_out); free(buf->tgt_len);
    memset(buf, 0, sizeof *buf);
}

S2sBatch s2s_batch_fill(S2sBatchBuf *buf, const S2sCorpus *c, const VocabSpecials *sp, const int *idx, int n) {
    int S = 0, T = 0;
    for (int b = 0; b < n; b++) {
        int i = idx[b];
        S = c->src_len[i] + 1 > S ? c->src_len[i] + 1 : S;
        T = c->tgt_len[i] + 1 > T ? c->tgt_len[i] + 1 : T;
    }
    for (int b = 0; b < n; b++) {
        int i = idx[b], ns = c->src_len[i], nt = c->tgt_len[i];
        buf->src_len[b] = ns + 1;
        buf->tgt_len[b] = nt + 1;
        for (int s = 0; s < S; s++) buf->src[b * S + s] = s < ns ? c->src[i][s] : s == ns ? sp->sep : sp->pad;
        for (int t = 0; t < T; t++) {
            buf->tgt_in[b * T + t] = t == 0 ? sp->cls : t <= nt ? c->tgt[i][t - 1] : sp->pad;
            buf->tgt_out[b * T + t] = t < nt ? c->tgt[i][t] : t == nt ? sp->sep : -1;
        }
    }
    return (S2sBatch){.B = n, .S = S, .T = T, .src = buf->src, .src_len = buf->src_len, .tgt_in = buf->tgt_in,
                      .tgt_out = buf->tgt_out, .tgt_len = buf->tgt_len};
}
