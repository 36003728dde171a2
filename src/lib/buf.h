/* SPDX-License-Identifier: MIT */
/* buf.h: a growable byte buffer with a hard size limit (every input has one). */
#ifndef PROCTOR_BUF_H
#define PROCTOR_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data; /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t limit; /* 0: no limit beyond memory */
	int err;      /* the first failed append's -errno, kept until buf_free: a caller that appends
		       * many times may check it once, where it uses the buffer */
};

void buf_init(struct buf *b, size_t limit);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
/* Each returns 0, -ENOMEM, or -E2BIG when the limit would be exceeded (nothing appended). */
int buf_reserve(struct buf *b, size_t extra) __attribute__((warn_unused_result));
int buf_append(struct buf *b, const void *p, size_t n) __attribute__((warn_unused_result));
int buf_putc(struct buf *b, char c) __attribute__((warn_unused_result));
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Drop the first n bytes. */
void buf_consume(struct buf *b, size_t n);

#endif
