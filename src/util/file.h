/* Reading a small local file whole (config-like inputs: policy files, keys,
 * tokens): never blocks on a FIFO or device, and never reads more than a cap. */
#ifndef OCISBX_UTIL_FILE_H
#define OCISBX_UTIL_FILE_H

#include <stddef.h>

/* Reads path (a regular file of at most max bytes) into *data (NUL-ended,
 * freed with free(); wipe it first if it may hold a secret) and *len.
 * `what` names the file's role in errors ("policy file"). Errors:
 * OCISBX_ENOTFOUND (missing), OCISBX_EINVAL (not a regular file: a FIFO,
 * a device, a directory; refused without blocking), OCISBX_ETOOLARGE (above
 * max), OCISBX_EIO. */
int ocisbx_file_read_all(const char *path, size_t max, const char *what, char **data, size_t *len);

#endif
