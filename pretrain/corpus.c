/* corpus.c — streaming pretraining text readers (see corpus.h). */
#include "pretrain/corpus.h"

#include "core/common.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    CorpusFormat format;
} FORMATS[] = {
    {"text", CORPUS_TEXT},         {"wikiextractor", CORPUS_WIKIEXTRACTOR}, {"brown", CORPUS_BROWN},
    {"wikitext", CORPUS_WIKITEXT}, {"auto", CORPUS_AUTO},
};
enum { NUM_FORMATS = (int)(sizeof FORMATS / sizeof FORMATS[0]) };

int corpus_parse_format(const char *name, CorpusFormat *f) {
    for (int i = 0; i < NUM_FORMATS; i++)
        if (strcmp(name, FORMATS[i].name) == 0) { *f = FORMATS[i].format; return 0; }
    return -1;
}

const char *corpus_format_name(CorpusFormat f) {
    for (int i = 0; i < NUM_FORMATS; i++)
        if (FORMATS[i].format == f) return FORMATS[i].name;
    return "?";
}

const char *corpus_unk_marker(CorpusFormat f) { return f == CORPUS_WIKITEXT ? "<unk>" : NULL; }

int corpus_guess_format(const char *path, CorpusFormat *f) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strstr(base, "brown")) { *f = CORPUS_BROWN; return 0; }
    if (strncmp(base, "wiki.", 5) == 0 && strstr(base, ".tokens")) { *f = CORPUS_WIKITEXT; return 0; }
    LineReader lr;
    if (lines_open_or_report(&lr, path)) return -1;
    char *line;
    size_t len;
    int got = lines_next(&lr, &line, &len);
    if (got < 0) {
        lines_report(&lr);
        lines_close(&lr);
        return -1;
    }
    *f = got == 1 && strncmp(line, "<doc ", 5) == 0 ? CORPUS_WIKIEXTRACTOR : CORPUS_TEXT;
    lines_close(&lr);
    return 0;
}

/* ---- cleaning ---- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* line[*b, *e) without surrounding whitespace. */
static void trim(const char *line, size_t *b, size_t *e) {
    while (*b < *e && is_space(line[*b])) (*b)++;
    while (*e > *b && is_space(line[*e - 1])) (*e)--;
}

size_t corpus_clean_brown(const char *line, size_t len, char *out) {
    size_t n = 0, i = 0;
    while (i < len) {
        while (i < len && is_space(line[i])) i++;
        size_t s = i;
        while (i < len && !is_space(line[i])) i++;
        if (s == i) break;
        size_t e = i;                        /* token line[s, e): word/tag */
        for (size_t k = e; k > s; k--)
            if (line[k - 1] == '/') { e = k - 1; break; }
        if (e == s) continue;                /* "/tag" with no word */
        if (n) out[n++] = ' ';
        /* Brown writes opening and closing quotes as `` and ''. */
        if (e - s == 2 && ((line[s] == '`' && line[s + 1] == '`') || (line[s] == '\'' && line[s + 1] == '\''))) {
            out[n++] = '"';
            continue;
        }
        memcpy(out + n, line + s, e - s);
        n += e - s;
    }
    out[n] = '\0';
    return n;
}

size_t corpus_clean_wikitext(const char *line, size_t len, char *out) {
    size_t b = 0, e = len, n = 0;
    trim(line, &b, &e);
    for (size_t i = b; i < e;) {
        /* " @x@ " joins its neighbours with x: "1 @,@ 000" -> "1,000". */
        if (i + 5 <= e && line[i] == ' ' && line[i + 1] == '@' && line[i + 3] == '@' && line[i + 4] == ' ' &&
            (line[i + 2] == '-' || line[i + 2] == '.' || line[i + 2] == ',')) {
            out[n++] = line[i + 2];
            i += 5;
            continue;
        }
        out[n++] = line[i++];
    }
    out[n] = '\0';
    return n;
}

/* ---- reading ---- */

void corpus_open(CorpusReader *r, const CorpusFile *files, int n) {
    memset(r, 0, sizeof *r);
    r->files = files;
    r->n_files = n;
    r->file = -1;
}

void corpus_close(CorpusReader *r) {
    if (r->open) lines_close(&r->lr);
    r->open = 0;
    free(r->buf);
    r->buf = NULL;
}

/* Opens the next file; 1 ok, 0 none left, -1 error. */
static int corpus_open_next(CorpusReader *r) {
    if (r->open) lines_close(&r->lr);
    r->open = 0;
    if (++r->file >= r->n_files) { r->file = r->n_files; return 0; }
    const CorpusFile *f = &r->files[r->file];
    r->format = f->format;
    if (r->format == CORPUS_AUTO && corpus_guess_format(f->path, &r->format)) return -1;
    if (lines_open_or_report(&r->lr, f->path)) return -1;
    r->open = 1;
    r->skip_title = 0;
    r->doc_pending = 1;
    return 1;
}

/* Applies the format to one raw line: 1 and the unit in *text and *len, 0 when the
 * line carries no text (markup, blank, heading). Sets doc_pending on a document
 * boundary. */
static int corpus_clean_line(CorpusReader *r, char *line, size_t len, const char **text, size_t *out_len) {
    size_t b = 0, e = len;
    trim(line, &b, &e);
    switch (r->format) {
    case CORPUS_WIKIEXTRACTOR:
        if (e - b >= 5 && strncmp(line + b, "<doc ", 5) == 0) {
            r->doc_pending = 1;
            r->skip_title = 1;
            return 0;
        }
        if (e - b == 6 && strncmp(line + b, "</doc>", 6) == 0) return 0;
        if (b == e) return 0;
        if (r->skip_title) { r->skip_title = 0; return 0; }
        break;
    case CORPUS_TEXT:
        if (b == e) { r->doc_pending = 1; return 0; }
        break;
    case CORPUS_BROWN:
    case CORPUS_WIKITEXT:
        if (b == e) return 0;
        if (r->format == CORPUS_WIKITEXT && e - b >= 3 && line[b] == '=' && line[e - 1] == '=') {
            /* "= Title =" starts an article; "= = Section = =" is just dropped. */
            if (!(e - b >= 3 && line[b + 1] == ' ' && line[b + 2] == '=')) r->doc_pending = 1;
            return 0;
        }
        if (r->cap < len + 1) {
            r->cap = len + 1 > 2 * r->cap ? len + 1 : 2 * r->cap;
            r->buf = xrealloc(r->buf, r->cap);
        }
        e = r->format == CORPUS_BROWN ? corpus_clean_brown(line, len, r->buf)
                                      : corpus_clean_wikitext(line, len, r->buf);
        if (e == 0) return 0;
        *text = r->buf;
        *out_len = e;
        return 1;
    case CORPUS_AUTO:
        DIE("corpus format not resolved");
    }
    *text = line + b;
    *out_len = e - b;
    return 1;
}

int corpus_next(CorpusReader *r, const char **text, size_t *len, int *new_doc) {
    for (;;) {
        if (!r->open) {
            int rc = corpus_open_next(r);
            if (rc <= 0) return rc;
        }
        char *line;
        size_t n;
        int got = lines_next(&r->lr, &line, &n);
        if (got < 0) {
            lines_report(&r->lr);
            return -1;
        }
        if (got == 0) {
            lines_close(&r->lr);
            r->open = 0;
            continue;
        }
        if (!corpus_clean_line(r, line, n, text, len)) continue;
        *new_doc = r->doc_pending;
        r->docs += r->doc_pending;
        r->doc_pending = 0;
        r->units++;
        return 1;
    }
}
