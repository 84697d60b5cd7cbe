/* test_pretrain_data.c — the pretraining data path, model-free: corpus formats
 * (WikiExtractor, Brown, WikiText, plain text with blank-line documents, gzip,
 * read errors), the token cache (equal to tokenizing each line directly,
 * shards cut at document ends, the same bytes for 1 and 2 threads, stale
 * (other corpus content or vocabulary) and corrupt caches), packing and shuffling of sequences (each token exactly once
 * per epoch, word boundaries, exact resume from a saved position), BERT's
 * masking rules and statistics, and masked-LM batches. */
#include "tests/scratch.h"
#include "tests/test.h"

#include "core/common.h"
#include "pretrain/corpus.h"
#include "pretrain/masking.h"
#include "pretrain/mlm_batch.h"
#include "pretrain/pretrain_config.h"
#include "pretrain/stream.h"
#include "pretrain/token_cache.h"
#include "tests/capture.h"
#include "text/tokenizer.h"

#include <cjson/cJSON.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- fixtures ---- */

typedef struct {
    char dir[SCRATCH_PATH_MAX];
} TmpDir;

static int tmp_make(TmpDir *d) {
    return scratch_dir("pretrain", d->dir, sizeof d->dir);
}

static void tmp_free(TmpDir *d) {
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    CHECK(system(cmd) == 0);
}

/* dir/name with the given text, gzipped when the name ends in .gz. */
static void write_text(const TmpDir *d, const char *name, const char *text, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", d->dir, name);
    size_t n = strlen(name), len = strlen(text);
    if (n > 3 && strcmp(name + n - 3, ".gz") == 0) {
        gzFile g = gzopen(path, "wb");
        if (!g || gzwrite(g, text, (unsigned)len) != (int)len || gzclose(g) != Z_OK) DIE("cannot write %s", path);
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f)) DIE("cannot write %s", path);
}

static const char *const WORDS[] = {"the", "cat", "sat", "on", "mat", "dog", "ran", "a", "big", "red", "house",
                                    "runs", "running", "unbelievable", "tree", "and", ".", ","};
#define NUM_WORDS ((int)(sizeof WORDS / sizeof WORDS[0]))

/* A small WordPiece vocabulary: specials, whole words, and pieces that make
 * "runs" = run ##s, "running" = run ##ning, "unbelievable" = un ##believ ##able. */
static const char *const VOCAB[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on",
                                    "mat", "dog", "ran", "a", "big", "red", "house", "run", "##s", "##ning",
                                    "un", "##believ", "##able", "tree", "and", ".", ",", "zebra", "##zz"};
#define NUM_VOCAB ((int)(sizeof VOCAB / sizeof VOCAB[0]))

static void write_vocab(const TmpDir *d, char *path, size_t cap) {
    char text[1024] = "";
    for (int i = 0; i < NUM_VOCAB; i++) {
        strcat(text, VOCAB[i]);
        strcat(text, "\n");
    }
    write_text(d, "vocab.txt", text, path, cap);
}

/* A text corpus of `docs` documents (blank line between), seeded. Caller frees. */
static char *make_corpus(int docs, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    size_t cap = 1 << 20, n = 0;
    char *s = xmalloc(cap);
    for (int d = 0; d < docs; d++) {
        int lines = 1 + (int)rng_below(&r, 12);
        /* Every 7th document is long, so shards must cut inside it. */
        if (d % 7 == 3) lines = 60;
        for (int l = 0; l < lines; l++) {
            int words = 1 + (int)rng_below(&r, 15);
            for (int w = 0; w < words; w++)
                n += (size_t)snprintf(s + n, cap - n, "%s%s", w ? " " : "", WORDS[rng_below(&r, NUM_WORDS)]);
            n += (size_t)snprintf(s + n, cap - n, "\n");
        }
        n += (size_t)snprintf(s + n, cap - n, "\n");
        CHECK_OR_DIE(n + 4096 < cap);
    }
    return s;
}

/* The ids the cache should hold for a text corpus: each line tokenized, an
 * end-of-document mark after each document. Returns the count. */
static long expected_ids(const Vocab *v, const char *text, int32_t *out, long cap) {
    Tokenizer *t = tokenizer_create(v);
    long n = 0;
    int in_doc = 0, ids[512];
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0) {
            if (in_doc) out[n++] = TOKEN_CACHE_EOD;
            in_doc = 0;
        } else {
            int k = tokenizer_ids(t, p, len, ids, NULL, 512);
            CHECK_OR_DIE(k <= 512 && n + k < cap);
            for (int i = 0; i < k; i++) out[n++] = ids[i];
            in_doc |= k > 0;
        }
        p = e ? e + 1 : p + len;
    }
    if (in_doc) out[n++] = TOKEN_CACHE_EOD;
    tokenizer_free(t);
    return n;
}

