/* fetch.c — `glue data fetch` (see fetch.h): GLUE, GoEmotions, Multi30k and the
 * pretraining text from a mirror folder or the official URLs, every file checked
 * against its official row count, installed atomically (temporary name, then
 * rename).
 *
 * Layout written (the same as the mirror's, GLUE files decompressed):
 *   <glue root>/<TASK dir>/<split>.tsv       (data/glue, $GLUE_DATA or <dest>/glue)
 *   <glue root>/subsets/<TASK>/<split>.json  (the GLUE training subsets, mirror only;
 *                                             checked by their entry counts)
 *   <glue root>/<dir>/<split>.tsv            (other benchmarks, tasks/extra.c: GoEmotions;
 *                                             <dir>/ at the top of the mirror)
 *   <dest>/mt/multi30k/{raw,tok}/<file>      (Multi30k en-de, decompressed)
 *   <dest>/pretrain/<corpus>/<file>.gz       (symlinks into the mirror: 86 MB+) */
#include "data/fetch.h"

#include "core/common.h"
#include "core/editdist.h"
#include "core/exit_codes.h"
#include "core/lines.h"
#include "tasks/task.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define GLUE_URL_BASE "https://dl.fbaipublicfiles.com/glue/data/"
#define SENTEVAL_URL_BASE "https://dl.fbaipublicfiles.com/senteval/senteval_data/"
#define MRPC_DEV_IDS_URL \
    "https://raw.githubusercontent.com/MegEngine/Models/master/official/nlp/bert/glue_data/MRPC/dev_ids.tsv"
#define MULTI30K_URL_BASE "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/"
#define GOEMOTIONS_URL_BASE "https://raw.githubusercontent.com/google-research/google-research/master/goemotions/data/"

/* Where each GLUE task comes from (download_glue_data.py). MRPC is rebuilt from
 * the SentEval copy of the MSR corpus; AX is a bare TSV. */
static const struct { const char *task, *url; } GLUE_SOURCES[] = {
    {"cola", GLUE_URL_BASE "CoLA.zip"},      {"sst2", GLUE_URL_BASE "SST-2.zip"},
    {"mrpc", SENTEVAL_URL_BASE "msr_paraphrase_train.txt"},
    {"stsb", GLUE_URL_BASE "STS-B.zip"},     {"qqp", GLUE_URL_BASE "QQP-clean.zip"},
    {"mnli", GLUE_URL_BASE "MNLI.zip"},      {"qnli", GLUE_URL_BASE "QNLIv2.zip"},
    {"rte", GLUE_URL_BASE "RTE.zip"},        {"wnli", GLUE_URL_BASE "WNLI.zip"},
    {"ax", GLUE_URL_BASE "AX.tsv"},
};

/* Where each other benchmark's split files come from (<base><split file>). */
static const struct { const char *task, *url_base; } EXTRA_SOURCES[] = {
    {"goemotions", GOEMOTIONS_URL_BASE},
};

/* Multi30k task 1 (en-de): line counts of ../shared/data/MANIFEST.md. */
static const struct { const char *split; long lines; } MULTI30K_SPLITS[] = {
    {"train", 29000}, {"val", 1014}, {"test_2016_flickr", 1000},
    {"test_2017_flickr", 1000}, {"test_2017_mscoco", 461}, {"test_2018_flickr", 1071},
};

/* Pretraining text: mirror only (no official download of these exact slices). */
static const struct { const char *rel; long lines; } PRETRAIN_FILES[] = {
    {"enwiki-2015-wikiextractor/enwiki_2015_AA00-AC29.txt", 771862},
    {"enwiki-2015-wikiextractor/enwiki_2015_AC30-AD99.txt", 601698},
    {"wikitext-2/wiki.valid.tokens", 3760},
    {"wikitext-2/wiki.test.tokens", 4358},
    {"brown/brown_tagged.txt", 89329},
    {"brown/cats.txt", 500},
    {"brown/README", 15},
};

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum {
    FETCH_MAX_TASKS = 16,   /* >= NUM_TASKS (checked at run time) */
    FETCH_MAX_ITEMS = 128,  /* GLUE splits + Multi30k + pretraining files */
};

typedef enum { AREA_GLUE, AREA_MT, AREA_PRETRAIN, AREA_SUBSETS, AREA_EXTRA, NUM_AREAS } FetchArea;
/* Under the mirror; AREA_EXTRA is the mirror's top ("goemotions/..."). */
static const char *const AREA_DIRS[NUM_AREAS] = {"glue", "mt/multi30k", "pretrain", "glue-subsets", ""};
#define SUBSETS_DIR "subsets"   /* under the GLUE root, as the subset tasks' dirs say */

