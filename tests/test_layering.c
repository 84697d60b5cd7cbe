/* test_layering.c — arrows only point down: every `#include "..."` in the
 * sources of the binary (src/, tasks/, pretrain/, eval/, data/) checked
 * against the layer table below (README's architecture screen, top to
 * bottom). A file may include its own folder and any folder of a lower
 * layer; folders of one layer do not include each other (but for
 * LAYER_PEERS), so no model family includes another. Each include that
 * breaks this is printed as "file:line: #include "x": why".
 *
 * An include is resolved as the compiler does (-Isrc -I.): the including
 * file's folder first, then src/, then the top. A second test runs the
 * check on a small tree under /tmp with known violations, so the check is
 * seen to fail. */
#include "tests/scratch.h"
#include "tests/test.h"

#include "core/files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The layers, highest first: a path belongs to the first row its prefix
 * starts. "src/models/ * /" (written without the spaces) is a model family:
 * any folder under src/models/, a unit of its own named after it. */
typedef struct {
    const char *prefix;
    const char *unit;   /* NULL: the family's folder names it */
    int rank;
} Layer;

static const Layer LAYERS[] = {
    {"src/main.c", "commands", 90},           /* the commands (top) */
    {"src/cli/", "commands", 90},
    {"src/serve/", "serve", 88},              /* glue serve's HTTP server, a client of libglue */
    {"src/lib/", "lib", 85},                  /* libglue, the C library (its header: include/) */
    {"include/", "lib", 85},
    {"eval/", "eval", 80},                    /* reporting over runs: tables, HTML report, predictions, submission zip, bench/ */
    {"src/experiments/", "experiments", 70},  /* search, protocol, intermediate transfer, pretraining screens */
    {"pretrain/", "pretrain", 60},            /* a client of the harness */
    {"src/train/", "train", 50},              /* the harness: loop, schedules, resume points, run dirs, evaluation */
    {"src/models/*/", NULL, 40},              /* each model family: layers, forward, backward, save/load */
    {"src/models/", "models", 35},            /* model.h, the registry, settings (run_config) */
    {"data/", "data", 25},                    /* glue data fetch: a task's files */
    {"tasks/", "tasks", 20},                  /* task = data: files, columns, labels, metrics; loaders */
    {"src/nn/", "nn", 10},
    {"src/optim/", "optim", 10},
    {"src/text/", "text", 10},
    {"src/metrics/", "metrics", 10},
    {"src/core/", "core", 0},
};
#define NUM_LAYERS ((int)(sizeof LAYERS / sizeof LAYERS[0]))

/* Includes allowed between units of one layer: {from, to}. */
static const char *const LAYER_PEERS[][2] = {
    {"metrics", "text"},   /* BLEU and chrF read UTF-8 (text/utf8.h) */
};

/* The folders scanned: the sources the Makefile builds into glue. */
static const char *const SCAN_DIRS[] = {"src", "tasks", "pretrain", "eval", "data"};

/* The rank of path (relative to the top) and its unit's name, or -1 when
 * no row of LAYERS holds it. */
static int layer_of(const char *path, char *unit, size_t cap) {
    for (int i = 0; i < NUM_LAYERS; i++) {
        const Layer *l = &LAYERS[i];
        const char *star = strstr(l->prefix, "*/");
        size_t n = star ? (size_t)(star - l->prefix) : strlen(l->prefix);
        if (strncmp(path, l->prefix, n) != 0) continue;
        if (!star) {
            snprintf(unit, cap, "%s", l->unit);
            return l->rank;
        }
        const char *family = path + n, *slash = strchr(family, '/');
        if (!slash || slash == family) continue;   /* a file of src/models/ itself */
        snprintf(unit, cap, "models/%.*s", (int)(slash - family), family);
        return l->rank;
    }
    return -1;
}

static int layer_peers_allowed(const char *from, const char *to) {
    for (size_t i = 0; i < sizeof LAYER_PEERS / sizeof LAYER_PEERS[0]; i++)
        if (strcmp(LAYER_PEERS[i][0], from) == 0 && strcmp(LAYER_PEERS[i][1], to) == 0) return 1;
    return 0;
}

