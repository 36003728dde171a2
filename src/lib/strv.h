/* SPDX-License-Identifier: MIT */
/* strv.h: owned string vectors, and shell-style word splitting and quoting. */
#ifndef PROCTOR_STRV_H
#define PROCTOR_STRV_H

#include <stddef.h>

#include "buf.h"

#define SHELL_MAX_LINE_BYTES (64 * 1024)

struct strv {
	char **v; /* n strings, then NULL */
	size_t n;
};

void strv_free(struct strv *s);
/* Append a copy of `str`. 0 or -ENOMEM. */
int strv_push(struct strv *s, const char *str) __attribute__((warn_unused_result));
int strv_pushn(struct strv *s, const char *str, size_t n) __attribute__((warn_unused_result));

/* Sort in byte order (strcmp). */
void strv_sort(struct strv *s);
/* Split a command line into words as a POSIX shell would, without expansions: blanks separate
 * words; '...' is literal; "..." is literal but for \" \\ \$ \` and \<newline>; a backslash
 * outside quotes escapes the next character; '#' at the start of a word starts a comment.
 * 0, or -EINVAL with *ret_why ("unbalanced single quote", ...), or -ENOMEM. */
int shell_split(const char *line, struct strv *ret, const char **ret_why);
/* Append argv joined by spaces, each word quoted only when it needs it (as Python's shlex.join). */
int shell_join(const char *const *argv, size_t argc, struct buf *out);

#endif
