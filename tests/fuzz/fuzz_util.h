/* fuzz_util.h — what the libFuzzer harnesses in tests/fuzz/ share: a private
 * temporary directory per process, writing the fuzzer's bytes to files there
 * (plain or gzip), and splitting one input into several files at FUZZ_SEP.
 *
 * Each harness (fuzz_<name>.c) defines LLVMFuzzerTestOneInput over one parser
 * of untrusted bytes and checks its contract: any input gives a result or a
 * message and an error status, never a crash, a leak, undefined behaviour or a
 * NaN score. `make fuzz` builds and runs them (tests/fuzz/README.md). */
#ifndef GLUE_FUZZ_UTIL_H
#define GLUE_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Separates the files of a multi-file input (config | weights | index ...). */
#define FUZZ_SEP "\n#@#\n"

/* This process's temporary directory (created on first use, removed at exit). */
const char *fuzz_dir(void);
/* "<fuzz_dir>/<name>" in a static buffer (valid until the next call). */
const char *fuzz_path(const char *name);
/* Writes data[0..n) to path (plain, or gzip-compressed when gz). Dies on I/O error. */
void fuzz_write(const char *path, const uint8_t *data, size_t n, int gz);
/* Removes path if it exists. */
void fuzz_remove(const char *path);
/* Splits data at FUZZ_SEP into at most max parts; returns the count. */
int fuzz_split(const uint8_t *data, size_t n, const uint8_t **part, size_t *len, int max);
/* A glue checkpoint file (core/checkpoint.h) of the given header version
 * around payload records: header + deflate(payload) with the CRC the reader
 * expects, so a harness reaches the record parser behind the checksum
 * (caller frees; its size in *out_n). */
uint8_t *fuzz_ckpt_wrap(const uint8_t *payload, size_t n, uint32_t version, size_t *out_n);
/* A NUL-terminated copy (caller frees). */
char *fuzz_strndup(const uint8_t *data, size_t n);

#endif
