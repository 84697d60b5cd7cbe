/* seq2seq_attn_beam.c — decoding label sequences and what the model reports
 * (see seq2seq_attn.h).
 *
 * Beam search, all rows of a batch at once (n rows x beam hypotheses, one
 * decoder step for all of them per position): every live hypothesis
 * proposes each token its prefix allows — a label of lower train frequency
 * than its last (multi-label: so a set is one sequence, as trained; at most
 * max_labels of them), or _END (single-label: exactly one label, then _END).
 * An _END candidate is a finished hypothesis, kept among the row's `beam`
 * best finished ones; the label candidates, best first (ties: the lower
 * hypothesis, then the lower token), fill the next beam. Scores are summed
 * log-probabilities (no length penalty: brightmart's decoder has none, and a
 * label set's length is what is being decided). Every prefix strictly grows
 * in rank, so the search ends after at most max_labels + 1 steps; with a
 * beam as wide as the number of prefixes it is exhaustive (the tests compare
 * it with brute force). The translation model's beam (models/seq2seq/) is
 * bound to its transformer's key/value caches and its subword vocabulary;
 * what carries over is the rule that finished hypotheses leave the beam and
 * the deterministic tie order. */
#include "models/baselines/seq2seq_attn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "nn/softmax_xent.h"

typedef struct {
    double score;
    int nlab;
    int lab[TASK_MAX_LABELS];
} SaHyp;

typedef struct {
    double score;
    int hyp, tok;
} SaCand;

static int sa_cand_cmp(const void *a, const void *b) {
    const SaCand *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->hyp != y->hyp) return x->hyp - y->hyp;
    return x->tok - y->tok;
}

/* Keeps fin (count *nf, at most beam) the best finished hypotheses, best first. */
static void sa_finish(SaHyp *fin, int *nf, int beam, const SaHyp *h, double score) {
    int at = *nf;
    while (at > 0 && fin[at - 1].score < score) at--;
    if (at >= beam) return;
    int last = *nf < beam ? *nf : beam - 1;
    memmove(fin + at + 1, fin + at, sizeof *fin * (size_t)(last - at));
    fin[at] = *h;
    fin[at].score = score;
    if (*nf < beam) (*nf)++;
}

/* The row's candidates from its live hypotheses' log-probabilities; _END ones
 * go to fin. Returns the label candidates' count. */
static int sa_candidates(const Seq2SeqAttn *m, const SaHyp *live, int nlive, const float *logp, int beam, SaHyp *fin,
                         int *nf, SaCand *cand) {
    int K = m->K, END = m->K, maxl = m->multi ? m->cfg.max_labels : 1, nc = 0;
    if (maxl > K) maxl = K;
    for (int h = 0; h < nlive; h++) {
        const SaHyp *y = &live[h];
        const float *lp = logp + (long)h * m->Vo;
        if (m->multi || y->nlab == 1) sa_finish(fin, nf, beam, y, y->score + lp[END]);
        if (y->nlab >= maxl) continue;
        int from = y->nlab ? m->rank[y->lab[y->nlab - 1]] + 1 : 0;
        for (int rk = from; rk < K; rk++) {
            int c = m->order[rk];
            cand[nc++] = (SaCand){y->score + lp[c], h, c};
        }
    }
    return nc;
}

/* Beam search of one batch already encoded (sa_encode_batch): fin (n, beam)
 * and nf (n) the finished hypotheses of each row, best first. */
