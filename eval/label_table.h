/* label_table.h — a split's per-label table (train/evaluate.h
 * evaluate_details: each label's precision, recall, F1, support) written
 * beside a run as JSON and as a Markdown table, which `glue eval` leaves in
 * the run directory. */
#ifndef GLUE_LABEL_TABLE_H
#define GLUE_LABEL_TABLE_H

typedef struct cJSON cJSON;

/* details (with its "per_label" array) into dir/<split>_per_label.json and
 * .md; title heads the Markdown ("GoEmotions dev, fasttext"). 0, or 1 after
 * a message (I/O). */
int label_table_write(const cJSON *details, const char *dir, const char *split, const char *title);

#endif
