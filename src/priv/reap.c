/* SPDX-License-Identifier: MIT */
/* reap.c: process-group stop, the uid sweep (kill(-1) with the agent's uid as the effective uid
 * of this thread only; scans of /proc, threads included, to count and as the fallback; two empty
 * scans to finish, a hard deadline), and the cgroup v2 kill (see reap.h). Nothing here forks: a
 * helper running as the agent's uid could be SIGSTOPped by the agent and freeze the teardown,
 * and while this thread holds the agent's uid as its effective one, its real and saved uids are
 * ones the agent does not have, so the agent can neither signal nor ptrace it. */
#include "reap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/util.h"

#define REAP_POLL_MS 5
/* After a KILL pass, how long to wait for the killed to vanish: the wait ends as soon as a scan
 * is empty, so this costs only when something survives. A process dies in well under 1 ms on
 * an idle host, but a loaded one (CI on 2 cores, a coverage build) took over 20 ms for four
 * python processes, and the sweep then wrongly concluded kill(-1) had missed them. */
#define REAP_SETTLE_MS 250
#define REAP_FINAL_SCAN_MS 500 /* the last scan, for the report, may run this far past the deadline */

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

/* "Threads:" of a status text, or 0 when absent (then the task directory decides). */
static unsigned status_threads(const char *text)
{
	const char *t = strstr(text, "\nThreads:\t");

	return t ? (unsigned)strtoul(t + 10, NULL, 10) : 0;
}

int reap_status_parse(const char *text, uid_t uid, char *ret_state, bool *ret_match)
{
	const char *st = strstr(text, "\nState:\t"), *u = strstr(text, "\nUid:\t");
	unsigned v[4];

	/* NOLINTNEXTLINE(cert-err34-c): the four ids the kernel writes on the Uid: line */
	if (!st || !u || sscanf(u + 6, "%u %u %u %u", &v[0], &v[1], &v[2], &v[3]) != 4 || !st[8])
		return -EINVAL;
	*ret_state = st[8];
	/* Real uid REAP_KILL_RUID with saved uid 0 is another sweep in its window (reap_signal_uid),
	 * root's own process: never the agent's (which cannot get a saved uid of 0) nor ours to kill. */
	*ret_match =
		(v[0] == uid || v[1] == uid || v[2] == uid || v[3] == uid) && !(v[0] == REAP_KILL_RUID && v[2] == 0);
	return 0;
}

/* State letter of /proc/<dir>/status when `uid` is in a uid slot; '\0' when not, or gone.
 * *ret_threads: its Threads count (0: not shown). */
static char status_state(int dfd, const char *rel, uid_t uid, unsigned *ret_threads)
{
	char text[REAP_STATUS_MAX_BYTES + 2] = "\n";
	int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	bool match;
	char state;

	if (fd < 0)
		return '\0';
	n = read(fd, text + 1, REAP_STATUS_MAX_BYTES);
	close(fd);
	if (n <= 0)
		return '\0';
	text[n + 1] = '\0';
	*ret_threads = status_threads(text);
	return reap_status_parse(text, uid, &state, &match) == 0 && match ? state : '\0';
}

static bool state_dead(char s)
{
	return s == 'Z' || s == 'X' || s == '\0';
}

/* The state of process `pid` if it is live and has `uid`: its leader's, or when the leader has
 * exited (a zombie leader with live threads), the first live thread's. '\0' otherwise. */
