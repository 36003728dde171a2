/* SPDX-License-Identifier: MIT */
/* shell.c: Bash write-target analysis (see shell.h). Conservative where it must guess: a dynamic
 * target ("$X", $(...)) of a write is denied; an unknown directory after `cd` makes relative
 * write targets unknown, hence denied. What it cannot see, Landlock still enforces. */
#include "shell.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/buf.h"
#include "../lib/strv.h"

enum { T_WORD, T_OP, T_REDIR };

struct tok {
	int kind;
	char *s;
	bool dyn; /* a word with $-expansion or command substitution in it */
};

struct lex {
	const char *p;
	struct tok *t;
	size_t n, cap;
	struct strv heredocs; /* delimiters waiting for the next newline ('-' prefix: strip tabs) */
	bool error;
	int depth;
	const struct shell_check *chk;
	struct shell_verdict *v;
};

static void analyze_text(const struct shell_check *chk, const char *text, int depth, struct shell_verdict *v);

static void deny(struct shell_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void deny(struct shell_verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (v->deny)
		return; /* the first reason stands */
	v->deny = true;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
}

static void emit(struct lex *L, int kind, const char *s, size_t n, bool dyn)
{
	if (L->n == L->cap) {
		size_t ncap = L->cap ? L->cap * 2 : 32;
		struct tok *t = L->n >= SHELL_MAX_TOKENS ? NULL : realloc(L->t, ncap * sizeof(*t));

		if (!t) {
			L->error = true;
			return;
		}
		L->t = t;
		L->cap = ncap;
	}
	L->t[L->n].kind = kind;
	L->t[L->n].s = strndup(s, n);
	L->t[L->n].dyn = dyn;
	if (!L->t[L->n].s)
		L->error = true;
	else
		L->n++;
}

/* From just after an opening "(", find the matching ")"; quotes and nesting respected. */
static const char *match_paren(const char *p)
{
	int depth = 1;

	for (; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '\'') {
			if (!(p = strchr(p + 1, '\'')))
				return NULL;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return NULL;
		} else if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p;
	}
	return NULL;
}

/* A nested command (from $(...), `...`, <(...)): analysed as a script of its own. */
static void nested(struct lex *L, const char *s, size_t n)
{
	char *inner = strndup(s, n);

	if (inner)
		analyze_text(L->chk, inner, L->depth + 1, L->v);
	free(inner);
}

/* At '$': consume the expansion; returns true when it made the word dynamic. */
static void lex_dollar(struct lex *L, struct buf *w, bool *dyn)
{
	const char *p = L->p + 1, *end;

	*dyn = true;
	if (p[0] == '(' && p[1] == '(') { /* arithmetic: not a command, and not a redirection */
		end = match_paren(p + 1); /* the ')' that closes the first '(' ends "$((...))" */
		L->p = end ? end + 1 : (L->error = true, p + strlen(p));
	} else if (p[0] == '(') {
		end = match_paren(p + 1);
		if (!end) {
			L->error = true;
			L->p = p + strlen(p);
			return;
		}
		nested(L, p + 1, (size_t)(end - p - 1));
		L->p = end + 1;
	} else if (p[0] == '{') {
		end = strchr(p, '}');
		L->p = end ? end + 1 : (L->error = true, p + strlen(p));
	} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
			p++;
		L->p = p;
	} else if (*p && strchr("0123456789@*#?$!-", *p)) {
		L->p = p + 1;
	} else {
		*dyn = false; /* a lone '$' is literal */
		buf_putc(w, '$');
		L->p = p;
	}
}

static void lex_backquote(struct lex *L, bool *dyn)
{
	const char *p = L->p + 1, *end = p;

	while (*end && *end != '`')
		end += *end == '\\' && end[1] ? 2 : 1;
	if (!*end) {
		L->error = true;
		L->p = end;
		return;
	}
	nested(L, p, (size_t)(end - p));
	*dyn = true;
	L->p = end + 1;
}

