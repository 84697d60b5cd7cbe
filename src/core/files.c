/* files.c — directories, whole-file reads, JSON files, atomic writes (see
 * files.h). */
#include "core/files.h"

#include "core/common.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_make_dir(const char *dir) {
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) { user_error_usage(NULL, "bad directory name '%s'", dir); return -1; }
    memcpy(path, dir, n + 1);
    /* Create each prefix in turn; existing ones are fine. */
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            user_error_io("check the path and its permissions", "cannot create directory %s: %s", path,
                       strerror(errno));
            return -1;
        }
        path[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        user_error_io(NULL, "%s exists and is not a directory", dir);
        return -1;
    }
    return 0;
}

int file_exists(const char *path) { return access(path, F_OK) == 0; }

const char *file_shipped(const char *rel, char *out, size_t cap) {
    snprintf(out, cap, "%s", rel);
    char exe[4096], installed[4400];
    ssize_t n = rel[0] == '/' || file_exists(rel) ? -1 : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return out;
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) {   /* PREFIX/bin/glue -> PREFIX */
        char *slash = strrchr(exe, '/');
        if (!slash) return out;
        *slash = '\0';
    }
    snprintf(installed, sizeof installed, "%s/share/glue/%s", exe, rel);
    if (file_exists(installed)) snprintf(out, cap, "%s", installed);
    return out;
}

char *file_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, k;
    char *buf = xmalloc(cap);
    errno = 0;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) buf = xrealloc(buf, cap *= 2);
    }
    /* fread's errno says why (EISDIR for a folder named like the file); EIO
     * only when it left none. */
    int err = ferror(f), why = errno;
    fclose(f);
    if (err) { free(buf); errno = why ? why : EIO; return NULL; }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

void file_md_twin(const char *json_path, char *out, size_t cap) {
    size_t n = strlen(json_path);
    if (n > 5 && strcmp(json_path + n - 5, ".json") == 0) n -= 5;
    snprintf(out, cap, "%.*s.md", (int)n, json_path);
}

void file_join(const char *dir, const char *file, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= cap) DIE("path too long: %s/%s", dir, file);
}

cJSON *json_parse_whole(const char *text, size_t len, const char **end, int *trailing) {
    *end = NULL;
    cJSON *json = cJSON_ParseWithLengthOpts(text, len, end, 0);
    while (json && *end < text + len && strchr(" \t\r\n", **end)) (*end)++;
    int more = json && *end != text + len;
    if (more) {
        cJSON_Delete(json);
        json = NULL;
    }
    if (trailing) *trailing = more;
    return json;
}