/* ---- corpus formats ---- */

typedef struct {
    char text[256];
    int new_doc;
} Unit;

/* Every unit of files[0..n); returns the count or -1 on error. */
static int read_units(const CorpusFile *files, int n, Unit *out, int cap) {
    CorpusReader r;
    corpus_open(&r, files, n);
    int k = 0, got;
    const char *text;
    size_t len;
    int nd;
    while ((got = corpus_next(&r, &text, &len, &nd)) == 1 && k < cap) {
        snprintf(out[k].text, sizeof out[k].text, "%.*s", (int)len, text);
        out[k++].new_doc = nd;
    }
    corpus_close(&r);
    return got < 0 ? -1 : k;
}

TEST(pretrain_corpus_formats) {
    TmpDir d;
    if (!CHECK(tmp_make(&d))) return;
    char wiki[256], text[256], brown[256], wt[256];
    write_text(&d, "wiki.txt.gz",
               "<doc id=\"1\" url=\"u\" title=\"Alpha\">\nAlpha\n\nFirst para.\nSecond para.\n</doc>\n"
               "<doc id=\"2\" url=\"u\" title=\"Beta\">\nBeta\n\nBeta text.\n</doc>\n", wiki, sizeof wiki);
    write_text(&d, "plain.txt", "l1\r\nl2\n\n  \nl3", text, sizeof text);
    write_text(&d, "brown_tagged.txt",
               "\n\tThe/at jury/nn ``/`` said/vbd ''/'' 1/2/cd ./.\n\n\n\tIt/pps ran/vbd\n", brown, sizeof brown);
    write_text(&d, "wiki.valid.tokens",
               " \n = Title = \n \n x 1 @,@ 000 @-@ y <unk> 2 @.@ 5 .\n = = Sect = = \n z \n = U = \n w\n", wt,
               sizeof wt);
    CorpusFile files[] = {{wiki, CORPUS_AUTO}, {text, CORPUS_AUTO}, {brown, CORPUS_AUTO}, {wt, CORPUS_AUTO}};
    Unit u[32];
    int n = read_units(files, 4, u, 32);
    static const Unit WANT[] = {
        {"First para.", 1}, {"Second para.", 0}, {"Beta text.", 1}, {"l1", 1}, {"l2", 0}, {"l3", 1},
        {"The jury \" said \" 1/2 .", 1}, {"It ran", 0}, {"x 1,000-y <unk> 2.5 .", 1}, {"z", 0}, {"w", 1},
    };
    CHECK_EQ_INT(n, (int)(sizeof WANT / sizeof WANT[0]));
    for (int i = 0; i < n && i < (int)(sizeof WANT / sizeof WANT[0]); i++) {
        CHECK_MSG(strcmp(u[i].text, WANT[i].text) == 0, "unit %d: '%s' want '%s'", i, u[i].text, WANT[i].text);
        CHECK_MSG(u[i].new_doc == WANT[i].new_doc, "unit %d new_doc %d", i, u[i].new_doc);
    }
    CorpusFormat f;
    CHECK(corpus_guess_format(wiki, &f) == 0 && f == CORPUS_WIKIEXTRACTOR);
    CHECK(corpus_guess_format(text, &f) == 0 && f == CORPUS_TEXT);
    CHECK(corpus_guess_format(brown, &f) == 0 && f == CORPUS_BROWN);
    CHECK(corpus_guess_format(wt, &f) == 0 && f == CORPUS_WIKITEXT);
    CHECK(corpus_parse_format("wikiextractor", &f) == 0 && f == CORPUS_WIKIEXTRACTOR);
    CHECK(corpus_parse_format("xml", &f) == -1);
    /* An explicit format wins over the guess: the wiki file read as text keeps its markup. */
    CorpusFile as_text = {wiki, CORPUS_TEXT};
    n = read_units(&as_text, 1, u, 32);
    CHECK(n == 9 && strncmp(u[0].text, "<doc ", 5) == 0);

    /* Read errors are reported, never read as a short corpus. */
    char trunc[256], missing[256];
    write_text(&d, "trunc.txt.gz", "a line long enough to be compressed into some bytes\n", trunc, sizeof trunc);
    CHECK(truncate(trunc, 20) == 0);
    snprintf(missing, sizeof missing, "%s/none.txt", d.dir);
    CorpusFile bad[] = {{text, CORPUS_TEXT}, {trunc, CORPUS_TEXT}};
    StderrCapture cap;
    stderr_capture_begin(&cap);
    CHECK(read_units(bad, 2, u, 32) == -1);
    CorpusFile none = {missing, CORPUS_TEXT};
    CHECK(read_units(&none, 1, u, 32) == -1);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(strstr(err, "trunc.txt.gz") && strstr(err, "none.txt"), "messages: %s", err);
    free(err);
    tmp_free(&d);
}