static bool is_op_char(char c)
{
	return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

/* One word (quotes removed, expansions marked dynamic). */
static void lex_word(struct lex *L)
{
	struct buf w;
	bool dyn = false, d;

	buf_init(&w, 0);
	while (*L->p && !L->error && *L->p != ' ' && *L->p != '\t' && *L->p != '\n' && !is_op_char(*L->p)) {
		char c = *L->p;

		if (c == '\\') {
			if (L->p[1] == '\n')
				L->p += 2;
			else if (L->p[1])
				buf_putc(&w, L->p[1]), L->p += 2;
			else
				L->p++;
		} else if (c == '\'') {
			const char *end = strchr(L->p + 1, '\'');

			if (!end) {
				L->error = true;
				break;
			}
			buf_append(&w, L->p + 1, (size_t)(end - L->p - 1));
			L->p = end + 1;
		} else if (c == '"') {
			for (L->p++; *L->p && *L->p != '"' && !L->error;) {
				if (*L->p == '\\' && L->p[1] && strchr("$`\"\\\n", L->p[1])) {
					if (L->p[1] != '\n')
						buf_putc(&w, L->p[1]);
					L->p += 2;
				} else if (*L->p == '$') {
					lex_dollar(L, &w, &d);
					dyn |= d;
				} else if (*L->p == '`') {
					lex_backquote(L, &d);
					dyn |= d;
				} else {
					buf_putc(&w, *L->p++);
				}
			}
			if (*L->p != '"')
				L->error = true;
			else
				L->p++;
		} else if (c == '$') {
			lex_dollar(L, &w, &d);
			dyn |= d;
		} else if (c == '`') {
			lex_backquote(L, &d);
			dyn |= d;
		} else {
			buf_putc(&w, c);
			L->p++;
		}
	}
	emit(L, T_WORD, w.data ? w.data : "", w.len, dyn);
	buf_free(&w);
}

/* After a newline: the bodies of pending heredocs, which are data, not commands. */
static void lex_heredocs(struct lex *L)
{
	for (size_t i = 0; i < L->heredocs.n; i++) {
		const char *delim = L->heredocs.v[i];
		bool strip = delim[0] == '-';

		delim += strip;
		for (;;) {
			const char *line = L->p, *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);

			while (strip && len && *line == '\t')
				line++, len--;
			L->p = nl ? nl + 1 : line + len;
			if ((len == strlen(delim) && !memcmp(line, delim, len)) || !nl)
				break;
		}
	}
	strv_free(&L->heredocs);
}

/* An operator or redirection at L->p. `fd_word` is true when the previous token is an
 * all-digit word glued to this '<' or '>' (then it is the redirection's fd and is dropped). */
static void lex_op(struct lex *L, bool glued_digits)
{
	static const char *const ops[] = { "&>>", "<<<", "<<-", "&&", "||", ";;", "|&", ">>", ">|", "&>", ">&", "<&",
					   "<<", "<>", ";", "&", "|", "(", ")", "<", ">" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i]);

		if (strncmp(L->p, ops[i], n))
			continue;
		if ((ops[i][0] == '<' || ops[i][0] == '>') && (L->p[n] == '(') && n == 1) {
			/* process substitution <(...) / >(...): a nested command, used as a dynamic word */
			const char *end = match_paren(L->p + 2);

			if (!end) {
				L->error = true;
				return;
			}
			nested(L, L->p + 2, (size_t)(end - L->p - 2));
			emit(L, T_WORD, "", 0, true);
			L->p = end + 1;
			return;
		}
		if (glued_digits && L->n && (ops[i][0] == '<' || ops[i][0] == '>')) {
			free(L->t[--L->n].s); /* "2>" : the fd number is part of the redirection */
		}
		emit(L, strchr("<>", ops[i][0]) || !strcmp(ops[i], "&>") || !strcmp(ops[i], "&>>") ? T_REDIR : T_OP,
		     ops[i], n, false);
		L->p += n;
		return;
	}
	L->p++;
}

