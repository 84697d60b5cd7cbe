/* editdist.h — Levenshtein distance, for "did you mean ...?" suggestions
 * (task names, command names, options). */
#ifndef GLUE_EDITDIST_H
#define GLUE_EDITDIST_H

#include <stddef.h>

/* Insertions, deletions and substitutions to turn a into b (bytes; case is
 * free: "TextCNN", as papers write it, is 0 from "textcnn"). */
int str_edit_distance(const char *a, const char *b);
/* 1 when a name at this distance from what was typed is worth suggesting (at
 * most 2 edits, or a third of the typed length): "nosuch" is not "boost". */
int str_is_near(const char *typed, int distance);
/* " (did you mean 'GUESS'?)" in buf, or "" when guess is NULL: the tail of
 * an unknown-name message. */
const char *str_did_you_mean(const char *guess, char *buf, size_t cap);

#endif