/* ---- token cache ---- */

typedef struct {
    TmpDir d;
    char vocab_path[256], corpus_path[256];
    Vocab *vocab;
    char *text;
    CorpusFile file;
    TokenCacheBuild build;
} CacheFixture;

static int cache_fixture(CacheFixture *fx, int docs, long shard_tokens) {
    memset(fx, 0, sizeof *fx);
    if (!tmp_make(&fx->d)) return 0;
    write_vocab(&fx->d, fx->vocab_path, sizeof fx->vocab_path);
    fx->vocab = vocab_load(fx->vocab_path);
    fx->text = make_corpus(docs, 11);
    write_text(&fx->d, "corpus.txt.gz", fx->text, fx->corpus_path, sizeof fx->corpus_path);
    fx->file = (CorpusFile){fx->corpus_path, CORPUS_TEXT};
    fx->build = (TokenCacheBuild){.files = &fx->file, .n_files = 1, .vocab = fx->vocab,
                                  .lowercase = 1, .shard_tokens = shard_tokens};
    return fx->vocab != NULL;
}

static void cache_fixture_free(CacheFixture *fx) {
    vocab_free(fx->vocab);
    free(fx->text);
    tmp_free(&fx->d);
}

/* All shards of a cache, concatenated. Returns the count. */
static long read_all(TokenCache *c, int32_t *out, long cap, long *shard_sizes) {
    int32_t *buf = NULL;
    long bcap = 0, n = 0;
    for (int s = 0; s < c->n_shards; s++) {
        long k = token_cache_read_shard(c, s, &buf, &bcap);
        if (!CHECK(k > 0 && n + k <= cap)) break;
        memcpy(out + n, buf, (size_t)k * sizeof *out);
        n += k;
        if (shard_sizes) shard_sizes[s] = k;
    }
    free(buf);
    return n;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *s = xmalloc(*len + 1);
    if (fread(s, 1, *len, f) != *len) *len = 0;
    fclose(f);
    return s;
}

TEST(pretrain_cache_equals_direct_tokenization) {
    enum { SHARD = 100, CAP = 1 << 18 };
    CacheFixture fx;
    if (!CHECK(cache_fixture(&fx, 60, SHARD))) return;
    int32_t *want = xmalloc(CAP * sizeof *want), *got = xmalloc(CAP * sizeof *got);
    long nw = expected_ids(fx.vocab, fx.text, want, CAP);
    char p1[256], p2[256];
    snprintf(p1, sizeof p1, "%s/a.bin", fx.d.dir);
    snprintf(p2, sizeof p2, "%s/b.bin", fx.d.dir);
    int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    CHECK(token_cache_build(&fx.build, p1) == 0);
    omp_set_num_threads(1);
    CHECK(token_cache_build(&fx.build, p2) == 0);
    omp_set_num_threads(threads);
    TokenCacheStatus st;
    char err[256];
    TokenCache *c = token_cache_open(p1, NULL, &st, err, sizeof err);
    if (!CHECK_MSG(c != NULL, "%s", err)) goto done;
    long sizes[4096];
    long ng = read_all(c, got, CAP, sizes);
    /* The same tokens in the same order; every document end of the corpus is
     * marked; the only extra marks end shards (a document longer than twice
     * the shard size is cut, and the fixture has such documents). */
    long iw = 0, ig = 0, eods = 0, toks = 0, shard_end = sizes[0];
    int ok = 1, cut_inside = 0, s = 0;
    while (ok && ig < ng) {
        if (ig == shard_end) shard_end += sizes[++s];
        if (got[ig] == TOKEN_CACHE_EOD) {
            eods++;
            if (iw < nw && want[iw] == TOKEN_CACHE_EOD) iw++;
            else if (ig + 1 == shard_end) cut_inside++;
            else ok = CHECK_MSG(0, "extra document end at %ld, not at a shard end", ig);
            ig++;
            continue;
        }
        ok = CHECK_MSG(iw < nw && want[iw] == got[ig], "id %ld differs", ig);
        iw++, ig++, toks++;
    }
    CHECK_EQ_INT(iw, nw);
    CHECK(cut_inside > 0);
    CHECK_EQ_INT(c->n_docs, eods);
    CHECK_EQ_INT(c->n_tokens, toks);
    CHECK(c->n_shards > 3);
    for (s = 0; s < c->n_shards; s++)
        CHECK_MSG(sizes[s] <= 2 * SHARD + 3 * 15 + 1, "shard %d has %ld entries", s, sizes[s]);
    int n_shards = c->n_shards;
    token_cache_close(c);
    /* The thread count changes nothing (the metadata, which records the build
     * time, and its length in the header may differ). */
    size_t l1, l2;
    char *b1 = read_file(p1, &l1), *b2 = read_file(p2, &l2);
    if (CHECK(b1 && b2 && l1 > 32)) {
        uint64_t io;
        memcpy(&io, b1 + 24, 8);
        CHECK(io + 24u * (uint64_t)n_shards <= l1 && l2 >= io + 24u * (uint64_t)n_shards);
        CHECK(memcmp(b1, b2, 20) == 0);
        CHECK(memcmp(b1 + 24, b2 + 24, (size_t)io - 24 + 24u * (size_t)n_shards) == 0);
    }
    free(b1);
    free(b2);
done:
    free(want);
    free(got);
    cache_fixture_free(&fx);
}