static void sa_beam(Seq2SeqAttn *m, int n, int beam, SaHyp *fin, int *nf) {
    int S = m->S, Vo = m->Vo, R = n * beam;
    SaHyp *live = xcalloc((size_t)R, sizeof *live), *next = xcalloc((size_t)R, sizeof *next);
    int *nlive = xcalloc((size_t)n, sizeof *nlive), *mem = xmalloc(sizeof(int) * (size_t)R);
    int *y = xmalloc(sizeof(int) * (size_t)R);
    float *s = xcalloc((size_t)R * S, sizeof(float)), *s2 = xcalloc((size_t)R * S, sizeof(float));
    float *snext = xcalloc((size_t)R * S, sizeof(float)), *logp = xmalloc(sizeof(float) * (size_t)R * Vo);
    float *work = xmalloc(sizeof(float) * (size_t)sa_decode_work_size(m, R));
    SaCand *cand = xmalloc(sizeof *cand * (size_t)beam * m->K + sizeof *cand);
    float *s0 = xmalloc(sizeof(float) * (size_t)n * S);
    sa_initial_state(m, s0);   /* each row's first hypothesis */
    for (int i = 0; i < n; i++) {
        nlive[i] = 1;
        nf[i] = 0;
        memcpy(s + (long)i * beam * S, s0 + (long)i * S, sizeof(float) * (size_t)S);
    }
    for (int r = 0; r < R; r++) mem[r] = r / beam;
    for (int step = 0;; step++) {
        int any = 0;
        for (int r = 0; r < R; r++) {
            const SaHyp *h = &live[r];
            int i = r / beam, alive = r % beam < nlive[i];
            y[r] = alive && h->nlab ? h->lab[h->nlab - 1] : m->K;   /* _GO */
            any |= alive;
        }
        if (!any) break;
        CHECK_OR_DIE(step <= TASK_MAX_LABELS);
        sa_decode_step(m, R, mem, s, y, snext, logp, work);
        for (int r = 0; r < R; r++) {   /* log-softmax */
            float *l = logp + (long)r * Vo, mx = l[0];
            for (int k = 1; k < Vo; k++) mx = l[k] > mx ? l[k] : mx;
            double z = 0;
            for (int k = 0; k < Vo; k++) z += exp((double)l[k] - mx);
            for (int k = 0; k < Vo; k++) l[k] = (float)(l[k] - mx - log(z));
        }
        for (int i = 0; i < n; i++) {
            SaHyp *row = live + (long)i * beam;
            int nc = sa_candidates(m, row, nlive[i], logp + (long)i * beam * Vo, beam, fin + (long)i * beam, &nf[i], cand);
            qsort(cand, (size_t)nc, sizeof *cand, sa_cand_cmp);
            int keep = nc < beam ? nc : beam;
            for (int k = 0; k < keep; k++) {
                SaHyp *h = &next[(long)i * beam + k];
                *h = row[cand[k].hyp];
                h->lab[h->nlab++] = cand[k].tok;
                h->score = cand[k].score;
                memcpy(s2 + ((long)i * beam + k) * S, snext + ((long)i * beam + cand[k].hyp) * S, sizeof(float) * (size_t)S);
            }
            nlive[i] = keep;
        }
        SaHyp *th = live; live = next; next = th;
        float *ts = s; s = s2; s2 = ts;
    }
    free(live); free(next); free(nlive); free(mem); free(y); free(s); free(s2); free(snext); free(logp); free(work);
    free(cand); free(s0);
}

void sa_decode(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n, int beam, float *out, unsigned char *best) {
    int K = m->K;
    if (n == 0) return;
    sa_encode_batch(m, s, rows, n);
    SaHyp *fin = xcalloc((size_t)n * beam, sizeof *fin);
    int *nf = xcalloc((size_t)n, sizeof *nf);
    sa_beam(m, n, beam, fin, nf);
    for (int i = 0; i < n; i++) {
        const SaHyp *f = fin + (long)i * beam;
        float *o = out + (long)i * K;
        memset(o, 0, sizeof(float) * (size_t)K);
        if (best) memset(best + (long)i * K, 0, (size_t)K);
        CHECK_OR_DIE(nf[i] >= 1);
        double z = 0;
        for (int h = 0; h < nf[i]; h++) z += exp(f[h].score - f[0].score);
        for (int h = 0; h < nf[i]; h++) {
            double p = exp(f[h].score - f[0].score) / z;
            for (int k = 0; k < f[h].nlab; k++) o[f[h].lab[k]] += (float)p;
        }
        if (best)
            for (int k = 0; k < f[0].nlab; k++) best[(long)i * K + f[0].lab[k]] = 1;
    }
    free(fin);
    free(nf);
}

/* Single-label: the first step's distribution over the labels. */
static void sa_first_step(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n, float *out) {
    int S = m->S, Vo = m->Vo, K = m->K;
    sa_encode_batch(m, s, rows, n);
    float *s0 = xmalloc(sizeof(float) * (size_t)n * S), *s1 = xmalloc(sizeof(float) * (size_t)n * S);
    float *logits = xmalloc(sizeof(float) * (size_t)n * Vo);
    float *work = xmalloc(sizeof(float) * (size_t)sa_decode_work_size(m, n));
    int *y = xmalloc(sizeof(int) * (size_t)n);
    sa_initial_state(m, s0);
    for (int i = 0; i < n; i++) y[i] = m->K;   /* _GO */
    sa_decode_step(m, n, NULL, s0, y, s1, logits, work);
    for (int i = 0; i < n; i++) {
        memcpy(out + (long)i * K, logits + (long)i * Vo, sizeof(float) * (size_t)K);   /* without _END */
        softmax_row(out + (long)i * K, K);
    }
    free(s0); free(s1); free(logits); free(work); free(y);
}

void sa_predict_ops(Model *model, const Encoded *e, const int *rows, int n, float *out) {
    Seq2SeqAttn *m = (Seq2SeqAttn *)model;
    const WordSeqs *s = ((const SaEncoded *)e)->words;
    int cap = m->cfg.eval_batch;
    for (int lo = 0; lo < n; lo += cap) {   /* in eval_batch chunks: the workspace stays that size */
        int k = n - lo < cap ? n - lo : cap;
        if (m->multi) sa_decode(m, s, rows + lo, k, m->cfg.beam, out + (long)lo * m->K, NULL);
        else sa_first_step(m, s, rows + lo, k, out + (long)lo * m->K);
    }
}
