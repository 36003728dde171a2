/* SPDX-License-Identifier: MIT */
/* shell_int.h: what shell.c (lexer, words, state) shares with shell_tables.c (what each program
 * does). Internal to src/guard. */
#ifndef PROCTOR_GUARD_SHELL_INT_H
#define PROCTOR_GUARD_SHELL_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/strv.h"
#include "shell.h"

enum { T_WORD, T_OP, T_REDIR };

/* In a word's text: a reference to a variable is \1NAME\2; an unquoted brace-expansion '{' ','
 * '}' is \3 \5 \4 (quoted ones stay literal). */
#define W_VAR_OPEN '\1'
#define W_VAR_CLOSE '\2'
#define W_BRACE_OPEN '\3'
#define W_BRACE_CLOSE '\4'
#define W_BRACE_COMMA '\5'

struct lex;

struct tok {
	int kind;
	char *s;
	bool dyn;          /* an expansion whose value the guard cannot know ($(...), $1, ${x:-y}, ...) */
	bool quoted;       /* some part was quoted (a heredoc delimiter: the body is not expanded) */
	bool glob;         /* an unquoted * ? or [ */
	char *body;        /* on a << token: the heredoc's body */
	size_t sub0, nsub; /* nested scripts ($(...), `...`, <(...)) in lex.subs */
	struct lex *owner;
};

struct var {
	char *name;
	char *value; /* NULL: known to be set to something the guard cannot know */
};

struct func {
	char name[64];
	struct lex *L;
	size_t from, to; /* the body's tokens */
};

struct sh {
	const struct shell_check *chk;
	struct shell_verdict *v;
	int depth;
	int cmd_nest; /* sh_command calls open inside one another (wrappers) */
	bool wrapped; /* the next sh_command runs a program a wrapper names: no reserved words there */
	char cwd[PATH_MAX];
	bool cwd_known;
	bool cdpath; /* CDPATH was set: a relative cd goes where the guard cannot tell */
	struct var vars[SHELL_MAX_VARS];
	size_t nvars;
	struct func funcs[16];
	size_t nfuncs;
	int64_t deadline_ns;
	struct strv *written;         /* paths this command writes, absolute (shared by nested states) */
	const char *stdin_text;       /* the script a shell would read on stdin (heredoc, here-string), or NULL */
	const struct tok *stdin_file; /* or the file it would read (< FILE) */
	bool stdin_unknown;           /* or a pipe: what the shell would run cannot be known */
};

void sh_deny(struct sh *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A word's value with literal variables substituted and braces kept literal; false when any part
 * cannot be known. */
bool sh_word(struct sh *st, const struct tok *t, char *out, size_t n);
/* Check a word as a path the command writes (`op`); expands braces and globs; denies when the
 * value cannot be known. */
void sh_target(struct sh *st, const char *what, const struct tok *t, enum shell_op op);
void sh_target_str(struct sh *st, const char *what, const char *path, enum shell_op op);
/* Analyse a simple command given as words (a wrapper's inner command). */
void sh_command(struct sh *st, struct tok **w, size_t n);
/* Analyse a script (sh -c, eval, a script file) in a copy of the current state. */
void sh_script(struct sh *st, const char *what, const char *text);
void sh_script_file(struct sh *st, const char *what, const char *path);
/* Change directory for the rest of the analysis (NULL: unknown). */
void sh_cd(struct sh *st, const char *dir);
/* Set a variable (value NULL: unknown). */
void sh_setvar(struct sh *st, const char *name, const char *value);
bool sh_is_assignment(const char *s);
const char *sh_base(const char *s);

/* shell_tables.c: analyse the command w[0..n) by what the program is. */
void tables_command(struct sh *st, struct tok **w, size_t n);
/* Whether an unknown program's argument names a program the tables act on (then the rest of the
 * words are analysed as that program's command). */
bool tables_is_known_actor(const char *name);

#endif