static void lex_all(struct lex *L)
{
	bool prev_digits = false;

	while (*L->p && !L->error) {
		char c = *L->p;

		if (c == ' ' || c == '\t' || c == '\r') {
			L->p++;
			prev_digits = false;
		} else if (c == '\\' && L->p[1] == '\n') {
			L->p += 2;
		} else if (c == '\n') {
			emit(L, T_OP, ";", 1, false);
			L->p++;
			lex_heredocs(L);
			prev_digits = false;
		} else if (c == '#') {
			while (*L->p && *L->p != '\n')
				L->p++;
		} else if (is_op_char(c)) {
			lex_op(L, prev_digits);
			prev_digits = false;
			/* A heredoc's delimiter is the next word: remember it for the next newline. */
			if (L->n && L->t[L->n - 1].kind == T_REDIR && !strncmp(L->t[L->n - 1].s, "<<", 2) &&
			    strcmp(L->t[L->n - 1].s, "<<<")) {
				bool dash = !strcmp(L->t[L->n - 1].s, "<<-");

				while (*L->p == ' ' || *L->p == '\t')
					L->p++;
				lex_word(L);
				if (L->n) {
					char *d = NULL;

					if (asprintf(&d, "%s%s", dash ? "-" : "", L->t[L->n - 1].s) >= 0)
						strv_push(&L->heredocs, d);
					free(d);
				}
			}
		} else {
			const char *start = L->p;

			lex_word(L);
			prev_digits = L->p > start && strspn(start, "0123456789") == (size_t)(L->p - start) &&
				      (*L->p == '<' || *L->p == '>');
		}
	}
}

/* ---- per simple command ------------------------------------------------------------------ */

struct state {
	const struct shell_check *chk;
	struct shell_verdict *v;
	int depth;
	char cwd[PATH_MAX];
	bool cwd_known;
};

struct cmd {
	struct tok **w; /* words */
	size_t n;
};

