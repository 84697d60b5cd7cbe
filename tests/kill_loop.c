/* kill_loop.c — SIGKILL at random moments for the interruption tests (see kill_loop.h). */
#include "tests/kill_loop.h"

#include "core/common.h"
#include "core/files.h"
#include "core/rng.h"
#include "train/run_dir.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int kill_loop_kills_wanted(void) {
    const char *env = getenv("GLUE_KILL_TEST_KILLS");
    int n = env && *env ? atoi(env) : KILL_LOOP_KILLS;
    return n > 0 ? n : KILL_LOOP_KILLS;
}

static pid_t start(const char *cmd) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) DIE("fork failed");
    if (pid == 0) {
        char line[8192];
        snprintf(line, sizeof line, "exec %s", cmd);
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int exit_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

double kill_loop_time(const char *cmd, int *status) {
    double t0 = now_seconds();
    int st;
    waitpid(start(cmd), &st, 0);
    *status = exit_status(st);
    return now_seconds() - t0;
}

/* Identity of path's current version (inode and modification time), 0 if absent. */
static double file_version(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    return (double)st.st_ino * 1e10 + (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000 * 1000};
    nanosleep(&ts, NULL);
}

int kill_loop_signal(const char *cmd, const char *watch, int sig) {
    double before = file_version(watch);
    pid_t pid = start(cmd);
    int st;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (file_version(watch) != before) {
            /* Twice back to back, as timeout(1) sends it (to the command,
             * then to its process group): one request, not a second one
             * that would kill the run in the middle of its save. */
            kill(pid, sig);
            kill(pid, sig);
            waitpid(pid, &st, 0);
            break;
        }
        sleep_ms(1);
    }
    return exit_status(st);
}

KillLoop kill_loop(const char *first, const char *resume, const char *watch, double max_delay, int kills,
                   uint64_t seed) {
    KillLoop k = {.status = -1};
    Rng rng;
    rng_seed(&rng, seed);
    double t0 = now_seconds();
    for (;;) {
        pid_t pid = start(k.starts++ ? resume : first);
        int st;
        if (k.kills == kills) {   /* the last start runs to its end */
            waitpid(pid, &st, 0);
            k.status = exit_status(st);
            break;
        }
        double before = file_version(watch), delay = max_delay * rng_uniform(&rng), until = -1;
        pid_t done = 0;
        while ((done = waitpid(pid, &st, WNOHANG)) == 0 && (until < 0 || now_seconds() < until)) {
            if (until < 0 && file_version(watch) != before) until = now_seconds() + delay;   /* it saved */
            sleep_ms(1);
        }
        if (done == pid) {   /* it finished before the kill */
            k.status = exit_status(st);
            break;
        }
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        k.kills++;
    }
    k.seconds = now_seconds() - t0;
    return k;
}

int kill_loop_same_file(const char *a, const char *b) {
    size_t na, nb;
    char *fa = file_read(a, &na), *fb = file_read(b, &nb);
    int same = fa && fb && na == nb && memcmp(fa, fb, na) == 0;
    free(fa);
    free(fb);
    return same;
}

/* Drops every key that names a duration, at any depth. */
static void drop_timings(cJSON *j) {
    for (cJSON *it = j ? j->child : NULL, *next; it; it = next) {
        next = it->next;
        if (it->string && strstr(it->string, "seconds")) cJSON_Delete(cJSON_DetachItemViaPointer(j, it));
        else drop_timings(it);
    }
}

static cJSON *results_numbers(const char *dir) {
    char path[4096];
    file_join(dir, RUN_RESULTS, path, sizeof path);
    cJSON *r = json_file_read(path, 1), *keep = cJSON_CreateObject();
    static const char *const KEYS[] = {"epochs", "best"};
    for (int k = 0; k < 2; k++) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(r, KEYS[k]);
        if (v) cJSON_AddItemToObject(keep, KEYS[k], v);
    }
    cJSON_Delete(r);
    drop_timings(keep);
    return keep;
}

int kill_loop_same_results(const char *dir_a, const char *dir_b) {
    cJSON *a = results_numbers(dir_a), *b = results_numbers(dir_b);
    int same = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "epochs")) > 0 && cJSON_Compare(a, b, 1);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return same;
}

KillLoop kill_test(const KillTest *t) {
    char ref[4096], cut[4096], first[16384], resume[16384], watch[4200], log[4200];
    snprintf(ref, sizeof ref, "%s/ref", t->dir);
    snprintf(cut, sizeof cut, "%s/cut", t->dir);
    snprintf(watch, sizeof watch, "%s/%s", cut, t->watch);
    snprintf(log, sizeof log, "%s/cut.stderr", t->dir);
    snprintf(first, sizeof first, "%s --out %s >/dev/null 2>&1", t->command, ref);
    int st;
    double secs = kill_loop_time(first, &st);
    CHECK_MSG(st == 0, "%s: the uninterrupted run failed (exit %d)", t->name, st);
    snprintf(first, sizeof first, "%s %s --out %s >/dev/null 2>%s", t->command, t->killed, cut, log);
    snprintf(resume, sizeof resume, "%s %s --out %s --resume >/dev/null 2>&1", t->command, t->killed, cut);
    if (t->sigterm) {   /* saved at the next step boundary, the way on said, exit 143 */
        CHECK_EQ_INT(kill_loop_signal(first, watch, SIGTERM), 143);
        size_t n;
        char *said = file_read(log, &n);
        CHECK_MSG(said && strstr(said, "terminated (SIGTERM) at step") && strstr(said, "--resume"), "%s: %s",
                  t->name, said ? said : "(no output)");
        free(said);
    }
    int kills = kill_loop_kills_wanted();
    KillLoop k = kill_loop(t->sigterm ? resume : first, resume, watch, secs / (kills + 1), kills, t->seed);
    printf("  %s: %d SIGKILLs over %d starts in %.1f s (uninterrupted run: %.2f s)\n", t->name, k.kills, k.starts,
           k.seconds, secs);
    CHECK_MSG(k.status == 0 && k.kills > 0, "%s: exit %d after %d kills", t->name, k.status, k.kills);
    char a[4200], b[4200];
    file_join(ref, RUN_CKPT, a, sizeof a);
    file_join(cut, RUN_CKPT, b, sizeof b);
    CHECK_MSG(kill_loop_same_file(a, b), "%s: model.ckpt differs from the uninterrupted run's", t->name);
    return k;
}