typedef struct {
    FetchArea area;
    char rel[256];          /* path under the area root: "CoLA/train.tsv", "raw/train.en" */
    long expected_rows;     /* official rows, header excluded */
    int header;             /* header lines before the rows */
    int link;               /* symlink the mirror file instead of copying it */
    int group;              /* download unit: GLUE task index, or -1 (one file) */
    const TaskSplit *split; /* a GLUE split: rows counted as loading counts them
                               (JSON entries for a subset); NULL: lines */
    char url[512];          /* official source ("" when there is none) */
} FetchItem;

typedef enum { FETCH_UP_TO_DATE, FETCH_COPIED, FETCH_LINKED, FETCH_MISSING, FETCH_FAILED, NUM_FETCH_STATUS } FetchStatus;
static const char *const STATUS_NAMES[NUM_FETCH_STATUS] = {"up to date", "copied", "linked", "missing", "FAILED"};
static const char *const STATUS_KEYS[NUM_FETCH_STATUS] = {"up_to_date", "copied", "linked", "missing", "failed"};

typedef struct {
    FetchStatus status;
    long rows;              /* -1 when unknown */
    char path[4096];        /* destination */
    char msg[1024];
} FetchResult;

typedef struct {
    const FetchOptions *o;
    char src[NUM_AREAS][4096];  /* mirror (or staging) area roots; "" when absent */
    char dst[NUM_AREAS][4096];
    char staging[4096];         /* download mode: temporary mirror under the data root */
    int staged[FETCH_MAX_TASKS];    /* per GLUE task: 0 not yet, 1 ok, -1 failed */
    char stage_err[FETCH_MAX_TASKS][512];
    int offline;                /* a download found no network: do not try the rest */
    char net_err[512];          /* the download error that showed it */
} FetchCtx;

/* ---- small file-system helpers ---- */

/* snprintf without the return value to check: paths and messages here are far
 * below the buffer sizes (PATH_MAX), and a cut path fails loudly when opened. */
static void fmt(char *out, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));

static void fmt(char *out, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    vsnprintf(out, cap, f, ap);
    va_end(ap);
}