static char process_state(int procfd, const char *pid, uid_t uid)
{
	char rel[300], s; /* d_name is at most 255 bytes */
	unsigned threads;
	DIR *d;
	struct dirent *e;
	int tfd;

	snprintf(rel, sizeof(rel), "%s/status", pid);
	s = status_state(procfd, rel, uid, &threads);
	/* A zombie whose Threads count is 1 is only its exited leader: nothing left to look at. */
	if (!state_dead(s) || s == '\0' || threads == 1)
		return state_dead(s) ? '\0' : s;
	snprintf(rel, sizeof(rel), "%s/task", pid);
	if ((tfd = openat(procfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || !(d = fdopendir(tfd))) {
		if (tfd >= 0)
			close(tfd);
		return '\0';
	}
	s = '\0';
	while (state_dead(s) && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !strcmp(e->d_name, pid))
			continue;
		snprintf(rel, sizeof(rel), "%s/status", e->d_name);
		s = status_state(dirfd(d), rel, uid, &threads);
	}
	closedir(d);
	return state_dead(s) ? '\0' : s;
}

enum scan_mode { SCAN_COUNT, SCAN_SIGNAL, SCAN_STOP };

struct scan {
	uid_t uid;
	enum scan_mode mode;
	int sig;                      /* SCAN_SIGNAL */
	const struct reap_cgroup *cg; /* SCAN_SIGNAL: move each one found in first, when set */
	struct reap_result *res;      /* survivors recorded here when set */
	uint64_t end;                 /* stop scanning at this time (0: never); the scan is then
				       * incomplete and counts one more, so it never says "none" */
	uint8_t *killed;              /* bitmap of pids sent SIGKILL (may be NULL): a dying process
				       * is not stopped again, which would only wait for its exit */
};

#define REAP_PID_LIMIT (1u << 22) /* PID_MAX_LIMIT on 64-bit Linux */

static bool killed_test(const uint8_t *map, pid_t pid)
{
	return map && (unsigned)pid < REAP_PID_LIMIT && (map[(unsigned)pid / 8] & (1u << ((unsigned)pid % 8)));
}

static void killed_set(uint8_t *map, pid_t pid)
{
	if (map && (unsigned)pid < REAP_PID_LIMIT)
		map[(unsigned)pid / 8] |= (uint8_t)(1u << ((unsigned)pid % 8));
}

/* One pass over /proc. SCAN_STOP counts (and SIGSTOPs) only those not yet stopped. */
static size_t scan(const struct scan *s)
{
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = procfd >= 0 ? fdopendir(procfd) : NULL;
	struct dirent *e;
	size_t n = 0;

	if (!d) {
		if (procfd >= 0)
			close(procfd);
		return 1; /* cannot look: never report "none" (fail closed) */
	}
	if (s->res)
		s->res->nsurvivors = 0;
	for (unsigned i = 1; (e = readdir(d)); i++) {
		pid_t pid;
		char st;

		if (s->end && !(i % 64) && now_mono_ms() > s->end) {
			n++; /* cut short: fail closed */
			break;
		}
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    (pid = (pid_t)strtol(e->d_name, NULL, 10)) == getpid() ||
		    !(st = process_state(dirfd(d), e->d_name, s->uid)))
			continue;
		if (s->mode == SCAN_STOP) {
			if (st == 'T' || st == 't' || killed_test(s->killed, pid))
				continue;
			kill(pid, SIGSTOP);
		} else if (s->mode == SCAN_SIGNAL) {
			if (s->cg && s->cg->dirfd >= 0)
				reap_cgroup_add(s->cg, pid);
			kill(pid, s->sig);
			if (s->sig == SIGKILL)
				killed_set(s->killed, pid);
		}
		if (s->res && s->res->nsurvivors < REAP_MAX_SURVIVORS)
			s->res->survivors[s->res->nsurvivors++] = pid;
		n++;
	}
	closedir(d);
	return n;
}

/* Only plain root may send as the agent (the restore below needs a saved uid of 0, and a caller
 * with capabilities but a uid other than 0 would keep them), and one sender at a time: another
 * sweep in its window has the same real uid, REAP_KILL_RUID, which kill(-1) would reach. The
 * lock is a root-only file under a root-only directory. A holder keeps it for one kill(-1), but
 * a wedged one (stopped by root, say) must not freeze every teardown of the host: the wait
 * ends at `end` (CLOCK_MONOTONIC ms; one try when already past). The fd, or -errno (-ETIMEDOUT
 * when the lock stayed taken). */
