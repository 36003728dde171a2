/* SPDX-License-Identifier: MIT */
/* drop.c: drop privileges in a fixed order and prove the result (see drop.h).
 *
 * libcap-ng is loaded on first use (dlopen) rather than linked: proctor is one binary, and
 * `proctor guard hook`, exec'd before every tool call an agent makes, would otherwise map it for
 * nothing. It is loaded by drop_load() or drop_prepare(), while the old privileges still reach
 * every file (`proctor run` loads it before it forks the worker, so a missing library is said at
 * once); a drop for which it cannot be loaded fails, it never goes on with
 * capabilities. */
#include "drop.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../lib/dynlib.h"

#define CAPNG_SONAME "libcap-ng.so.0"
#define CAPNG_STEP "load " CAPNG_SONAME " (it clears the capability sets)"

int landlock_enforce(const struct drop_opts *o);

static struct {
	void (*clear)(capng_select_t);
	int (*apply)(capng_select_t);
	int err; /* 0 loaded, else -errno from dynlib_open(); not loaded yet counts as failed */
} capng = { .err = -ELIBACC };

static pthread_once_t capng_once = PTHREAD_ONCE_INIT;

static void capng_lib_open(void)
{
	const struct dynlib_sym syms[] = {
		{ "capng_clear", &capng.clear },
		{ "capng_apply", &capng.apply },
	};

	capng.err = dynlib_open(CAPNG_SONAME, syms, sizeof(syms) / sizeof(syms[0]));
}

/* 0 once libcap-ng is loaded, else -ELIBACC / -ELIBBAD (every call: the result is kept). */
static int capng_lib(void)
{
	pthread_once(&capng_once, capng_lib_open);
	return capng.err;
}

int drop_load(const char **ret_step)
{
	int r = capng_lib();

	if (r < 0)
		*ret_step = CAPNG_STEP;
	return r;
}

int drop_prepare(struct drop_opts *o, const char **ret_step)
{
	int r;

	if (o->uid == 0 && !o->allow_root_target) {
		*ret_step = "target uid 0 (root) refused without --allow-root-target";
		return -EPERM;
	}
	if (o->nll && !landlock_abi()) {
		*ret_step = "Landlock rules were asked for but this kernel has no Landlock";
		return -EOPNOTSUPP;
	}
	if (o->landlock_scope && landlock_abi() < 6) {
		*ret_step = "--landlock-scope needs Landlock ABI 6 or later";
		return -EOPNOTSUPP;
	}
	if ((r = capng_lib()) < 0) {
		*ret_step = CAPNG_STEP;
		return r;
	}
	for (size_t i = 0; i < o->nll; i++) {
		o->ll[i].fd = open(o->ll[i].path, O_PATH | O_CLOEXEC);
		if (o->ll[i].fd < 0) {
			*ret_step = o->ll[i].path;
			return -errno;
		}
	}
	return 0;
}

/* The bounding and ambient sets can only be cleared with CAP_SETPCAP, so before setresuid. */
static int caps_drop_bounding(void)
{
	capng.clear(CAPNG_SELECT_BOUNDS);
	if (capng.apply(CAPNG_SELECT_BOUNDS) < 0)
		return -EPERM;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ? -errno : 0;
}

static int caps_drop_rest(void)
{
	capng.clear(CAPNG_SELECT_CAPS);
	return capng.apply(CAPNG_SELECT_CAPS) < 0 ? -EPERM : 0;
}

/* The proof: the old ids cannot be regained, and the kernel's own account matches the request. */
int drop_prove(const struct drop_opts *o, uid_t old_uid, gid_t old_gid, int status_fd, const char **ret_step)
{
	struct identity id;
	struct identity_expect e = { .uid = true,
				     .gid = true,
				     .groups = true,
				     .no_caps = true,
				     .nnp = true,
				     .want_uid = o->uid,
				     .want_gid = o->gid,
				     .nwant_groups = o->ngroups };
	const char *field;
	char *report = NULL;
	size_t bad;

	if (old_uid != o->uid && (setresuid(old_uid, old_uid, old_uid) == 0 || setuid(old_uid) == 0)) {
		*ret_step = "proof: the old uid could be regained";
		return -EPERM;
	}
	if (old_gid != o->gid && (setresgid(old_gid, old_gid, old_gid) == 0 || setgid(old_gid) == 0)) {
		*ret_step = "proof: the old gid could be regained";
		return -EPERM;
	}
	memcpy(e.want_groups, o->groups, o->ngroups * sizeof(gid_t));
	if (identity_read_fd(status_fd, &id, &field) < 0) {
		*ret_step = "proof: /proc/self/status could not be read";
		return -EIO;
	}
	bad = identity_check(&id, &e, &report);
	free(report);
	if (bad) {
		*ret_step = "proof: /proc/self/status does not match the requested identity";
		return -EPERM;
	}
	/* Landlock leaves no trace in /proc: prove it by what it does. The ruleset handles READ_DIR,
	 * so unless / itself was allowed, opening / must now be refused. */
	if (o->nll && !id.landlock_enforced) {
		bool root_listed = false;

		for (size_t i = 0; i < o->nll; i++)
			root_listed |= !strcmp(o->ll[i].path, "/");
		if (!root_listed) {
			*ret_step = "proof: Landlock is not in effect";
			return -EPERM;
		}
	}
	return 0;
}

static int drop_steps(const struct drop_opts *o, uid_t old_uid, gid_t old_gid, int status_fd, const char **ret_step)
{
	int r;

	/* Normally loaded by drop_prepare() already; without it nothing below may change. */
	if ((r = capng_lib()) < 0)
		return *ret_step = CAPNG_STEP, r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return *ret_step = "no_new_privs", -errno;
	if (setgroups(o->ngroups, o->groups) < 0)
		return *ret_step = "setgroups", -errno;
	if (setresgid(o->gid, o->gid, o->gid) < 0)
		return *ret_step = "setresgid", -errno;
	if ((r = caps_drop_bounding()) < 0)
		return *ret_step = "capabilities (bounding, ambient)", r;
	if (setresuid(o->uid, o->uid, o->uid) < 0)
		return *ret_step = "setresuid", -errno;
	if ((r = caps_drop_rest()) < 0)
		return *ret_step = "capabilities (inheritable, permitted, effective)", r;
	if (o->nll && (r = landlock_enforce(o)) < 0)
		return *ret_step = "landlock", r;
	return drop_prove(o, old_uid, old_gid, status_fd, ret_step);
}

int drop_apply(const struct drop_opts *o, const char **ret_step)
{
	/* Opened first: after Landlock, /proc may be out of reach for a new open. */
	int status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC), r;

	if (status_fd < 0)
		return *ret_step = "open /proc/self/status", -errno;
	r = drop_steps(o, geteuid(), getegid(), status_fd, ret_step);
	close(status_fd);
	return r;
}
