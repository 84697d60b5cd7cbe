/* editdist.h — Levenshtein distance, for "did you mean ...?" suggestions
 * (task names, command names, options). */
#ifndef GLUE_EDITDIST_H
#define GLUE_EDITDIST_H

/* Insertions, deletions and substitutions to turn a into b (bytes, case-sensitive). */
int str_edit_distance(const char *a, const char *b);

#endif