static bool is_assignment(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (const char *p = s; p < eq; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* Check one write target; a dynamic one is refused outright. */
static void target(struct state *st, const char *what, const struct tok *t)
{
	const char *why;

	if (st->v->deny)
		return;
	if (t->dyn) {
		deny(st->v, "%s: the target is computed at run time (%s)", what, t->s[0] ? t->s : "$...");
		return;
	}
	why = st->chk->target(st->chk->ctx, st->cwd_known ? st->cwd : NULL, t->s);
	if (why)
		deny(st->v, "%s: %s: %s", what, t->s, why);
}

static bool dev_ok(const char *s)
{
	return !strcmp(s, "/dev/null") || !strcmp(s, "/dev/stdout") || !strcmp(s, "/dev/stderr") ||
	       !strcmp(s, "/dev/tty") || !strncmp(s, "/dev/fd/", 8);
}

static const char *base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* Operands: words after the command that are not options (everything after "--" counts). */
static size_t operands(const struct cmd *c, size_t from, const struct tok **out, size_t max)
{
	size_t n = 0;
	bool opts = true;

	for (size_t i = from; i < c->n && n < max; i++) {
		if (opts && !strcmp(c->w[i]->s, "--")) {
			opts = false;
			continue;
		}
		if (opts && c->w[i]->s[0] == '-' && c->w[i]->s[1] && !c->w[i]->dyn)
			continue;
		out[n++] = c->w[i];
	}
	return n;
}

static void analyze_words(struct state *st, struct cmd *c, size_t i);

static void do_cd(struct state *st, const struct cmd *c, size_t i)
{
	const struct tok *ops[2];
	size_t n = operands(c, i + 1, ops, 2);
	char next[PATH_MAX];

	if (n == 0 || ops[0]->dyn || !strcmp(ops[0]->s, "-") || ops[0]->s[0] == '~') {
		st->cwd_known = false;
		return;
	}
	if (!(ops[0]->s[0] == '/' || st->cwd_known))
		return;
	if ((ops[0]->s[0] == '/' ? snprintf(next, sizeof(next), "%s", ops[0]->s)
				 : snprintf(next, sizeof(next), "%s/%s", st->cwd, ops[0]->s)) >= (int)sizeof(next)) {
		st->cwd_known = false;
		return;
	}
	memcpy(st->cwd, next, sizeof(next));
}

/* The value of an option given as "-o V", "--output V" or "--output=V" anywhere in the words. */
static void option_targets(struct state *st, const struct cmd *c, size_t i, const char *what, const char *const *shorts,
			   const char *const *longs)
{
	for (size_t k = i + 1; k < c->n; k++) {
		const char *s = c->w[k]->s;

		for (const char *const *o = longs; *o; o++) {
			size_t ol = strlen(*o);

			if (!strncmp(s, *o, ol) && s[ol] == '=') {
				struct tok t = { T_WORD, (char *)s + ol + 1, c->w[k]->dyn };

				target(st, what, &t);
			} else if (!strcmp(s, *o) && k + 1 < c->n) {
				target(st, what, c->w[k + 1]);
			}
		}
		if (in_list(s, shorts) && k + 1 < c->n)
			target(st, what, c->w[k + 1]);
	}
}

static void verb_git(struct state *st, const struct cmd *c, size_t i)
{
	static const char *const remote_ops[] = { "clone", "fetch", "pull", "push", "ls-remote", NULL };
	size_t k = i + 1;

	for (; k < c->n && c->w[k]->s[0] == '-'; k++) {
		const char *s = c->w[k]->s;

		if ((!strcmp(s, "-C") || !strcmp(s, "--git-dir") || !strcmp(s, "--work-tree")) && k + 1 < c->n)
			target(st, "git routing", c->w[++k]);
		else if (!strncmp(s, "--git-dir=", 10) || !strncmp(s, "--work-tree=", 12)) {
			struct tok t = { T_WORD, strchr(s, '=') + 1, c->w[k]->dyn };

			target(st, "git routing", &t);
		} else if (!strcmp(s, "-c") && k + 1 < c->n) {
			k++;
			if (!strncmp(c->w[k]->s, "remote.", 7) || !strncmp(c->w[k]->s, "url.", 4))
				deny(st->v, "git: configuring remotes is not allowed (%s)", c->w[k]->s);
		}
	}
	if (k >= c->n)
		return;
	if (in_list(c->w[k]->s, remote_ops))
		deny(st->v, "git %s: network operations are not allowed", c->w[k]->s);
	else if (!strcmp(c->w[k]->s, "submodule") && k + 1 < c->n && !strcmp(c->w[k + 1]->s, "update"))
		deny(st->v, "git submodule update: network operations are not allowed");
	else if (!strcmp(c->w[k]->s, "remote") && k + 1 < c->n &&
		 (!strcmp(c->w[k + 1]->s, "add") || !strcmp(c->w[k + 1]->s, "set-url")))
		deny(st->v, "git remote %s: changing remotes is not allowed", c->w[k + 1]->s);
	else if (!strcmp(c->w[k]->s, "config"))
		for (size_t j = k + 1; j < c->n; j++)
			if (!strncmp(c->w[j]->s, "remote.", 7) || !strncmp(c->w[j]->s, "url.", 4))
				deny(st->v, "git config: configuring remotes is not allowed (%s)", c->w[j]->s);
}

static bool verb_install(struct state *st, const struct cmd *c, size_t i, const char *cmd)
{
	static const char *const js[] = { "npm", "pnpm", "yarn", "bun", NULL };
	static const char *const js_ops[] = { "install", "i", "add", "ci", NULL };

	if (in_list(cmd, js)) {
		if ((!strcmp(cmd, "yarn") && c->n == i + 1) || (c->n > i + 1 && in_list(c->w[i + 1]->s, js_ops)))
			deny(st->v, "%s: installing packages is not allowed", cmd);
		return true;
	}
	for (size_t k = i + 1; k + 1 < c->n; k++) /* pip install, python -m pip install, uv pip install */
		if (!strcmp(c->w[k]->s, "install") && (!strcmp(cmd, "pip") || !strcmp(cmd, "pip3") ||
						       !strcmp(c->w[k - 1]->s, "pip")))
			deny(st->v, "pip install: installing packages is not allowed");
	if ((!strcmp(cmd, "pip") || !strcmp(cmd, "pip3")) && c->n > i + 1 && !strcmp(c->w[i + 1]->s, "install"))
		deny(st->v, "pip install: installing packages is not allowed");
	return false;
}

static const char *const all_operand_verbs[] = { "touch", "mkdir", "rm", "rmdir", "tee", "shred", "unlink",
						  "ln", "mv", "truncate", "mkfifo", "mknod", NULL };
static const char *const write_verbs[] = { "touch", "mkdir", "rm", "rmdir", "tee", "shred", "unlink", "ln", "mv",
					   "truncate", "mkfifo", "mknod", "cp", "install", "rsync", "dd", "chmod",
					   "chown", "chgrp", "sed", "perl", "curl", "wget", NULL };

/* Targets of the file-writing verbs. Returns true when `cmd` is one. */
static bool verb_write(struct state *st, const struct cmd *c, size_t i, const char *cmd)
{
	const struct tok *ops[256];
	size_t n;

	if (in_list(cmd, all_operand_verbs)) {
		n = operands(c, i + 1, ops, 256);
		for (size_t k = 0; k < n; k++)
			if (!(!strcmp(cmd, "truncate") && k == 0 && i + 2 < c->n && !strcmp(c->w[i + 1]->s, "-s")))
				target(st, cmd, ops[k]);
		return true;
	}
	if (!strcmp(cmd, "cp") || !strcmp(cmd, "install") || !strcmp(cmd, "rsync")) {
		static const char *const t_short[] = { "-t", NULL }, *const t_long[] = { "--target-directory", NULL };

		option_targets(st, c, i, cmd, t_short, t_long);
		n = operands(c, i + 1, ops, 256);
		if (n && !strcmp(cmd, "rsync")) {
			const char *colon = strchr(ops[n - 1]->s, ':'), *slash = strchr(ops[n - 1]->s, '/');

			if (colon && (!slash || colon < slash)) /* host:path */
				deny(st->v, "rsync: remote targets are not allowed (%s)", ops[n - 1]->s);
		}
		if (n >= 2 || (n == 1 && !strcmp(cmd, "install")))
			target(st, cmd, ops[n - 1]);
		return true;
	}
	if (!strcmp(cmd, "chmod") || !strcmp(cmd, "chown") || !strcmp(cmd, "chgrp")) {
		n = operands(c, i + 1, ops, 256);
		for (size_t k = 1; k < n; k++) /* the first operand is the mode or owner */
			target(st, cmd, ops[k]);
		return true;
	}
	if (!strcmp(cmd, "dd")) {
		for (size_t k = i + 1; k < c->n; k++)
			if (!strncmp(c->w[k]->s, "of=", 3)) {
				struct tok t = { T_WORD, c->w[k]->s + 3, c->w[k]->dyn };

				target(st, "dd of=", &t);
			}
		return true;
	}
	return false;
}

/* curl, wget, sed -i, perl -i. */
static bool verb_fetch_edit(struct state *st, const struct cmd *c, size_t i, const char *cmd)
{
	const struct tok *ops[256];
	struct tok here = { T_WORD, ".", false };
	size_t n;
	bool inplace = false, script_given = false;

	if (!strcmp(cmd, "curl")) {
		static const char *const s[] = { "-o", NULL }, *const l[] = { "--output", "--output-dir", NULL };

		option_targets(st, c, i, "curl -o", s, l);
		for (size_t k = i + 1; k < c->n; k++)
			if (!strcmp(c->w[k]->s, "-O") || !strcmp(c->w[k]->s, "--remote-name") || !strcmp(c->w[k]->s, "-J"))
				target(st, "curl -O (into the current directory)", &here);
		return true;
	}
	if (!strcmp(cmd, "wget")) {
		static const char *const s[] = { "-O", "-P", NULL }, *const l[] = { "--output-document", "--directory-prefix", NULL };
		bool named = false;

		option_targets(st, c, i, "wget", s, l);
		for (size_t k = i + 1; k < c->n; k++)
			named |= !strcmp(c->w[k]->s, "-O") || !strcmp(c->w[k]->s, "-P") || !strncmp(c->w[k]->s, "--output-document", 17) ||
				 !strncmp(c->w[k]->s, "--directory-prefix", 18);
		if (!named)
			target(st, "wget (into the current directory)", &here);
		return true;
	}
	if (strcmp(cmd, "sed") && strcmp(cmd, "perl"))
		return false;
	for (size_t k = i + 1; k < c->n; k++) {
		const char *s = c->w[k]->s;

		if (s[0] == '-' && s[1] != '-' && strchr(s, 'i') && (!strcmp(cmd, "perl") || s[1] == 'i'))
			inplace = true;
		if (!strncmp(s, "--in-place", 10))
			inplace = true;
		if (!strcmp(s, "-e") || !strcmp(s, "-f") || !strcmp(s, "--expression") || (s[0] == '-' && strchr(s, 'e') && !strcmp(cmd, "perl")))
			script_given = true;
	}
	if (!inplace)
		return true;
	n = operands(c, i + 1, ops, 256);
	for (size_t k = script_given ? 0 : 1; k < n; k++) /* without -e, the first operand is the script */
		target(st, cmd, ops[k]);
	return true;
}

/* Wrappers that run another command: the index of that command's word, or 0. */
static size_t unwrap(const struct state *st, const struct cmd *c, size_t i, const char *cmd)
{
	static const char *const with_arg[] = { "-u", "-g", "-n", "-s", "-k", "-C", "-p", "-U", "-h", NULL };
	size_t k = i + 1;

	(void)st;
	if (!strcmp(cmd, "env")) {
		while (k < c->n && (c->w[k]->s[0] == '-' || is_assignment(c->w[k]->s)))
			k += (!strcmp(c->w[k]->s, "-u") || !strcmp(c->w[k]->s, "-C")) ? 2 : 1;
		return k;
	}
	if (!strcmp(cmd, "sudo") || !strcmp(cmd, "doas") || !strcmp(cmd, "nice") || !strcmp(cmd, "ionice") ||
	    !strcmp(cmd, "stdbuf")) {
		while (k < c->n && c->w[k]->s[0] == '-')
			k += in_list(c->w[k]->s, with_arg) ? 2 : 1;
		return k;
	}
	if (!strcmp(cmd, "timeout")) {
		while (k < c->n && c->w[k]->s[0] == '-')
			k += (!strcmp(c->w[k]->s, "-s") || !strcmp(c->w[k]->s, "-k")) ? 2 : 1;
		return k + 1; /* the duration */
	}
	if (!strcmp(cmd, "nohup") || !strcmp(cmd, "time") || !strcmp(cmd, "command") || !strcmp(cmd, "builtin") ||
	    !strcmp(cmd, "exec"))
		return k;
	return 0;
}

static const char *const reserved[] = { "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
					 "esac", "{", "}", "!", "[[", NULL };

static void analyze_words(struct state *st, struct cmd *c, size_t i)
{
	const char *cmd;
	size_t next;

	while (i < c->n && is_assignment(c->w[i]->s)) {
		if (!strncmp(c->w[i]->s, "GIT_DIR=", 8) || !strncmp(c->w[i]->s, "GIT_WORK_TREE=", 14)) {
			struct tok t = { T_WORD, strchr(c->w[i]->s, '=') + 1, c->w[i]->dyn };

			target(st, "git routing", &t);
		}
		i++;
	}
	/* Reserved words open compound commands; the command proper follows them. A for or case
	 * header lists words, not a command. */
	while (i < c->n && !c->w[i]->dyn && in_list(c->w[i]->s, reserved))
		i++;
	if (i < c->n && !c->w[i]->dyn && (!strcmp(c->w[i]->s, "for") || !strcmp(c->w[i]->s, "case") ||
					  !strcmp(c->w[i]->s, "select") || !strcmp(c->w[i]->s, "function")))
		return;
	if (i >= c->n || st->v->deny)
		return;
	cmd = base(c->w[i]->s);
	if ((next = unwrap(st, c, i, cmd))) {
		if (next < c->n)
			analyze_words(st, c, next);
		return;
	}
	if ((!strcmp(cmd, "sh") || !strcmp(cmd, "bash") || !strcmp(cmd, "dash") || !strcmp(cmd, "zsh") ||
	     !strcmp(cmd, "ksh")) && st->depth < SHELL_MAX_DEPTH) {
		for (size_t k = i + 1; k < c->n; k++)
			if (c->w[k]->s[0] == '-' && strchr(c->w[k]->s, 'c') && k + 1 < c->n) {
				if (c->w[k + 1]->dyn)
					deny(st->v, "%s -c: the script is computed at run time", cmd);
				else
					analyze_text(st->chk, c->w[k + 1]->s, st->depth + 1, st->v);
				return;
			}
		return;
	}
	if (!strcmp(cmd, "eval")) {
		struct buf b;

		buf_init(&b, 0);
		for (size_t k = i + 1; k < c->n; k++) {
			if (c->w[k]->dyn)
				deny(st->v, "eval: the script is computed at run time");
			buf_printf(&b, "%s ", c->w[k]->s);
		}
		if (!st->v->deny && b.data)
			analyze_text(st->chk, b.data, st->depth + 1, st->v);
		buf_free(&b);
		return;
	}
	if (!strcmp(cmd, "xargs")) {
		for (size_t k = i + 1; k < c->n; k++)
			if (in_list(base(c->w[k]->s), write_verbs) || !strcmp(base(c->w[k]->s), "sh") || !strcmp(base(c->w[k]->s), "bash"))
				deny(st->v, "xargs %s: writes to targets read from input", base(c->w[k]->s));
		return;
	}
	if (!strcmp(cmd, "find")) {
		const struct tok *starts[64];
		size_t ns = 0;
		bool writes = false;
		struct tok here = { T_WORD, ".", false };

		for (size_t k = i + 1; k < c->n && ns < 64 && c->w[k]->s[0] != '-' && strcmp(c->w[k]->s, "(") &&
				       strcmp(c->w[k]->s, "!"); k++)
			starts[ns++] = c->w[k];
		for (size_t k = i + 1; k < c->n; k++) {
			if (!strcmp(c->w[k]->s, "-delete") || !strncmp(c->w[k]->s, "-fprint", 7))
				writes = true;
			if ((!strcmp(c->w[k]->s, "-exec") || !strcmp(c->w[k]->s, "-execdir") || !strcmp(c->w[k]->s, "-ok") ||
			     !strcmp(c->w[k]->s, "-okdir")) && k + 1 < c->n &&
			    (in_list(base(c->w[k + 1]->s), write_verbs) || !strcmp(base(c->w[k + 1]->s), "sh") ||
			     !strcmp(base(c->w[k + 1]->s), "bash")))
				writes = true;
		}
		if (writes)
			for (size_t k = 0; k < (ns ? ns : 1); k++)
				target(st, "find (writes under its start)", ns ? starts[k] : &here);
		return;
	}
	if (!strcmp(cmd, "cd") || !strcmp(cmd, "pushd")) {
		do_cd(st, c, i);
		return;
	}
	if (!strcmp(cmd, "git")) {
		verb_git(st, c, i);
		return;
	}
	if (verb_install(st, c, i, cmd) || verb_write(st, c, i, cmd))
		return;
	verb_fetch_edit(st, c, i, cmd);
}

/* Output redirections of a command: > >> >| &> &>> <> and >&FILE. */
static void redirects(struct state *st, struct tok *op, struct tok *t)
{
	bool out = op->s[0] == '>' || op->s[0] == '&' || !strcmp(op->s, "<>");

	if (!out || !t || st->v->deny)
		return;
	if (!strcmp(op->s, ">&") && !t->dyn && (strspn(t->s, "0123456789") == strlen(t->s) || !strcmp(t->s, "-")))
		return; /* 2>&1: a descriptor, not a file */
	if (!t->dyn && dev_ok(t->s))
		return;
	target(st, "redirection", t);
}

#define SUBSHELL_MAX_DEPTH 32

/* A subshell's cd does not outlive it: "(cd /etc); touch x" writes x where we started. */
struct cwd_stack {
	char cwd[SUBSHELL_MAX_DEPTH][PATH_MAX];
	bool known[SUBSHELL_MAX_DEPTH];
	int n;
};

static void subshell(struct state *st, struct cwd_stack *stk, const char *op)
{
	if (!strcmp(op, "(")) {
		if (stk->n < SUBSHELL_MAX_DEPTH) {
			memcpy(stk->cwd[stk->n], st->cwd, sizeof(st->cwd));
			stk->known[stk->n] = st->cwd_known;
		}
		stk->n++;
	} else if (!strcmp(op, ")") && stk->n > 0) {
		if (--stk->n < SUBSHELL_MAX_DEPTH) {
			memcpy(st->cwd, stk->cwd[stk->n], sizeof(st->cwd));
			st->cwd_known = stk->known[stk->n];
		} else {
			st->cwd_known = false; /* too deep to remember: unknown, so relative writes are refused */
		}
	}
}

static void analyze_tokens(struct state *st, struct lex *L)
{
	struct cmd c = { .w = calloc(L->n + 1, sizeof(*c.w)) };
	struct cwd_stack *stk = calloc(1, sizeof(*stk));

	if (!c.w || !stk) {
		deny(st->v, "out of memory");
		free(c.w);
		free(stk);
		return;
	}
	for (size_t k = 0; k <= L->n && !st->v->deny; k++) {
		struct tok *t = k < L->n ? &L->t[k] : NULL;

		if (!t || t->kind == T_OP) {
			analyze_words(st, &c, 0);
			c.n = 0;
			if (t)
				subshell(st, stk, t->s);
			continue;
		}
		if (t->kind == T_REDIR) {
			struct tok *target_tok = k + 1 < L->n && L->t[k + 1].kind == T_WORD ? &L->t[++k] : NULL;

			if (strncmp(t->s, "<<", 2) || !strcmp(t->s, "<<<"))
				redirects(st, t, target_tok);
			continue;
		}
		c.w[c.n++] = t;
	}
	free(c.w);
	free(stk);
}

/* Whether unparseable text looks like it writes. */
static bool looks_like_write(const char *text)
{
	struct strv words = { 0 };
	char *copy = strdup(text), *save = NULL;
	bool w = strchr(text, '>') != NULL;

	for (char *t = copy ? strtok_r(copy, " \t\n;&|()'\"`", &save) : NULL; t && !w; t = strtok_r(NULL, " \t\n;&|()'\"`", &save))
		w = in_list(base(t), write_verbs);
	free(copy);
	strv_free(&words);
	return w;
}

static void analyze_text(const struct shell_check *chk, const char *text, int depth, struct shell_verdict *v)
{
	struct lex L = { .p = text, .depth = depth, .chk = chk, .v = v };
	struct state st = { .chk = chk, .v = v, .depth = depth, .cwd_known = chk->cwd != NULL };

	if (depth > SHELL_MAX_DEPTH) {
		deny(v, "commands nested deeper than %d levels", SHELL_MAX_DEPTH);
		return;
	}
	if (chk->cwd)
		snprintf(st.cwd, sizeof(st.cwd), "%s", chk->cwd);
	lex_all(&L);
	/* Text the lexer cannot parse is refused only if it looks like it writes: a guess either
	 * way, and refusing every typo would stall the agent for nothing the kernel would allow. */
	if (L.error) {
		if (looks_like_write(text))
			deny(v, "cannot parse this command and it looks like it writes (unbalanced quote or parenthesis?)");
	} else {
		analyze_tokens(&st, &L);
	}
	for (size_t k = 0; k < L.n; k++)
		free(L.t[k].s);
	free(L.t);
	strv_free(&L.heredocs);
}

void shell_analyze(const struct shell_check *chk, const char *cmd, struct shell_verdict *ret)
{
	memset(ret, 0, sizeof(*ret));
	analyze_text(chk, cmd, 0, ret);
}