static int exists_under(const char *root, const char *rel) {
    char path[4096];
    struct stat st;
    return snprintf(path, sizeof path, "%s/%s", root, rel) < (int)sizeof path && stat(path, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* The file `inc` names from `from`, as the compiler finds it (the including
 * file's folder, then src/, then the top), into out; 0, or -1 when none is
 * there. */
static int layering_resolve(const char *root, const char *from, const char *inc, char *out, size_t cap) {
    const char *slash = strrchr(from, '/');
    int n = snprintf(out, cap, "%.*s%s", slash ? (int)(slash - from + 1) : 0, from, inc);
    if (n < (int)cap && exists_under(root, out)) return 0;
    n = snprintf(out, cap, "src/%s", inc);
    if (n < (int)cap && exists_under(root, out)) return 0;
    n = snprintf(out, cap, "%s", inc);
    return n < (int)cap && exists_under(root, out) ? 0 : -1;
}

/* Why `from` may not include `inc` (into why), or 0 when it may. */
static int layering_judge(const char *root, const char *from, const char *inc, char *why, size_t cap) {
    char to[4096], uf[128], ut[128];
    int rf = layer_of(from, uf, sizeof uf);
    if (rf < 0) return snprintf(why, cap, "%s is in no layer of the table (add its folder to LAYERS)", from), 1;
    if (strstr(inc, ".."))
        return snprintf(why, cap, "a path with '..': name the header from src/ or the top"), 1;
    if (layering_resolve(root, from, inc, to, sizeof to) != 0)
        return snprintf(why, cap, "no such file in the including folder, src/ or the top"), 1;
    int rt = layer_of(to, ut, sizeof ut);
    if (rt < 0) return snprintf(why, cap, "%s is in no layer of the table", to), 1;
    if (strcmp(uf, ut) == 0 || rt < rf) return 0;
    if (rt == rf && layer_peers_allowed(uf, ut)) return 0;
    if (rt == rf) return snprintf(why, cap, "%s and %s are one layer: neither includes the other", uf, ut), 1;
    return snprintf(why, cap, "%s includes %s, a layer above it", uf, ut), 1;
}

typedef struct {
    int files, includes, violations;
    char *report;   /* one line per violation */
    size_t len;
} LayeringScan;

static void scan_add(LayeringScan *s, const char *line) {
    size_t n = strlen(line);
    s->report = realloc(s->report, s->len + n + 2);
    memcpy(s->report + s->len, line, n);
    s->len += n;
    s->report[s->len++] = '\n';
    s->report[s->len] = '\0';
}

/* The quoted name of a `#include "name"` line into out; 0, or -1 when the
 * line is no such include. */
static int include_name(const char *line, const char *end, char *out, size_t cap) {
    while (line < end && (*line == ' ' || *line == '\t')) line++;
    if (line == end || *line++ != '#') return -1;
    while (line < end && (*line == ' ' || *line == '\t')) line++;
    if ((size_t)(end - line) < 8 || strncmp(line, "include", 7) != 0) return -1;
    line += 7;
    while (line < end && (*line == ' ' || *line == '\t')) line++;
    if (line == end || *line++ != '"') return -1;
    const char *q = memchr(line, '"', (size_t)(end - line));
    if (!q || (size_t)(q - line) >= cap) return -1;
    snprintf(out, cap, "%.*s", (int)(q - line), line);
    return 0;
}

static void layering_check_file(const char *root, const char *rel, LayeringScan *s) {
    char path[4096], inc[1024], why[4608], msg[6000];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    size_t len;
    char *text = file_read(path, &len);
    if (!text) return;
    s->files++;
    int lineno = 0;
    for (const char *line = text, *end; line < text + len; line = end + 1) {
        end = memchr(line, '\n', (size_t)(text + len - line));
        if (!end) end = text + len;
        lineno++;
        if (include_name(line, end, inc, sizeof inc) != 0) continue;
        s->includes++;
        if (!layering_judge(root, rel, inc, why, sizeof why)) continue;
        snprintf(msg, sizeof msg, "%s:%d: #include \"%s\": %s", rel, lineno, inc, why);
        scan_add(s, msg);
        s->violations++;
    }
    free(text);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Checks every .c and .h under root/dir, in name order, folders included. */
static void layering_check_dir(const char *root, const char *dir, LayeringScan *s) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    DIR *d = opendir(path);
    if (!d) return;
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        struct stat st;
        size_t k = strlen(names[i]);
        snprintf(path, sizeof path, "%s/%s", root, names[i]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) layering_check_dir(root, names[i], s);
        else if (k > 2 && (strcmp(names[i] + k - 2, ".c") == 0 || strcmp(names[i] + k - 2, ".h") == 0))
            layering_check_file(root, names[i], s);
        free(names[i]);
    }
    free(names);
}

static LayeringScan layering_check(const char *root) {
    LayeringScan s = {0};
    for (size_t i = 0; i < sizeof SCAN_DIRS / sizeof SCAN_DIRS[0]; i++) layering_check_dir(root, SCAN_DIRS[i], &s);
    return s;
}

TEST(layering_includes_point_down) {
    LayeringScan s = layering_check(".");
    /* Run from the top of the repository (make test does). */
    CHECK_MSG(s.files > 200 && s.includes > 600, "scanned %d files, %d includes: not the repository's top?", s.files,
              s.includes);
    if (s.violations) printf("%s", s.report);
    CHECK_MSG(s.violations == 0, "%d includes point up or sideways (above)", s.violations);
    free(s.report);
}

/* A tree with one include of each kind: the check flags exactly the bad ones. */
static const struct {
    const char *file, *text;
} FIXTURE[] = {
    {"src/core/a.h", ""},
    {"src/core/b.c", "#include \"core/a.h\"\n#include \"nn/n.h\"\n"},                /* 2: core -> nn */
    {"src/core/c.c", "#include \"nosuch/file.h\"\n"},                                /* 1: no such file */
    {"src/nn/n.h", "  #  include \"core/a.h\"\n"},
    {"src/text/t.h", ""},
    {"src/metrics/m.h", ""},
    {"src/metrics/m.c", "#include \"text/t.h\"\n#include \"tasks/task.h\"\n"},       /* 2: metrics -> tasks */
    {"tasks/task.h", "#include \"metrics/m.h\"\n/* #include \"train/trainer.h\" in a comment */\n"},
    {"src/models/model.h", "#include \"tasks/task.h\"\n"},
    {"src/models/bert/bert.h", ""},
    {"src/models/bert/bert.c",                                                      /* 2: a family, 3: up */
     "#include \"models/model.h\"\n#include \"models/seq2seq/s.h\"\n#include \"train/trainer.h\"\n#include \"bert.h\"\n"},
    {"src/models/seq2seq/s.h", ""},
    {"src/train/trainer.h", "#include \"models/bert/bert.h\"\n#include \"../core/a.h\"\n"},   /* 2: '..' */
    {"src/experiments/x.h", "#include \"eval/r.h\"\n"},                              /* 1: experiments -> eval */
    {"eval/r.h", "#include \"train/trainer.h\"\n"},
    {"src/cli/cmd.c", "#include \"experiments/x.h\"\n#include \"eval/r.h\"\n"},
    {"src/main.c", "#include \"cli/cmd.h\"\n"},                                      /* 1: no such file */
    {"src/newthing/z.c", "#include \"core/a.h\"\n"},                                 /* 1: in no layer */
};
static const char *const FIXTURE_BAD[] = {"src/core/b.c:2:", "src/core/c.c:1:", "src/metrics/m.c:2:",
                                          "src/models/bert/bert.c:2:", "src/models/bert/bert.c:3:",
                                          "src/train/trainer.h:2:", "src/experiments/x.h:1:", "src/main.c:1:",
                                          "src/newthing/z.c:1:"};

TEST(layering_check_flags_upward_includes) {
    char root[SCRATCH_PATH_MAX], path[256], cmd[256];
    if (!CHECK(scratch_dir("layering", root, sizeof root))) return;
    for (size_t i = 0; i < sizeof FIXTURE / sizeof FIXTURE[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", root, FIXTURE[i].file);
        *strrchr(path, '/') = '\0';
        CHECK(file_make_dir(path) == 0);
        snprintf(path, sizeof path, "%s/%s", root, FIXTURE[i].file);
        FILE *f = fopen(path, "w");
        if (!CHECK(f != NULL)) continue;
        fputs(FIXTURE[i].text, f);
        fclose(f);
    }
    LayeringScan s = layering_check(root);
    const char *report = s.report ? s.report : "";
    int want = (int)(sizeof FIXTURE_BAD / sizeof FIXTURE_BAD[0]);
    CHECK_MSG(s.violations == want, "%d violations, want %d:\n%s", s.violations, want, report);
    for (int i = 0; i < want; i++) CHECK_MSG(strstr(report, FIXTURE_BAD[i]) != NULL, "%s not flagged", FIXTURE_BAD[i]);
    CHECK_MSG(strstr(report, "metrics/m.c:1:") == NULL, "the allowed peer include was flagged:\n%s", report);
    CHECK_MSG(strstr(report, "models/seq2seq and") || strstr(report, "models/bert and models/seq2seq"),
              "a family including another is not named as such:\n%s", report);
    CHECK_EQ_INT(s.files, (int)(sizeof FIXTURE / sizeof FIXTURE[0]));
    free(s.report);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}