TEST(pretrain_cache_find_stale_and_corrupt) {
    CacheFixture fx;
    if (!CHECK(cache_fixture(&fx, 20, 64))) return;
    char dir[192];
    snprintf(dir, sizeof dir, "%s/cache", fx.d.dir);
    TokenCache *c = token_cache_find(&fx.build, dir);
    if (!CHECK(c != NULL)) { cache_fixture_free(&fx); return; }
    char path[256];
    snprintf(path, sizeof path, "%s", c->path);
    struct stat st1, st2;
    CHECK(stat(path, &st1) == 0);
    token_cache_close(c);
    /* Found again, not rebuilt. */
    c = token_cache_find(&fx.build, dir);
    CHECK(c && strcmp(c->path, path) == 0 && stat(path, &st2) == 0 && st1.st_ino == st2.st_ino);
    token_cache_close(c);
    /* Another corpus (same name, new content): a new cache; the old one is stale for it. */
    char text2[256];
    write_text(&fx.d, "corpus.txt.gz", "the cat sat\n\nthe dog ran\n", text2, sizeof text2);
    cJSON *key = token_cache_key(&fx.build);
    TokenCacheStatus s;
    char err[512];
    CHECK(token_cache_open(path, key, &s, err, sizeof err) == NULL && s == TOKEN_CACHE_STALE);
    c = token_cache_find(&fx.build, dir);
    CHECK(c && strcmp(c->path, path) != 0 && c->n_tokens == 6 && c->n_docs == 2);
    token_cache_close(c);
    cJSON_Delete(key);
    /* Another vocabulary (one token renamed) is another key. */
    cJSON *k1 = token_cache_key(&fx.build);
    const char *tokens[NUM_VOCAB];
    memcpy(tokens, VOCAB, sizeof tokens);
    tokens[NUM_VOCAB - 1] = "##zy";
    Vocab *v2 = vocab_from_tokens(tokens, NUM_VOCAB);
    TokenCacheBuild b2 = fx.build;
    b2.vocab = v2;
    cJSON *k2 = token_cache_key(&b2);
    CHECK(k1 && k2 && !cJSON_Compare(k1, k2, 1));
    cJSON_Delete(k1);
    cJSON_Delete(k2);
    vocab_free(v2);
    /* A flipped byte in a shard is caught by its CRC; a truncated file at open. */
    FILE *f = fopen(path, "r+b");
    if (CHECK(f != NULL)) {
        fseek(f, 40, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, 40, SEEK_SET);
        fputc(ch ^ 0x10, f);
        fclose(f);
    }
    c = token_cache_open(path, NULL, &s, err, sizeof err);
    if (CHECK(c != NULL)) {
        int32_t *buf = NULL;
        long cap = 0;
        StderrCapture cp;
        stderr_capture_begin(&cp);
        CHECK(token_cache_read_shard(c, 0, &buf, &cap) == -1);
        char *msg = stderr_capture_end(&cp);
        CHECK_MSG(strstr(msg, "CRC") != NULL, "message: %s", msg);
        free(msg);
        free(buf);
        token_cache_close(c);
    }
    CHECK(truncate(path, (off_t)(st1.st_size - 5)) == 0);
    CHECK(token_cache_open(path, NULL, &s, err, sizeof err) == NULL && s == TOKEN_CACHE_BAD);
    CHECK_MSG(strstr(err, "truncated") != NULL, "message: %s", err);
    snprintf(path, sizeof path, "%s/none.bin", dir);
    CHECK(token_cache_open(path, NULL, &s, err, sizeof err) == NULL && s == TOKEN_CACHE_MISSING);
    CHECK(token_cache_open(fx.vocab_path, NULL, &s, err, sizeof err) == NULL && s == TOKEN_CACHE_BAD);
    cache_fixture_free(&fx);
}

