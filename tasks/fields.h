/* fields.h — how one row of a tab-separated file and its number fields are read,
 * shared by the GLUE task loader (tasks/load.c) and the leaderboard prediction
 * reader (eval/predictions.c), so both refuse the same things: a NUL byte in a
 * row (its bytes after the NUL would be silently cut off), spaces or signs
 * around an index, hexadecimal, "inf"/"nan" and other strtod extensions; both
 * trim a label cell (a class or a score) alike. */
#ifndef GLUE_FIELDS_H
#define GLUE_FIELDS_H

#include <stddef.h>

/* 1 when line[0..len) holds a NUL byte (the line reader keeps them). */
int row_has_nul(const char *line, size_t len);
/* Split line in place at tabs into f[0..max). Returns the true field count,
 * even beyond max. */
int fields_split(char *line, char **f, int max);
/* 1 when s is one or more decimal digits and nothing else. */
int field_is_digits(const char *s);
/* A row index: decimal digits only (no sign, no spaces) that fit a long.
 * 0 and *out, or -1. */
int field_index(const char *s, long *out);
/* A finite decimal number: an optional sign, digits with an optional point and
 * exponent, nothing else (no spaces, no hexadecimal, no inf/nan). 0 and *out,
 * or -1. */
int field_number(const char *s, double *out);
/* A score in a label cell: field_number of the cell without the whitespace
 * around it (label cells are trimmed, task_label_trim; indices are not). */
int field_score(const char *s, double *out);

#endif