static int kill_lock(uint64_t end)
{
	int fd;

	if ((fd = fd_root_dir_ensure(REAP_KILL_LOCK_DIR)) < 0)
		return fd;
	fd = open(REAP_KILL_LOCK_DIR "/reap.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;

		if (r == -EWOULDBLOCK && now_mono_ms() < end) {
			sleep_ms(1);
			continue;
		}
		if (r == -EINTR)
			continue;
		close(fd);
		return r == -EWOULDBLOCK ? -ETIMEDOUT : r;
	}
	return fd;
}

/* No effective capability on this thread: a kept CAP_KILL (SECBIT_NO_SETUID_FIXUP) would make
 * kill(-1) reach every process of the host. */
static bool no_effective_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	return syscall(SYS_capget, &h, d) == 0 && !d[0].effective && !d[1].effective;
}

/* kill(-1, sig) with `uid` as this thread's effective uid: the kernel signals every process
 * whose real or saved uid is `uid` in one walk under the task-list lock, so a process that keeps
 * forking to new pids cannot slip past it (a fork in flight fails once its parent has SIGKILL
 * pending), which no scan of /proc can promise. The raw syscall changes this thread's
 * credentials only. The real uid is REAP_KILL_RUID, which no process has (kill(-1) reaches the
 * processes of the sender's real uid too, so it must not stay 0), and the saved uid stays 0: the
 * agent, whose signals and ptrace need its uid to be our real or saved uid, cannot reach this
 * thread meanwhile, and the kernel clears the effective capabilities (CAP_KILL among them) until
 * the effective uid is 0 again, which is checked. The kernel also clears this process's
 * parent-death signal and makes it non-dumpable (root may still trace it). 0 when the signal
 * went out (kill(-1) does not say whether it reached anyone: the caller's scans do), or -errno
 * when it could not be sent that way (not plain root, the lock still taken after wait_ms, a user
 * namespace without REAP_KILL_RUID, capabilities kept): then the caller scans instead. */
int reap_signal_uid(uid_t uid, int sig, unsigned wait_ms)
{
	uid_t ruid, euid, suid;
	int lock, r = 0;

	if (uid == REAP_KILL_RUID || getresuid(&ruid, &euid, &suid) < 0 || ruid || euid || suid)
		return -EPERM;
	if ((lock = kill_lock(now_mono_ms() + wait_ms)) < 0)
		return lock;
	if (syscall(SYS_setresuid, REAP_KILL_RUID, uid, 0) < 0) {
		r = -errno;
		close(lock);
		return r;
	}
	if (!no_effective_caps())
		r = -EPERM;
	else if (kill(-1, sig) < 0 && errno != ESRCH)
		r = -errno;
	if (syscall(SYS_setresuid, 0, 0, 0) < 0)
		abort(); /* cannot happen (the saved uid is 0); never go on as another identity */
	close(lock);
	return r;
}

size_t reap_count_uid(uid_t uid)
{
	struct scan s = { .uid = uid, .mode = SCAN_COUNT };

	return scan(&s);
}

/* Stop everything (a stopped process cannot fork), then kill everything. Returns how many the
 * KILL pass found. */
static size_t stop_then_kill(uid_t uid, const struct reap_cgroup *cg, uint64_t end, uint8_t *killed)
{
	struct scan stop = { .uid = uid, .mode = SCAN_STOP, .end = end, .killed = killed };
	struct scan kil = { .uid = uid, .mode = SCAN_SIGNAL, .sig = SIGKILL, .cg = cg, .end = end, .killed = killed };

	for (int i = 0; i < REAP_STOP_ROUNDS && now_mono_ms() < end && scan(&stop); i++)
		sched_yield();
	if (cg->dirfd >= 0) {
		size_t left;

		reap_cgroup_kill(cg, 0, &left);
	}
	return scan(&kil);
}

/* How long a sweep ending at `end` waits for the sender's lock: at most REAP_KILL_LOCK_WAIT_MS,
 * never past its deadline (0: one try). */
