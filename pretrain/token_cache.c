/* token_cache.c — building and reading the token-id cache (see token_cache.h).
 *
 * Building reads the corpus in blocks of lines, tokenizes a block on all
 * OpenMP threads (one Tokenizer each; each thread takes a contiguous range of
 * lines, so the ids come out in corpus order whatever the thread count), then
 * appends the ids to the current shard in order. */
#include "pretrain/token_cache.h"

#include "core/common.h"
#include "core/files.h"
#include "core/crc32.h"
#include "core/progress.h"
#include "text/tokenizer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char MAGIC[8] = {'G', 'L', 'U', 'E', 'T', 'O', 'K', 'S'};
enum {
    HEADER_BYTES = 32,
    INDEX_ENTRY_BYTES = 24,
    BLOCK_BYTES = 4 << 20,       /* text per parallel tokenization block */
    BLOCK_UNITS = 1 << 16,       /* lines per block */
};

/* ---- key ---- */

static int add_file_stat(cJSON *o, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        user_error_io(NULL, "%s: %s", path, strerror(errno));
        return -1;
    }
    cJSON_AddNumberToObject(o, "bytes", (double)st.st_size);
    cJSON_AddNumberToObject(o, "mtime", (double)st.st_mtime);
    return 0;
}

cJSON *token_cache_key(const TokenCacheBuild *b) {
    cJSON *key = cJSON_CreateObject();
    cJSON_AddNumberToObject(key, "version", TOKEN_CACHE_VERSION);
    cJSON *files = cJSON_AddArrayToObject(key, "files");
    for (int i = 0; i < b->n_files; i++) {
        CorpusFormat f = b->files[i].format;
        if (f == CORPUS_AUTO && corpus_guess_format(b->files[i].path, &f)) goto fail;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(files, o);
        cJSON_AddStringToObject(o, "path", b->files[i].path);
        cJSON_AddStringToObject(o, "format", corpus_format_name(f));
        if (add_file_stat(o, b->files[i].path)) goto fail;
    }
    /* The vocabulary by content (it may come from a checkpoint, not a file). */
    cJSON *v = cJSON_AddObjectToObject(key, "vocab");
    uint32_t crc = 0;
    int V = vocab_size(b->vocab);
    for (int id = 0; id < V; id++) {
        const char *t = vocab_token(b->vocab, id);
        crc = crc32_update(crc, t, strlen(t) + 1);   /* with the NUL: "ab","c" != "a","bc" */
    }
    cJSON_AddNumberToObject(v, "size", V);
    cJSON_AddNumberToObject(v, "crc32", crc);
    cJSON_AddBoolToObject(key, "lowercase", b->lowercase);
    cJSON_AddNumberToObject(key, "shard_tokens", (double)(b->shard_tokens > 0 ? b->shard_tokens
                                                                               : TOKEN_CACHE_SHARD_TOKENS));
    return key;
fail:
    cJSON_Delete(key);
    return NULL;
}

/* ---- building: shard writer ---- */

typedef struct {
    FILE *f;
    const char *path;
    int id_bytes;
    long shard_tokens;
    unsigned char *buf;      /* the open shard, encoded */
    size_t len, cap;         /* bytes */
    long entries;
    int in_doc;              /* ids since the last end-of-document mark */
    uint64_t offset;         /* file offset of the open shard */
    uint64_t *idx;           /* 3 words per shard: offset, entries, crc */
    int n_shards, idx_cap;
    long tokens, docs;
    int failed;
} ShardWriter;

static void writer_put(ShardWriter *w, uint32_t v) {
    if (w->len + 4 > w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1 << 16;
        w->buf = xrealloc(w->buf, w->cap);
    }
    if (w->id_bytes == 2) {
        uint16_t x = (uint16_t)v;
        memcpy(w->buf + w->len, &x, 2);
    } else {
        memcpy(w->buf + w->len, &v, 4);
    }
    w->len += (size_t)w->id_bytes;
    w->entries++;
}

