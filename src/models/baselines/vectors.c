/* vectors.c — skip-gram and CBOW word vectors with character n-grams (see
 * vectors.h): corpus reading, vocabulary and subwords, the Hogwild SGD job,
 * the .vec file; GloVe's training is vectors_glove.c, on the same corpus.
 *
 * Reuse: the vocabulary and the word ids of every line come from
 * word_features (word_dict.h underneath, with the basic tokenizer), the char
 * n-gram hashing from text/ngrams (the reference's buckets, bit for bit), the
 * worker pool of core/workers.h. */
#include "models/baselines/vectors.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/threads.h"
#include "core/vec.h"
#include "core/workers.h"
#include "models/baselines/vectors_glove.h"
#include "models/baselines/word_features.h"
#include "text/ngrams.h"

/* The reference's constants: negatives table size, how often (in tokens) a
 * worker publishes its progress for the learning rate, the sigmoid's range. */
#define VEC_NEG_TABLE 10000000
#define VEC_LR_UPDATE 100
#define VEC_MAX_SIGMOID 8.0f

VecConfig vectors_default_config(void) {
    return (VecConfig){.method = VEC_SKIPGRAM, .dim = 300, .epochs = 5, .lr = 0.05, .window = 5, .neg = 5,
                       .min_count = 5, .minn = 3, .maxn = 6, .bucket = 2000000, .sample = 1e-4, .max_words = 0,
                       .threads = 0, .seed = 1, .x_max = 100, .alpha = 0.75};
}

const char *const VEC_METHODS[] = {"skipgram", "cbow", "glove", NULL};

typedef struct SkipGram {
    const VecConfig *c;
    int V;                       /* word ids 0..V-1; the reserved ones (pad, unk) are never trained */
    long rows;                   /* V + bucket */
    int D;
    float *wi;                   /* (rows, D) input rows: words then n-gram buckets */
    float *wo;                   /* (V, D) output rows */
    int64_t *sub_off;            /* (V + 1) word i's input rows: sub[sub_off[i] .. sub_off[i+1]) */
    int32_t *sub;
    float *pdiscard;             /* (V) keep probability */
    int32_t *neg_table;
    long neg_size;
    const WordSeqs *text;        /* the corpus as word ids, one row per line */
    int max_line;                /* longest line, in words */
    int64_t total;               /* tokens of one epoch */
    _Atomic long long done;      /* tokens processed by all workers (learning rate, progress) */
    int workers;
    float *scratch;              /* (workers, stride) hidden (D), grad (D) */
    int32_t *kept;               /* (workers, max_line) a line after subsampling */
    int32_t *bag;                /* (workers, bag_cap) CBOW: the input rows of a context */
    long bag_cap;
    long stride;
    double *loss;                /* (workers, WORKER_DOUBLES_PER_LINE) [0] sum, [1] count: last epoch */
    Progress bar;
} SkipGram;

/* ---- corpus ---- */

/* WikiExtractor's article markers are not text. */
static int corpus_skip(const char *line) {
    return line[0] == '\0' || strncmp(line, "<doc ", 5) == 0 || strcmp(line, "</doc>") == 0;
}

/* Appends the lines of one file to d until *words reaches max_words (0: no
 * limit). 0 ok, 1 after a message. */
static int corpus_read(const char *path, long max_words, Dataset *d, int *cap, long *words) {
    LineReader r;
    if (lines_open_or_report(&r, path)) return 1;
    char *line;
    size_t len;
    int got;
    while ((max_words <= 0 || *words < max_words) && (got = lines_next(&r, &line, &len)) == 1) {
        if (corpus_skip(line)) continue;
        size_t pos = 0, start, wlen;
        while (ngram_next_word(line, len, &pos, &start, &wlen)) ++*words;
        if (d->n == *cap) {
            *cap = 2 * *cap + 1024;
            d->ex = xrealloc(d->ex, (size_t)*cap * sizeof *d->ex);
        }
        d->ex[d->n++] = (Example){.a = xstrndup(line, len), .label = -1, .line = r.line_no};
    }
    int bad = max_words > 0 && *words >= max_words ? 0 : got < 0;
    if (bad) lines_report(&r);
    lines_close(&r);
    return bad;
}

/* ---- model ---- */

