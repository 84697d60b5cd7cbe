/* provenance.h — where a number came from, in every results file: the glue
 * version and git commit of the binary, the date, the CPU with the kernels
 * that ran on it (core/kernels.h), the thread count and the seed. Machines
 * change between sessions; a figure that does not name them cannot be
 * compared with another. */
#ifndef GLUE_PROVENANCE_H
#define GLUE_PROVENANCE_H

#include <stddef.h>

typedef struct cJSON cJSON;

#define GLUE_VERSION "0.2.0"

/* The commit the binary was built from ("unknown" outside a git checkout),
 * with "-dirty" when the working tree had changes. */
const char *provenance_commit(void);
/* "AMD EPYC (family 25, model 17), kernels avx512bf16". */
void provenance_cpu(char *out, size_t cap);
/* {"glue_version", "commit", "date" (UTC, ISO 8601), "cpu", "kernels",
 * "threads", "seed"} (threads/seed left out when < 0). Caller frees. */
cJSON *provenance_json(int threads, long long seed);

#endif