static void writer_flush(ShardWriter *w) {
    if (w->entries == 0) return;
    if (fwrite(w->buf, 1, w->len, w->f) != w->len) w->failed = 1;
    if (w->n_shards == w->idx_cap) {
        w->idx_cap = w->idx_cap ? 2 * w->idx_cap : 64;
        w->idx = xrealloc(w->idx, (size_t)w->idx_cap * 3 * sizeof *w->idx);
    }
    uint64_t *e = w->idx + 3 * w->n_shards++;
    e[0] = w->offset;
    e[1] = (uint64_t)w->entries;
    e[2] = crc32_update(0, w->buf, w->len);
    w->offset += w->len;
    w->len = 0;
    w->entries = 0;
}

static void writer_end_doc(ShardWriter *w) {
    if (!w->in_doc) return;
    writer_put(w, w->id_bytes == 2 ? 0xFFFFu : 0xFFFFFFFFu);
    w->in_doc = 0;
    w->docs++;
}

/* A unit's ids; new_doc: it starts a document. */
static void writer_add(ShardWriter *w, const int *ids, int n, int new_doc) {
    if (new_doc) {
        writer_end_doc(w);
        if (w->entries >= w->shard_tokens) writer_flush(w);
    }
    for (int i = 0; i < n; i++) writer_put(w, (uint32_t)ids[i]);
    w->tokens += n;
    if (n) w->in_doc = 1;
    if (w->entries >= 2 * w->shard_tokens) {   /* a document without end in sight */
        writer_end_doc(w);
        writer_flush(w);
    }
}

/* ---- building: parallel tokenization of a block of lines ---- */

typedef struct {
    char *text;             /* the block's units, back to back */
    size_t len, cap;
    size_t *off;            /* (n + 1) unit i is text[off[i], off[i+1]) */
    unsigned char *new_doc; /* (n) */
    int n, ucap;
} Block;

typedef struct {
    Tokenizer *tok;
    int *ids;               /* this thread's ids, its units back to back */
    long len, cap;
    int *scratch;
    int scap;
} Worker;

static void block_add(Block *b, const char *s, size_t n, int new_doc) {
    if (b->len + n > b->cap) {
        b->cap = b->len + n > 2 * b->cap ? b->len + n : 2 * b->cap;
        b->text = xrealloc(b->text, b->cap);
    }
    if (b->n + 2 > b->ucap) {
        b->ucap = b->ucap ? 2 * b->ucap : 1024;
        b->off = xrealloc(b->off, (size_t)(b->ucap + 1) * sizeof *b->off);
        b->new_doc = xrealloc(b->new_doc, (size_t)b->ucap);
    }
    memcpy(b->text + b->len, s, n);
    b->off[b->n] = b->len;
    b->new_doc[b->n++] = (unsigned char)new_doc;
    b->len += n;
    b->off[b->n] = b->len;
}

/* Appends the WordPiece ids of s[0..n) to w->ids. */
static void worker_ids(Worker *w, const char *s, size_t n) {
    int got = tokenizer_ids(w->tok, s, n, w->scratch, NULL, w->scap);
    if (got > w->scap) {
        w->scap = got;
        w->scratch = xrealloc(w->scratch, (size_t)w->scap * sizeof *w->scratch);
        got = tokenizer_ids(w->tok, s, n, w->scratch, NULL, w->scap);
    }
    if (got == 0) return;   /* w->ids may still be NULL: no NULL + 0 (fuzz_token_cache's find) */
    if (w->len + got > w->cap) {
        w->cap = w->len + got > 2 * w->cap ? w->len + got : 2 * w->cap;
        w->ids = xrealloc(w->ids, (size_t)w->cap * sizeof *w->ids);
    }
    memcpy(w->ids + w->len, w->scratch, (size_t)got * sizeof *w->ids);
    w->len += got;
}