/* Input rows of every word: its own, then its char n-gram buckets (after V). */
static void sg_subwords(SkipGram *g, const WordVocab *v) {
    const VecConfig *c = g->c;
    g->sub_off = xmalloc(((size_t)g->V + 1) * sizeof *g->sub_off);
    long cap = 1024, n = 0;
    g->sub = xmalloc((size_t)cap * sizeof *g->sub);
    for (int i = 0; i < g->V; i++) {
        g->sub_off[i] = n;
        const char *w = word_vocab_word(v, i);
        size_t len = strlen(w);
        int k = c->maxn > 0 ? ngram_char_ngrams(w, len, c->minn, c->maxn, (uint64_t)c->bucket, NULL, 0) : 0;
        if (n + 1 + k > cap) {
            cap = 2 * (n + 1 + k);
            g->sub = xrealloc(g->sub, (size_t)cap * sizeof *g->sub);
        }
        g->sub[n++] = i;
        if (k) ngram_char_ngrams(w, len, c->minn, c->maxn, (uint64_t)c->bucket, g->sub + n, k);
        for (int j = 0; j < k; j++) g->sub[n + j] += g->V;
        n += k;
    }
    g->sub_off[g->V] = n;
}

/* U(-1/D, 1/D) for every input row some word uses, each row from its own
 * stream (so a row's start does not depend on the others); the rest of the
 * calloc'd table is never touched and costs no memory. */
static void sg_init(SkipGram *g) {
    g->wi = xcalloc((size_t)g->rows * g->D, sizeof *g->wi);
    g->wo = xcalloc((size_t)g->V * g->D, sizeof *g->wo);
    unsigned char *ready = xcalloc((size_t)g->rows, 1);
    for (int64_t i = g->sub_off[WF_NUM_RESERVED]; i < g->sub_off[g->V]; i++) {
        long r = g->sub[i];
        if (ready[r]) continue;
        ready[r] = 1;
        Rng rng;
        rng_seed_stream(&rng, g->c->seed, (uint64_t)r);
        float *w = g->wi + (size_t)r * g->D;
        for (int j = 0; j < g->D; j++) w[j] = (2.0f * rng_uniform(&rng) - 1.0f) / (float)g->D;
    }
    free(ready);
}

/* Subsampling and the negatives table (counts^0.5, shuffled), as the reference. */
static void sg_tables(SkipGram *g, const WordVocab *v) {
    const int64_t *count = v->dict.count;
    int64_t ntok = 0;
    for (int i = WF_NUM_RESERVED; i < g->V; i++) ntok += count[i];
    g->pdiscard = xmalloc((size_t)g->V * sizeof *g->pdiscard);
    double z = 0;
    for (int i = 0; i < g->V; i++) {
        double f = ntok ? (double)count[i] / (double)ntok : 0, t = g->c->sample;
        g->pdiscard[i] = f > 0 && t > 0 ? (float)(sqrt(t / f) + t / f) : 1.0f;
        if (i >= WF_NUM_RESERVED) z += sqrt((double)count[i]);
    }
    g->neg_table = xmalloc((size_t)VEC_NEG_TABLE * sizeof *g->neg_table);
    long n = 0;
    for (int i = WF_NUM_RESERVED; i < g->V; i++) {
        double share = sqrt((double)count[i]) * VEC_NEG_TABLE / z;
        for (long j = 0; j < share && n < VEC_NEG_TABLE; j++) g->neg_table[n++] = i;
    }
    g->neg_size = n;
    Rng rng;
    rng_seed_stream(&rng, g->c->seed, UINT64_MAX);
    rng_shuffle_int(&rng, g->neg_table, (int)n);
}

static void sg_free(SkipGram *g) {
    free(g->wi); free(g->wo); free(g->sub_off); free(g->sub); free(g->pdiscard); free(g->neg_table);
    free(g->scratch); free(g->kept); free(g->bag); free(g->loss);
}

/* ---- training ---- */

static float sg_sigmoid(float x) {
    if (x < -VEC_MAX_SIGMOID) return 0.0f;
    if (x > VEC_MAX_SIGMOID) return 1.0f;
    return 1.0f / (1.0f + expf(-x));
}

/* One logistic loss on output row `target`: grad += dL/dh scaled by lr, the
 * output row updated. Returns the loss. */
