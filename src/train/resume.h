/* resume.h — the resume point of a training run: one format, one writer and
 * one reader for fine-tuning, pretraining and translation. In the run
 * directory (run_dir.h names the files):
 *   resume/   last.ckpt     the weights (the client's: a model file)
 *             last.state    optimizer state and RNGs (the client's; absent
 *                           for a model that keeps none)
 *             trainer.json  where the loop is: the loop's keys (loop.h) and
 *                           the client's (a row, a loss sum)
 *   resume.prev/            the resume point before it
 * written into resume.tmp/ and renamed: a kill at any moment leaves a
 * complete set in resume/ or resume.prev/; a reader that finds resume/
 * damaged takes resume.prev/ after a warning naming both.
 * Pretraining and translation of an older glue kept theirs in one file,
 * <out>/last.ckpt (prev.ckpt): refused with one message, never misread. */
#ifndef GLUE_TRAIN_RESUME_H
#define GLUE_TRAIN_RESUME_H

#include <stddef.h>

typedef struct cJSON cJSON;

/* A resume point's directory and the paths of its files in it. */
typedef struct ResumeFiles {
    const char *dir;
    char ckpt[4400], state[4400];   /* RUN_LAST_CKPT, RUN_LAST_STATE */
} ResumeFiles;
/* Writes f->ckpt (and f->state) into the fresh directory f->dir. 0, or
 * nonzero after a message. */
typedef int (*ResumeWriteFn)(void *ctx, const ResumeFiles *f);
/* Takes up the point in f->dir (trainer.json: position): checks it is this
 * run's (settings, seed), loads weights and state. 0; RESUME_OTHER after a
 * message when it is another run's; else (damaged) the previous is tried. */
typedef int (*ResumeReadFn)(void *ctx, const ResumeFiles *f, const cJSON *position);
enum { RESUME_OTHER = -2 };

/* The resume point of out_dir: write(ctx, dir) for the files, position as
 * trainer.json, then the rolling rename. 0, or 1 after a message. */
int resume_write(const char *out_dir, const cJSON *position, ResumeWriteFn write, void *ctx);
/* Continues from out_dir's resume point: read(ctx, dir, position) on resume/,
 * then on resume.prev/ when that failed. 0 resumed; RESUME_NONE when there is
 * none (after a warning that the run starts from the beginning); else the
 * exit code after a message (1 unreadable, EXIT_USAGE another run's or one of
 * the old format). */
enum { RESUME_NONE = -1 };
int resume_read(const char *out_dir, ResumeReadFn read, void *ctx);
/* trainer.json of out_dir's resume point (resume/, else resume.prev/), or
 * NULL when there is none. Caller frees. */
cJSON *resume_position(const char *out_dir);
/* 1 when out_dir holds a resume point (of either format). */
int resume_exists(const char *out_dir);
/* 1 when out_dir holds only an old one-file point, its path into old (what
 * `glue pretrain snapshot` still takes the weights from). */
int resume_is_old(const char *out_dir, char *old, size_t cap);
/* Removes the resume point (a finished run). */
void resume_remove(const char *out_dir);

#endif
