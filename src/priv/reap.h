/* SPDX-License-Identifier: MIT */
/* reap.h: teardown that fails closed: stop the agent's process group, then sweep every process
 * with the agent uid in any uid slot until none is left or the deadline passes; and the pid
 * namespace path, where the agent's tree runs under a small init so teardown is one kill. */
#ifndef PROCTOR_PRIV_REAP_H
#define PROCTOR_PRIV_REAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define REAP_MAX_SURVIVORS 64

struct reap_result {
	size_t signalled; /* processes found and signalled */
	size_t nsurvivors;
	pid_t survivors[REAP_MAX_SURVIVORS];
};

/* SIGTERM the group, wait up to grace_ms for it to go, then SIGKILL it. 0, or -ESRCH when the
 * group did not exist. */
int reap_pgroup(pid_t pgid, unsigned grace_ms);
/* Every live (non-zombie) process whose real, effective, saved or fs uid is `uid`: SIGTERM,
 * grace_ms to leave, then SIGKILL passes until none is left or deadline_ms has passed. The KILL
 * pass also sends kill(-1, SIGKILL) from a helper running as `uid`, which reaches processes
 * forked while we scan. Fills *ret; 0 when none survived, -EBUSY when some did (fail closed). */
int reap_uid(uid_t uid, unsigned grace_ms, unsigned deadline_ms, struct reap_result *ret);
/* Processes with `uid` in any uid slot, now (zombies excluded). */
size_t reap_count_uid(uid_t uid);
/* Whether this host lets us create a pid namespace (so teardown can be one kill). */
bool reap_pidns_available(void);

#endif
