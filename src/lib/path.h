/* SPDX-License-Identifier: MIT */
/* path.h: lexical path helpers (no filesystem access). */
#ifndef PROCTOR_PATH_H
#define PROCTOR_PATH_H

/* The part after the last '/', or the whole string. Never allocates. */
const char *path_basename(const char *p);
/* `rel` when absolute, else dirname(base_file) + "/" + rel. Caller frees; NULL on ENOMEM. */
char *path_relative_to_file(const char *base_file, const char *rel);

/* The absolute, resolved path of an executable regular file: `name` itself when it contains a
 * '/', else the first match in $PATH's absolute directories for which skip(real, ctx) (if given)
 * is false. Caller frees; NULL when there is none. */
char *path_find_executable(const char *name, int (*skip)(const char *real, void *ctx), void *ctx);

#endif
