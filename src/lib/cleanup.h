/* SPDX-License-Identifier: MIT */
/* cleanup.h: scope-bound cleanup attributes, so error paths stay one `goto out` long. */
#ifndef PROCTOR_CLEANUP_H
#define PROCTOR_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		(void)fclose(*f); /* a cleanup cannot report: streams whose writes matter are closed by hand */
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclosep)))

/* Hand ownership out of a cleanup-managed variable: `*ret = TAKE_PTR(p);`. */
#define TAKE_PTR(p)                            \
	({                                     \
		__typeof__(p) take_tmp_ = (p); \
		(p) = NULL;                    \
		take_tmp_;                     \
	})
#define TAKE_FD(fd)                  \
	({                           \
		int take_fd_ = (fd); \
		(fd) = -1;           \
		take_fd_;            \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
