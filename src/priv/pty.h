/* SPDX-License-Identifier: MIT */
/* pty.h: a pseudo-terminal between the caller's terminal and a dropped command, as `su --pty`
 * and sudo's use_pty do: the command's terminal is a new one, so TIOCSTI, TIOCSCTTY and the
 * like reach only that one, never the terminal of the shell that started it. This file opens
 * the pty, puts the caller's terminal in raw mode and back, and moves bytes; the supervising
 * loop is the caller's. */
#ifndef PROCTOR_PRIV_PTY_H
#define PROCTOR_PRIV_PTY_H

#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#define PTY_IO_BYTES 4096             /* one relay step */
#define PTY_DRAIN_MAX_BYTES (1 << 20) /* output still buffered when the command exits */

/* A new pty (master and slave, both close-on-exec, neither our controlling terminal) whose
 * slave has the modes and window size of the terminal `tty_fd`. 0 or -errno. */
int pty_open(int tty_fd, int *ret_master, int *ret_slave);
/* In the child, after setsid(): make `slave` the controlling terminal and put it on each fd in
 * 0..2 whose bit is set in fd_mask. 0 or -errno. */
int pty_attach(int slave, unsigned fd_mask);
/* Raw mode on the caller's terminal `fd` (no echo, no line editing, no signals from keys: they
 * go to the command's terminal as bytes), saving the old modes. 0 or -errno. */
int pty_raw_begin(int fd, struct termios *ret_saved);
void pty_raw_end(int fd, const struct termios *saved);
/* Copy the window size of `from` to `to` (the kernel then sends SIGWINCH to the pty's
 * foreground process group). */
void pty_copy_winsize(int from, int to);
/* Move up to PTY_IO_BYTES from `from` to `to`: bytes moved, 0 at end of input (EOF, or EIO from
 * a master whose slave is closed everywhere), -errno. */
long pty_pump(int from, int to);
/* Move what `master` still holds, without blocking, up to PTY_DRAIN_MAX_BYTES. */
void pty_drain(int master, int to);

#endif