static float sg_logistic(SkipGram *g, const float *h, float *grad, int target, int label, float lr) {
    float *o = g->wo + (size_t)target * g->D;
    float score = sg_sigmoid(vec_dot(o, h, g->D)), alpha = lr * ((float)label - score);
    vec_axpy(grad, alpha, o, g->D);
    vec_axpy(o, alpha, h, g->D);
    return -logf((label ? score : 1.0f - score) + 1e-5f);
}

typedef struct {
    Rng rng;
    long negpos;
    float *h, *grad;
} SgWorker;

/* The mean of input rows[0..nr) predicts word `target` with neg negatives;
 * every row gets the whole gradient (as the reference, for both methods).
 * Returns the loss. */
static float sg_update(SkipGram *g, SgWorker *s, const int32_t *rows, int nr, int target, float lr) {
    int D = g->D;
    memset(s->h, 0, (size_t)D * sizeof *s->h);
    for (int i = 0; i < nr; i++) vec_axpy(s->h, 1.0f, g->wi + (size_t)rows[i] * D, D);
    for (int j = 0; j < D; j++) s->h[j] /= (float)nr;
    memset(s->grad, 0, (size_t)D * sizeof *s->grad);
    float loss = sg_logistic(g, s->h, s->grad, target, 1, lr);
    for (int k = 0; k < g->c->neg; k++) {
        int negative;
        do negative = g->neg_table[s->negpos++ % g->neg_size];
        while (negative == target);
        loss += sg_logistic(g, s->h, s->grad, negative, 0, lr);
    }
    for (int i = 0; i < nr; i++) vec_axpy(g->wi + (size_t)rows[i] * D, 1.0f, s->grad, D);
    return loss;
}

/* Skip-gram over one line: each kept word predicts its neighbours. */
static void sg_line(SkipGram *g, SgWorker *s, int32_t *kept, int nk, float lr, double *loss) {
    for (int w = 0; w < nk; w++) {
        int b = 1 + (int)rng_below(&s->rng, (uint32_t)g->c->window);
        const int32_t *rows = g->sub + g->sub_off[kept[w]];
        int nr = (int)(g->sub_off[kept[w] + 1] - g->sub_off[kept[w]]);
        for (int c = -b; c <= b; c++) {
            if (c == 0 || w + c < 0 || w + c >= nk) continue;
            loss[0] += sg_update(g, s, rows, nr, kept[w + c], lr);
            loss[1] += 1;
        }
    }
}

/* CBOW over one line (Mikolov et al. 2013; fastText `cbow`): the mean of the
 * input rows of all words within a random window of 1..window on each side
 * (their own rows and n-gram rows together) predicts the centre word. */
static void cbow_line(SkipGram *g, SgWorker *s, int32_t *bag, int32_t *kept, int nk, float lr, double *loss) {
    for (int w = 0; w < nk; w++) {
        int b = 1 + (int)rng_below(&s->rng, (uint32_t)g->c->window), nb = 0;
        for (int c = -b; c <= b; c++) {
            if (c == 0 || w + c < 0 || w + c >= nk) continue;
            for (int64_t i = g->sub_off[kept[w + c]]; i < g->sub_off[kept[w + c] + 1]; i++) bag[nb++] = g->sub[i];
        }
        if (nb == 0) continue;   /* a one-word line has no context */
        loss[0] += sg_update(g, s, bag, nb, kept[w], lr);
        loss[1] += 1;
    }
}

