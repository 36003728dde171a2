/* SPDX-License-Identifier: MIT */
/* drop.h: become an unprivileged identity and prove it (ARCHITECTURE.md section 6).
 * Order: no_new_privs; setgroups; setresgid; the bounding and ambient capability sets (while
 * CAP_SETPCAP is still held); setresuid; the other capability sets; Landlock; then proof: regaining
 * the old ids must fail and /proc/self/status must say exactly what was asked. Does not exec. */
#ifndef PROCTOR_PRIV_DROP_H
#define PROCTOR_PRIV_DROP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "identity.h"

#define DROP_MAX_LANDLOCK_PATHS 64

enum landlock_kind { LANDLOCK_RO, LANDLOCK_RW, LANDLOCK_EXEC };

struct landlock_path {
	const char *path;
	enum landlock_kind kind;
	int fd; /* O_PATH, opened by drop_prepare() while we can still reach it */
};

struct drop_opts {
	uid_t uid;
	gid_t gid;
	gid_t groups[IDENTITY_MAX_GROUPS];
	size_t ngroups; /* 0: no supplementary groups */
	struct landlock_path ll[DROP_MAX_LANDLOCK_PATHS];
	size_t nll;
	bool landlock_scope;
	bool allow_root_target;
};

/* Load libcap-ng (once per process; drop_prepare() does it too): for a caller that forks before
 * it drops, to fail early with a clear message. 0, or -ELIBACC / -ELIBBAD with the step in
 * *ret_step. */
int drop_load(const char **ret_step);
/* Checks that need the old privileges: target not root (unless allowed), Landlock available
 * when asked for, libcap-ng loaded (-ELIBACC / -ELIBBAD when it cannot be), every Landlock path
 * opened. 0, or -errno with the step in *ret_step. */
int drop_prepare(struct drop_opts *o, const char **ret_step);
/* Drop and prove. 0, or -errno with the failed step in *ret_step (the caller must not run the
 * command then). */
int drop_apply(const struct drop_opts *o, const char **ret_step);
/* The proof step of drop_apply() alone: regaining old_uid or old_gid must fail, and the status
 * read from status_fd (from offset 0) must show exactly the identity `o` asks for. drop_apply()
 * passes /proc/self/status; the unit tests pass forged ones. 0, or -errno with *ret_step. */
int drop_prove(const struct drop_opts *o, uid_t old_uid, gid_t old_gid, int status_fd, const char **ret_step);
/* Landlock ABI of the running kernel (0: none). */
int landlock_abi(void);
/* The filesystem rights a ruleset handles at this ABI, and those a rule of `kind` on a file or a
 * directory grants (for unit tests and the man page). */
unsigned long long landlock_handled_fs(int abi);
unsigned long long landlock_rule_access(enum landlock_kind kind, bool is_dir, int abi);

#endif