/* ---- packing and the stream ---- */

typedef struct {
    long start[1024];
    int len[1024];
    int n;
} Pieces;

static void collect_piece(void *ctx, long start, int len) {
    Pieces *p = ctx;
    if (p->n < 1024) {
        p->start[p->n] = start;
        p->len[p->n++] = len;
    }
}

TEST(pretrain_pack_pieces_cover_documents_at_word_starts) {
    /* ids: 5 = word start, 17 = "##s" continuation (the fixture vocabulary). */
    unsigned char is_cont[NUM_VOCAB] = {0};
    is_cont[17] = is_cont[18] = is_cont[20] = is_cont[21] = 1;
    int32_t doc[700];
    Rng r;
    rng_seed(&r, 3);
    for (int i = 0; i < 700; i++) doc[i] = rng_below(&r, 3) == 0 ? 17 : 5;
    for (int i = 600; i < 700; i++) doc[i] = 20;    /* a "word" longer than a piece */
    doc[599] = 5;
    for (int pass = 0; pass < 2; pass++) {
        float short_prob = pass ? 1.0f : 0.0f;
        Pieces p = {.n = 0};
        stream_pack_document(doc, 700, 30, short_prob, is_cont, &r, collect_piece, &p);
        long next = 0;
        int short_seen = 0;
        for (int i = 0; i < p.n; i++) {
            CHECK_MSG(p.start[i] == next, "piece %d starts at %ld, want %ld", i, p.start[i], next);
            CHECK(p.len[i] >= 1 && p.len[i] <= 30);
            short_seen += p.len[i] < 20;
            /* Inside the long word the cut cannot move back; elsewhere a piece starts a word. */
            if (p.start[i] < 600) CHECK_MSG(!is_cont[doc[p.start[i]]], "piece %d starts inside a word", i);
            next = p.start[i] + p.len[i];
        }
        CHECK_EQ_INT(next, 700);
        if (pass == 1) CHECK(short_seen > p.n / 3);
    }
}

