/* SPDX-License-Identifier: MIT */
/* sandbox.c: the passthrough tool's Landlock ruleset and environment (see sandbox.h). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../priv/drop.h"

#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* Read+execute: what any dynamically linked tool or script interpreter needs. Missing ones are
 * skipped (not every system has /lib32). */
static const char *const system_exec[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc" };
static const char *const system_dev[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom" };

struct ll_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

int sandbox_env_valid(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (const char *p = s; p < eq; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

/* Does granting `dir` (resolved) expose `inner` (resolved)? */
static bool path_within(const char *dir, const char *inner)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(dir, inner, n) && (inner[n] == '\0' || inner[n] == '/');
}

static int check_exposure(const char *granted, const struct pt_sandbox_spec *spec, struct diag *d)
{
	char g[PATH_MAX], p[PATH_MAX];

	if (!realpath(granted, g))
		return 0; /* opened below, which reports it */
	for (size_t i = 0; i < spec->nprotect; i++) {
		if (!spec->protect[i] || !realpath(spec->protect[i], p))
			continue;
		if (path_within(g, p)) {
			diag_error(d, "%s: the real tool may not reach this path: it contains %s", granted,
				   spec->protect[i]);
			return -EACCES;
		}
	}
	return 0;
}

static int add_rule(int rs, int abi, const char *path, enum landlock_kind kind, bool optional,
		    const struct pt_sandbox_spec *spec, struct diag *d)
{
	struct landlock_path_beneath_attr pb = { 0 };
	struct stat st;
	int fd, r;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (optional && r == -ENOENT)
			return 0;
		diag_error(d, "%s: passthrough sandbox path: %s", path, strerror(-r));
		return r;
	}
	r = check_exposure(path, spec, d);
	if (r == 0 && fstat(fd, &st) < 0)
		r = -errno;
	if (r == 0) {
		pb.parent_fd = fd;
		pb.allowed_access = landlock_rule_access(kind, S_ISDIR(st.st_mode), abi);
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
			r = -errno;
			diag_error(d, "%s: Landlock rule: %s", path, strerror(-r));
		}
	}
	close(fd);
	return r;
}

static int add_list(int rs, int abi, const char *const *paths, size_t n, enum landlock_kind kind, bool optional,
		    const struct pt_sandbox_spec *spec, struct diag *d)
{
	for (size_t i = 0; i < n; i++) {
		int r = add_rule(rs, abi, paths[i], kind, optional, spec, d);

		if (r < 0)
			return r;
	}
	return 0;
}

static int ruleset_fill(int rs, int abi, const struct pt_sandbox_spec *spec, struct diag *d)
{
	static const char *const proc[] = { "/proc" };
	int r;

	if ((r = add_list(rs, abi, system_exec, sizeof(system_exec) / sizeof(*system_exec), LANDLOCK_EXEC, true, spec,
			  d)) < 0 ||
	    (r = add_list(rs, abi, proc, 1, LANDLOCK_RO, true, spec, d)) < 0 ||
	    (r = add_list(rs, abi, system_dev, sizeof(system_dev) / sizeof(*system_dev), LANDLOCK_RW, true, spec, d)) <
		    0)
		return r;
	if (spec->exe && (r = add_rule(rs, abi, spec->exe, LANDLOCK_EXEC, false, spec, d)) < 0)
		return r;
	if (spec->read &&
	    (r = add_list(rs, abi, (const char *const *)spec->read->v, spec->read->n, LANDLOCK_RO, false, spec, d)) < 0)
		return r;
	if (spec->write && (r = add_list(rs, abi, (const char *const *)spec->write->v, spec->write->n, LANDLOCK_RW,
					 false, spec, d)) < 0)
		return r;
	return 0;
}

static int ruleset_build(const struct pt_sandbox_spec *spec, struct diag *d, int *ret_fd)
{
	int abi = landlock_abi(), rs, r;
	struct ll_attr attr = { .handled_access_fs = landlock_handled_fs(abi) };
	size_t size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(__u64) : sizeof(__u64);

	if (!abi) {
		diag_error(
			d,
			"%s: this kernel has no Landlock: the real tool cannot be confined, so passthrough is refused",
			spec->exe);
		return -EOPNOTSUPP;
	}
	/* Signals and abstract sockets: the tool cannot signal mockd or reach other services. */
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) {
		r = -errno;
		diag_error(d, "Landlock ruleset: %s", strerror(-r));
		return r;
	}
	r = ruleset_fill(rs, abi, spec, d);
	if (r < 0) {
		close(rs);
		return r;
	}
	*ret_fd = rs;
	return 0;
}

static int env_build(const struct pt_sandbox_spec *spec, char ***ret)
{
	size_t n = spec->env ? spec->env->n : 0, k = 0;
	bool has_path = false;
	char **envp = calloc(n + 3, sizeof(*envp));

	if (!envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		has_path |= !strncmp(spec->env->v[i], "PATH=", 5);
		if (!(envp[k++] = strdup(spec->env->v[i])))
			goto oom;
	}
	if (!has_path && !(envp[k++] = strdup("PATH=" SANDBOX_DEFAULT_PATH)))
		goto oom;
	*ret = envp;
	return 0;
oom:
	for (size_t i = 0; i < k; i++)
		free(envp[i]);
	free(envp);
	return -ENOMEM;
}

int pt_sandbox_build(const struct pt_sandbox_spec *spec, struct diag *d, struct pt_sandbox *ret)
{
	struct pt_sandbox sb = { .ruleset_fd = -1 };
	int r;

	r = ruleset_build(spec, d, &sb.ruleset_fd);
	if (r == 0)
		r = env_build(spec, &sb.envp);
	if (r < 0) {
		pt_sandbox_free(&sb);
		return r;
	}
	*ret = sb;
	return 0;
}

int pt_sandbox_enter(const struct pt_sandbox *sb)
{
	if (sb->ruleset_fd < 0)
		return -EPERM; /* never run unconfined */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_landlock_restrict_self, sb->ruleset_fd, 0) < 0)
		return -errno;
	return 0;
}

void pt_sandbox_free(struct pt_sandbox *sb)
{
	if (sb->ruleset_fd >= 0)
		close(sb->ruleset_fd);
	sb->ruleset_fd = -1;
	for (size_t i = 0; sb->envp && sb->envp[i]; i++)
		free(sb->envp[i]);
	free(sb->envp);
	sb->envp = NULL;
}
