/* args.c — command-line options (see args.h). */
#include "core/args.h"

#include "core/common.h"
#include "core/editdist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void args_init(Args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    if (argc > ARGS_MAX) argc = ARGS_MAX;
    a->argc = argc;
    a->argv = argv;
    a->used[0] = 1;
}

/* Index of option `name` (as --name or --name=...), or -1. The name is
 * kept: what the command takes, for an unknown option's "did you mean". */
static int find_option(Args *a, const char *name, const char **inline_value) {
    size_t n = strlen(name);
    int known = 0;
    for (int k = 0; k < a->nasked && !known; k++) known = strcmp(a->asked[k], name) == 0;
    if (!known && a->nasked < ARGS_MAX) a->asked[a->nasked++] = name;
    for (int i = 1; i < a->argc; i++) {
        const char *s = a->argv[i];
        if (strcmp(s, "--") == 0) break;
        if (strncmp(s, name, n) == 0 && (s[n] == '\0' || s[n] == '=')) {
            *inline_value = s[n] == '=' ? s + n + 1 : NULL;
            return i;
        }
    }
    return -1;
}

int args_flag(Args *a, const char *name) {
    const char *v;
    int i = find_option(a, name, &v);
    if (i < 0) return 0;
    a->used[i] = 1;
    return 1;
}

const char *args_str(Args *a, const char *name, const char *fallback) {
    const char *v;
    int i = find_option(a, name, &v);
    if (i < 0) return fallback;
    a->used[i] = 1;
    if (v) return v;
    if (i + 1 >= a->argc) {
        user_error_usage(NULL, "option %s needs a value", name);
        a->bad = 1;
        return fallback;
    }
    a->used[i + 1] = 1;
    return a->argv[i + 1];
}

/* Whether strtol/strtod read all of option name's value s (up to end, errno
 * clear); else marks the arguments bad after a message wanting `what`. */
static int args_parsed(Args *a, const char *name, const char *s, const char *end, const char *what) {
    if (!errno && *s != '\0' && *end == '\0') return 1;
    user_error_usage(NULL, "option %s wants %s, got '%s'", name, what, s);
    a->bad = 1;
    return 0;
}

long args_int(Args *a, const char *name, long fallback) {
    const char *s = args_str(a, name, NULL);
    if (!s) return fallback;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return args_parsed(a, name, s, end, "an integer") ? v : fallback;
}

long args_threads(Args *a, long fallback) {
    long v = args_int(a, "--threads", fallback);
    if (v >= 0 && v <= ARGS_MAX_THREADS) return v;
    user_error_usage("0 uses every core", "%s: --threads %ld: a whole number from 0 to %d", a->argv[0], v, ARGS_MAX_THREADS);
    a->bad = 1;
    return fallback;
}

double args_double(Args *a, const char *name, double fallback) {
    const char *s = args_str(a, name, NULL);
    if (!s) return fallback;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return args_parsed(a, name, s, end, "a number") ? v : fallback;
}

int args_strs(Args *a, const char *name, const char **out, int max) {
    int n = 0;
    size_t len = strlen(name);
    for (int i = 1; i < a->argc; i++) {
        const char *s = a->argv[i];
        if (strcmp(s, "--") == 0) break;
        if (strncmp(s, name, len) != 0 || (s[len] != '\0' && s[len] != '=')) continue;
        a->used[i] = 1;
        const char *v = s[len] == '=' ? s + len + 1 : NULL;
        if (!v && i + 1 < a->argc) { v = a->argv[++i]; a->used[i] = 1; }
        if (!v) { user_error_usage(NULL, "option %s needs a value", name); a->bad = 1; break; }
        if (n < max) out[n] = v;
        else if (n == max) { user_error_usage(NULL, "%s: at most %d %s options", a->argv[0], max, name); a->bad = 1; }
        n++;
    }
    return n < max ? n : max;
}

int args_positional(Args *a, const char **out, int max) {
    int n = 0, after_dashes = 0;
    for (int i = 1; i < a->argc; i++) {
        const char *s = a->argv[i];
        if (!after_dashes && strcmp(s, "--") == 0) { a->used[i] = 1; after_dashes = 1; continue; }
        if (a->used[i] || (!after_dashes && s[0] == '-' && s[1] == '-')) continue;
        if (n < max) out[n] = s;
        a->used[i] = 1;
        n++;
    }
    return n;
}

/* The option argv[i] names ("--epochs" of "--epochs=3") is one a getter took
 * at an earlier position: the same option given twice, where the getter took
 * the first (options that repeat, like --set, take them all). */
static int args_repeated(const Args *a, int i) {
    const char *s = a->argv[i];
    size_t n = strcspn(s, "=");
    if (strncmp(s, "--", 2) != 0 || n <= 2) return 0;
    for (int k = 1; k < i; k++)
        if (a->used[k] && strncmp(a->argv[k], s, n) == 0 && (a->argv[k][n] == '\0' || a->argv[k][n] == '='))
            return 1;
    return 0;
}

/* The option the command takes that is nearest to arg ("--epoch" ->
 * "--epochs"), when it is near enough to suggest; else NULL. */
static const char *args_nearest(const Args *a, const char *arg) {
    char typed[128];
    snprintf(typed, sizeof typed, "%.*s", (int)strcspn(arg, "="), arg);
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int k = 0; k < a->nasked; k++) {
        int d = str_edit_distance(typed, a->asked[k]);
        if (d < best_d) best = a->asked[k], best_d = d;
    }
    return typed[0] == '-' && best && str_is_near(typed, best_d) ? best : NULL;
}

int args_finish(Args *a, const char *usage) {
    int bad = a->bad;
    for (int i = 1; i < a->argc; i++) {
        if (strcmp(a->argv[i], "--") == 0) break;
        if (!a->used[i] && args_repeated(a, i)) {
            user_error_usage("give it once", "%s: option %.*s given more than once", a->argv[0],
                             (int)strcspn(a->argv[i], "="), a->argv[i]);
            bad = 1;
        } else if (!a->used[i]) {
            char tail[96];
            user_error_usage(NULL, "%s: unknown option '%s'%s", a->argv[0], a->argv[i],
                             str_did_you_mean(args_nearest(a, a->argv[i]), tail, sizeof tail));
            bad = 1;
        }
    }
    if (!bad) return 0;
    return usage ? args_usage(usage) : EXIT_USAGE;
}

int args_usage(const char *usage) {
    fprintf(stderr, "usage: %s\n", usage);
    return EXIT_USAGE;
}

int args_out_file_free(const char *cmd, const char *out, int overwrite) {
    struct stat st;   /* an empty file holds nothing to lose; a folder is refused where it is written */
    if (overwrite || stat(out, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return 0;
    user_error_usage("--overwrite replaces it (once the new one is written), or give --out another file",
                     "%s: %s exists: not written over", cmd, out);
    return EXIT_USAGE;
}

const char *args_train_corpora_problem(const char *const *pos, int npos, const char *corpus, const char *out,
                                       int max) {
    if (npos < 1 || strcmp(pos[0], "train") != 0) return "the only subcommand is 'train'";
    if (!corpus) return "--corpus FILE is required";
    if (!out) return "--out FILE is required";
    return npos > max ? "too many corpus files" : NULL;
}