/* Tokenizes one unit; `unk` (may be NULL) is a marker that becomes [UNK]. */
static void worker_unit(Worker *w, const char *s, size_t n, const char *unk) {
    if (!unk) { worker_ids(w, s, n); return; }
    size_t ul = strlen(unk);
    for (;;) {
        const char *hit = memmem(s, n, unk, ul);
        if (!hit) { worker_ids(w, s, n); return; }
        worker_ids(w, s, (size_t)(hit - s));
        if (w->len + 1 > w->cap) {
            w->cap = 2 * w->cap + 1;
            w->ids = xrealloc(w->ids, (size_t)w->cap * sizeof *w->ids);
        }
        w->ids[w->len++] = w->tok->sp.unk;
        n -= (size_t)(hit - s) + ul;
        s = hit + ul;
    }
}

/* Tokenizes the block (units of file format fmt) and appends it to the writer. */
static void block_flush(Block *b, Worker *wk, int nw, ShardWriter *sw, const char *unk, int *unit_len) {
    int nt = 1;   /* the threads OpenMP actually gives (fewer than nw in a forked child) */
#pragma omp parallel num_threads(nw)
    {
        int t = omp_get_thread_num();
#pragma omp single
        nt = omp_get_num_threads();
        Worker *w = &wk[t];
        w->len = 0;
        int lo = (int)((long)b->n * t / nt), hi = (int)((long)b->n * (t + 1) / nt);
        for (int i = lo; i < hi; i++) {
            long before = w->len;
            worker_unit(w, b->text + b->off[i], b->off[i + 1] - b->off[i], unk);
            unit_len[i] = (int)(w->len - before);
        }
    }
    for (int t = 0; t < nt; t++) {
        int lo = (int)((long)b->n * t / nt), hi = (int)((long)b->n * (t + 1) / nt);
        long pos = 0;
        for (int i = lo; i < hi; i++) {
            /* A worker whose units were all empty has no ids array: no NULL + 0. */
            writer_add(sw, unit_len[i] ? wk[t].ids + pos : NULL, unit_len[i], b->new_doc[i]);
            pos += unit_len[i];
        }
    }
    b->n = 0;
    b->len = 0;
}

static void put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get_u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Index and metadata after the shards, then the header; fsync. 0 ok. */
static int writer_finish(ShardWriter *w, const cJSON *meta) {
    unsigned char e[INDEX_ENTRY_BYTES] = {0};
    uint64_t index_offset = w->offset;
    for (int s = 0; s < w->n_shards; s++) {
        put_u64(e, w->idx[3 * s]);
        put_u64(e + 8, w->idx[3 * s + 1]);
        put_u32(e + 16, (uint32_t)w->idx[3 * s + 2]);
        if (fwrite(e, 1, sizeof e, w->f) != sizeof e) return -1;
    }
    char *js = cJSON_PrintUnformatted(meta);
    size_t ml = strlen(js);
    int bad = fwrite(js, 1, ml, w->f) != ml;
    free(js);
    unsigned char h[HEADER_BYTES] = {0};
    memcpy(h, MAGIC, 8);
    put_u32(h + 8, TOKEN_CACHE_VERSION);
    put_u32(h + 12, (uint32_t)w->id_bytes);
    put_u32(h + 16, (uint32_t)w->n_shards);
    put_u32(h + 20, (uint32_t)ml);
    put_u64(h + 24, index_offset);
    if (bad || fseek(w->f, 0, SEEK_SET) || fwrite(h, 1, sizeof h, w->f) != sizeof h) return -1;
    if (fflush(w->f) || fsync(fileno(w->f))) return -1;
    return 0;
}

