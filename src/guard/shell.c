/* SPDX-License-Identifier: MIT */
/* shell.c: the Bash lexer and the walk over its commands (see shell.h). It owns words, quoting,
 * expansions, heredocs, cd, variables, for loops and functions; what a program does with its
 * arguments is shell_tables.c's. Fail closed: a command the lexer cannot read, one over a limit
 * or the time budget, or a value it cannot know where a path is written, is denied with a reason
 * that asks for a simpler command. What it lets through, Landlock still enforces. */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/fd.h"
#include "shell_int.h"

#define LEX_MAX_HEREDOCS 16
#define CASE_MAX_DEPTH 8
#define FOR_MAX_VALUES 32
#define LEX_MAX_NEST 64     /* expansions inside one another, per lexer */
#define BRACE_MAX_NEST 16   /* {a,{b,{c,...}}} */
#define COMMAND_MAX_NEST 32 /* wrappers around wrappers: nice nice nice ... */

struct heredoc {
	size_t tok; /* the << token */
	char delim[256];
	bool strip, quoted;
};

enum { CASE_SUBJECT = 1, CASE_IN, CASE_PATTERN, CASE_BODY };

struct lex {
	const char *p;
	char *own; /* the text this lexer reads, when it made a copy (backquotes) */
	struct tok *t;
	size_t n, cap;
	struct lex **subs;
	size_t nsub, subcap, pend;
	struct heredoc hd[LEX_MAX_HEREDOCS];
	size_t nhd;
	const char *err;
	int depth;
	int nest;      /* expansions open inside one another in this lexer ($(( $(( ... )) )), ${..${..}}) */
	bool in_subst; /* inside $( ): an unmatched ')' ends it */
	int paren;
	bool cmd_start;
	int cases[CASE_MAX_DEPTH];
	int ncase;
	size_t *budget; /* tokens left, shared by nested lexers */
};

static void lex_script(struct lex *L);
static void lex_free(struct lex *L);

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID,
		      &ts); /* work done, not time waited: a loaded machine must not change verdicts */
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sh_deny(struct sh *st, const char *fmt, ...)
{
	va_list ap;

	if (st->v->deny)
		return; /* the first reason stands */
	st->v->deny = true;
	va_start(ap, fmt);
	vsnprintf(st->v->reason, sizeof(st->v->reason), fmt, ap);
	va_end(ap);
}

static bool over_time(struct sh *st)
{
	if (st->v->deny)
		return true;
	if (mono_ns() > st->deadline_ns) {
		sh_deny(st, "analysing this command took longer than %d ms; split it into simpler commands",
			SHELL_MAX_ANALYSIS_MS);
		return true;
	}
	return false;
}

/* ---- lexer -------------------------------------------------------------------------------- */

/* Appends to a word whose failure is sticky in the buffer (buf.err): the word is checked once,
 * where it is emitted, and an incomplete word fails the analysis closed. */
static void wputc(struct buf *w, char c)
{
	if (buf_putc(w, c) < 0)
		return;
}

static void wappend(struct buf *w, const void *p, size_t n)
{
	if (buf_append(w, p, n) < 0)
		return;
}

static void fail(struct lex *L, const char *why)
{
	if (!L->err)
		L->err = why;
}

static struct tok *emit(struct lex *L, int kind, const char *s, size_t n)
{
	struct tok *t;

	if (L->err)
		return NULL;
	if (*L->budget == 0) {
		fail(L, "more than "
			"8192"
			" words");
		return NULL;
	}
	if (L->n == L->cap) {
		size_t ncap = L->cap ? L->cap * 2 : 32;
		struct tok *nt = realloc(L->t, ncap * sizeof(*nt));

		if (!nt) {
			fail(L, "out of memory");
			return NULL;
		}
		L->t = nt;
		L->cap = ncap;
	}
	t = &L->t[L->n];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->owner = L;
	t->s = strndup(s, n);
	if (!t->s) {
		fail(L, "out of memory");
		return NULL;
	}
	t->sub0 = L->pend;
	t->nsub = L->nsub - L->pend;
	L->pend = L->nsub;
	(*L->budget)--;
	L->n++;
	return t;
}

static void add_sub(struct lex *L, struct lex *child)
{
	if (L->nsub == L->subcap) {
		size_t ncap = L->subcap ? L->subcap * 2 : 8;
		struct lex **ns = realloc(L->subs, ncap * sizeof(struct lex *));

		if (!ns) {
			fail(L, "out of memory");
			lex_free(child);
			return;
		}
		L->subs = ns;
		L->subcap = ncap;
	}
	L->subs[L->nsub++] = child;
}

static struct lex *child_lex(struct lex *L, const char *p, char *own, bool in_subst)
{
	struct lex *c = calloc(1, sizeof(*c));

	if (!c) {
		free(own);
		fail(L, "out of memory");
		return NULL;
	}
	c->p = p;
	c->own = own;
	c->depth = L->depth + 1;
	c->in_subst = in_subst;
	c->cmd_start = true;
	c->budget = L->budget;
	if (c->depth > SHELL_MAX_DEPTH * 4) {
		fail(L, "commands nested too deeply");
		lex_free(c);
		return NULL;
	}
	return c;
}

/* $( ... ): lexed as a script of its own that ends at the unmatched ')'. */
static void lex_subst(struct lex *L)
{
	struct lex *c = child_lex(L, L->p, NULL, true);

	if (!c)
		return;
	lex_script(c);
	if (c->err)
		fail(L, c->err);
	L->p = c->p;
	add_sub(L, c);
}

static void lex_dollar(struct lex *L, struct buf *w, struct tok *flags);
static void lex_backquote(struct lex *L, struct tok *flags);

static void skip_quote(struct lex *L)
{
	const char *end;

	if (*L->p == '\'') {
		end = strchr(L->p + 1, '\'');
		if (!end) {
			fail(L, "unbalanced single quote");
			L->p += strlen(L->p);
		} else {
			L->p = end + 1;
		}
		return;
	}
	for (L->p++; *L->p && *L->p != '"' && !L->err;) {
		struct buf scratch;
		struct tok f = { 0 };

		if (*L->p == '\\' && L->p[1]) {
			L->p += 2;
		} else if (*L->p == '$') {
			buf_init(&scratch, 0);
			lex_dollar(L, &scratch, &f);
			buf_free(&scratch);
		} else if (*L->p == '`') {
			lex_backquote(L, &f);
		} else {
			L->p++;
		}
	}
	if (*L->p != '"')
		fail(L, "unbalanced double quote");
	else
		L->p++;
}

/* Arithmetic from just after "((" (of "$((" or a "((" command) to just after "))". */
static void lex_arith(struct lex *L)
{
	int depth = 2;

	while (!L->err) {
		char c = *L->p;

		if (!c) {
			fail(L, "unclosed (( arithmetic");
			return;
		}
		if (c == '(') {
			depth++;
			L->p++;
		} else if (c == ')') {
			depth--;
			L->p++;
			if (depth == 1) {
				if (*L->p != ')') {
					fail(L, "cannot tell arithmetic from nested subshells; write ( ( ... ) )");
					return;
				}
				L->p++;
				return;
			}
		} else if (c == '$' || c == '`') {
			struct buf scratch;
			struct tok f = { 0 };

			buf_init(&scratch, 0);
			if (c == '$')
				lex_dollar(L, &scratch, &f);
			else
				lex_backquote(L, &f);
			buf_free(&scratch);
		} else if (c == '\'' || c == '"') {
			skip_quote(L);
		} else if (c == '\\' && L->p[1]) {
			L->p += 2;
		} else {
			L->p++;
		}
	}
}

/* ${...}: a plain ${NAME} is a variable; anything else is computed (but the words and commands
 * inside are still lexed, so a $(...) in ${x:-$(...)} is analysed). */