/* One epoch's (or pass's) tokens, sequence by sequence. */
static long stream_collect(PretrainStream *s, long max_seqs, int32_t *out, long cap, int stop_at_epoch) {
    int seq[64], len;
    long n = 0;
    for (long k = 0; k < max_seqs; k++) {
        if (stream_next(s, seq, &len) != 1) break;
        if (stop_at_epoch && stream_tell(s).epoch > 0) break;   /* that one began epoch 1 */
        CHECK(seq[0] == 2 && seq[len - 1] == 3 && len <= 16);
        for (int i = 1; i < len - 1 && n < cap; i++) out[n++] = seq[i];
    }
    return n;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

TEST(pretrain_stream_epochs_and_exact_resume) {
    CacheFixture fx;
    if (!CHECK(cache_fixture(&fx, 40, 80))) return;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/c.bin", fx.d.dir);
    TokenCacheStatus st;
    TokenCache *c = token_cache_build(&fx.build, path) == 0 ? token_cache_open(path, NULL, &st, err, sizeof err)
                                                             : NULL;
    if (!CHECK(c != NULL)) { cache_fixture_free(&fx); return; }
    MaskConfig mc;
    CHECK(masking_init(&mc, fx.vocab, 0.15, 3, 0) == 0);
    PretrainStreamConfig sc = {.seq_len = 16, .short_prob = 0.1f, .shuffle = 1, .seed = 5, .cls_id = 2,
                               .sep_id = 3, .is_cont = mc.is_cont};
    enum { CAP = 1 << 16 };
    int32_t *all = xmalloc(CAP * sizeof *all), *ep = xmalloc(CAP * sizeof *ep), *ep2 = xmalloc(CAP * sizeof *ep2);
    long n_all = read_all(c, all, CAP, NULL), n_tok = 0;
    for (long i = 0; i < n_all; i++)
        if (all[i] != TOKEN_CACHE_EOD) all[n_tok++] = all[i];
    /* One epoch holds every token exactly once, in another order than the corpus. */
    PretrainStream s;
    stream_init(&s, c, &sc);
    long n_ep = stream_collect(&s, 1L << 30, ep, CAP, 1);
    CHECK_EQ_INT(n_ep, n_tok);
    CHECK(memcmp(ep, all, (size_t)n_tok * sizeof *ep) != 0);
    memcpy(ep2, ep, (size_t)n_ep * sizeof *ep);
    qsort(ep2, (size_t)n_ep, sizeof *ep2, cmp_i32);
    qsort(all, (size_t)n_tok, sizeof *all, cmp_i32);
    CHECK(memcmp(ep2, all, (size_t)n_tok * sizeof *ep) == 0);
    /* The next epoch is another order. */
    long n_ep2 = stream_collect(&s, 200, ep2, CAP, 0);
    CHECK(n_ep2 > 100 && memcmp(ep2, ep, 100 * sizeof *ep) != 0);
    stream_free(&s);
    /* Resume: a stream that continues from a saved position gives exactly the
     * sequences of the uninterrupted one, also across epoch boundaries. */
    static const long AT[] = {0, 1, 37, 150, 400};
    for (int a = 0; a < 5; a++) {
        PretrainStream x, y;
        stream_init(&x, c, &sc);
        stream_init(&y, c, &sc);
        int seq[64], len, seq2[64], len2;
        for (long k = 0; k < AT[a]; k++) stream_next(&x, seq, &len);
        CHECK(stream_seek(&y, stream_tell(&x)) == 0);
        int same = 1;
        for (int k = 0; k < 300 && same; k++) {
            same = stream_next(&x, seq, &len) == 1 && stream_next(&y, seq2, &len2) == 1 && len == len2 &&
                   memcmp(seq, seq2, (size_t)len * sizeof *seq) == 0;
        }
        CHECK_MSG(same, "resumed stream differs after position %ld", AT[a]);
        stream_free(&x);
        stream_free(&y);
    }
    /* A position that does not fit the cache is refused. */
    stream_init(&s, c, &sc);
    StderrCapture cp;
    stderr_capture_begin(&cp);
    CHECK(stream_seek(&s, (StreamPos){0, (uint64_t)c->n_shards, 0}) == -1);
    free(stderr_capture_end(&cp));
    stream_free(&s);
    /* Evaluation order: one pass over the corpus in order, full-length pieces. */
    sc.shuffle = 0;
    stream_init(&s, c, &sc);
    n_all = read_all(c, ep2, CAP, NULL);
    long n_plain = 0;
    for (long i = 0; i < n_all; i++)
        if (ep2[i] != TOKEN_CACHE_EOD) ep2[n_plain++] = ep2[i];
    n_ep = stream_collect(&s, 1L << 30, ep, CAP, 0);
    CHECK_EQ_INT(n_ep, n_plain);
    CHECK(memcmp(ep, ep2, (size_t)n_plain * sizeof *ep) == 0);
    int seq[64], len;
    CHECK(stream_next(&s, seq, &len) == 0 && stream_next(&s, seq, &len) == 0);
    stream_free(&s);
    masking_free(&mc);
    free(all);
    free(ep);
    free(ep2);
    token_cache_close(c);
    cache_fixture_free(&fx);
}

/* ---- masking ---- */

static Vocab *fixture_vocab(void) { return vocab_from_tokens(VOCAB, NUM_VOCAB); }

TEST(pretrain_masking_follows_bert_rules) {
    Vocab *v = fixture_vocab();
    MaskConfig mc;
    if (!CHECK(masking_init(&mc, v, 0.15, 20, 0) == 0)) { vocab_free(v); return; }
    enum { T = 128, ROUNDS = 3000 };
    int ids[T], orig[T], pos[32], lab[32];
    Rng data, r;
    rng_seed(&data, 1);
    rng_seed(&r, 2);
    long masked = 0, kept = 0, randomised = 0, targets = 0, hits[T] = {0};
    for (int k = 0; k < ROUNDS; k++) {
        int len = k % 2 ? T : 10 + (int)rng_below(&data, T - 10);
        for (int t = 0; t < len; t++) orig[t] = 5 + (int)rng_below(&data, NUM_VOCAB - 5);
        orig[0] = 2, orig[len - 1] = 3;
        if (len > 20) orig[7] = 1, orig[8] = 0;   /* [UNK] and [PAD] are never targets either */
        memcpy(ids, orig, sizeof ids);
        int n = masking_apply(&mc, &r, ids, len, pos, lab);
        int want = (int)lrint(len * 0.15);
        if (want < 1) want = 1;
        if (want > 20) want = 20;
        CHECK_EQ_INT(n, want);
        for (int i = 0; i < n; i++) {
            int t = pos[i];
            CHECK(i == 0 || pos[i - 1] < t);
            CHECK(t > 0 && t < len - 1 && orig[t] >= 5);
            CHECK_EQ_INT(lab[i], orig[t]);
            masked += ids[t] == 4;
            kept += ids[t] == orig[t];
            randomised += ids[t] != 4 && ids[t] != orig[t];
            CHECK(ids[t] >= 4);   /* [MASK] or a non-special token */
            if (len == T) hits[t]++;
        }
        targets += n;
        for (int t = 0, i = 0; t < len; t++) {   /* nothing else changed */
            if (i < n && pos[i] == t) { i++; continue; }
            CHECK(ids[t] == orig[t]);
        }
    }
    /* 80 / 10 / 10, where a random token equals the original 1 time in 23. */
    double f_mask = (double)masked / targets, f_keep = (double)kept / targets, f_rand = (double)randomised / targets;
    CHECK_NEAR(f_mask, 0.8, 0.015);
    CHECK_NEAR(f_keep, 0.1 + 0.1 / (NUM_VOCAB - 5), 0.01);
    CHECK_NEAR(f_rand, 0.1 * (1 - 1.0 / (NUM_VOCAB - 5)), 0.01);
    /* Positions uniform over the candidates: 19 of 124 per full sequence. */
    for (int t = 1; t < T - 1; t++)
        if (t != 7 && t != 8) CHECK_NEAR(hits[t] / (ROUNDS / 2.0), 19.0 / 124, 0.05);
    /* Python's round: 10 * 0.25 = 2.5 -> 2 targets; 14 * 0.25 = 3.5 -> 4. */
    MaskConfig q = mc;
    q.prob = 0.25f;
    for (int t = 0; t < 14; t++) orig[t] = 5 + t;
    memcpy(ids, orig, sizeof ids);
    CHECK_EQ_INT(masking_apply(&q, &r, ids, 10, pos, lab), 2);
    memcpy(ids, orig, sizeof ids);
    CHECK_EQ_INT(masking_apply(&q, &r, ids, 14, pos, lab), 4);
    /* Same RNG state, same result. */
    Rng a, b;
    rng_seed(&a, 9);
    b = a;
    int ids2[T], pos2[32], lab2[32];
    for (int t = 0; t < T; t++) orig[t] = 5 + t % (NUM_VOCAB - 5);
    memcpy(ids, orig, sizeof ids);
    memcpy(ids2, orig, sizeof ids2);
    int n1 = masking_apply(&mc, &a, ids, T, pos, lab), n2 = masking_apply(&mc, &b, ids2, T, pos2, lab2);
    CHECK(n1 == n2 && memcmp(ids, ids2, sizeof ids) == 0 && memcmp(pos, pos2, (size_t)n1 * sizeof *pos) == 0);
    masking_free(&mc);
    vocab_free(v);
}

TEST(pretrain_masking_whole_words) {
    Vocab *v = fixture_vocab();
    MaskConfig mc;
    if (!CHECK(masking_init(&mc, v, 0.15, 20, 1) == 0)) { vocab_free(v); return; }
    enum { T = 128 };
    /* Words of 1 to 3 pieces: "run ##s", "un ##believ ##able", "the"; a
     * "##" piece right after [CLS] is a word of its own. */
    int orig[T], ids[T], pos[32], lab[32], word_of[T];
    Rng r;
    rng_seed(&r, 4);
    long multi = 0;
    for (int k = 0; k < 2000; k++) {
        int t = 0, w = 0;
        orig[t] = 2, word_of[t++] = -1;
        orig[t] = 17, word_of[t++] = w++;
        while (t < T - 4) {
            int kind = (int)rng_below(&r, 3);
            if (kind == 0) { orig[t] = 16, word_of[t++] = w; orig[t] = 17, word_of[t++] = w++; }
            else if (kind == 1) {
                orig[t] = 19, word_of[t++] = w; orig[t] = 20, word_of[t++] = w; orig[t] = 21, word_of[t++] = w++;
            } else orig[t] = 5, word_of[t++] = w++;
        }
        orig[t] = 3, word_of[t++] = -1;
        int len = t;
        memcpy(ids, orig, sizeof ids);
        int n = masking_apply(&mc, &r, ids, len, pos, lab);
        CHECK(n >= 1 && n <= (int)lrint(len * 0.15));
        /* Every piece of a chosen word is chosen. */
        unsigned char chosen[T] = {0};
        for (int i = 0; i < n; i++) chosen[pos[i]] = 1, CHECK(lab[i] == orig[pos[i]]);
        for (int i = 1; i < len - 1; i++)
            for (int j = i + 1; j < len - 1 && word_of[j] == word_of[i]; j++) {
                CHECK_MSG(chosen[i] == chosen[j], "word %d partly masked", word_of[i]);
                multi += chosen[i];
            }
    }
    CHECK(multi > 1000);
    masking_free(&mc);
    vocab_free(v);
}

TEST(pretrain_mlm_batch_positions) {
    CacheFixture fx;
    if (!CHECK(cache_fixture(&fx, 10, 1 << 20))) return;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/c.bin", fx.d.dir);
    TokenCacheStatus st;
    TokenCache *c = token_cache_build(&fx.build, path) == 0 ? token_cache_open(path, NULL, &st, err, sizeof err)
                                                             : NULL;
    MaskConfig mc;
    if (!CHECK(c != NULL && masking_init(&mc, fx.vocab, 0.15, 5, 0) == 0)) { cache_fixture_free(&fx); return; }
    PretrainStreamConfig sc = {.seq_len = 24, .short_prob = 0.5f, .shuffle = 1, .seed = 1, .cls_id = 2,
                               .sep_id = 3, .is_cont = mc.is_cont};
    PretrainStream s, ref;
    stream_init(&s, c, &sc);
    stream_init(&ref, c, &sc);
    MlmBatch b;
    mlm_batch_init(&b, 6, 32, 5, 0);
    Rng r;
    rng_seed(&r, 3);
    for (int round = 0; round < 20; round++) {
        CHECK_EQ_INT(mlm_batch_fill(&b, &s, &mc, &r, round % 2 ? 6 : 4), round % 2 ? 6 : 4);
        int seq[32], len, maxlen = 0, k = 0;
        long tokens = 0;
        for (int i = 0; i < b.B; i++) {
            stream_next(&ref, seq, &len);
            CHECK_EQ_INT(b.lengths[i], len);
            maxlen = len > maxlen ? len : maxlen;
            tokens += len;
            for (int t = 0; t < b.T; t++) {
                int got = b.ids[i * b.T + t];
                if (t >= len) { CHECK(got == 0); continue; }
                int target = k < b.n_masked && b.positions[k] == i * b.T + t;
                if (target) CHECK(b.labels[k++] == seq[t]);
                else CHECK(got == seq[t]);
            }
        }
        CHECK_EQ_INT(k, b.n_masked);
        CHECK_EQ_INT(b.T, maxlen);
        CHECK_EQ_INT(b.tokens, tokens);
    }
    mlm_batch_free(&b);
    stream_free(&s);
    stream_free(&ref);
    masking_free(&mc);
    token_cache_close(c);
    cache_fixture_free(&fx);
}

/* A config that builds but does not parse (an unknown model) frees what it
 * built: fuzz_config found the leak (tests/fuzz/regressions/fuzz_config/). */
TEST(pretrain_config_failed_parse_frees) {
    PretrainConfig pc;
    const char *sets[] = {"model=tinx"};
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = pretrain_config_build(&pc, NULL, sets, NULL, 1, NULL, 0);
    free(stderr_capture_end(&cap));
    CHECK(rc != 0 && pc.json == NULL);
}

/* A WikiText unit that starts with <unk>: an empty piece before the marker is
 * tokenized first, on a worker with no ids yet (NULL + 0: undefined, fatal
 * under `make asan`; tests/fuzz/regressions/fuzz_token_cache/). */
TEST(pretrain_cache_unit_starting_with_unk) {
    static const char *const TOKENS[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cat", "sat"};
    Vocab *v = vocab_from_tokens(TOKENS, 7);
    char dir[SCRATCH_PATH_MAX], corpus[256], cache[256];
    if (!CHECK(scratch_dir("unk", dir, sizeof dir))) return;
    snprintf(corpus, sizeof corpus, "%s/wiki.train.tokens", dir);
    snprintf(cache, sizeof cache, "%s/tokens.bin", dir);
    FILE *f = fopen(corpus, "w");
    fputs(" = T = \n <unk> cat sat <unk> \n", f);
    fclose(f);
    CorpusFile cf = {.path = corpus, .format = CORPUS_WIKITEXT};
    TokenCacheBuild b = {.files = &cf, .n_files = 1, .vocab = v, .lowercase = 1, .shard_tokens = 64};
    CHECK(token_cache_build(&b, cache) == 0);
    TokenCacheStatus st;
    char err[256];
    TokenCache *c = token_cache_open(cache, NULL, &st, err, sizeof err);
    if (CHECK_MSG(c != NULL, "%s", err)) {
        int32_t *ids = NULL;
        long cap = 0, n = token_cache_read_shard(c, 0, &ids, &cap);
        CHECK_MSG(n == 5 && ids[0] == 1 && ids[1] == 5 && ids[2] == 6 && ids[3] == 1 && ids[4] == TOKEN_CACHE_EOD,
                  "%ld ids", n);
        free(ids);
        token_cache_close(c);
    }
    /* A unit with no token at all (control characters only), alone in its
     * worker's share (2 threads, 2 units): that worker never produced an id
     * and hands its unit to the writer without NULL + 0. */
    f = fopen(corpus, "w");
    fputs("\x01\x02\ncat\n", f);
    fclose(f);
    cf.format = CORPUS_TEXT;
    int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    CHECK(token_cache_build(&b, cache) == 0);
    omp_set_num_threads(threads);
    unlink(corpus);
    unlink(cache);
    rmdir(dir);
    vocab_free(v);
}