/* Streams the corpus through the tokenizer workers into the writer. 0 ok. */
static int build_stream(const TokenCacheBuild *b, ShardWriter *sw, long *units) {
    int nw = omp_get_max_threads();
    Worker *wk = xcalloc((size_t)nw, sizeof *wk);
    int rc = 0;
    for (int t = 0; t < nw && rc == 0; t++) {
        wk[t].tok = tokenizer_create(b->vocab);
        if (!wk[t].tok) rc = -1;
        else wk[t].tok->basic.lowercase = b->lowercase;
    }
    Block blk = {0};
    int *unit_len = xmalloc((BLOCK_UNITS + 1) * sizeof *unit_len);
    CorpusReader cr;
    corpus_open(&cr, b->files, b->n_files);
    Progress bar;
    progress_start(&bar, "tokenize", 0, b->show_progress ? PROGRESS_AUTO : PROGRESS_QUIET);
    bar.unit = "lines";
    int block_file = -1;
    CorpusFormat block_format = CORPUS_TEXT;   /* resolved format of block_file */
    while (rc == 0) {
        const char *text;
        size_t len;
        int new_doc, got = corpus_next(&cr, &text, &len, &new_doc);
        if (got < 0) { rc = -1; break; }
        /* A block holds one file's lines, so one unknown-word marker applies. */
        if (blk.n && (got == 0 || cr.file != block_file || blk.n >= BLOCK_UNITS || blk.len >= BLOCK_BYTES)) {
            block_flush(&blk, wk, nw, sw, corpus_unk_marker(block_format), unit_len);
            progress_update(&bar, cr.units, "%ld docs, %ld tokens", sw->docs, sw->tokens);
        }
        if (got == 0) break;
        block_file = cr.file;
        block_format = cr.format;
        block_add(&blk, text, len, new_doc);
    }
    *units = cr.units;
    progress_finish(&bar, "%ld docs, %ld tokens", sw->docs, sw->tokens);
    corpus_close(&cr);
    for (int t = 0; t < nw; t++) {
        tokenizer_free(wk[t].tok);
        free(wk[t].ids);
        free(wk[t].scratch);
    }
    free(wk);
    free(unit_len);
    free(blk.text);
    free(blk.off);
    free(blk.new_doc);
    return rc;
}

int token_cache_build(const TokenCacheBuild *b, const char *path) {
    int V = vocab_size(b->vocab);
    ShardWriter sw = {
        .path = path,
        .id_bytes = V < 0xFFFF ? 2 : 4,   /* the all-ones id is the end-of-document mark */
        .shard_tokens = b->shard_tokens > 0 ? b->shard_tokens : TOKEN_CACHE_SHARD_TOKENS,
        .offset = HEADER_BYTES,
    };
    cJSON *key = token_cache_key(b);
    if (!key) return -1;
    /* Two runs may fill the same cache at once: each writes a temporary of
     * its own (core/files.h) and the last rename wins, with the same bytes. */
    AtomicFile out;
    sw.f = atomic_open(&out, path);
    int rc = -1;
    if (!sw.f) {
        user_error_io("check that the cache directory is writable, or pass --cache DIR", "%s: cannot create the token cache", path);
        goto done;
    }
    double t0 = now_seconds();
    unsigned char zero[HEADER_BYTES] = {0};   /* the header is written last */
    long units = 0;
    if (fwrite(zero, 1, sizeof zero, sw.f) != sizeof zero) sw.failed = 1;
    if (build_stream(b, &sw, &units)) goto done;
    writer_end_doc(&sw);
    writer_flush(&sw);
    if (sw.tokens == 0) {
        user_error_data("check the corpus files and their formats", "the corpus has no text (0 tokens)");
        goto done;
    }
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddItemToObject(meta, "key", cJSON_Duplicate(key, 1));
    cJSON_AddNumberToObject(meta, "tokens", (double)sw.tokens);
    cJSON_AddNumberToObject(meta, "docs", (double)sw.docs);
    cJSON_AddNumberToObject(meta, "units", (double)units);
    cJSON_AddNumberToObject(meta, "seconds", now_seconds() - t0);
    int bad = sw.failed || writer_finish(&sw, meta);
    cJSON_Delete(meta);
    sw.f = NULL;
    if (bad) {
        atomic_abort(&out);
        user_error_io("check the free disk space", "%s: write failed", path);
        goto done;
    }
    if (atomic_commit(&out)) goto done;
    rc = 0;
done:
    if (sw.f) atomic_abort(&out);
    free(sw.buf);
    free(sw.idx);
    cJSON_Delete(key);
    return rc;
}

