/* predict.c — libglue's example: `predict RUN_DIR TEXT...` prints each text's
 * predicted label and the probability of each label (a pair model: TEXT is
 * "first<TAB>second"). Build: cc predict.c $(pkg-config --cflags --libs glue) */
#include <glue.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    char err[GLUE_ERROR_MAX], *b[64];
    glue_model *m;
    if (argc < 3 || argc > 66) return fprintf(stderr, "usage: predict RUN_DIR TEXT...\n"), 2;
    if (glue_open(argv[1], 0, &m, err, sizeof err) != GLUE_OK) return fprintf(stderr, "%s\n", err), 1;
    int n = argc - 2, k = glue_num_labels(m);
    for (int i = 0; glue_is_pair(m) && i < n; i++) {   /* "a<TAB>b": split in place */
        b[i] = strchr(argv[2 + i], '\t');
        if (b[i]) *b[i]++ = '\0';
    }
    float p[64 * GLUE_MAX_LABELS];
    unsigned char chosen[64 * GLUE_MAX_LABELS];
    int rc = glue_predict(m, (const char *const *)argv + 2, glue_is_pair(m) ? (const char *const *)b : NULL, n, p,
                          chosen, err, sizeof err);
    for (int i = 0; rc == GLUE_OK && i < n; i++) {
        for (int j = 0; j < k; j++) if (chosen[i * k + j] || k == 1) printf("%s", glue_label(m, j));
        for (int j = 0; j < k; j++) printf("\t%s=%.4f", glue_label(m, j), p[i * k + j]);
        printf("\n");
    }
    if (rc != GLUE_OK) fprintf(stderr, "%s\n", err);
    glue_close(m);
    return rc == GLUE_OK ? 0 : 1;
}
