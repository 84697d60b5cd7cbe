/* memory.h — how much memory this process may still allocate, for the
 * up-front check of a model's settings (models/model.h memory_bytes): a run
 * whose settings need more is refused with the setting to lower, instead of
 * aborting halfway on an allocation. */
#ifndef GLUE_MEMORY_H
#define GLUE_MEMORY_H

/* The environment variable that replaces the machine's figure (bytes), so
 * that tests can try a refusal cheaply. */
#define MEMORY_LIMIT_ENV "GLUE_MEMORY_LIMIT_BYTES"

/* Bytes available: MEMORY_LIMIT_ENV when set to a positive number, else
 * MemAvailable of /proc/meminfo; 0 when neither is known (then nothing is
 * refused). */
double memory_available_bytes(void);

#endif
