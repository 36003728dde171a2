/* SPDX-License-Identifier: MIT */
/* reap.h: teardown that fails closed and that the agent cannot stop: stop the agent's process
 * group, then sweep every process with the agent uid in any uid slot (threads included) until
 * two scans in a row find none or the deadline passes; and a cgroup v2 kill, where the host has
 * one, for a tree started inside a cgroup of its own. Everything runs in the caller's process
 * (root): nothing on this path runs as, or can be signalled by, the agent. */
#ifndef PROCTOR_PRIV_REAP_H
#define PROCTOR_PRIV_REAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define REAP_MAX_SURVIVORS 64
#define REAP_STATUS_MAX_BYTES 1024 /* of /proc/PID/status: State and Uid come in the first lines */
#define REAP_STOP_ROUNDS 50        /* SIGSTOP scans before the KILL pass goes ahead regardless */
/* The real uid the sweep's thread takes while it signals as the agent's uid: one no process has
 * ((uid_t)-2; -1 is not a uid). It cannot be swept. */
#define REAP_KILL_RUID ((uid_t)4294967294u)
/* Holds reap.lock: one sweep at a time signals as an agent uid (root-only, like the run's locks). */
#define REAP_KILL_LOCK_DIR "/run/proctor"
/* The longest a sweep waits for another sweep's kill(-1) (which holds the lock for one system
 * call) before it signals by scans instead. */
#define REAP_KILL_LOCK_WAIT_MS 1000u

struct reap_result {
	size_t signalled; /* processes found and signalled */
	size_t nsurvivors;
	pid_t survivors[REAP_MAX_SURVIVORS];
	/* added after 0.1: */
	unsigned passes;  /* stop-and-kill passes */
	bool timed_out;   /* the deadline ended the sweep (survivors are listed) */
	bool cgroup_used; /* found processes were moved into a cgroup v2 and killed with cgroup.kill */
	bool kill_as_uid; /* the signals went out as kill(-1) with the uid as effective uid */
};

/* SIGTERM the group, wait up to grace_ms for it to go, then SIGKILL it. 0, or -errno (-ESRCH
 * when the group did not exist). */
int reap_pgroup(pid_t pgid, unsigned grace_ms);
/* Every live process whose real, effective, saved or fs uid is `uid` (a process whose main
 * thread exited but another runs counts as live). The signals go out as kill(-1) sent by this
 * thread with `uid` as its effective uid (real uid REAP_KILL_RUID, saved uid unchanged: nothing of
 * `uid` can signal it meanwhile): the kernel reaches every process whose real or saved uid is
 * `uid` at once, forks in flight included. SIGTERM, up to grace_ms to leave, then SIGKILL until
 * two scans of /proc in a row find none. Where this thread cannot take that identity (not root),
 * the scans signal instead: passes of SIGSTOP until every one found is stopped (so none can
 * fork), SIGKILL to all; where cgroup v2 with cgroup.kill exists and a pass left something
 * behind, each one found is also moved into a cgroup of the sweep's own, whose kill reaches
 * children forked after the scan. Never takes longer than deadline_ms plus half a second (the
 * last scan, which kills what it finds and gives the report; a scan cut short counts as finding
 * one, so it never reports "none"). Fills *ret; 0 when none survived, -EBUSY when some did (fail
 * closed), -EINVAL for uid 0, the caller's uid or REAP_KILL_RUID. */
int reap_uid(uid_t uid, unsigned grace_ms, unsigned deadline_ms, struct reap_result *ret);
/* kill(-1, sig) sent by this thread with `uid` as its effective uid (real uid REAP_KILL_RUID,
 * saved uid 0, no effective capability, one sender at a time under REAP_KILL_LOCK_DIR/reap.lock):
 * reaches every process whose real or saved uid is `uid` at once, and nothing of `uid` can
 * signal this thread meanwhile. Only for plain root (real, effective and saved uid 0). Waits up to
 * wait_ms for the lock (0: one try). 0 when sent (whether it reached anyone is for a scan to
 * tell), or -errno (-EPERM: not plain root, or capabilities would have stayed effective;
 * -ETIMEDOUT: another sender held the lock all along). */
int reap_signal_uid(uid_t uid, int sig, unsigned wait_ms);
/* Processes with `uid` in any uid slot, now (zombies excluded, live threads of a zombie leader
 * included). */
size_t reap_count_uid(uid_t uid);
/* From a /proc/PID/status text (starting with a newline): the State letter, and whether `uid`
 * is in any of the four Uid slots (never for real uid REAP_KILL_RUID with saved uid 0: another
 * sweep signalling as `uid`). 0, or -EINVAL when either line is missing or malformed. */
int reap_status_parse(const char *text, uid_t uid, char *ret_state, bool *ret_match);
/* Whether this host lets us create a pid namespace (so teardown can be one kill). */
bool reap_pidns_available(void);

/* A cgroup v2 of our own, for `proctor run`: create it before forking the agent's tree, put the
 * first process in with reap_cgroup_add() while it is still root (the agent cannot move itself
 * out: cgroup.procs above it is root's), and at teardown reap_cgroup_kill() ends every process
 * in it, including ones forked during the kill; then reap_cgroup_destroy(). */
struct reap_cgroup {
	int dirfd; /* O_PATH|O_DIRECTORY on the cgroup, -1 when none */
	char path[256];
};
/* The cgroup v2 mount that has cgroup.kill (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
 * hybrid host), in ret (size bytes). 0 or -EOPNOTSUPP. */
int reap_cgroup_root(char *ret, size_t size);
/* mkdir ROOT/name (name: one path component); *ret is written only on success. 0, -EOPNOTSUPP (no cgroup v2 with cgroup.kill),
 * -EINVAL (a bad name), or -errno (-EEXIST when it exists). */
int reap_cgroup_create(const char *name, struct reap_cgroup *ret);
/* Move process `pid` (0: the caller) and all its threads into the cgroup. 0 or -errno. */
int reap_cgroup_add(const struct reap_cgroup *cg, pid_t pid);
/* Kill every process in the cgroup (cgroup.kill) and wait until it is empty or deadline_ms has
 * passed. 0, or -EBUSY with *ret_left processes still in it. */
int reap_cgroup_kill(const struct reap_cgroup *cg, unsigned deadline_ms, size_t *ret_left);
/* Remove the cgroup (it must be empty) and close it; a no-op on one never created. 0 or -errno. */
int reap_cgroup_destroy(struct reap_cgroup *cg);

#endif
