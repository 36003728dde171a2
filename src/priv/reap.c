/* SPDX-License-Identifier: MIT */
/* reap.c: process-group stop and uid sweep over /proc. */
#include "reap.h"

#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util.h"

#define REAP_POLL_MS 5

static int setgroups_empty(void)
{
	return setgroups(0, NULL);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int reap_pgroup(pid_t pgid, unsigned grace_ms)
{
	uint64_t end = now_mono_ms() + grace_ms;

	if (pgid <= 1)
		return -EINVAL;
	if (kill(-pgid, SIGTERM) < 0)
		return -errno;
	while (now_mono_ms() < end && kill(-pgid, 0) == 0)
		sleep_ms(REAP_POLL_MS);
	kill(-pgid, SIGKILL);
	return 0;
}

/* Does /proc/<pid>/status show `uid` in any uid slot, and is the process not a zombie? */
static bool pid_has_uid(const char *pid, uid_t uid)
{
	char path[64], line[256];
	bool match = false, zombie = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned u[4];

		if (!strncmp(line, "State:", 6))
			zombie = strchr(line, 'Z') || strchr(line, 'X');
		else if (!strncmp(line, "Uid:", 4) && sscanf(line + 4, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4)
			match = u[0] == uid || u[1] == uid || u[2] == uid || u[3] == uid;
	}
	fclose(f);
	return match && !zombie;
}

/* Signal every live process of `uid`; returns how many there were. Records them in ret. */
static size_t sweep(uid_t uid, int sig, struct reap_result *ret)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	ret->nsurvivors = 0;
	while ((e = readdir(d))) {
		pid_t pid;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || (pid = (pid_t)atoi(e->d_name)) == getpid() ||
		    !pid_has_uid(e->d_name, uid))
			continue;
		kill(pid, sig);
		if (ret->nsurvivors < REAP_MAX_SURVIVORS)
			ret->survivors[ret->nsurvivors++] = pid;
		n++;
	}
	closedir(d);
	return n;
}

/* A helper that becomes `uid` and sends kill(-1, SIGKILL): the kernel signals every process
 * that uid may signal, in one step, including ones forked after our scan. */
static void kill_as_uid(uid_t uid)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) == 0 && setgroups_empty() == 0 && setresuid(uid, uid, uid) == 0)
			kill(-1, SIGKILL);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

size_t reap_count_uid(uid_t uid)
{
	struct reap_result r;

	return sweep(uid, 0, &r);
}

int reap_uid(uid_t uid, unsigned grace_ms, unsigned deadline_ms, struct reap_result *ret)
{
	uint64_t start = now_mono_ms();
	size_t n;

	memset(ret, 0, sizeof(*ret));
	if (uid == 0 || uid == getuid())
		return -EINVAL; /* never sweep ourselves or root */
	ret->signalled = sweep(uid, SIGTERM, ret);
	while (now_mono_ms() - start < grace_ms && sweep(uid, 0, ret))
		sleep_ms(REAP_POLL_MS);
	do {
		kill_as_uid(uid);
		n = sweep(uid, SIGKILL, ret);
		if (n)
			sleep_ms(REAP_POLL_MS);
	} while (n && now_mono_ms() - start < deadline_ms);
	n = sweep(uid, 0, ret);
	return n ? -EBUSY : 0;
}

bool reap_pidns_available(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(unshare(CLONE_NEWPID) == 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