/* ---- reading ---- */

void token_cache_close(TokenCache *c) {
    if (!c) return;
    if (c->f) fclose(c->f);
    free(c->path);
    free(c->shard_offset);
    free(c->shard_entries);
    free(c->shard_crc);
    cJSON_Delete(c->meta);
    free(c->raw);
    free(c);
}

#define OPEN_FAIL(status, ...)                 \
    do {                                       \
        *st = (status);                        \
        snprintf(err, cap, __VA_ARGS__);       \
        token_cache_close(c);                  \
        return NULL;                           \
    } while (0)

TokenCache *token_cache_open(const char *path, const cJSON *key, TokenCacheStatus *st, char *err,
                             size_t cap) {
    TokenCache *c = xcalloc(1, sizeof *c);
    c->path = xstrdup(path);
    c->f = fopen(path, "rb");
    if (!c->f)
        OPEN_FAIL(errno == ENOENT ? TOKEN_CACHE_MISSING : TOKEN_CACHE_BAD, "%s: %s", path, strerror(errno));
    unsigned char h[HEADER_BYTES];
    struct stat sb;
    if (fstat(fileno(c->f), &sb) || fread(h, 1, sizeof h, c->f) != sizeof h || memcmp(h, MAGIC, 8) != 0)
        OPEN_FAIL(TOKEN_CACHE_BAD, "%s: not a glue token cache", path);
    if (get_u32(h + 8) != TOKEN_CACHE_VERSION)
        OPEN_FAIL(TOKEN_CACHE_BAD, "%s: token cache version %u, this glue reads %d", path, get_u32(h + 8),
                  TOKEN_CACHE_VERSION);
    c->id_bytes = (int)get_u32(h + 12);
    c->n_shards = (int)get_u32(h + 16);
    uint32_t ml = get_u32(h + 20);
    uint64_t io = get_u64(h + 24), size = (uint64_t)sb.st_size;
    if ((c->id_bytes != 2 && c->id_bytes != 4) || c->n_shards <= 0 || io < HEADER_BYTES ||
        io + (uint64_t)c->n_shards * INDEX_ENTRY_BYTES + ml != size)
        OPEN_FAIL(TOKEN_CACHE_BAD, "%s: corrupt or truncated token cache", path);
    size_t ib = (size_t)c->n_shards * INDEX_ENTRY_BYTES;
    unsigned char *idx = xmalloc(ib + ml + 1);
    int ok = fseek(c->f, (long)io, SEEK_SET) == 0 && fread(idx, 1, ib + ml, c->f) == ib + ml;
    idx[ib + ml] = '\0';
    c->meta = ok ? cJSON_Parse((const char *)idx + ib) : NULL;
    c->shard_offset = xmalloc((size_t)c->n_shards * sizeof *c->shard_offset);
    c->shard_entries = xmalloc((size_t)c->n_shards * sizeof *c->shard_entries);
    c->shard_crc = xmalloc((size_t)c->n_shards * sizeof *c->shard_crc);
    for (int s = 0; ok && s < c->n_shards; s++) {
        const unsigned char *e = idx + (size_t)s * INDEX_ENTRY_BYTES;
        c->shard_offset[s] = get_u64(e);
        c->shard_entries[s] = get_u64(e + 8);
        c->shard_crc[s] = get_u32(e + 16);
        ok = c->shard_entries[s] > 0 && c->shard_offset[s] >= HEADER_BYTES &&
             c->shard_offset[s] + c->shard_entries[s] * (uint64_t)c->id_bytes <= io;
    }
    free(idx);
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(c->meta, "tokens");
    const cJSON *docs = cJSON_GetObjectItemCaseSensitive(c->meta, "docs");
    if (!ok || !cJSON_IsNumber(tokens) || !cJSON_IsNumber(docs))
        OPEN_FAIL(TOKEN_CACHE_BAD, "%s: corrupt token cache index", path);
    c->n_tokens = (long)tokens->valuedouble;
    c->n_docs = (long)docs->valuedouble;
    if (key && !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(c->meta, "key"), key, 1))
        OPEN_FAIL(TOKEN_CACHE_STALE, "%s: made from other corpus files or another vocabulary", path);
    *st = TOKEN_CACHE_OK;
    if (cap) err[0] = '\0';
    return c;
}