/* Worker k: its share of the lines, every epoch. */
static void sg_job(void *arg, int k) {
    SkipGram *g = arg;
    const WordSeqs *t = g->text;
    SgWorker s = {.h = g->scratch + k * g->stride, .grad = g->scratch + k * g->stride + g->D};
    rng_seed_stream(&s.rng, g->c->seed, (uint64_t)k + 1);
    s.negpos = (long)rng_below(&s.rng, (uint32_t)g->neg_size);
    int32_t *kept = g->kept + (long)k * g->max_line, *bag = g->bag + k * g->bag_cap;
    double *loss = g->loss + (long)k * WORKER_DOUBLES_PER_LINE;
    int lo = (int)((long)t->n * k / g->workers), hi = (int)((long)t->n * (k + 1) / g->workers);
    double planned = (double)g->total * g->c->epochs;
    long local = 0;
    for (int ep = 0; ep < g->c->epochs; ep++) {
        if (ep == 1) {   /* [2], [3]: the first epoch's, to show the decrease */
            loss[2] = loss[0];
            loss[3] = loss[1];
        }
        loss[0] = loss[1] = 0;   /* the report is the last epoch's mean */
        for (int r = lo; r < hi; r++) {
            const int32_t *ids = word_seqs_a(t, r);
            int nk = 0;
            for (int i = 0; i < t->len_a[r]; i++)   /* unknown words dropped, frequent ones subsampled */
                if (ids[i] >= WF_NUM_RESERVED && rng_uniform(&s.rng) <= g->pdiscard[ids[i]]) kept[nk++] = ids[i];
            double progress = (double)atomic_load_explicit(&g->done, memory_order_relaxed) / planned;
            float lr = (float)(g->c->lr * (1.0 - (progress < 1 ? progress : 1)));
            if (g->c->method == VEC_CBOW) cbow_line(g, &s, bag, kept, nk, lr, loss);
            else sg_line(g, &s, kept, nk, lr, loss);
            local += t->len_a[r];
            if (local >= VEC_LR_UPDATE) {
                long long d = atomic_fetch_add_explicit(&g->done, local, memory_order_relaxed) + local;
                local = 0;
                if (k == 0 && g->c->show_progress)
                    progress_update(&g->bar, (long)d, "lr %.5f  loss %.4f", lr, loss[1] ? loss[0] / loss[1] : 0.0);
            }
        }
    }
    atomic_fetch_add_explicit(&g->done, local, memory_order_relaxed);
}

static void sg_train(SkipGram *g) {
    Workers *w = workers_create(g->c->threads);
    g->workers = workers_count(w);
    g->stride = (2L * g->D + WORKER_FLOATS_PER_LINE - 1) / WORKER_FLOATS_PER_LINE * WORKER_FLOATS_PER_LINE;
    g->scratch = xaligned_alloc((size_t)g->workers * g->stride * sizeof *g->scratch);
    g->kept = xmalloc((size_t)g->workers * (g->max_line + 1) * sizeof *g->kept);
    int64_t most = 1;   /* input rows of the word with the most n-grams */
    for (int i = 0; i < g->V; i++)
        if (g->sub_off[i + 1] - g->sub_off[i] > most) most = g->sub_off[i + 1] - g->sub_off[i];
    g->bag_cap = g->c->method == VEC_CBOW ? 2L * g->c->window * most : 1;
    g->bag = xmalloc((size_t)g->workers * g->bag_cap * sizeof *g->bag);
    g->loss = xaligned_alloc((size_t)g->workers * WORKER_DOUBLES_PER_LINE * sizeof *g->loss);
    atomic_store(&g->done, 0);
    if (g->c->show_progress) {
        progress_start(&g->bar, VEC_METHODS[g->c->method], (long)(g->total * g->c->epochs), PROGRESS_AUTO);
        g->bar.unit = "words";
    }
    workers_run(w, sg_job, g);
    workers_free(w);
}

/* ---- output ---- */

/* "V D" then "word v1 ... vD" per word, a word being the mean of its input
 * rows; through path.tmp so a failed write leaves no half file. */
static int sg_write(const SkipGram *g, const WordVocab *v, const char *path) {
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return -1;
    float *vec = xmalloc((size_t)g->D * sizeof *vec);
    fprintf(f, "%d %d\n", g->V - WF_NUM_RESERVED, g->D);
    for (int i = WF_NUM_RESERVED; i < g->V; i++) {
        int64_t lo = g->sub_off[i], hi = g->sub_off[i + 1];
        memset(vec, 0, (size_t)g->D * sizeof *vec);
        for (int64_t j = lo; j < hi; j++) vec_axpy(vec, 1.0f, g->wi + (size_t)g->sub[j] * g->D, g->D);
        fputs(word_vocab_word(v, i), f);
        for (int d = 0; d < g->D; d++) fprintf(f, " %.5g", vec[d] / (float)(hi - lo));
        fputc('\n', f);
    }
    free(vec);
    return atomic_commit(&out);
}

/* ---- the whole job ---- */

