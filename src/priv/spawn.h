/* SPDX-License-Identifier: MIT */
/* spawn.h: what `proctor drop` and `proctor run` both need to start a dropped command: closing
 * every inherited fd but a list, a clean environment built from a list, a pid-1 init for a pid
 * namespace, and a child's failure report carried to the parent over a close-on-exec pipe.
 * Does not change identity (drop.h) and does not touch terminals (pty.h). */
#ifndef PROCTOR_PRIV_SPAWN_H
#define PROCTOR_PRIV_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../lib/strv.h"

#define SPAWN_MAX_KEEP_FDS 64
#define SPAWN_MAX_ENV 1024               /* entries in a built environment */
#define SPAWN_MAX_ENV_BYTES (256 * 1024) /* their total size, NULs included */
#define SPAWN_DEFAULT_PATH "PATH=/usr/bin:/bin"
#define SPAWN_STEP_MAX 200 /* bytes of a failed step's name in a report */

/* Close every fd above 2 except those in keep[] (any order; values below 3 are ignored).
 * 0 or -errno (-EINVAL for more than SPAWN_MAX_KEEP_FDS). */
int spawn_close_fds_except(const int *keep, size_t nkeep);

/* A clean environment in *ret (initialised empty by the caller): SPAWN_DEFAULT_PATH, then each
 * name in keep[] with its value in `from` (a name absent there is skipped), then each K=V of
 * set[]; a later K replaces an earlier one, so set[] can replace PATH. 0, -EINVAL (a keep name
 * with '=' or empty, a set entry not K=V), -E2BIG (over the limits above), -ENOMEM. */
int spawn_env_build(char *const *from, const char *const *keep, size_t nkeep, const char *const *set, size_t nset,
		    struct strv *ret);

/* The signals a supervisor passes on to the command it started (TERM, INT, HUP, QUIT, USR1,
 * USR2, WINCH, CONT). */
void spawn_forward_sigset(sigset_t *ret);

/* pid 1 of a pid namespace, called in the init with SIGCHLD and spawn_forward_sigset() blocked:
 * passes each forwarded signal on to `main`, reaps every child (orphans re-parent to it) until
 * `main` exits, and returns its wait status in *ret_wstatus. 0, or -ECHILD when `main` is not a
 * child. When the init exits the kernel kills what is left in the namespace. */
int spawn_init_reap(pid_t main, int *ret_wstatus);

/* The exit code a supervisor reports for a wait status: the status, or 128 + the signal. */
int spawn_exit_code(int wstatus);

/* A child's failure before exec, reported to the parent: write the step and the error to the
 * close-on-exec pipe `fd` (one write, atomic); the parent reads EOF when exec succeeded. */
void spawn_report_write(int fd, const char *step, int err);
/* Read the report: 0 and *ret_err = 0 on EOF (exec succeeded), or 0 with the child's step (NUL
 * terminated, at most SPAWN_STEP_MAX bytes) and error; -errno when the pipe could not be read. */
int spawn_report_read(int fd, char step[SPAWN_STEP_MAX + 1], int *ret_err);

/* Whether the read end `fd` of a pipe whose write end the parent keeps says the parent is gone
 * (all write ends closed): for --die-with-parent across a pid namespace, where getppid() is 0. */
bool spawn_parent_gone(int fd);

#endif
