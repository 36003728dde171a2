/* SPDX-License-Identifier: MIT */
/* spawn.c: fd closing, environment building, a pid-namespace init and failure reports for a
 * command started by a privileged supervisor (see spawn.h). Never prints or exits. */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int close_range_or_loop(unsigned first, unsigned last)
{
	if (syscall(SYS_close_range, first, last, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	/* Kernels before 5.9: close what /proc/self/fd lists. */
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		long fd = strtol(e->d_name, NULL, 10);

		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd != dirfd(d) && fd >= first && fd <= last)
			close((int)fd);
	}
	closedir(d);
	return 0;
}

int spawn_close_fds_except(const int *keep, size_t nkeep)
{
	int sorted[SPAWN_MAX_KEEP_FDS];
	unsigned from = 3;
	int r;

	if (nkeep > SPAWN_MAX_KEEP_FDS)
		return -EINVAL;
	if (nkeep) {
		memcpy(sorted, keep, nkeep * sizeof(int));
		qsort(sorted, nkeep, sizeof(int), cmp_int);
	}
	/* close_range over the gaps between the fds to keep */
	for (size_t i = 0; i < nkeep; i++) {
		if (sorted[i] < (int)from)
			continue;
		if ((unsigned)sorted[i] > from && (r = close_range_or_loop(from, (unsigned)sorted[i] - 1)) < 0)
			return r;
		from = (unsigned)sorted[i] + 1;
	}
	return close_range_or_loop(from, ~0U);
}

/* Set K=V in env, replacing an entry with the same K. */
static int env_set(struct strv *env, const char *kv, size_t *bytes)
{
	size_t klen = (size_t)(strchr(kv, '=') - kv), len = strlen(kv) + 1;
	char *copy;

	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], kv, klen + 1))
			continue;
		if (*bytes - (strlen(env->v[i]) + 1) + len > SPAWN_MAX_ENV_BYTES)
			return -E2BIG;
		if (!(copy = strdup(kv)))
			return -ENOMEM;
		*bytes = *bytes - (strlen(env->v[i]) + 1) + len;
		free(env->v[i]);
		env->v[i] = copy;
		return 0;
	}
	if (env->n == SPAWN_MAX_ENV || *bytes + len > SPAWN_MAX_ENV_BYTES)
		return -E2BIG;
	*bytes += len;
	return strv_push(env, kv);
}

static const char *env_lookup(char *const *from, const char *name)
{
	size_t n = strlen(name);

	for (; from && *from; from++)
		if (!strncmp(*from, name, n) && (*from)[n] == '=')
			return *from;
	return NULL;
}

int spawn_env_build(char *const *from, const char *const *keep, size_t nkeep, const char *const *set, size_t nset,
		    struct strv *ret)
{
	struct strv env = { 0 };
	size_t bytes = 0;
	int r = env_set(&env, SPAWN_DEFAULT_PATH, &bytes);

	for (size_t i = 0; r == 0 && i < nkeep; i++) {
		const char *kv;

		if (!keep[i][0] || strchr(keep[i], '='))
			r = -EINVAL;
		else if ((kv = env_lookup(from, keep[i])))
			r = env_set(&env, kv, &bytes);
	}
	for (size_t i = 0; r == 0 && i < nset; i++)
		r = set[i][0] == '=' || !strchr(set[i], '=') ? -EINVAL : env_set(&env, set[i], &bytes);
	if (r < 0) {
		strv_free(&env);
		return r;
	}
	*ret = env;
	return 0;
}

void spawn_forward_sigset(sigset_t *ret)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

	sigemptyset(ret);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(ret, sigs[i]);
}

int spawn_init_reap(pid_t main, int *ret_wstatus)
{
	sigset_t set;

	spawn_forward_sigset(&set);
	sigaddset(&set, SIGCHLD);
	for (;;) {
		int st, sig = sigwaitinfo(&set, NULL);
		pid_t p;

		if (sig > 0 && sig != SIGCHLD) {
			kill(main, sig);
			continue;
		}
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p == main) {
				*ret_wstatus = st;
				return 0;
			}
		}
		if (p < 0 && errno == ECHILD)
			return -ECHILD;
	}
}

int spawn_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 127;
}

struct spawn_report {
	int32_t err;
	char step[SPAWN_STEP_MAX + 1];
};

void spawn_report_write(int fd, const char *step, int err)
{
	struct spawn_report rep = { .err = err < 0 ? -err : err };
	ssize_t w;

	if (!rep.err)
		rep.err = EPERM; /* a report always means failure */
	strncpy(rep.step, step, SPAWN_STEP_MAX);
	do
		w = write(fd, &rep, sizeof(rep)); /* <= PIPE_BUF: one atomic write */
	while (w < 0 && errno == EINTR);
}

int spawn_report_read(int fd, char step[SPAWN_STEP_MAX + 1], int *ret_err)
{
	struct spawn_report rep;
	ssize_t n;

	do
		n = read(fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	step[0] = '\0';
	*ret_err = 0;
	if (n == 0)
		return 0;
	if ((size_t)n != sizeof(rep))
		return -EIO;
	memcpy(step, rep.step, SPAWN_STEP_MAX);
	step[SPAWN_STEP_MAX] = '\0';
	*ret_err = rep.err > 0 ? rep.err : EPERM;
	return 0;
}

bool spawn_parent_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	/* The parent never writes: readable or hung up both mean its write end is closed. */
	return poll(&p, 1, 0) != 0;
}
