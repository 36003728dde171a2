/* SPDX-License-Identifier: MIT */
/* shell.h: find what a Bash command line would write, run or fetch, without running it. A lexer
 * that knows quotes, escapes, line continuations, heredocs, command, arithmetic and process
 * substitution, parameter expansion, [[ ]] and (( )); then per simple command, with literal
 * variables, for loops, functions and cd tracked: output redirections, the programs of
 * shell_tables.c (writers and their target options, wrappers, package managers, git, interpreters)
 * and nested scripts (sh -c, eval, source, script files). Every target goes to a callback that says
 * whether it is allowed; the first refusal is the verdict. Anything not fully understood is
 * refused (fail closed). */
#ifndef PROCTOR_GUARD_SHELL_H
#define PROCTOR_GUARD_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHELL_MAX_DEPTH 8
#define SHELL_MAX_TOKENS 8192
#define SHELL_MAX_COMMAND_BYTES (256 * 1024) /* longer commands are refused, not analysed */
#define SHELL_MAX_ANALYSIS_MS 30             /* over this, the verdict is deny */
#define SHELL_MAX_SCRIPT_BYTES (64 * 1024)   /* a script file run by sh/bash/source is analysed up to this */
#define SHELL_MAX_VARS 64
#define SHELL_MAX_EXPANSIONS 256 /* words one brace or glob expansion may yield */

/* What a command does to a path: writes into it (creates or changes a file, or a file inside a
 * directory), or removes, renames or changes the mode or owner of the path itself and everything
 * under it (then a directory holding the guard's files counts). */
enum shell_op { SHELL_WRITE, SHELL_REMOVE };

struct shell_check {
	/* Is this allowed on `path` (absolute or relative to `cwd`; cwd NULL when unknown)? Returns
	 * NULL when it is, else a reason. */
	const char *(*target)(void *ctx, const char *cwd, const char *path, enum shell_op op);
	/* The targets of an apply_patch patch given to the shell (Codex); NULL when allowed. */
	const char *(*patch)(void *ctx, const char *cwd, const char *patch);
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
