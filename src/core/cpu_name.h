/* cpu_name.h — names the CPU in result files: every throughput figure says
 * which CPU it was measured on (machines change between sessions). */
#ifndef GLUE_CPU_NAME_H
#define GLUE_CPU_NAME_H

#include <stddef.h>

/* "AMD EPYC (family 25 model 17, AVX-512 + AVX512-BF16)" from /proc/cpuinfo
 * ("unknown CPU (family -1 model -1, ...)" where it cannot be read). */
void cpu_describe(char *out, size_t cap);

#endif
