/* bench_common.c — what every `glue bench` subcommand shares (see bench.h). */
#include "eval/bench/bench.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/common.h"
#include "core/files.h"
#include "core/kernels.h"
#include "train/run_dir.h"

extern char **environ;

cJSON *bench_stats_json(Summary s) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "median", s.median);
    cJSON_AddNumberToObject(j, "min", s.min);
    cJSON_AddNumberToObject(j, "max", s.max);
    return j;
}

int bench_spawn(const char *const *argv, const char *stdout_path, const char *stderr_path, double *seconds) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, stdout_path ? stdout_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, stderr_path ? stderr_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    double t0 = now_seconds();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (seconds) *seconds = now_seconds() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int bench_tmpdir_make(const char *tag, char *out, size_t cap) {
    const char *tmp = getenv("TMPDIR");
    if (snprintf(out, cap, "%s/glue-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag) >= (int)cap)
        DIE("temporary path too long");
    if (!mkdtemp(out)) {
        user_error_io("set $TMPDIR to a writable directory", "cannot create a temporary directory %s: %s", out,
                   strerror(errno));
        return -1;
    }
    return 0;
}

void bench_cpu_dir(char *out, size_t cap) {
    const char *cpu = kernels_cpu_model();
    size_t n = (size_t)snprintf(out, cap, "bench/");
    int dash = 0;
    for (const char *c = cpu; *c && n + 2 < cap; c++) {
        if (isalnum((unsigned char)*c)) {
            if (dash && n > strlen("bench/")) out[n++] = '-';
            out[n++] = (char)tolower((unsigned char)*c);
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[n < cap ? n : cap - 1] = 0;
}

int bench_write_results(const char *name, const cJSON *json) {
    char path[4096], dir[4096];
    const char *root = run_results_root();
    /* name may have a directory part (bench/<cpu>/...): create it as well */
    const char *slash = strrchr(name, '/');
    snprintf(dir, sizeof dir, "%s/%.*s", root, slash ? (int)(slash - name) : 0, name);
    if (file_make_dir(slash ? dir : root) != 0) return -1;
    file_join(root, name, path, sizeof path);
    if (json_file_write(path, json) != 0) return -1;
    fprintf(stderr, "glue: wrote %s\n", path);
    return 0;
}
