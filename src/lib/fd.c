/* SPDX-License-Identifier: MIT */
/* fd.c: fd helpers. */
#include "fd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "util.h"

int fd_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int fd_read_file(const char *path, size_t limit, struct buf *ret)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > limit)
		return -EFBIG;
	for (;;) {
		/* Read one byte past the limit so a file that grew after fstat() is still caught. */
		size_t want = limit + 1 - ret->len;
		ssize_t n;

		if (want > 65536)
			want = 65536;
		r = buf_reserve(ret, want);
		if (r < 0)
			return r == -E2BIG ? -EFBIG : r;
		n = read(fd, ret->data + ret->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		ret->len += (size_t)n;
		ret->data[ret->len] = '\0';
		if (ret->len > limit)
			return -EFBIG;
	}
	return 0;
}

int fd_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

int fd_set_cloexec(int fd, int on)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -errno;
	fl = on ? fl | FD_CLOEXEC : fl & ~FD_CLOEXEC;
	return fcntl(fd, F_SETFD, fl) < 0 ? -errno : 0;
}

int fd_parse(const char *s, int *ret_fd)
{
	unsigned long v;
	int r = parse_ulong(s, 0, 65535, &v);

	if (r < 0)
		return r;
	if (fcntl((int)v, F_GETFD) < 0)
		return -EBADF;
	*ret_fd = (int)v;
	return 0;
}

int fd_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = fd_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int fd_root_dir_ensure(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022))
		return -EPERM;
	return 0;
}
