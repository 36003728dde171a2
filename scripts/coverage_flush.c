// SPDX-License-Identifier: MIT
// make coverage only: write a process's gcov counts before _exit() and execve(), which skip the
// atexit handler that libgcov writes them from (drop's supervisor and every forked child end
// with _exit). Linked with -Wl,--wrap=_exit,--wrap=execve into the coverage build, never into
// proctor itself. A process that cannot open the .gcda files for writing (inside a Landlock
// domain that does not cover the build directory) skips the write, and at exit() its stderr
// is pointed at /dev/null before libgcov tries (and complains), so no "profiling: Cannot open"
// lands in the output of a command the tests compare (the agent's `uip` calls).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef COVERAGE_PROBE
#error "COVERAGE_PROBE: a .gcda file of the coverage build, made writable by scripts/coverage.sh"
#endif

void __gcov_dump(void);
void __real__exit(int status) __attribute__((noreturn));
int __real_execve(const char *path, char *const argv[], char *const envp[]);
void __wrap__exit(int status) __attribute__((noreturn));
int __wrap_execve(const char *path, char *const argv[], char *const envp[]);

static bool coverage_writable(void)
{
	int fd = open(COVERAGE_PROBE, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void coverage_flush(void)
{
	int saved = errno;

	if (coverage_writable())
		__gcov_dump();
	errno = saved;
}

/* Registered after libc's own exit work, so it runs before the destructors libgcov writes
 * from; stderr is unbuffered, so nothing the program wrote is lost. */
static void coverage_quiet_at_exit(void)
{
	int fd;

	if (coverage_writable() || (fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		return;
	dup2(fd, 2);
	close(fd);
}

__attribute__((constructor)) static void coverage_init(void)
{
	(void)atexit(coverage_quiet_at_exit); /* without it libgcov may only complain, as before */
}

void __wrap__exit(int status)
{
	coverage_flush();
	__real__exit(status);
}

int __wrap_execve(const char *path, char *const argv[], char *const envp[])
{
	coverage_flush();
	return __real_execve(path, argv, envp);
}
