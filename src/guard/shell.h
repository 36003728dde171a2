/* SPDX-License-Identifier: MIT */
/* shell.h: find what a Bash command line would write, without running it. A lexer that knows
 * quotes, escapes, line continuations, heredocs, command and arithmetic substitution; then per
 * simple command: output redirections, write verbs and their targets, wrappers (sh -c, env, sudo,
 * xargs, find -exec), cd, git routing and remote operations, package installs. Every target is
 * handed to a callback that says whether it is allowed; the first refusal is the verdict. */
#ifndef PROCTOR_GUARD_SHELL_H
#define PROCTOR_GUARD_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#define SHELL_MAX_DEPTH 8
#define SHELL_MAX_TOKENS 4096

struct shell_check {
	/* Is writing `path` (absolute or relative to `cwd`; cwd NULL when unknown) allowed? Returns
	 * NULL when it is, else a reason. */
	const char *(*target)(void *ctx, const char *cwd, const char *path);
	void *ctx;
	const char *cwd; /* the command's starting directory */
};

struct shell_verdict {
	bool deny;
	char reason[512];
};

/* Analyse `cmd`; fills *ret. Never runs anything. */
void shell_analyze(const struct shell_check *chk, const char *cmd, struct shell_verdict *ret);

#endif