static unsigned lock_wait(uint64_t end)
{
	uint64_t now = now_mono_ms();

	if (now >= end)
		return 0;
	return end - now < REAP_KILL_LOCK_WAIT_MS ? (unsigned)(end - now) : REAP_KILL_LOCK_WAIT_MS;
}

static void sweep_cgroup_open(struct reap_cgroup *cg, uint64_t start)
{
	char name[64];

	snprintf(name, sizeof(name), "proctor-reap-%d-%llu", (int)getpid(), (unsigned long long)start);
	if (reap_cgroup_create(name, cg) < 0)
		cg->dirfd = -1;
}

int reap_uid(uid_t uid, unsigned grace_ms, unsigned deadline_ms, struct reap_result *ret)
{
	uint64_t start = now_mono_ms(), end = start + deadline_ms;
	uint64_t grace_end = start + (grace_ms < deadline_ms ? grace_ms : deadline_ms);
	struct reap_cgroup cg = { .dirfd = -1 };
	struct scan term = { .uid = uid, .mode = SCAN_SIGNAL, .sig = SIGTERM, .res = ret, .end = end };
	struct scan count = { .uid = uid, .mode = SCAN_COUNT, .res = ret, .end = end };
	struct scan kil = { .uid = uid, .mode = SCAN_SIGNAL, .sig = SIGKILL, .end = end };
	unsigned clean = 0;
	size_t n = 0;
	uint8_t *killed;
	bool as_uid, stopped = false;

	memset(ret, 0, sizeof(*ret));
	if (uid == 0 || uid == getuid() || uid == REAP_KILL_RUID)
		return -EINVAL;                 /* never sweep ourselves or root */
	killed = calloc(REAP_PID_LIMIT / 8, 1); /* NULL only costs time */
	/* One TERM each: all at once as the uid, else to each one the scan finds. Never as the uid
	 * where REAP_KILL_RUID is in use (an nfsnobody account, a process): kill(-1) would reach it. */
	ret->signalled = scan(&count);
	as_uid = !getpwuid(REAP_KILL_RUID) && !reap_count_uid(REAP_KILL_RUID) &&
		 reap_signal_uid(uid, SIGTERM, lock_wait(end)) == 0;
	if (!as_uid)
		ret->signalled = scan(&term);
	ret->kill_as_uid = as_uid;
	n = 1;
	while (now_mono_ms() < grace_end && (n = scan(&count)))
		sleep_ms(REAP_POLL_MS);
	/* A process that forks to a new pid faster than a scan reaches it is never seen by one: as
	 * the uid, KILL goes out once after the grace whatever the scans found. */
	clean = as_uid ? 0 : !n; /* else all gone within the grace: that scan was the first empty one */
	/* At least one KILL pass, even when the grace used up the deadline. */
	while (clean < 2 && (now_mono_ms() < end || !ret->passes)) {
		if (clean) { /* one empty scan behind us: a second one ends the sweep */
			clean = (n = scan(&count)) ? 0 : 2;
			continue;
		}
		ret->passes++;
		if (as_uid && reap_signal_uid(uid, SIGKILL, lock_wait(end)) == 0) {
			n = scan(&kil); /* what kill(-1) cannot reach: a uid in the effective or fs slot only */
		} else {
			/* Moving a process between cgroups is slow (about 0.5 ms): only once a pass
			 * has left something behind, i.e. something forks faster than the scan. */
			if (cg.dirfd < 0 && ret->passes > 1)
				sweep_cgroup_open(&cg, start);
			if ((n = stop_then_kill(uid, &cg, end, killed)) && cg.dirfd >= 0)
				ret->cgroup_used = true;
			stopped = true;
		}
		ret->signalled = n > ret->signalled ? n : ret->signalled;
		for (uint64_t settle = now_mono_ms() + REAP_SETTLE_MS; (n = scan(&count)) && now_mono_ms() < settle;)
			sleep_ms(1);
		/* kill(-1) reports no count: survivors after a pass as the uid (an LSM refusing the
		 * signals, say) send the next passes through the scans' stop-and-kill. */
		if (n && as_uid && now_mono_ms() < end) {
			as_uid = false;
			ret->kill_as_uid = false;
		}
		clean = n ? 0 : 1;
	}
	if (clean < 2) {
		/* The report's scan, past the deadline if need be. After SIGSTOP passes it kills
		 * what it finds, so a sweep cut short leaves nothing stopped and alive behind it. */
		struct scan last = { .uid = uid,
				     .mode = stopped ? SCAN_SIGNAL : SCAN_COUNT,
				     .sig = SIGKILL,
				     .res = ret,
				     .end = now_mono_ms() + REAP_FINAL_SCAN_MS };

		n = scan(&last);
	}
	ret->timed_out = n && now_mono_ms() >= end;
	if (cg.dirfd >= 0) {
		size_t left;

		reap_cgroup_kill(&cg, 0, &left);
		reap_cgroup_destroy(&cg);
	}
	free(killed);
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

/* ---- cgroup v2 ---- */

int reap_cgroup_root(char *ret, size_t size)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		struct statfs sf;

		if (statfs(roots[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC &&
		    (size_t)snprintf(ret, size, "%s", roots[i]) < size)
			return 0;
	}
	return -EOPNOTSUPP;
}

int reap_cgroup_create(const char *name, struct reap_cgroup *ret)
{
	struct reap_cgroup cg;
	char root[128];
	int r, fd;

	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if ((r = reap_cgroup_root(root, sizeof(root))) < 0)
		return r;
	if ((size_t)snprintf(cg.path, sizeof(cg.path), "%s/%s", root, name) >= sizeof(cg.path))
		return -ENAMETOOLONG;
	if (mkdir(cg.path, 0755) < 0)
		return -errno;
	fd = open(cg.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || faccessat(fd, "cgroup.kill", W_OK, 0) < 0) {
		r = fd < 0 ? -errno : -EOPNOTSUPP; /* cgroup.kill came with Linux 5.14 */
		if (fd >= 0)
			close(fd);
		rmdir(cg.path);
		return r;
	}
	cg.dirfd = fd;
	*ret = cg;
	return 0;
}

static int cg_write(const struct reap_cgroup *cg, const char *file, const char *text)
{
	int fd = openat(cg->dirfd, file, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

int reap_cgroup_add(const struct reap_cgroup *cg, pid_t pid)
{
	char text[32];

	if (cg->dirfd < 0)
		return -EBADF;
	snprintf(text, sizeof(text), "%d", pid ? (int)pid : (int)getpid());
	return cg_write(cg, "cgroup.procs", text);
}

/* Processes listed in cgroup.procs, or SIZE_MAX when it cannot be read (fail closed). */
static size_t cg_count(const struct reap_cgroup *cg)
{
	char b[4096];
	int fd = openat(cg->dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t k;

	if (fd < 0)
		return (size_t)-1;
	while ((k = read(fd, b, sizeof(b))) > 0)
		for (ssize_t i = 0; i < k; i++)
			n += b[i] == '\n';
	close(fd);
	return k < 0 ? (size_t)-1 : n;
}

int reap_cgroup_kill(const struct reap_cgroup *cg, unsigned deadline_ms, size_t *ret_left)
{
	uint64_t end = now_mono_ms() + deadline_ms;
	int r;

	*ret_left = (size_t)-1;
	if (cg->dirfd < 0)
		return -EBADF;
	if ((r = cg_write(cg, "cgroup.kill", "1")) < 0)
		return r;
	while ((*ret_left = cg_count(cg)) && now_mono_ms() < end)
		sleep_ms(1);
	return *ret_left ? -EBUSY : 0;
}

int reap_cgroup_destroy(struct reap_cgroup *cg)
{
	int r = 0;

	if (cg->dirfd < 0)
		return 0;
	/* The last process can leave cgroup.procs a moment before the cgroup may be removed. */
	for (int i = 0; i < 100 && (r = rmdir(cg->path) < 0 ? -errno : 0) == -EBUSY; i++)
		sleep_ms(1);
	close(cg->dirfd);
	cg->dirfd = -1;
	return r;
}
