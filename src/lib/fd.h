/* SPDX-License-Identifier: MIT */
/* fd.h: safe fd helpers: close-on-exec everywhere, full reads/writes, bounded file loads. */
#ifndef PROCTOR_FD_H
#define PROCTOR_FD_H

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"

/* Write all n bytes (retrying on EINTR and short writes). 0 or -errno. */
int fd_write_all(int fd, const void *p, size_t n);
/* Read the whole file at `path` (at most `limit` bytes, else -EFBIG) into `ret`, which must be
 * initialised. O_CLOEXEC; refuses anything but a regular file (-EINVAL). 0 or -errno. */
int fd_read_file(const char *path, size_t limit, struct buf *ret);
int fd_set_nonblock(int fd, int on);
int fd_set_cloexec(int fd, int on);
/* Replace `path` atomically with `len` bytes: a temp file beside it (O_EXCL, never following
 * links), fsync, rename. Nothing is left behind on failure. 0 or -errno. */
int fd_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Parse a decimal fd number, verify it is open. 0 or -errno. */
int fd_parse(const char *s, int *ret_fd);
/* Create `path` (mode 0700) when absent, then check that it is a directory, not a symlink, owned
 * by root and writable by no group or other: a place for root's lock files, where nobody else can
 * take or fake a lock. 0, or -errno (-EPERM when it is not root's alone). */
int fd_root_dir_ensure(const char *path);

#endif