static int mkdir_p(const char *dir) {
    char p[4096];
    fmt(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int mkdir_parent(const char *path) {
    char d[4096];
    fmt(d, sizeof d, "%s", path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) return 0;
    *slash = '\0';
    return mkdir_p(d);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir) {
    if (dir[0] && is_dir(dir)) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- external tools (curl, unzip) ---- */

static const char *curl_reason(int code) {
    switch (code) {
    case 6: return "could not resolve host — no internet connection?";
    case 7: return "could not connect — no internet connection?";
    case 22: return "HTTP error (the file may have moved)";
    case 28: return "timed out";
    case 35: case 60: return "TLS/certificate problem";
    default: return "see curl's message above";
    }
}

/* Run argv[0] from PATH and wait. 0 on exit status 0; else -1 with err filled
 * ("what" names the job in the message: the URL for curl, the archive for unzip). */
static int run_tool(const char *const argv[], const char *what, char *err, size_t cap) {
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, environ);
    if (rc != 0) {
        if (rc == ENOENT) fmt(err, cap, "%s not found on PATH (install it, or use --mirror DIR)", argv[0]);
        else fmt(err, cap, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) { fmt(err, cap, "waiting for %s: %s", argv[0], strerror(errno)); return -1; }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (strcmp(argv[0], "curl") == 0)
        fmt(err, cap, "download of %s failed (curl exit %d: %s)", what, code, curl_reason(code));
    else
        fmt(err, cap, "%s %s failed (exit %d)", argv[0], what, code);
    return -1;
}

static int download(FetchCtx *c, const char *url, const char *out, char *err, size_t cap) {
    if (c->offline) { fmt(err, cap, "not downloaded: no internet connection (see above)"); return -1; }
    if (mkdir_parent(out) != 0) { fmt(err, cap, "%s: cannot create folder: %s", out, strerror(errno)); return -1; }
    const char *argv[] = {"curl", "-fsSL", "--retry", "2", "--connect-timeout", "20", "-o", out, url, NULL};
    if (!c->o->json) fprintf(stderr, "downloading %s\n", url);
    if (run_tool(argv, url, err, cap) == 0) return 0;
    if (strstr(err, "no internet") || strstr(err, "not found on PATH")) {
        c->offline = 1;
        fmt(c->net_err, sizeof c->net_err, "%s", err);
    }
    return -1;
}

/* ---- MRPC: train/dev/test.tsv from the SentEval MSR files (download_glue_data.py) ---- */

/* In place, the characters Python's str.strip() removes that can occur here. */
static char *py_strip(char *s) {
    static const char WS[] = " \t\n\r\v\f\x1c\x1d\x1e\x1f";
    while (*s && strchr(WS, *s)) s++;
    size_t n = strlen(s);
    while (n > 0 && strchr(WS, s[n - 1])) s[--n] = '\0';
    return s;
}

static int count_char(const char *s, char ch) {
    int n = 0;
    for (; *s; s++) n += *s == ch;
    return n;
}

static int mrpc_open(const char *dir, const char *name, LineReader *r, char *err, size_t cap) {
    char path[4096];
    fmt(path, sizeof path, "%s/%s", dir, name);
    if (lines_open_any(r, path) == LINES_OK) return 0;
    fmt(err, cap, "%s", r->err);
    lines_close(r);
    return -1;
}

/* The (id1, id2) pairs of dev_ids.tsv, each kept as "id1\tid2". */
static char **mrpc_dev_ids(const char *dir, int *n, char *err, size_t cap) {
    LineReader r;
    if (mrpc_open(dir, "dev_ids.tsv", &r, err, cap) != 0) return NULL;
    char **ids = NULL, *line;
    size_t len;
    int k, cap_ids = 0;
    *n = 0;
    while ((k = lines_next(&r, &line, &len)) > 0) {
        if (*n == cap_ids) ids = xrealloc(ids, (size_t)(cap_ids = cap_ids ? 2 * cap_ids : 512) * sizeof *ids);
        ids[(*n)++] = xstrdup(py_strip(line));
    }
    if (k < 0) fmt(err, cap, "%s", r.err);
    lines_close(&r);
    if (k < 0) {
        while (*n > 0) free(ids[--*n]);
        free(ids);
        return NULL;
    }
    return ids;
}

static int mrpc_is_dev(char *const *ids, int n, const char *row) {
    const char *id1 = strchr(row, '\t') + 1;          /* row: label, id1, id2, s1, s2 */
    size_t len = (size_t)(strchr(strchr(id1, '\t') + 1, '\t') - id1);
    for (int i = 0; i < n; i++)
        if (strlen(ids[i]) == len && strncmp(ids[i], id1, len) == 0) return 1;
    return 0;
}

/* Copy rows of src (header first) to out[0] (train) / out[1] (dev) by dev id, or,
 * for the test file (ids == NULL), to out[0] numbered and without the label. */
static int mrpc_split(const char *dir, const char *src, char *const *ids, int nids, FILE *out[2],
                      char *err, size_t cap) {
    LineReader r;
    if (mrpc_open(dir, src, &r, err, cap) != 0) return -1;
    char *line;
    size_t len;
    int k, rc = 0;
    long idx = 0;
    while (rc == 0 && (k = lines_next(&r, &line, &len)) > 0) {
        if (r.line_no == 1) {
            if (ids) { fprintf(out[0], "%s\n", line); fprintf(out[1], "%s\n", line); }
            else fputs("index\t#1 ID\t#2 ID\t#1 String\t#2 String\n", out[0]);
            continue;
        }
        char *row = py_strip(line);
        if (*row == '\0') continue;
        if (count_char(row, '\t') != 4) {
            fmt(err, cap, "%s:%ld: expected 5 tab-separated columns", r.path, r.line_no);
            rc = -1;
        } else if (ids) {
            fprintf(out[mrpc_is_dev(ids, nids, row)], "%s\n", row);
        } else {
            fprintf(out[0], "%ld\t%s\n", idx++, strchr(row, '\t') + 1);
        }
    }
    if (rc == 0 && k < 0) { fmt(err, cap, "%s", r.err); rc = -1; }
    lines_close(&r);
    return rc;
}

static FILE *open_out(const char *dir, const char *name, char *err, size_t cap) {
    char path[4096];
    fmt(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) fmt(err, cap, "%s: cannot create: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *dir, const char *name, int rc, char *err, size_t cap) {
    if (!f) return -1;
    if (fclose(f) != 0 && rc == 0) {
        fmt(err, cap, "%s/%s: write failed: %s", dir, name, strerror(errno));
        return -1;
    }
    return rc;
}

int data_mrpc_build(const char *dir, char *err, size_t err_cap) {
    int nids = 0;
    char **ids = mrpc_dev_ids(dir, &nids, err, err_cap);
    if (!ids) return -1;
    FILE *out[2] = {open_out(dir, "train.tsv", err, err_cap), open_out(dir, "dev.tsv", err, err_cap)};
    int rc = out[0] && out[1] ? mrpc_split(dir, "msr_paraphrase_train.txt", ids, nids, out, err, err_cap) : -1;
    rc = close_out(out[0], dir, "train.tsv", rc, err, err_cap);
    rc = close_out(out[1], dir, "dev.tsv", rc, err, err_cap);
    for (int i = 0; i < nids; i++) free(ids[i]);
    free(ids);
    if (rc != 0) return -1;
    FILE *test[2] = {open_out(dir, "test.tsv", err, err_cap), NULL};
    rc = test[0] ? mrpc_split(dir, "msr_paraphrase_test.txt", NULL, 0, test, err, err_cap) : -1;
    return close_out(test[0], dir, "test.tsv", rc, err, err_cap);
}

/* ---- download mode: fill a staging folder laid out like a mirror ---- */

static const char *glue_source(const Task *t) {
    for (int i = 0; i < COUNT_OF(GLUE_SOURCES); i++)
        if (strcmp(GLUE_SOURCES[i].task, t->name) == 0) return GLUE_SOURCES[i].url;
    DIE("no download source for task %s", t->name);
}

static const char *extra_source(const Task *t) {
    for (int i = 0; i < COUNT_OF(EXTRA_SOURCES); i++)
        if (strcmp(EXTRA_SOURCES[i].task, t->name) == 0) return EXTRA_SOURCES[i].url_base;
    DIE("no download source for task %s", t->name);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int stage_mrpc(FetchCtx *c, const char *glue, char *err, size_t cap) {
    static const char *const FILES[][2] = {
        {SENTEVAL_URL_BASE "msr_paraphrase_train.txt", "msr_paraphrase_train.txt"},
        {SENTEVAL_URL_BASE "msr_paraphrase_test.txt", "msr_paraphrase_test.txt"},
        {MRPC_DEV_IDS_URL, "dev_ids.tsv"},
    };
    char dir[4096], out[4096 + 64];
    fmt(dir, sizeof dir, "%s/MRPC", glue);
    for (int i = 0; i < COUNT_OF(FILES); i++) {
        fmt(out, sizeof out, "%s/%s", dir, FILES[i][1]);
        if (download(c, FILES[i][0], out, err, cap) != 0) return -1;
    }
    return data_mrpc_build(dir, err, cap);
}

/* Download (and unpack) GLUE task ti into the staging mirror, once. */
static int stage_glue(FetchCtx *c, int ti, char *err, size_t cap) {
    if (c->staged[ti]) {
        fmt(err, cap, "%s", c->stage_err[ti]);
        return c->staged[ti] > 0 ? 0 : -1;
    }
    const Task *t = &TASKS[ti];
    const char *glue = c->src[AREA_GLUE], *url = glue_source(t);
    char out[4096 + 256];
    int rc;
    if (strcmp(t->name, "mrpc") == 0) {
        rc = stage_mrpc(c, glue, err, cap);
    } else if (ends_with(url, ".zip")) {      /* the archive holds <TASK dir>/<files> */
        fmt(out, sizeof out, "%s/%s", glue, strrchr(url, '/') + 1);
        const char *argv[] = {"unzip", "-q", "-o", out, "-d", glue, NULL};
        rc = download(c, url, out, err, cap) == 0 ? run_tool(argv, out, err, cap) : -1;
        remove(out);
    } else {                                  /* AX: the bare test file */
        fmt(out, sizeof out, "%s/%s/%s", glue, t->dir, t->splits[0].file);
        rc = download(c, url, out, err, cap);
    }
    c->staged[ti] = rc == 0 ? 1 : -1;
    fmt(c->stage_err[ti], sizeof c->stage_err[ti], "%s", rc == 0 ? "" : err);
    return rc;
}

/* Make the item's source exist under c->src (download it when needed). */
static int stage_item(FetchCtx *c, const FetchItem *it, char *err, size_t cap) {
    if (it->area == AREA_GLUE) return stage_glue(c, it->group, err, cap);
    if (!it->url[0]) {
        fmt(err, cap, "no download source: %s comes from a mirror only "
                      "(--mirror DIR or $GLUE_MIRROR, laid out like ../shared/data)",
            it->area == AREA_SUBSETS ? "the GLUE training subset" : "the pretraining text");
        return -1;
    }
    char out[4096 + 512];
    fmt(out, sizeof out, "%s/%s%s", c->src[it->area], it->rel, ends_with(it->url, ".gz") ? ".gz" : "");
    return download(c, it->url, out, err, cap);
}

/* ---- install one file: check, copy (or link), count, rename ---- */

/* 1 when dst (plain or .gz) already has the official row count. Otherwise 0, with
 * what is wrong with it (if it exists) in res->msg. */
/* Rows of a file as the item counts them: JSON entries of a subset split, else
 * lines less the header. LINES_OK, or a status with err. */
static LinesStatus count_rows(const FetchItem *it, const char *path, long *rows, char *err, size_t cap) {
    if (it->split && it->split->format == TASK_FORMAT_ENTRIES)
        return (LinesStatus)task_count_rows(it->split, path, rows, err, cap);
    long lines = 0;
    LinesStatus st = lines_count(path, &lines, err, cap);
    *rows = lines - it->header;
    return st;
}

static int check_existing(const FetchItem *it, const char *dst_plain, FetchResult *res) {
    char found[4096], err[4600];
    if (lines_find(dst_plain, found, sizeof found) != 0) return 0;
    if (count_rows(it, found, &res->rows, err, sizeof err) != LINES_OK) {
        res->rows = -1;
        fmt(res->msg, sizeof res->msg, "existing file unreadable (%.900s)", err);
        return 0;
    }
    fmt(res->path, sizeof res->path, "%s", found);
    if (res->rows == it->expected_rows) return 1;
    fmt(res->msg, sizeof res->msg, "existing file has %ld rows, official %ld", res->rows, it->expected_rows);
    return 0;
}

/* Put src at dst_plain: a decompressed copy, or a symlink (named .gz when src is),
 * installed only once its row count is the official one. */
static FetchStatus install_file(const FetchItem *it, const char *src, const char *dst_plain, FetchResult *res) {
    char tmp[4096 + 32], dst[4096 + 8], err[4600];
    long lines = 0;
    fmt(dst, sizeof dst, "%s%s", dst_plain, it->link && ends_with(src, ".gz") ? ".gz" : "");
    if (mkdir_parent(dst) != 0) {   /* --dest unwritable: the command's failure is an I/O one (74), not 1 */
        fmt(res->msg, sizeof res->msg, "cannot create the folder of %s: %s", dst, strerror(errno));
        exit_code_note(EXIT_IO);
        return FETCH_FAILED;
    }
    fmt(tmp, sizeof tmp, "%s.part%ld", dst, (long)getpid());
    LinesStatus st;
    if (it->link) {
        char target[PATH_MAX];
        if (!realpath(src, target) || symlink(target, tmp) != 0) {
            fmt(res->msg, sizeof res->msg, "cannot link %s: %s", src, strerror(errno));
            return FETCH_FAILED;
        }
        st = lines_count(tmp, &lines, err, sizeof err);
    } else {
        st = lines_copy(src, tmp, &lines, err, sizeof err);
    }
    res->rows = lines - it->header;
    if (st == LINES_OK && it->split && it->split->format == TASK_FORMAT_ENTRIES)
        st = count_rows(it, tmp, &res->rows, err, sizeof err);
    if (st != LINES_OK || res->rows != it->expected_rows) {
        if (st == LINES_IO) exit_code_note(EXIT_IO);   /* a read or write that failed (a full disk): 74, not 1 */
        if (st != LINES_OK) fmt(res->msg, sizeof res->msg, "%.1000s", err);
        else fmt(res->msg, sizeof res->msg, "%s has %ld rows, official %ld (short or wrong file; not installed)",
                 src, res->rows, it->expected_rows);
        remove(tmp);
        return FETCH_FAILED;
    }
    if (rename(tmp, dst) != 0) {
        exit_code_note(EXIT_IO);
        fmt(res->msg, sizeof res->msg, "cannot rename %s: %s", tmp, strerror(errno));
        remove(tmp);
        return FETCH_FAILED;
    }
    fmt(res->path, sizeof res->path, "%s", dst);
    return it->link ? FETCH_LINKED : FETCH_COPIED;
}

static void fetch_item(FetchCtx *c, const FetchItem *it, FetchResult *res) {
    char dst_plain[4096 + 256], src_plain[4096 + 256], src[4096 + 256], err[512];
    memset(res, 0, sizeof *res);
    res->rows = -1;
    fmt(dst_plain, sizeof dst_plain, "%s/%s", c->dst[it->area], it->rel);
    fmt(res->path, sizeof res->path, "%s", dst_plain);
    if (check_existing(it, dst_plain, res)) { res->status = FETCH_UP_TO_DATE; return; }
    if (!c->o->mirror && stage_item(c, it, err, sizeof err) != 0) {
        res->status = it->url[0] ? FETCH_FAILED : FETCH_MISSING;
        fmt(res->msg, sizeof res->msg, "%s", err);
        return;
    }
    fmt(src_plain, sizeof src_plain, "%s/%s", c->src[it->area], it->rel);
    if (!c->src[it->area][0] || lines_find(src_plain, src, sizeof src) != 0) {
        res->status = c->o->mirror ? FETCH_MISSING : FETCH_FAILED;
        if (c->o->mirror)
            fmt(res->msg, sizeof res->msg, "not in the mirror %s%s%s", c->o->mirror,
                it->url[0] ? "; official source: " : "", it->url);
        else
            fmt(res->msg, sizeof res->msg, "the download has no %s", it->rel);
        return;
    }
    res->status = install_file(it, src, dst_plain, res);
}

/* ---- what to fetch ---- */

typedef struct {
    int glue[FETCH_MAX_TASKS];  /* per task index: selected */
    int subset[FETCH_MAX_TASKS];  /* per SUBSET_TASKS index: selected */
    int extra[FETCH_MAX_TASKS];   /* per EXTRA_TASKS index: selected */
    int mt, pretrain;
    int lenient;            /* "all": what a mirror lacks is reported, not fatal */
} FetchSelection;

static int select_what(const char *const *what, int n, FetchSelection *sel) {
    static const char *const ALL[] = {"all"};
    memset(sel, 0, sizeof *sel);
    if (n == 0) { what = ALL; n = 1; }
    for (int i = 0; i < n; i++) {
        const char *w = what[i];
        int all = strcasecmp(w, "all") == 0;
        sel->lenient |= all;
        if (all || strcasecmp(w, "glue") == 0)
            for (int k = 0; k < NUM_TASKS; k++) sel->glue[k] = 1;
        if (all || strcasecmp(w, "subsets") == 0)
            for (int k = 0; k < NUM_SUBSET_TASKS; k++) sel->subset[k] = 1;
        for (int k = 0; all && k < NUM_EXTRA_TASKS; k++) sel->extra[k] = 1;
        if (all || strcasecmp(w, "mt") == 0) sel->mt = 1;
        if (all || strcasecmp(w, "pretrain") == 0) sel->pretrain = 1;
        if (all || strcasecmp(w, "glue") == 0 || strcasecmp(w, "mt") == 0 || strcasecmp(w, "pretrain") == 0 ||
            strcasecmp(w, "subsets") == 0)
            continue;
        const Task *t = task_find(w);
        if (!t) {
            char tail[96];
            user_error("fetch takes a task id ('glue tasks' lists them), glue, subsets, mt, pretrain or all",
                       "unknown dataset '%s'%s", w, str_did_you_mean(task_suggest(w), tail, sizeof tail));
            return -1;
        }
        if (t->subset_of) sel->subset[t - SUBSET_TASKS] = 1;
        else if (t >= EXTRA_TASKS && t < EXTRA_TASKS + NUM_EXTRA_TASKS) sel->extra[t - EXTRA_TASKS] = 1;
        else sel->glue[t - TASKS] = 1;
    }
    return 0;
}

static FetchItem *item_add(FetchItem *items, int *n, FetchArea area, long rows) {
    if (*n >= FETCH_MAX_ITEMS) DIE("too many fetch items");
    FetchItem *it = &items[(*n)++];
    memset(it, 0, sizeof *it);
    it->area = area;
    it->expected_rows = rows;
    it->group = -1;
    return it;
}

static int items_build(const FetchSelection *sel, FetchItem *items) {
    int n = 0;
    for (int ti = 0; ti < NUM_TASKS; ti++) {
        if (!sel->glue[ti]) continue;
        const Task *t = &TASKS[ti];
        for (int k = 0; k < t->num_splits; k++) {
            const TaskSplit *s = &t->splits[k];
            FetchItem *it = item_add(items, &n, AREA_GLUE, s->official_rows);
            fmt(it->rel, sizeof it->rel, "%s/%s", t->dir, s->file);
            fmt(it->url, sizeof it->url, "%s", glue_source(t));
            it->header = s->has_header;
            it->group = ti;
            it->split = s;
        }
    }
    /* A subset task's own files, and official splits it borrows (qnli-9k: QNLI's dev). */
    for (int ti = 0; ti < NUM_SUBSET_TASKS; ti++) {
        if (!sel->subset[ti]) continue;
        const Task *t = &SUBSET_TASKS[ti];
        for (int k = 0; k < t->num_splits; k++) {
            const TaskSplit *s = &t->splits[k];
            const Task *official = s->dir ? task_find(t->subset_of) : NULL;
            FetchItem *it = item_add(items, &n, official ? AREA_GLUE : AREA_SUBSETS, s->official_rows);
            if (official) {
                fmt(it->rel, sizeof it->rel, "%s/%s", s->dir, s->file);
                fmt(it->url, sizeof it->url, "%s", glue_source(official));
                it->group = (int)(official - TASKS);
            } else {   /* "subsets/MNLI" -> "MNLI/train.json" under the subsets area */
                fmt(it->rel, sizeof it->rel, "%s/%s", t->dir + strlen(SUBSETS_DIR "/"), s->file);
            }
            it->header = s->has_header;
            it->split = s;
        }
    }
    for (int ti = 0; ti < NUM_EXTRA_TASKS; ti++) {   /* one download per split file */
        if (!sel->extra[ti]) continue;
        const Task *t = &EXTRA_TASKS[ti];
        for (int k = 0; k < t->num_splits; k++) {
            const TaskSplit *s = &t->splits[k];
            FetchItem *it = item_add(items, &n, AREA_EXTRA, s->official_rows);
            fmt(it->rel, sizeof it->rel, "%s/%s", t->dir, s->file);
            fmt(it->url, sizeof it->url, "%s%s", extra_source(t), s->file);
            it->header = s->has_header;
            it->split = s;
        }
    }
    for (int k = 0; sel->mt && k < COUNT_OF(MULTI30K_SPLITS); k++)
        for (int tok = 0; tok < 2; tok++)
            for (int de = 0; de < 2; de++) {
                FetchItem *it = item_add(items, &n, AREA_MT, MULTI30K_SPLITS[k].lines);
                const char *lang = de ? "de" : "en", *split = MULTI30K_SPLITS[k].split;
                if (tok) fmt(it->rel, sizeof it->rel, "tok/%s.lc.norm.tok.%s", split, lang);
                else fmt(it->rel, sizeof it->rel, "raw/%s.%s", split, lang);
                fmt(it->url, sizeof it->url, MULTI30K_URL_BASE "%s%s", it->rel, tok ? "" : ".gz");
            }
    for (int k = 0; sel->pretrain && k < COUNT_OF(PRETRAIN_FILES); k++) {
        FetchItem *it = item_add(items, &n, AREA_PRETRAIN, PRETRAIN_FILES[k].lines);
        fmt(it->rel, sizeof it->rel, "%s", PRETRAIN_FILES[k].rel);
        it->link = 1;
    }
    return n;
}

/* ---- roots, report, entry point ---- */

/* Mirror area roots; a mirror may also be a bare GLUE folder (CoLA/, SST-2/, ...). */
static void roots_init(FetchCtx *c) {
    const FetchOptions *o = c->o;
    const char *root = o->dest ? o->dest : "data";
    for (int a = 0; a < NUM_AREAS; a++) fmt(c->dst[a], sizeof c->dst[a], "%s/%s", root, AREA_DIRS[a]);
    if (o->glue_dest) fmt(c->dst[AREA_GLUE], sizeof c->dst[AREA_GLUE], "%s", o->glue_dest);
    else if (!o->dest) fmt(c->dst[AREA_GLUE], sizeof c->dst[AREA_GLUE], "%s", task_data_root());
    fmt(c->dst[AREA_SUBSETS], sizeof c->dst[AREA_SUBSETS], "%s/" SUBSETS_DIR, c->dst[AREA_GLUE]);
    fmt(c->dst[AREA_EXTRA], sizeof c->dst[AREA_EXTRA], "%s", c->dst[AREA_GLUE]);
    const char *src = o->mirror;
    if (!src) {
        fmt(c->staging, sizeof c->staging, "%s/.fetch-staging-%ld", root, (long)getpid());
        src = c->staging;
    }
    for (int a = 0; a < NUM_AREAS; a++) {
        fmt(c->src[a], sizeof c->src[a], AREA_DIRS[a][0] ? "%s/%s" : "%s", src, AREA_DIRS[a]);
        if (o->mirror && !is_dir(c->src[a])) c->src[a][0] = '\0';
    }
    if (o->mirror && !c->src[AREA_GLUE][0])
        for (int i = 0; i < NUM_TASKS; i++) {
            char d[4096 + 64];
            fmt(d, sizeof d, "%s/%s", src, TASKS[i].dir);
            if (is_dir(d)) { fmt(c->src[AREA_GLUE], sizeof c->src[AREA_GLUE], "%s", src); break; }
        }
    if (!o->mirror && c->src[AREA_PRETRAIN][0]) c->src[AREA_PRETRAIN][0] = '\0';
}

static void report_json(const FetchCtx *c, const FetchItem *items, const FetchResult *res, int n,
                        const int *counts) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", c->o->mirror ? "mirror" : "download");
    if (c->o->mirror) cJSON_AddStringToObject(o, "mirror", c->o->mirror);
    else cJSON_AddNullToObject(o, "mirror");
    cJSON_AddStringToObject(o, "glue_dir", c->dst[AREA_GLUE]);
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (int i = 0; i < n; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "path", res[i].path);
        cJSON_AddStringToObject(f, "status", STATUS_KEYS[res[i].status]);
        if (res[i].rows >= 0) cJSON_AddNumberToObject(f, "rows", (double)res[i].rows);
        else cJSON_AddNullToObject(f, "rows");
        cJSON_AddNumberToObject(f, "official_rows", (double)items[i].expected_rows);
        if (res[i].msg[0]) cJSON_AddStringToObject(f, "message", res[i].msg);
        cJSON_AddItemToArray(files, f);
    }
    for (int s = 0; s < NUM_FETCH_STATUS; s++) cJSON_AddNumberToObject(o, STATUS_KEYS[s], counts[s]);
    char *text = cJSON_PrintUnformatted(o);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(o);
}

static void report_text(const FetchCtx *c, const FetchResult *res, int n, const int *counts) {
    if (c->o->mirror) printf("fetching from the mirror %s (GLUE into %s)\n", c->o->mirror, c->dst[AREA_GLUE]);
    else printf("fetching from the official URLs (GLUE into %s)\n", c->dst[AREA_GLUE]);
    for (int i = 0; i < n; i++) {
        char rows[64] = "";
        if (res[i].rows >= 0 && res[i].status <= FETCH_LINKED) fmt(rows, sizeof rows, "%ld rows", res[i].rows);
        printf("  %-10s  %-60s %s%s%s\n", STATUS_NAMES[res[i].status], res[i].path, rows,
               rows[0] && res[i].msg[0] ? "; replaced: " : "", res[i].msg);
    }
    printf("%d copied, %d linked, %d up to date, %d missing, %d failed\n", counts[FETCH_COPIED],
           counts[FETCH_LINKED], counts[FETCH_UP_TO_DATE], counts[FETCH_MISSING], counts[FETCH_FAILED]);
    if (counts[FETCH_COPIED] + counts[FETCH_LINKED] + counts[FETCH_FAILED] == 0 && counts[FETCH_UP_TO_DATE] > 0)
        printf("up to date: nothing copied%s\n", counts[FETCH_MISSING] ? " (the missing files are not available here)" : "");
}

int data_fetch(const char *const *what, int n, const FetchOptions *o) {
    FetchSelection sel;
    CHECK_OR_DIE(NUM_TASKS <= FETCH_MAX_TASKS && NUM_SUBSET_TASKS <= FETCH_MAX_TASKS && NUM_EXTRA_TASKS <= FETCH_MAX_TASKS);
    if (select_what(what, n, &sel) != 0) return EXIT_USAGE;
    if (o->mirror && !is_dir(o->mirror)) {
        user_error("--mirror (or $GLUE_MIRROR) names a folder laid out like ../shared/data",
                   "mirror folder '%s' does not exist", o->mirror);
        return EXIT_USAGE;
    }
    FetchCtx *c = xcalloc(1, sizeof *c);
    c->o = o;
    roots_init(c);
    FetchItem *items = xmalloc(FETCH_MAX_ITEMS * sizeof *items);
    FetchResult *res = xmalloc(FETCH_MAX_ITEMS * sizeof *res);
    int nitems = items_build(&sel, items), counts[NUM_FETCH_STATUS] = {0};
    for (int i = 0; i < nitems; i++) {
        fetch_item(c, &items[i], &res[i]);
        counts[res[i].status]++;
    }
    remove_tree(c->staging);
    if (o->json) report_json(c, items, res, nitems, counts);
    else report_text(c, res, nitems, counts);
    if (c->offline)
        user_error("use a local copy: glue data fetch --mirror DIR (a folder laid out like ../shared/data)",
                   "%s", c->net_err);
    if (counts[FETCH_MISSING] && !sel.lenient && !c->offline)
        user_error(o->mirror ? "fetch them where the internet is reachable (glue data fetch TASK, no --mirror)" : NULL,
                   "%d requested file%s not available", counts[FETCH_MISSING], counts[FETCH_MISSING] == 1 ? " is" : "s are");
    int rc = counts[FETCH_FAILED] || (counts[FETCH_MISSING] && !sel.lenient) ? 1 : 0;
    free(items);
    free(res);
    free(c);
    return rc;
}