static void lex_brace_param(struct lex *L, struct buf *w, struct tok *flags)
{
	const char *p = L->p + 2, *q = p;
	int depth = 1;

	while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_')
		q++;
	if (q > p && *q == '}' && !(*p >= '0' && *p <= '9')) {
		wputc(w, W_VAR_OPEN);
		wappend(w, p, (size_t)(q - p));
		wputc(w, W_VAR_CLOSE);
		L->p = q + 1;
		return;
	}
	/* ${NAME%PAT} ${NAME%%PAT} ${NAME#PAT} ${NAME##PAT} ${NAME:-WORD} ${NAME-WORD} with a literal
	 * PAT or WORD: kept as a reference the walk can evaluate when NAME is known. */
	if (q > p && !(*p >= '0' && *p <= '9') && (*q == '%' || *q == '#' || (*q == ':' && q[1] == '-') || *q == '-')) {
		const char *end = strchr(q, '}');

		if (end && end > q && !memchr(q, '$', (size_t)(end - q)) && !memchr(q, '`', (size_t)(end - q)) &&
		    !memchr(q, '\'', (size_t)(end - q)) && !memchr(q, '"', (size_t)(end - q)) &&
		    !memchr(q, '{', (size_t)(end - q)) && !memchr(q, '\\', (size_t)(end - q)) &&
		    !memchr(q, '\n', (size_t)(end - q))) {
			wputc(w, W_VAR_OPEN);
			wappend(w, p, (size_t)(end - p));
			wputc(w, W_VAR_CLOSE);
			L->p = end + 1;
			return;
		}
	}
	flags->dyn = true;
	L->p = p;
	while (!L->err) {
		char c = *L->p;

		if (!c) {
			fail(L, "unclosed ${");
			return;
		}
		if (c == '}' && --depth == 0) {
			L->p++;
			return;
		}
		if (c == '\\' && L->p[1]) {
			L->p += 2;
		} else if (c == '\'' || c == '"') {
			skip_quote(L);
		} else if (c == '$' && L->p[1] == '{') {
			depth++;
			L->p += 2;
		} else if (c == '$' || c == '`') {
			struct buf scratch;
			struct tok f = { 0 };

			buf_init(&scratch, 0);
			if (c == '$')
				lex_dollar(L, &scratch, &f);
			else
				lex_backquote(L, &f);
			buf_free(&scratch);
		} else {
			L->p++;
		}
	}
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

static void put_utf8(struct buf *w, unsigned long cp)
{
	if (cp < 0x80) {
		wputc(w, (char)cp);
	} else if (cp < 0x800) {
		wputc(w, (char)(0xc0 | (cp >> 6)));
		wputc(w, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		wputc(w, (char)(0xe0 | (cp >> 12)));
		wputc(w, (char)(0x80 | ((cp >> 6) & 0x3f)));
		wputc(w, (char)(0x80 | (cp & 0x3f)));
	} else {
		wputc(w, (char)(0xf0 | ((cp >> 18) & 0x07)));
		wputc(w, (char)(0x80 | ((cp >> 12) & 0x3f)));
		wputc(w, (char)(0x80 | ((cp >> 6) & 0x3f)));
		wputc(w, (char)(0x80 | (cp & 0x3f)));
	}
}

/* $'...' (ANSI-C quoting), decoded as Bash does. */
static void lex_ansi_c(struct lex *L, struct buf *w)
{
	static const char esc_in[] = "abeEfnrtv\\'\"?", esc_out[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
	const char *p = L->p + 2;

	for (; *p && *p != '\''; p++) {
		const char *e;

		if (*p != '\\' || !p[1]) {
			wputc(w, *p);
			continue;
		}
		p++;
		if ((e = strchr(esc_in, *p))) {
			wputc(w, esc_out[e - esc_in]);
		} else if (*p >= '0' && *p <= '7') {
			int v = 0, k;

			for (k = 0; k < 3 && p[k] >= '0' && p[k] <= '7'; k++)
				v = v * 8 + (p[k] - '0');
			wputc(w, (char)v);
			p += k - 1;
		} else if (*p == 'x' || *p == 'u' || *p == 'U') {
			int max = *p == 'x' ? 2 : *p == 'u' ? 4 : 8, k;
			unsigned long v = 0;

			for (k = 1; k <= max && hexval(p[k]) >= 0; k++)
				v = v * 16 + (unsigned long)hexval(p[k]);
			if (k == 1) {
				wputc(w, '\\');
				wputc(w, *p);
				continue;
			}
			if (*p == 'x')
				wputc(w, (char)v);
			else
				put_utf8(w, v);
			p += k - 1;
		} else if (*p == 'c' && p[1]) {
			wputc(w, (char)(p[1] & 0x1f));
			p++;
		} else {
			wputc(w, '\\');
			wputc(w, *p);
		}
	}
	if (*p != '\'') {
		fail(L, "unbalanced $' quote");
		L->p = p;
		return;
	}
	L->p = p + 1;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

static void lex_dollar_in(struct lex *L, struct buf *w, struct tok *flags);

/* At '$': consume the expansion into w (a variable reference or literal text) and flags. The
 * nesting is bounded so that no input can exhaust the stack (a crashed hook would not deny). */
static void lex_dollar(struct lex *L, struct buf *w, struct tok *flags)
{
	if (++L->nest > LEX_MAX_NEST) {
		fail(L, "expansions nested too deeply");
		L->p += strlen(L->p);
	} else {
		lex_dollar_in(L, w, flags);
	}
	L->nest--;
}

static void lex_dollar_in(struct lex *L, struct buf *w, struct tok *flags)
{
	const char *p = L->p + 1;

	if (p[0] == '(' && p[1] == '(') {
		flags->dyn = true;
		L->p = p + 2;
		lex_arith(L);
	} else if (p[0] == '(') {
		flags->dyn = true;
		L->p = p + 1;
		lex_subst(L);
	} else if (p[0] == '{') {
		lex_brace_param(L, w, flags);
	} else if (p[0] == '\'') {
		flags->quoted = true;
		lex_ansi_c(L, w);
	} else if (p[0] == '[') { /* $[ ... ]: old arithmetic, whose $(...) still run */
		flags->dyn = true;
		for (L->p = p + 1; !L->err && *L->p != ']';) {
			struct buf scratch;
			struct tok f = { 0 };

			if (!*L->p) {
				fail(L, "unclosed $[");
			} else if (*L->p == '$' || *L->p == '`') {
				buf_init(&scratch, 0);
				if (*L->p == '$')
					lex_dollar(L, &scratch, &f);
				else
					lex_backquote(L, &f);
				buf_free(&scratch);
			} else if (*L->p == '\'' || *L->p == '"') {
				skip_quote(L);
			} else {
				L->p++;
			}
		}
		if (!L->err)
			L->p++;
	} else if (name_char(*p, true)) {
		const char *q = p;

		while (name_char(*q, false))
			q++;
		wputc(w, W_VAR_OPEN);
		wappend(w, p, (size_t)(q - p));
		wputc(w, W_VAR_CLOSE);
		L->p = q;
	} else if (*p && strchr("0123456789@*#?$!-", *p)) {
		flags->dyn = true;
		L->p = p + 1;
	} else {
		wputc(w, '$'); /* a lone '$' is literal ($"..." is handled by the caller) */
		L->p = p;
	}
}

/* `...`: the text with \$ \` \\ unescaped, lexed as a script of its own. */
static void lex_backquote(struct lex *L, struct tok *flags)
{
	const char *p = L->p + 1;
	struct buf inner;
	struct lex *c;

	flags->dyn = true;
	buf_init(&inner, 0);
	for (; *p && *p != '`'; p++) {
		if (*p == '\\' && p[1] && strchr("$`\\", p[1]))
			p++;
		wputc(&inner, *p);
	}
	if (*p != '`') {
		fail(L, "unbalanced backquote");
		L->p = p;
		buf_free(&inner);
		return;
	}
	L->p = p + 1;
	if (buf_putc(&inner, '\0') < 0 || inner.err) {
		fail(L, "out of memory");
		buf_free(&inner);
		return;
	}
	c = child_lex(L, inner.data, inner.data, false);
	if (!c)
		return;
	lex_script(c);
	if (c->err)
		fail(L, c->err);
	add_sub(L, c);
}

static bool is_op_char(char c)
{
	return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Brace-expansion markers survive only where a comma makes them an expansion. */
static void settle_braces(struct buf *w)
{
	bool comma = false, open = false;

	for (size_t i = 0; i < w->len; i++) {
		comma |= w->data[i] == W_BRACE_COMMA;
		open |= w->data[i] == W_BRACE_OPEN;
	}
	for (size_t i = 0; i < w->len; i++) {
		if (!(comma && open) && w->data[i] == W_BRACE_OPEN)
			w->data[i] = '{';
		else if (!(comma && open) && w->data[i] == W_BRACE_CLOSE)
			w->data[i] = '}';
		else if (!(comma && open) && w->data[i] == W_BRACE_COMMA)
			w->data[i] = ',';
	}
}

/* One word (quotes removed, variables marked, computed parts flagged). */
static struct tok *lex_word(struct lex *L)
{
	struct buf w;
	struct tok f = { 0 }, *t;

	buf_init(&w, 0);
	while (*L->p && !L->err && !is_blank(*L->p) && !is_op_char(*L->p)) {
		char c = *L->p;

		if (c == W_VAR_OPEN || c == W_VAR_CLOSE || c == W_BRACE_OPEN || c == W_BRACE_CLOSE ||
		    c == W_BRACE_COMMA) {
			fail(L, "control characters in the command");
		} else if (c == '\\') {
			f.quoted = true;
			if (L->p[1] == '\n')
				L->p += 2;
			else if (L->p[1])
				wputc(&w, L->p[1]), L->p += 2;
			else
				L->p++;
		} else if (c == '\'') {
			const char *end = strchr(L->p + 1, '\'');

			f.quoted = true;
			if (!end) {
				fail(L, "unbalanced single quote");
				break;
			}
			wappend(&w, L->p + 1, (size_t)(end - L->p - 1));
			L->p = end + 1;
		} else if (c == '"' || (c == '$' && L->p[1] == '"')) {
			f.quoted = true;
			L->p += c == '$';
			for (L->p++; *L->p && *L->p != '"' && !L->err;) {
				if (*L->p == '\\' && L->p[1] && strchr("$`\"\\\n", L->p[1])) {
					if (L->p[1] != '\n')
						wputc(&w, L->p[1]);
					L->p += 2;
				} else if (*L->p == '$') {
					lex_dollar(L, &w, &f);
				} else if (*L->p == '`') {
					lex_backquote(L, &f);
				} else {
					wputc(&w, *L->p++);
				}
			}
			if (*L->p != '"')
				fail(L, "unbalanced double quote");
			else
				L->p++;
		} else if (c == '$') {
			lex_dollar(L, &w, &f);
		} else if (c == '`') {
			lex_backquote(L, &f);
		} else {
			if (c == '*' || c == '?' || c == '[')
				f.glob = true;
			wputc(&w, c == '{' ? W_BRACE_OPEN : c == '}' ? W_BRACE_CLOSE : c == ',' ? W_BRACE_COMMA : c);
			L->p++;
		}
	}
	settle_braces(&w);
	if (w.err)
		fail(L, "out of memory");
	t = emit(L, T_WORD, w.data ? w.data : "", w.len);
	buf_free(&w);
	if (t) {
		t->dyn = f.dyn;
		t->quoted = f.quoted;
		t->glob = f.glob;
	}
	return t;
}

/* Unquoted heredoc bodies are expanded: their $(...) and `...` run. */
static void lex_expansions_in(struct lex *L, const char *text)
{
	const char *saved = L->p;

	L->p = text;
	while (*L->p && !L->err) {
		struct buf scratch;
		struct tok f = { 0 };

		if (*L->p == '\\' && L->p[1]) {
			L->p += 2;
		} else if (*L->p == '$' || *L->p == '`') {
			buf_init(&scratch, 0);
			if (*L->p == '$')
				lex_dollar(L, &scratch, &f);
			else
				lex_backquote(L, &f);
			buf_free(&scratch);
		} else {
			L->p++;
		}
	}
	L->p = saved;
}

/* After a newline: the bodies of pending heredocs. */
static void lex_heredocs(struct lex *L)
{
	size_t before = L->nsub;

	for (size_t i = 0; i < L->nhd && !L->err; i++) {
		struct heredoc *h = &L->hd[i];
		const char *start = L->p;
		struct buf body;

		buf_init(&body, 0);
		for (;;) {
			const char *line = L->p, *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);

			while (h->strip && len && *line == '\t')
				line++, len--;
			L->p = nl ? nl + 1 : line + len;
			if (len == strlen(h->delim) && !memcmp(line, h->delim, len))
				break;
			wappend(&body, line, len);
			wputc(&body, '\n');
			if (!nl)
				break; /* Bash reads a missing delimiter as end of input */
		}
		(void)start;
		wputc(&body, '\0');
		if (!body.data || body.err) {
			fail(L, "out of memory");
		} else {
			if (!h->quoted)
				lex_expansions_in(L, body.data);
			free(L->t[h->tok].body);
			L->t[h->tok].body = body.data;
			body.data = NULL;
		}
		buf_free(&body);
	}
	L->nhd = 0;
	if (L->nsub > before)
		emit(L, T_OP, ";", 1); /* carries the body's command substitutions */
}

static void lex_heredoc_start(struct lex *L, bool strip)
{
	size_t op = L->n - 1;
	struct tok *d;

	while (*L->p == ' ' || *L->p == '\t')
		L->p++;
	d = lex_word(L);
	if (!d)
		return;
	if (L->nhd == LEX_MAX_HEREDOCS || strlen(d->s) >= sizeof(L->hd[0].delim) || !d->s[0] ||
	    strchr(d->s, W_VAR_OPEN) || d->dyn) {
		fail(L, "a heredoc delimiter the guard cannot read");
		return;
	}
	L->hd[L->nhd].tok = op;
	snprintf(L->hd[L->nhd].delim, sizeof(L->hd[0].delim), "%s", d->s);
	L->hd[L->nhd].strip = strip;
	L->hd[L->nhd].quoted = d->quoted;
	L->nhd++;
}

static void lex_op(struct lex *L)
{
	static const char *const ops[] = { "&>>", "<<<", "<<-", ";;&", "&&", "||", ";;", ";&", "|&", ">>", ">|", "&>",
					   ">&",  "<&",  "<<",  "<>",  ";",  "&",  "|",  "(",  ")",  "<",  ">" };

	if ((L->p[0] == '<' || L->p[0] == '>') && L->p[1] == '(') {
		struct tok *t;

		L->p += 2; /* process substitution: a nested command, used as a computed word */
		lex_subst(L);
		if ((t = emit(L, T_WORD, "", 0)))
			t->dyn = true;
		return;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i]);
		bool redir;

		if (strncmp(L->p, ops[i], n))
			continue;
		redir = strchr("<>", ops[i][0]) || !strncmp(ops[i], "&>", 2);
		L->p += n;
		if (!emit(L, redir ? T_REDIR : T_OP, ops[i], n))
			return;
		if (!strcmp(ops[i], "<<") || !strcmp(ops[i], "<<-"))
			lex_heredoc_start(L, ops[i][2] == '-');
		if (!strcmp(ops[i], "(")) {
			L->paren++;
		} else if (!strcmp(ops[i], ")")) {
			L->paren--;
		}
		if (!redir)
			L->cmd_start = true;
		if (L->ncase && L->cases[L->ncase - 1] == CASE_BODY && ops[i][0] == ';' && ops[i][1])
			L->cases[L->ncase - 1] = CASE_PATTERN;
		return;
	}
	L->p++;
}

/* [[ ... ]]: a test; < and > compare strings. Emitted as "[[" and its words. */
static void lex_test(struct lex *L)
{
	while (!L->err) {
		while (is_blank(*L->p))
			L->p++;
		if (!*L->p) {
			fail(L, "unclosed [[");
			return;
		}
		if (L->p[0] == ']' && L->p[1] == ']' && (!L->p[2] || is_blank(L->p[2]) || is_op_char(L->p[2]))) {
			L->p += 2;
			return;
		}
		if (is_op_char(*L->p))
			L->p++;
		else
			lex_word(L);
	}
}

/* A case pattern list up to its ')': its words go into a ':' command (they may hold $(...)). */
static void lex_case_pattern(struct lex *L)
{
	emit(L, T_WORD, ":", 1);
	while (!L->err) {
		while (is_blank(*L->p))
			L->p++;
		if (*L->p == '(' || *L->p == '|') {
			L->p++;
		} else if (*L->p == ')') {
			L->p++;
			emit(L, T_OP, ";", 1);
			L->cases[L->ncase - 1] = CASE_BODY;
			L->cmd_start = true;
			return;
		} else if (!*L->p || is_op_char(*L->p)) {
			fail(L, "cannot read a case pattern");
			return;
		} else {
			lex_word(L);
		}
	}
}

static void after_word(struct lex *L, struct tok *t)
{
	static const char *const keeps_start[] = { "then", "do", "else", "elif", "if", "while", "until",
						   "{",    "!",  "time", "}",    "fi", "done",  NULL };
	int *cs = L->ncase ? &L->cases[L->ncase - 1] : NULL;
	bool plain = !t->dyn && !t->quoted;

	if (cs && *cs == CASE_SUBJECT) {
		*cs = CASE_IN;
		return;
	}
	if (cs && *cs == CASE_IN && plain && !strcmp(t->s, "in")) {
		*cs = CASE_PATTERN;
		return;
	}
	if (L->cmd_start && plain && !strcmp(t->s, "case")) {
		if (L->ncase == CASE_MAX_DEPTH) {
			fail(L, "case nested too deeply");
			return;
		}
		L->cases[L->ncase++] = CASE_SUBJECT;
		L->cmd_start = false;
		return;
	}
	if (L->cmd_start && plain && !strcmp(t->s, "[[")) {
		lex_test(L);
		L->cmd_start = false;
		return;
	}
	if (plain && !strcmp(t->s, "for")) {
		while (*L->p == ' ' || *L->p == '\t')
			L->p++;
		if (L->p[0] == '(' && L->p[1] == '(') {
			L->p += 2;
			lex_arith(L);
		}
	}
	if (L->cmd_start && plain) {
		const char *const *k;

		for (k = keeps_start; *k && strcmp(*k, t->s); k++)
			;
		if (*k)
			return;
	}
	if (!sh_is_assignment(t->s))
		L->cmd_start = false;
}

static void lex_script(struct lex *L)
{
	while (!L->err) {
		char c = *L->p;
		int *cs = L->ncase ? &L->cases[L->ncase - 1] : NULL;

		if (!c) {
			if (L->in_subst)
				fail(L, "unclosed $(");
			else if (L->ncase)
				fail(L, "case without esac");
			return;
		}
		if (c == ' ' || c == '\t' || c == '\r') {
			L->p++;
		} else if (c == '\\' && L->p[1] == '\n') {
			L->p += 2;
		} else if (c == '\n') {
			emit(L, T_OP, ";", 1);
			L->p++;
			L->cmd_start = true;
			lex_heredocs(L);
		} else if (c == '#') {
			while (*L->p && *L->p != '\n')
				L->p++;
		} else if (cs && *cs == CASE_PATTERN &&
			   !(!strncmp(L->p, "esac", 4) && (!L->p[4] || is_blank(L->p[4]) || is_op_char(L->p[4])))) {
			lex_case_pattern(L);
			/* NOLINTNEXTLINE(bugprone-branch-clone): does what a CASE_BODY esac below does, tested first */
		} else if (cs && *cs == CASE_PATTERN) {
			emit(L, T_WORD, "esac", 4);
			L->p += 4;
			L->ncase--;
			L->cmd_start = false;
		} else if (c == ')' && L->in_subst && L->paren == 0) {
			L->p++;
			return;
		} else if (c == '(' && L->p[1] == '(' && L->cmd_start) {
			L->p += 2;
			lex_arith(L);
			emit(L, T_WORD, "((", 2);
			L->cmd_start = false;
		} else if (is_op_char(c)) {
			lex_op(L);
		} else if (cs && *cs == CASE_BODY && L->cmd_start && !strncmp(L->p, "esac", 4) &&
			   (!L->p[4] || is_blank(L->p[4]) || is_op_char(L->p[4]))) {
			emit(L, T_WORD, "esac", 4);
			L->p += 4;
			L->ncase--;
			L->cmd_start = false;
		} else {
			const char *start = L->p;
			struct tok *t = lex_word(L);

			if (!t)
				return;
			/* "2>" : an all-digit word glued to a redirection is its descriptor */
			if ((*L->p == '<' || *L->p == '>') && strspn(start, "0123456789") == (size_t)(L->p - start) &&
			    L->p > start) {
				free(t->s);
				L->n--;
				(*L->budget)++;
				continue;
			}
			after_word(L, t);
		}
	}
}

static void lex_free(struct lex *L)
{
	if (!L)
		return;
	for (size_t k = 0; k < L->n; k++) {
		free(L->t[k].s);
		free(L->t[k].body);
	}
	for (size_t k = 0; k < L->nsub; k++)
		lex_free(L->subs[k]);
	free(L->subs);
	free(L->t);
	free(L->own);
	free(L);
}

/* ---- words --------------------------------------------------------------------------------- */

bool sh_is_assignment(const char *s)
{
	const char *p = s;

	if (!name_char(*p, true))
		return false;
	while (name_char(*p, false))
		p++;
	if (*p == '+' && p[1] == '=')
		return true;
	if (*p == '[') { /* a[i]=v */
		p = strchr(p, ']');
		if (!p)
			return false;
		p++;
	}
	return *p == '=';
}

const char *sh_base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static const struct var *var_get(struct sh *st, const char *name, size_t n)
{
	for (size_t i = st->nvars; i-- > 0;)
		if (strlen(st->vars[i].name) == n && !memcmp(st->vars[i].name, name, n))
			return &st->vars[i];
	return NULL;
}

void sh_setvar(struct sh *st, const char *name, const char *value)
{
	struct var *v = NULL;
	size_t n = strcspn(name, "=+[");

	for (size_t i = 0; i < st->nvars; i++)
		if (strlen(st->vars[i].name) == n && !strncmp(st->vars[i].name, name, n))
			v = &st->vars[i];
	if (!v && st->nvars == SHELL_MAX_VARS) {
		sh_deny(st, "more than %d variables; split the command", SHELL_MAX_VARS);
		return;
	}
	if (!v) {
		v = &st->vars[st->nvars++];
		v->name = strndup(name, n);
		v->value = NULL;
		if (!v->name) {
			st->nvars--;
			sh_deny(st, "out of memory");
			return;
		}
	}
	free(v->value);
	v->value = value ? strdup(value) : NULL;
}

/* ${NAME%PAT} and friends on a known value; false when the result cannot be computed. */
static bool var_op(const char *val, const char *op, size_t oplen, char *out, size_t n)
{
	char pat[512];
	size_t vl = strlen(val);
	bool twice = oplen > 1 && op[1] == op[0];
	size_t skip = (op[0] == ':' ? 2 : 1) + (twice && (op[0] == '%' || op[0] == '#'));

	if (oplen < skip || oplen - skip >= sizeof(pat) || vl >= n)
		return false;
	memcpy(pat, op + skip, oplen - skip);
	pat[oplen - skip] = '\0';
	if (op[0] == '-' || op[0] == ':') { /* NAME is set: its value */
		snprintf(out, n, "%s", val);
		return true;
	}
	snprintf(out, n, "%s", val);
	if (op[0] == '%') { /* shortest (or longest) suffix matching PAT */
		for (size_t k = 0; k <= vl; k++) {
			size_t at = twice ? k : vl - k;

			if (fnmatch(pat, val + at, 0) == 0) {
				out[at] = '\0';
				return true;
			}
		}
		return true;
	}
	for (size_t k = 0; k <= vl; k++) { /* '#': shortest (or longest) prefix */
		size_t len = twice ? vl - k : k;
		char pre[PATH_MAX];

		if (len >= sizeof(pre))
			continue;
		memcpy(pre, val, len);
		pre[len] = '\0';
		if (fnmatch(pat, pre, 0) == 0) {
			snprintf(out, n, "%s", val + len);
			return true;
		}
	}
	return true;
}

bool sh_word(struct sh *st, const struct tok *t, char *out, size_t n)
{
	size_t o = 0;
	char opbuf[PATH_MAX];

	if (t->dyn)
		return false;
	for (const char *p = t->s; *p; p++) {
		const char *val = NULL, *end;
		char one[2] = { 0 };

		if (*p == W_VAR_OPEN) {
			const struct var *v;
			size_t nl = 0;

			end = strchr(p, W_VAR_CLOSE);
			if (!end)
				return false;
			while (p + 1 + nl < end && name_char(p[1 + nl], nl == 0))
				nl++;
			v = var_get(st, p + 1, nl);
			if (nl == 3 && !strncmp(p + 1, "PWD", 3) && !v && st->cwd_known)
				val = st->cwd;
			else if (!v || !v->value)
				return false; /* unset: unknown (and ${X-...} or ${X:-...}: set or not, the guard cannot tell) */
			else
				val = v->value;
			if (p + 1 + nl < end &&
			    !var_op(val, p + 1 + nl, (size_t)(end - p - 1) - nl, opbuf, sizeof(opbuf)))
				return false;
			if (p + 1 + nl < end)
				val = opbuf;
			p = end;
		} else {
			one[0] = *p == W_BRACE_OPEN ? '{' : *p == W_BRACE_CLOSE ? '}' : *p == W_BRACE_COMMA ? ',' : *p;
			val = one;
		}
		if (o + strlen(val) + 1 > n)
			return false;
		memcpy(out + o, val, strlen(val));
		o += strlen(val);
	}
	out[o] = '\0';
	return true;
}

/* The name of the first variable in a word the guard does not know, for the reason. */
static void unknown_part(struct sh *st, const struct tok *t, char *out, size_t n)
{
	const char *p = strchr(t->s, W_VAR_OPEN), *end = p ? strchr(p, W_VAR_CLOSE) : NULL;

	if (t->dyn || !p || !end) {
		snprintf(out, n, "%s", "$...");
		return;
	}
	while (p && end && var_get(st, p + 1, (size_t)(end - p - 1)) &&
	       var_get(st, p + 1, (size_t)(end - p - 1))->value) {
		p = strchr(end, W_VAR_OPEN);
		end = p ? strchr(p, W_VAR_CLOSE) : NULL;
	}
	snprintf(out, n, "$%.*s", p && end ? (int)(end - p - 1) : 3, p && end ? p + 1 : "...");
}

/* `path` made absolute against the cwd and normalised lexically, for comparing paths. */
static bool lexical_abs(struct sh *st, const char *path, char *out, size_t n)
{
	char *o = out, *seg, *save = NULL, tmp[PATH_MAX * 2];

	if (path[0] != '/' && !st->cwd_known)
		return false;
	if (snprintf(tmp, sizeof(tmp), "%s%s%s", path[0] == '/' ? "" : st->cwd, path[0] == '/' ? "" : "/", path) >=
		    (int)sizeof(tmp) ||
	    n < 2)
		return false;
	*o = '\0';
	for (seg = strtok_r(tmp, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			char *slash = strrchr(out, '/');

			if (slash)
				*slash = '\0';
			o = out + strlen(out);
			continue;
		}
		if ((size_t)(o - out) + strlen(seg) + 2 > n)
			return false;
		o += sprintf(o, "/%s", seg);
	}
	if (!out[0])
		strcpy(out, "/");
	return true;
}

void sh_target_str(struct sh *st, const char *what, const char *path, enum shell_op op)
{
	const char *why;
	char abs[PATH_MAX * 2];

	if (over_time(st))
		return;
	if (st->written && lexical_abs(st, path, abs, sizeof(abs)))
		if (strv_push(st->written, abs) < 0)
			sh_deny(st, "out of memory");
	why = st->chk->target(st->chk->ctx, st->cwd_known ? st->cwd : NULL, path, op);
	if (why)
		sh_deny(st, "%s: %s: %s", what, path, why);
}

void sh_target(struct sh *st, const char *what, const struct tok *t, enum shell_op op)
{
	char val[PATH_MAX * 2], pat[PATH_MAX * 3];
	glob_t g;

	if (over_time(st))
		return;
	if (!sh_word(st, t, val, sizeof(val))) {
		char part[128];

		unknown_part(st, t, part, sizeof(part));
		sh_deny(st, "%s: the target is computed at run time (%s); write it literally", what, part);
		return;
	}
	if (!t->glob || !strpbrk(val, "*?[")) {
		sh_target_str(st, what, val, op);
		return;
	}
	if (strrchr(val, '/') && strpbrk(val, "*?[") < strrchr(val, '/')) {
		/* a wildcard in a directory name can walk the whole filesystem: not expanded */
		sh_deny(st, "%s: %s has a wildcard in a directory name; name the paths", what, val);
		return;
	}
	if (val[0] != '/' && !st->cwd_known) {
		sh_deny(st, "%s: %s: relative path after a cd to an unknown directory", what, val);
		return;
	}
	snprintf(pat, sizeof(pat), "%s%s%s", val[0] == '/' ? "" : st->cwd, val[0] == '/' ? "" : "/", val);
	if (glob(pat, GLOB_NOSORT, NULL, &g) != 0) {
		sh_target_str(st, what, val, op); /* no match: Bash passes the word as it is */
		return;
	}
	if (g.gl_pathc > SHELL_MAX_EXPANSIONS)
		sh_deny(st, "%s: %s matches more than %d paths; name the targets", what, val, SHELL_MAX_EXPANSIONS);
	for (size_t i = 0; i < g.gl_pathc && !st->v->deny; i++)
		sh_target_str(st, what, g.gl_pathv[i], op);
	globfree(&g);
}

/* ---- brace expansion over a command's words -------------------------------------------------- */

struct words {
	struct tok **w;
	size_t n, cap;
	struct tok *own[SHELL_MAX_EXPANSIONS]; /* expanded copies */
	size_t nown;
};

static void words_push(struct sh *st, struct words *ws, struct tok *t)
{
	if (ws->n == ws->cap) {
		size_t ncap = ws->cap ? ws->cap * 2 : 16;
		struct tok **nw = realloc(ws->w, ncap * sizeof(struct tok *));

		if (!nw) {
			sh_deny(st, "out of memory");
			return;
		}
		ws->w = nw;
		ws->cap = ncap;
	}
	ws->w[ws->n++] = t;
}

static void words_free(struct words *ws)
{
	for (size_t i = 0; i < ws->nown; i++) {
		free(ws->own[i]->s);
		free(ws->own[i]);
	}
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

/* Expand the first top-level {a,b} of `s` (already prefix-free of others) recursively. */
static void brace_expand(struct sh *st, struct words *ws, const struct tok *model, const char *s, int nest)
{
	const char *open = strchr(s, W_BRACE_OPEN), *p, *close = NULL;
	int depth = 0;

	if (st->v->deny)
		return;
	if (nest > BRACE_MAX_NEST * 4) {
		sh_deny(st, "brace expansions nested too deeply; write the words out");
		return;
	}
	for (p = open; p && *p; p++) {
		if (*p == W_BRACE_OPEN)
			depth++;
		else if (*p == W_BRACE_CLOSE && --depth == 0) {
			close = p;
			break;
		}
	}
	if (!open || !close) {
		struct tok *t;

		if (ws->nown == SHELL_MAX_EXPANSIONS) {
			sh_deny(st, "a brace expansion yields more than %d words", SHELL_MAX_EXPANSIONS);
			return;
		}
		t = malloc(sizeof(*t));
		if (!t || !(*t = *model, t->s = strdup(s))) {
			free(t);
			sh_deny(st, "out of memory");
			return;
		}
		for (char *q = t->s; *q; q++)
			*q = *q == W_BRACE_OPEN ? '{' : *q == W_BRACE_CLOSE ? '}' : *q == W_BRACE_COMMA ? ',' : *q;
		t->nsub = 0;
		ws->own[ws->nown++] = t;
		words_push(st, ws, t);
		return;
	}
	depth = 0;
	for (const char *alt = open + 1, *q = open + 1; q <= close && !st->v->deny; q++) {
		if (*q == W_BRACE_OPEN)
			depth++;
		else if (*q == W_BRACE_CLOSE && q != close)
			depth--;
		if ((*q == W_BRACE_COMMA && depth == 0) || q == close) {
			struct buf b;

			buf_init(&b, 0);
			wappend(&b, s, (size_t)(open - s));
			wappend(&b, alt, (size_t)(q - alt));
			wappend(&b, close + 1, strlen(close + 1));
			wputc(&b, '\0');
			if (!b.data || b.err)
				sh_deny(st, "out of memory while expanding braces");
			else
				brace_expand(st, ws, model, b.data, nest + 1);
			buf_free(&b);
			alt = q + 1;
		}
	}
}

/* ---- commands ------------------------------------------------------------------------------- */

static void analyze_range(struct sh *st, struct lex *L, size_t from, size_t to);

static void sh_copy(struct sh *dst, const struct sh *src)
{
	*dst = *src;
	for (size_t i = 0; i < src->nvars; i++) {
		dst->vars[i].name = strdup(src->vars[i].name);
		dst->vars[i].value = src->vars[i].value ? strdup(src->vars[i].value) : NULL;
		if (!dst->vars[i].name) {
			dst->nvars = i;
			break;
		}
	}
	dst->stdin_text = NULL;
	dst->stdin_file = NULL;
	dst->stdin_unknown = false;
}

static void sh_release(struct sh *st)
{
	for (size_t i = 0; i < st->nvars; i++) {
		free(st->vars[i].name);
		free(st->vars[i].value);
	}
	st->nvars = 0;
}

/* Nested scripts of a token run in a subshell of the current state. */
static void run_subs(struct sh *st, const struct tok *t)
{
	for (size_t i = 0; i < t->nsub && !st->v->deny; i++) {
		struct lex *c = t->owner->subs[t->sub0 + i];
		struct sh sub;

		if (st->depth >= SHELL_MAX_DEPTH) {
			sh_deny(st, "commands nested deeper than %d levels", SHELL_MAX_DEPTH);
			return;
		}
		sh_copy(&sub, st);
		sub.depth++;
		analyze_range(&sub, c, 0, c->n);
		sh_release(&sub);
	}
}

void sh_cd(struct sh *st, const char *dir)
{
	char next[PATH_MAX];

	if (!dir) {
		st->cwd_known = false;
		return;
	}
	if (dir[0] != '/' && !st->cwd_known)
		return;
	if ((dir[0] == '/' ? snprintf(next, sizeof(next), "%s", dir) :
			     snprintf(next, sizeof(next), "%s/%s", st->cwd, dir)) >= (int)sizeof(next)) {
		st->cwd_known = false;
		return;
	}
	memcpy(st->cwd, next, sizeof(next));
	st->cwd_known = true;
}

static struct func *func_get(struct sh *st, const char *name)
{
	for (size_t i = st->nfuncs; i-- > 0;)
		if (!strcmp(st->funcs[i].name, name))
			return &st->funcs[i];
	return NULL;
}

static void assignment(struct sh *st, const struct tok *t, bool persist)
{
	char val[PATH_MAX];
	const char *eq = strchr(t->s, '=');
	bool known = sh_word(st, t, val, sizeof(val)) && !strchr(t->s, '[') && eq && eq[-1] != '+';

	if (!strncmp(t->s, "GIT_DIR=", 8) || !strncmp(t->s, "GIT_WORK_TREE=", 14) ||
	    !strncmp(t->s, "GIT_INDEX_FILE=", 15) || !strncmp(t->s, "GIT_OBJECT_DIRECTORY=", 21) ||
	    !strncmp(t->s, "GIT_COMMON_DIR=", 15)) {
		if (!known)
			sh_deny(st, "git routing: %.*s is computed at run time", (int)(eq - t->s), t->s);
		else
			sh_target_str(st, "git routing", strchr(val, '=') + 1, SHELL_WRITE);
	} else if (!strncmp(t->s, "CDPATH=", 7)) {
		st->cdpath = true; /* cd NAME may now go anywhere */
	} else if (!strncmp(t->s, "GIT_CONFIG", 10) || !strncmp(t->s, "GIT_SSH", 7) ||
		   !strncmp(t->s, "GIT_EXEC_PATH=", 14) || !strncmp(t->s, "GIT_ASKPASS=", 12) ||
		   !strncmp(t->s, "GIT_PROXY_COMMAND=", 18) || !strncmp(t->s, "GIT_EXTERNAL_DIFF=", 18) ||
		   !strncmp(t->s, "BASH_ENV=", 9) || !strncmp(t->s, "ENV=", 4) ||
		   !strncmp(t->s, "PROMPT_COMMAND=", 15) || !strncmp(t->s, "LD_PRELOAD=", 11) ||
		   !strncmp(t->s, "GIT_TEMPLATE_DIR=", 17)) {
		sh_deny(st, "%.*s: setting this variable changes what runs; not allowed", (int)(eq - t->s), t->s);
	}
	if (persist)
		sh_setvar(st, t->s, known ? strchr(val, '=') + 1 : NULL);
}

void sh_command(struct sh *st, struct tok **w, size_t n)
{
	static const char *const reserved[] = { "if",    "then", "else", "elif", "fi", "do",   "done", "while",
						"until", "esac", "{",    "}",    "!",  "time", NULL };
	char name[PATH_MAX];
	struct func *f;
	size_t i = 0;

	bool wrapped = st->wrapped;

	st->wrapped = false;
	if (over_time(st))
		return;
	if (st->cmd_nest >= COMMAND_MAX_NEST) {
		sh_deny(st, "commands wrapped more than %d deep; write the command directly", COMMAND_MAX_NEST);
		return;
	}
	for (;;) {
		const char *const *r;

		while (i < n && sh_is_assignment(w[i]->s)) /* assignments before a command are for it alone */
			assignment(st, w[i++], false);
		/* after a wrapper (`command time -o F`, `env time ...`) a reserved word is a program */
		for (r = reserved; !wrapped && i < n && !w[i]->dyn && !w[i]->quoted && *r && strcmp(*r, w[i]->s); r++)
			;
		if (!wrapped && i < n && *r && !w[i]->quoted && !w[i]->dyn)
			i++;
		else
			break;
	}
	if (i >= n) {
		for (size_t k = 0; k < n; k++)
			if (sh_is_assignment(w[k]->s))
				assignment(st, w[k], true);
		return;
	}
	if (!sh_word(st, w[i], name, sizeof(name))) {
		char part[128];

		unknown_part(st, w[i], part, sizeof(part));
		sh_deny(st, "the command name is computed at run time (%s); write it literally", part);
		return;
	}
	if (!strcmp(name, "for") || !strcmp(name, "select") || !strcmp(name, "in"))
		return; /* a for header lists words; the loop is handled by the walk */
	if ((f = func_get(st, name))) {
		if (st->depth >= SHELL_MAX_DEPTH) {
			sh_deny(st, "functions nested deeper than %d levels", SHELL_MAX_DEPTH);
			return;
		}
		st->depth++;
		analyze_range(st, f->L, f->from, f->to);
		st->depth--;
		return;
	}
	st->cmd_nest++;
	tables_command(st, w + i, n - i);
	st->cmd_nest--;
}

void sh_script(struct sh *st, const char *what, const char *text)
{
	size_t budget = SHELL_MAX_TOKENS;
	struct lex *L;
	struct sh sub;

	if (over_time(st))
		return;
	if (st->depth >= SHELL_MAX_DEPTH) {
		sh_deny(st, "%s: scripts nested deeper than %d levels", what, SHELL_MAX_DEPTH);
		return;
	}
	if (strlen(text) > SHELL_MAX_COMMAND_BYTES) {
		sh_deny(st, "%s: script longer than %d bytes", what, SHELL_MAX_COMMAND_BYTES);
		return;
	}
	L = calloc(1, sizeof(*L));
	if (!L) {
		sh_deny(st, "out of memory");
		return;
	}
	L->p = text;
	L->cmd_start = true;
	L->budget = &budget;
	lex_script(L);
	if (L->err) {
		sh_deny(st, "%s: cannot parse the script (%s); write a simpler command", what, L->err);
	} else {
		sh_copy(&sub, st);
		sub.depth++;
		analyze_range(&sub, L, 0, L->n);
		sh_release(&sub);
	}
	lex_free(L);
}

void sh_script_file(struct sh *st, const char *what, const char *path)
{
	char full[PATH_MAX * 2];
	struct buf b;
	int r;

	if (path[0] != '/' && !st->cwd_known) {
		sh_deny(st, "%s %s: relative path after a cd to an unknown directory", what, path);
		return;
	}
	if (st->written && lexical_abs(st, path, full, sizeof(full)))
		for (size_t i = 0; i < st->written->n; i++)
			if (!strcmp(st->written->v[i], full)) {
				sh_deny(st, "%s %s: runs a script this command writes; write it first, then run it",
					what, path);
				return;
			}
	snprintf(full, sizeof(full), "%s%s%s", path[0] == '/' ? "" : st->cwd, path[0] == '/' ? "" : "/", path);
	buf_init(&b, 0);
	r = fd_read_file(full, SHELL_MAX_SCRIPT_BYTES, &b);
	if (r == -ENOENT || r == -ENOTDIR) {
		buf_free(&b);
		return; /* nothing to run */
	}
	if (r < 0)
		sh_deny(st, "%s %s: cannot read the script to analyse it (%s)", what, path, strerror(-r));
	else if (b.len && memchr(b.data, '\0', b.len))
		sh_deny(st, "%s %s: not a text script", what, path);
	else
		sh_script(st, what, b.data ? b.data : "");
	buf_free(&b);
}

/* Output redirections: > >> >| &> &>> <> and >&FILE; input redirections feed a shell's stdin. */
static void redirect(struct sh *st, const struct tok *op, const struct tok *t)
{
	char val[PATH_MAX];

	if (!t) {
		sh_deny(st, "redirection %s without a target", op->s);
		return;
	}
	if (!strcmp(op->s, "<<") || !strcmp(op->s, "<<-")) {
		st->stdin_text = op->body;
		return;
	}
	if (!strcmp(op->s, "<<<")) {
		st->stdin_text = NULL;
		st->stdin_unknown = true; /* a here-string: the shells' handler reads it from the token */
		return;
	}
	if (!strcmp(op->s, "<") || !strcmp(op->s, "<&")) {
		st->stdin_unknown = true;
		return;
	}
	if ((!strcmp(op->s, ">&") || !strcmp(op->s, "<&")) && sh_word(st, t, val, sizeof(val)) &&
	    (strspn(val, "0123456789") == strlen(val) || !strcmp(val, "-") ||
	     (val[strlen(val) - 1] == '-' && strspn(val, "0123456789") == strlen(val) - 1)))
		return; /* 2>&1: a descriptor, not a file */
	sh_target(st, "redirection", t, SHELL_WRITE);
}

struct cmdbuf {
	struct words ws;
	const struct tok *redir_op[64];
	const struct tok *redir_to[64];
	size_t nredir;
	const struct tok *herestring;
	bool piped_in;
};

static void run_command(struct sh *st, struct cmdbuf *cb)
{
	struct words ex = { 0 };
	const char *saved_text = st->stdin_text;
	const struct tok *saved_file = st->stdin_file;
	bool saved_unknown = st->stdin_unknown;
	char *hs = NULL;

	for (size_t i = 0; i < cb->ws.n && !st->v->deny; i++) {
		if (strchr(cb->ws.w[i]->s, W_BRACE_OPEN))
			brace_expand(st, &ex, cb->ws.w[i], cb->ws.w[i]->s, 0);
		else
			words_push(st, &ex, cb->ws.w[i]);
	}
	st->stdin_text = NULL;
	st->stdin_file = NULL;
	st->stdin_unknown = cb->piped_in;
	for (size_t i = 0; i < cb->nredir && !st->v->deny; i++) {
		redirect(st, cb->redir_op[i], cb->redir_to[i]);
		if (!strcmp(cb->redir_op[i]->s, "<"))
			st->stdin_file = cb->redir_to[i], st->stdin_unknown = false;
	}
	if (cb->herestring && (hs = malloc(SHELL_MAX_SCRIPT_BYTES)) &&
	    sh_word(st, cb->herestring, hs, SHELL_MAX_SCRIPT_BYTES))
		st->stdin_text = hs, st->stdin_unknown = false;
	if (!st->v->deny && ex.n)
		sh_command(st, ex.w, ex.n);
	st->stdin_text = saved_text;
	st->stdin_file = saved_file;
	st->stdin_unknown = saved_unknown;
	free(hs);
	words_free(&ex);
	words_free(&cb->ws);
	cb->nredir = 0;
	cb->herestring = NULL;
	cb->piped_in = false;
}

/* The index just past the token that closes the group opened at `k` ("{"/"}" or "do"/"done"). */
static size_t matching(struct lex *L, size_t k, size_t to, const char *open, const char *close)
{
	int depth = 0;

	for (size_t i = k; i < to; i++) {
		if (L->t[i].kind != T_WORD || L->t[i].quoted)
			continue;
		if (!strcmp(L->t[i].s, open))
			depth++;
		else if (!strcmp(L->t[i].s, close) && --depth == 0)
			return i;
	}
	return to;
}

static void def_func(struct sh *st, struct lex *L, const char *name, size_t body, size_t to)
{
	struct func *f;

	if (st->nfuncs == sizeof(st->funcs) / sizeof(st->funcs[0])) {
		sh_deny(st, "more than %zu functions; split the command", sizeof(st->funcs) / sizeof(st->funcs[0]));
		return;
	}
	f = &st->funcs[st->nfuncs++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->L = L;
	f->from = body;
	f->to = to;
	if (L->t[body].kind == T_WORD && !strcmp(L->t[body].s, "{")) {
		f->to = matching(L, body, to, "{", "}") + 1;
	} else if (L->t[body].kind == T_OP && !strcmp(L->t[body].s, "(")) {
		int depth = 0;

		for (size_t i = body; i < to; i++)
			if (L->t[i].kind == T_OP && (depth += !strcmp(L->t[i].s, "(") - !strcmp(L->t[i].s, ")")) == 0) {
				f->to = i + 1;
				break;
			}
	}
	if (f->to > to)
		f->to = to;
}

/* A for loop's header "for NAME in WORDS": run the body once per value but the last (the walk
 * then runs it with the last value, as the loop leaves it). */
static void for_values(struct sh *st, struct lex *L, struct tok **w, size_t n, size_t next, size_t to);

static void for_loop(struct sh *st, struct lex *L, struct tok **w, size_t n, size_t next, size_t to)
{
	struct words ex = { 0 };

	for (size_t i = 0; i < n && !st->v->deny; i++) {
		if (strchr(w[i]->s, W_BRACE_OPEN))
			brace_expand(st, &ex, w[i], w[i]->s, 0);
		else
			words_push(st, &ex, w[i]);
	}
	if (!st->v->deny)
		for_values(st, L, ex.w, ex.n, next, to);
	words_free(&ex);
}

static void for_values(struct sh *st, struct lex *L, struct tok **w, size_t n, size_t next, size_t to)
{
	char vals[FOR_MAX_VALUES][PATH_MAX / 4];
	size_t nv = 0, do_at = next, done_at;
	bool known = n >= 3 && !strcmp(w[2]->s, "in");

	if (n < 2 || w[1]->dyn)
		return;
	for (size_t i = 3; known && i < n; i++) {
		glob_t g;
		char pat[PATH_MAX * 2];

		/* NOLINTNEXTLINE(bugprone-branch-clone): the third branch gives up too, after the second */
		if (nv == FOR_MAX_VALUES || !sh_word(st, w[i], vals[nv], sizeof(vals[0]))) {
			known = false;
		} else if (!w[i]->glob || !strpbrk(vals[nv], "*?[")) {
			nv++;
		} else if ((!st->cwd_known && vals[nv][0] != '/') ||
			   (strrchr(vals[nv], '/') && strpbrk(vals[nv], "*?[") < strrchr(vals[nv], '/'))) {
			known = false;
		} else {
			snprintf(pat, sizeof(pat), "%s%s%s", vals[nv][0] == '/' ? "" : st->cwd,
				 vals[nv][0] == '/' ? "" : "/", vals[nv]);
			if (glob(pat, 0, NULL, &g) != 0) {
				nv++; /* no match: the word itself */
				continue;
			}
			for (size_t j = 0; j < g.gl_pathc && known; j++) {
				if (nv == FOR_MAX_VALUES || strlen(g.gl_pathv[j]) >= sizeof(vals[0]))
					known = false;
				else
					snprintf(vals[nv++], sizeof(vals[0]), "%s", g.gl_pathv[j]);
			}
			globfree(&g);
		}
	}
	if (!known || nv == 0) {
		sh_setvar(st, w[1]->s, NULL);
		return;
	}
	while (do_at < to && !(L->t[do_at].kind == T_WORD && !strcmp(L->t[do_at].s, "do")))
		do_at++;
	done_at = matching(L, do_at, to, "do", "done");
	for (size_t i = 0; i + 1 < nv && !st->v->deny; i++) {
		sh_setvar(st, w[1]->s, vals[i]);
		analyze_range(st, L, do_at + 1, done_at);
	}
	sh_setvar(st, w[1]->s, vals[nv - 1]);
}

#define SUBSHELL_MAX_DEPTH 32

/* A subshell's cd does not outlive it: "(cd /etc); touch x" writes x where we started. */
struct cwd_stack {
	char cwd[SUBSHELL_MAX_DEPTH][PATH_MAX];
	bool known[SUBSHELL_MAX_DEPTH];
	int n;
};

static void subshell(struct sh *st, struct cwd_stack *stk, const char *op)
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

static void analyze_range(struct sh *st, struct lex *L, size_t from, size_t to)
{
	struct cmdbuf *cb = calloc(1, sizeof(*cb));
	struct cwd_stack *stk = calloc(1, sizeof(*stk));

	if (!cb || !stk) {
		sh_deny(st, "out of memory");
		goto out;
	}
	for (size_t k = from; k <= to && !st->v->deny; k++) {
		struct tok *t = k < to ? &L->t[k] : NULL;

		if (t)
			run_subs(st, t);
		if (!t || t->kind == T_OP) {
			/* NAME ( ) BODY: a function definition */
			if (t && !strcmp(t->s, "(") && cb->ws.n == 1 && k + 1 < to && !strcmp(L->t[k + 1].s, ")") &&
			    L->t[k + 1].kind == T_OP) {
				size_t body = k + 2;

				while (body < to && L->t[body].kind == T_OP && !strcmp(L->t[body].s, ";"))
					body++;
				if (body < to)
					def_func(st, L, cb->ws.w[0]->s, body, to);
				words_free(&cb->ws);
				k++;
				continue;
			}
			if (cb->ws.n && !cb->ws.w[0]->quoted && !strcmp(cb->ws.w[0]->s, "for"))
				for_loop(st, L, cb->ws.w, cb->ws.n, k + 1, to);
			run_command(st, cb);
			cb->piped_in = t && (!strcmp(t->s, "|") || !strcmp(t->s, "|&"));
			if (t)
				subshell(st, stk, t->s);
			continue;
		}
		if (t->kind == T_REDIR) {
			const struct tok *target_tok = k + 1 < to && L->t[k + 1].kind == T_WORD ? &L->t[++k] : NULL;

			if (target_tok)
				run_subs(st, target_tok);
			if (!strcmp(t->s, "<<<"))
				cb->herestring = target_tok;
			if (cb->nredir == 64) {
				sh_deny(st, "more than 64 redirections in one command");
				break;
			}
			cb->redir_op[cb->nredir] = t;
			cb->redir_to[cb->nredir++] = target_tok;
			continue;
		}
		/* function NAME { ... } */
		if (cb->ws.n == 2 && !strcmp(cb->ws.w[0]->s, "function") && !t->quoted &&
		    (!strcmp(t->s, "{") || !strcmp(t->s, "("))) {
			def_func(st, L, cb->ws.w[1]->s, k, to);
			words_free(&cb->ws);
		}
		words_push(st, &cb->ws, t);
	}
	if (cb)
		words_free(&cb->ws);
out:
	free(cb);
	free(stk);
}

void shell_analyze(const struct shell_check *chk, const char *cmd, struct shell_verdict *ret)
{
	struct sh *st = calloc(1, sizeof(*st));
	struct strv written = { 0 };

	memset(ret, 0, sizeof(*ret));
	if (!st) {
		ret->deny = true;
		snprintf(ret->reason, sizeof(ret->reason), "out of memory");
		return;
	}
	st->chk = chk;
	st->v = ret;
	st->written = &written;
	st->deadline_ns = mono_ns() + (int64_t)SHELL_MAX_ANALYSIS_MS * 1000000;
	if (chk->cwd) {
		snprintf(st->cwd, sizeof(st->cwd), "%s", chk->cwd);
		st->cwd_known = true;
	}
	if (strlen(cmd) > SHELL_MAX_COMMAND_BYTES) {
		sh_deny(st, "command longer than %d bytes; write files with the Write tool and run shorter commands",
			SHELL_MAX_COMMAND_BYTES);
	} else {
		st->depth = -1; /* sh_script adds one */
		sh_script(st, "command", cmd);
		if (st->v->deny && !strncmp(st->v->reason, "command: cannot parse", 21))
			memmove(st->v->reason, st->v->reason + 9, strlen(st->v->reason + 9) + 1);
	}
	sh_release(st);
	strv_free(&written);
	free(st);
}
