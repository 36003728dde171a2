/* SPDX-License-Identifier: MIT */
/* sandbox.h: the domain the real tool of a passthrough runs in. An allowlisted prefix lets the
 * agent choose every remaining argument, and the tool runs as mockd's uid, so the tool must not
 * be able to read what mockd reads (fixtures, config) or write what it writes (journal, socket
 * directory). This file builds, once at start-up and while the paths can still be opened, a
 * Landlock ruleset that grants read+execute on the system directories, read on /proc, the usual
 * character devices, the tool itself and the configured extra paths, and nothing else; and the
 * scrubbed environment the tool gets. It does not spawn (passthrough.c does). */
#ifndef PROCTOR_MOCK_SANDBOX_H
#define PROCTOR_MOCK_SANDBOX_H

#include <stddef.h>

#include "../lib/diag.h"
#include "../lib/strv.h"

#define SANDBOX_MAX_PATHS 64
#define SANDBOX_MAX_ENV 64
#define SANDBOX_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

struct pt_sandbox {
	int ruleset_fd; /* a Landlock ruleset; -1 when none was built */
	char **envp;    /* NULL-terminated "NAME=VALUE" list */
};

struct pt_sandbox_spec {
	const char *exe;            /* the real tool: read+execute on this file */
	const struct strv *read;    /* extra read-only paths (files or directories) */
	const struct strv *write;   /* extra read-write paths */
	const struct strv *env;     /* extra "NAME=VALUE" entries */
	const char *const *protect; /* paths no granted path may contain (fixtures, journal, ...) */
	size_t nprotect;
};

/* Build the ruleset and environment. -EOPNOTSUPP when the kernel has no Landlock (the tool is
 * then never run: there is no unconfined fallback), -EACCES when a granted path contains a
 * protected one, -errno when a path cannot be opened; the message goes to `d`. */
int pt_sandbox_build(const struct pt_sandbox_spec *spec, struct diag *d, struct pt_sandbox *ret);
/* In the forked child, just before exec: no_new_privs, then restrict to the ruleset. */
int pt_sandbox_enter(const struct pt_sandbox *sb);
void pt_sandbox_free(struct pt_sandbox *sb);
/* True when `name_value` is NAME=VALUE with NAME of [A-Za-z_][A-Za-z0-9_]*. */
int sandbox_env_valid(const char *name_value);

#endif