cJSON *json_file_read(const char *path, int report_missing) {
    size_t len;
    char *text = file_read(path, &len);
    if (!text) {
        if (errno != ENOENT || report_missing) user_error_io(NULL, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    const char *end = NULL;
    cJSON *json = json_parse_whole(text, len, &end, NULL);
    if (!json) {
        long line = 1;
        for (const char *p = text; end && p < end; p++) line += *p == '\n';
        user_error_data("fix the file or delete it to start over", "%s:%ld: malformed JSON", path, line);
    }
    free(text);
    return json;
}

int json_file_write(const char *path, const cJSON *json) {
    char *text = cJSON_Print(json);
    if (!text) DIE("out of memory printing JSON");
    size_t n = strlen(text);
    text[n] = '\n';   /* over the terminator: the file ends with a newline */
    int rc = atomic_write(path, text, n + 1);
    free(text);
    return rc;
}

void json_add_exact(cJSON *object, const char *key, double value) {
    char hex[64];
    snprintf(hex, sizeof hex, "%a", value);
    cJSON_AddStringToObject(object, key, hex);
}

double json_exact(const cJSON *object, const char *key, double fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(object, key);
    if (cJSON_IsNumber(j)) return j->valuedouble;
    if (!cJSON_IsString(j)) return fallback;
    char *end;
    double v = strtod(j->valuestring, &end);
    return *end == '\0' && end != j->valuestring ? v : fallback;
}

void file_portable_path(const char *path, char *out, size_t cap) {
    const char *home = getenv("HOME");
    size_t hl = home && home[0] == '/' && home[1] ? strlen(home) : 0;
    if (hl && strncmp(path, home, hl) == 0 && path[hl] == '/') snprintf(out, cap, "~%s", path + hl);
    else snprintf(out, cap, "%s", path);
}

void file_portable_setting(const char *setting, char *out, size_t cap) {
    const char *eq = strchr(setting, '=');
    int key = eq ? (int)(eq + 1 - setting) : 0;
    char value[4096];
    file_portable_path(setting + key, value, sizeof value);
    snprintf(out, cap, "%.*s%s", key, setting, value);
}

int json_file_copy_portable(const char *from, const char *to) {
    cJSON *j = json_file_read(from, 1);
    if (!j) return -1;
    for (cJSON *it = j->child; it; it = it->next) {
        for (cJSON *v = cJSON_IsArray(it) ? it->child : it; v; v = cJSON_IsArray(it) ? v->next : NULL) {
            if (!cJSON_IsString(v)) continue;
            char portable[4200];
            file_portable_path(v->valuestring, portable, sizeof portable);
            cJSON_SetValuestring(v, portable);
        }
    }
    int rc = json_file_write(to, j);
    cJSON_Delete(j);
    return rc;
}

void json_print_line(const cJSON *j) {
    char *text = cJSON_PrintUnformatted(j);
    if (!text) DIE("out of memory printing JSON");
    puts(text);
    free(text);
}

void atomic_begin(AtomicFile *a, const char *path) {
    size_t n = strlen(path) + 32;
    a->f = NULL;
    a->path = xstrdup(path);
    a->tmp = xmalloc(n);
    snprintf(a->tmp, n, "%s.tmp.%ld", path, (long)getpid());
}

static void atomic_release(AtomicFile *a) {
    free(a->path);
    free(a->tmp);
    a->path = a->tmp = NULL;
    a->f = NULL;
}

FILE *atomic_open(AtomicFile *a, const char *path) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {   /* found before the whole file is written, not at its rename */
        user_error_io("name a file inside it, or another path", "cannot write %s: it is a folder", path);
        a->f = NULL, a->path = a->tmp = NULL;
        return NULL;
    }
    atomic_begin(a, path);
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        user_error_io("check that the folder exists and is writable", "cannot write %s: %s", path, strerror(errno));
        atomic_release(a);
    }
    return a->f;
}

/* Why an earlier write to f failed: stdio keeps only the error flag (and
 * drops what it could not write), so one byte more goes to the file, which
 * is about to be removed, to hear the reason again (a full disk: ENOSPC);
 * EIO when it goes through. */
static int atomic_write_failure(FILE *f) {
    errno = 0;
    return write(fileno(f), "", 1) < 0 && errno ? errno : EIO;
}

int atomic_commit(AtomicFile *a) {
    int err = 0;
    if (a->f) {
        errno = 0;
        if (ferror(a->f)) err = atomic_write_failure(a->f);
        else if (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0) err = errno ? errno : EIO;
        if (fclose(a->f) != 0 && !err) err = errno ? errno : EIO;
        a->f = NULL;
    }
    if (!err && rename(a->tmp, a->path) != 0) err = errno;
    if (!err) file_write_point();
    if (err) {
        user_error_io("check free disk space and permissions", "cannot write %s: %s", a->path, strerror(err));
        unlink(a->tmp);
    }
    atomic_release(a);
    return err ? -1 : 0;
}

void atomic_abort(AtomicFile *a) {
    if (a->f) fclose(a->f);
    if (a->tmp) unlink(a->tmp);
    atomic_release(a);
}

int atomic_write(const char *path, const void *data, size_t len) {
    AtomicFile a;
    FILE *f = atomic_open(&a, path);
    if (!f) return -1;
    if (len && fwrite(data, 1, len, f) != len) {
        int err = errno ? errno : EIO;
        atomic_abort(&a);
        user_error_io("check free disk space and permissions", "cannot write %s: %s", path, strerror(err));
        return -1;
    }
    return atomic_commit(&a);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT ? -1 : 0;
}

int file_remove_tree(const char *dir) {
    if (!file_exists(dir)) return 0;
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void file_write_point(void) {
    static long left = -1;   /* writes before the kill; 0: no hook */
    if (left < 0) {
        const char *v = getenv("GLUE_TEST_KILL_AFTER_WRITES");
        left = v && *v ? strtol(v, NULL, 10) : 0;
        if (left < 0) left = 0;
    }
    if (left > 0 && --left == 0) raise(SIGKILL);
}
