/* zip.h — writing a .zip archive (PKWARE APPNOTE: local headers, deflated data,
 * central directory), for the GLUE leaderboard submission, which is one zip of
 * the eleven prediction files at its top level.
 *
 * Only what a submission needs: whole files added from memory, raw deflate
 * (zlib), no zip64 (the archive and each member stay below 4 GiB), no
 * directories. Written to PATH.tmp and renamed, so an interrupted write never
 * leaves a half archive under the final name. */
#ifndef GLUE_ZIP_H
#define GLUE_ZIP_H

#include <stddef.h>

typedef struct ZipWriter ZipWriter;

/* NULL after a message when PATH.tmp cannot be created. */
ZipWriter *zip_open(const char *path);
/* Adds a member `name` with the given bytes. 0 ok, -1 after a message. */
int zip_add(ZipWriter *z, const char *name, const void *data, size_t size);
/* Adds the file at `path` as member `name`. 0 ok, -1 after a message. */
int zip_add_file(ZipWriter *z, const char *name, const char *path);
/* Writes the central directory and renames PATH.tmp to PATH; frees z. 0 ok;
 * -1 (PATH untouched, PATH.tmp removed) if this or any earlier step failed. */
int zip_close(ZipWriter *z);

#endif
