/* SPDX-License-Identifier: MIT */
/* identity.h: a process's kernel identity as /proc/self/status states it, plus Landlock: what
 * `proctor identity` prints and the worker checks before accepting work. Reads and compares;
 * never changes identity (drop.h does). */
#ifndef PROCTOR_PRIV_IDENTITY_H
#define PROCTOR_PRIV_IDENTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IDENTITY_MAX_GROUPS 256
#define IDENTITY_STATUS_MAX_BYTES (64 * 1024)

struct identity {
	uid_t uid[4]; /* real, effective, saved, filesystem */
	gid_t gid[4];
	gid_t groups[IDENTITY_MAX_GROUPS];
	size_t ngroups;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	int no_new_privs;       /* 0 or 1 */
	int seccomp;            /* 0 off, 1 strict, 2 filter */
	int landlock_abi;       /* the kernel's, 0 when none */
	bool landlock_enforced; /* this process: opening / is refused (see identity_read) */
};

/* Parse a /proc/<pid>/status text. Every field above except Landlock must be present and well
 * formed, else -EINVAL with the field's name in *ret_field. */
int identity_parse(const char *text, size_t len, struct identity *ret, const char **ret_field);
/* Read this process's identity: /proc/self/status and the Landlock state. */
int identity_read(struct identity *ret, const char **ret_field);
/* The same through an fd on /proc/self/status opened earlier (Landlock checks opens, so a
 * process that has since restricted itself can still read its status this way). */
int identity_read_fd(int status_fd, struct identity *ret, const char **ret_field);
json_t *identity_json(const struct identity *id);

struct identity_expect {
	bool uid, gid, groups, no_caps, nnp, landlock;
	uid_t want_uid;
	gid_t want_gid;
	gid_t want_groups[IDENTITY_MAX_GROUPS];
	size_t nwant_groups;
};
/* Append one line per unmet expectation to `out` (NUL-separated lines in a buffer the caller
 * frees); returns the number unmet. All four uid/gid slots must match; groups as a set. */
size_t identity_check(const struct identity *id, const struct identity_expect *e, char **ret_report);

#endif
