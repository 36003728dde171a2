/* SPDX-License-Identifier: MIT */
/* pty.c: the pseudo-terminal a dropped command gets instead of the caller's (see pty.h). */
#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../lib/fd.h"

int pty_open(int tty_fd, int *ret_master, int *ret_slave)
{
	struct termios t;
	struct winsize ws;
	char name[128];
	int m, s, r;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -errno;
	if (grantpt(m) < 0 || unlockpt(m) < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = ptsname_r(m, name, sizeof(name))) != 0) {
		r = -r;
		goto fail;
	}
	if ((s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		r = -errno;
		goto fail;
	}
	/* The command sees the caller's modes (echo, line editing) and size; the caller's terminal
	 * goes raw, so each key is interpreted once, by the command's terminal. */
	if (tcgetattr(tty_fd, &t) == 0)
		tcsetattr(s, TCSANOW, &t);
	if (ioctl(tty_fd, TIOCGWINSZ, &ws) == 0)
		ioctl(s, TIOCSWINSZ, &ws);
	*ret_master = m;
	*ret_slave = s;
	return 0;
fail:
	close(m);
	return r;
}

int pty_attach(int slave, unsigned fd_mask)
{
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return -errno;
	for (int fd = 0; fd < 3; fd++)
		if ((fd_mask & (1u << fd)) && dup2(slave, fd) < 0)
			return -errno;
	return 0;
}

int pty_raw_begin(int fd, struct termios *ret_saved)
{
	struct termios t;

	if (tcgetattr(fd, ret_saved) < 0)
		return -errno;
	t = *ret_saved;
	cfmakeraw(&t);
	return tcsetattr(fd, TCSAFLUSH, &t) < 0 ? -errno : 0;
}

void pty_raw_end(int fd, const struct termios *saved)
{
	tcsetattr(fd, TCSADRAIN, saved); /* keep what the operator typed ahead */
}

void pty_copy_winsize(int from, int to)
{
	struct winsize ws;

	if (ioctl(from, TIOCGWINSZ, &ws) == 0)
		ioctl(to, TIOCSWINSZ, &ws);
}

long pty_pump(int from, int to)
{
	char b[PTY_IO_BYTES];
	ssize_t n;
	int r;

	do
		n = read(from, b, sizeof(b));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EIO ? 0 : -errno;
	if (n > 0 && (r = fd_write_all(to, b, (size_t)n)) < 0)
		return r;
	return (long)n;
}

void pty_drain(int master, int to)
{
	size_t moved = 0;
	long n = 1;

	while (moved < PTY_DRAIN_MAX_BYTES && n > 0) {
		struct pollfd p = { .fd = master, .events = POLLIN };

		if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
			break;
		n = pty_pump(master, to);
		moved += n > 0 ? (size_t)n : 0;
	}
}