void token_cache_reserve(TokenCache *c, long entries) {
    size_t bytes = (size_t)entries * (size_t)c->id_bytes;
    if (bytes > c->raw_cap) {
        c->raw = xrealloc(c->raw, bytes);
        c->raw_cap = bytes;
    }
}

long token_cache_read_shard(TokenCache *c, int s, int32_t **ids, long *cap) {
    CHECK_OR_DIE(s >= 0 && s < c->n_shards);
    long n = (long)c->shard_entries[s];
    size_t bytes = (size_t)n * (size_t)c->id_bytes;
    token_cache_reserve(c, n);
    if (fseek(c->f, (long)c->shard_offset[s], SEEK_SET) || fread(c->raw, 1, bytes, c->f) != bytes) {
        user_error_io("delete the cache file to rebuild it", "%s: cannot read shard %d", c->path, s);
        return -1;
    }
    if (crc32_update(0, c->raw, bytes) != c->shard_crc[s]) {
        user_error_data("delete the cache file to rebuild it", "%s: shard %d is corrupt (CRC mismatch)", c->path, s);
        return -1;
    }
    if (n > *cap) {
        *ids = xrealloc(*ids, (size_t)n * sizeof **ids);
        *cap = n;
    }
    int32_t *out = *ids;
    if (c->id_bytes == 2) {
        const uint16_t *r = c->raw;
        for (long i = 0; i < n; i++) out[i] = r[i] == 0xFFFFu ? TOKEN_CACHE_EOD : (int32_t)r[i];
    } else {
        const uint32_t *r = c->raw;
        for (long i = 0; i < n; i++) out[i] = r[i] == 0xFFFFFFFFu ? TOKEN_CACHE_EOD : (int32_t)r[i];
    }
    return n;
}

/* ---- finding ---- */

const char *token_cache_default_dir(void) {
    static char dir[4096];
    const char *env = getenv("GLUE_CACHE");
    if (env && *env) return env;
    const char *home = getenv("HOME");
    if (home && *home) {
        snprintf(dir, sizeof dir, "%s/.cache/glue", home);
        return dir;
    }
    return ".glue-cache";
}

TokenCache *token_cache_find(const TokenCacheBuild *b, const char *dir) {
    cJSON *key = token_cache_key(b);
    if (!key) return NULL;
    char *ks = cJSON_PrintUnformatted(key);
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/tokens-%08x.bin", dir, crc32_update(0, ks, strlen(ks)));
    free(ks);
    TokenCacheStatus st;
    TokenCache *c = token_cache_open(path, key, &st, err, sizeof err);
    if (!c) {
        if (st == TOKEN_CACHE_BAD) user_warning("%s; rebuilding it", err);
        if (b->show_progress) fprintf(stderr, "tokenizing the corpus once into %s\n", path);
        if (file_make_dir(dir) == 0 && token_cache_build(b, path) == 0) {
            c = token_cache_open(path, key, &st, err, sizeof err);
            if (!c) user_error(NULL, "%s", err);
        }
    }
    cJSON_Delete(key);
    return c;
}