static int vec_check(const VecConfig *c) {
    const char *bad = c->dim < 1 || c->dim > 4096                 ? "--dim must be in 1..4096"
                      : c->epochs < 1                              ? "--epochs must be at least 1"
                      : !(c->lr > 0 && c->lr < 100)                ? "--lr must be a positive number"
                      : c->window < 1 || c->neg < 1                ? "--window and --neg must be at least 1"
                      : c->min_count < 1                           ? "--min-count must be at least 1"
                      : c->maxn < 0 || (c->maxn > 0 && (c->minn < 1 || c->minn > c->maxn))
                          ? "need 1 <= --minn <= --maxn (or --maxn 0: no char n-grams)"
                      : c->maxn > 0 && (c->bucket < 1 || c->bucket > (1L << 30)) ? "--bucket must be in 1..2^30"
                      : !(c->sample >= 0)                          ? "--sample must not be negative"
                      : c->threads < 0 || c->max_words < 0         ? "--threads and --max-words must not be negative"
                      : c->method < 0 || c->method > VEC_GLOVE     ? "--method must be skipgram, cbow or glove"
                      : !(c->x_max > 0) || !(c->alpha > 0 && c->alpha <= 1) ? "need --x-max > 0 and 0 < --alpha <= 1"
                                                                   : NULL;
    if (bad) user_error("see glue vectors --help", "vectors: %s", bad);
    return bad ? 2 : 0;
}

int vectors_train(const VecConfig *cfg, const char *const *corpora, int ncorpora, const char *out_path, VecStats *st) {
    VecConfig c = *cfg;
    int rc = vec_check(&c);
    if (rc) return rc;
    if (c.threads == 0) c.threads = threads_count();
    if (c.maxn == 0) c.bucket = 0;
    Dataset d = {0};
    int cap = 0;
    long words = 0;
    for (int i = 0; i < ncorpora && rc == 0; i++) rc = corpus_read(corpora[i], c.max_words, &d, &cap, &words);
    WordVocab v = {0};
    const char *source = ncorpora > 1 ? "the corpus files" : corpora[0];
    if (rc == 0 && word_vocab_build_from(&v, &d, c.min_count, source, "--min-count 1") != 0) rc = 1;
    WordSeqs *text = rc == 0 ? word_seqs_encode(&v, &d, 1 << 30) : NULL;
    long lines = d.n;
    dataset_free(&d);
    if (rc) {
        word_vocab_free(&v);
        return rc;
    }
    if (c.method == VEC_GLOVE) {
        rc = glove_train(&c, &v, text, out_path, st);
        if (st) st->lines = lines;
        word_seqs_free(text);
        word_vocab_free(&v);
        return rc;
    }
    SkipGram g = {.c = &c, .V = word_vocab_size(&v), .D = c.dim, .text = text, .total = text->tokens};
    g.rows = g.V + c.bucket;
    for (int r = 0; r < text->n; r++)
        if (text->len_a[r] > g.max_line) g.max_line = text->len_a[r];
    double t0 = now_seconds();
    sg_subwords(&g, &v);
    sg_tables(&g, &v);
    sg_init(&g);
    sg_train(&g);
    double secs = now_seconds() - t0, lsum = 0, ln = 0, fsum = 0, fn = 0;
    for (int k = 0; k < g.workers; k++) {
        const double *l = g.loss + k * WORKER_DOUBLES_PER_LINE;
        lsum += l[0];
        ln += l[1];
        fsum += c.epochs > 1 ? l[2] : l[0];
        fn += c.epochs > 1 ? l[3] : l[1];
    }
    if (c.show_progress) {
        g.bar.done = (long)atomic_load(&g.done);
        progress_finish(&g.bar, "loss %.4f", ln ? lsum / ln : 0.0);
    }
    /* No (word, context) pair at all: the vectors would be their random
     * initialisation. Refused, as GloVe refuses a corpus without co-occurrences. */
    if (ln == 0 && c.sample > 0)
        user_error_data("give more text, or --sample 0 (it keeps every occurrence)",
                        "vectors: no word was trained: every line has one word, or subsampling (--sample %g) "
                        "discarded the words around it", c.sample);
    else if (ln == 0)
        user_error_data("give more text: lines of two words or more", "vectors: no word was trained: every line has one word");
    rc = ln == 0 ? 1 : sg_write(&g, &v, out_path) ? 1 : 0;
    if (st) *st = (VecStats){.lines = lines, .words = (long)text->tokens, .vocab = g.V - WF_NUM_RESERVED,
                             .loss = ln ? lsum / ln : 0, .loss_first = fn ? fsum / fn : 0, .seconds = secs};
    sg_free(&g);
    word_seqs_free(text);
    word_vocab_free(&v);
    return rc;
}
