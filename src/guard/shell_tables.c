/* SPDX-License-Identifier: MIT */
/* shell_tables.c: what each program does with its arguments, as tables: programs that write a
 * named path and every spelling of their target options; wrappers that run another command and
 * the options they take; package managers and their install verbs; git's network, routing and
 * out-of-tree operations; interpreters with inline code. shell.c owns the words; this file only
 * reads them. A program in no table is not trusted blindly: its arguments are searched for a
 * program that is (an unknown wrapper). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/buf.h"
#include "../lib/strv.h"
#include "shell_int.h"

#define MAX_OPERANDS 256

static bool in_list(const char *s, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* Whether s is one of the space-separated words of `list`. */
static bool in_words(const char *s, const char *list)
{
	size_t n = strlen(s);

	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, " ");

		if (l == n && n && !strncmp(p, s, n))
			return true;
		p += l;
		p += *p == ' ';
	}
	return false;
}

/* Whether the long option `name` ("--NAME", without "=VALUE") abbreviates a "--" word of
 * `list` (its "=" dropped): getopt_long, and the parsers that imitate it, take any unambiguous
 * prefix, so "--outp" is --output. An ambiguous one the program refuses, so counting it as the
 * option only ever denies more. */
static bool abbrev_in(const char *name, const char *list)
{
	size_t n = strlen(name);

	if (n < 3 || name[0] != '-' || name[1] != '-')
		return false;
	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, " ");
		size_t wl = l && p[l - 1] == '=' ? l - 1 : l;

		if (wl > n && p[0] == '-' && p[1] == '-' && !strncmp(p, name, n))
			return true;
		p += l;
		p += *p == ' ';
	}
	return false;
}

/* Whether the long option `name` is one of `list`, spelled out or abbreviated. */
static bool long_is(const char *name, const char *list)
{
	return in_words(name, list) || abbrev_in(name, list);
}

/* ---- option parsing ------------------------------------------------------------------------ */

struct optspec {
	const char *shortarg;    /* short options that take a value */
	const char *shorttarget; /* of those, the ones whose value is a path written */
	const char *longarg;     /* long options that take a value (also --opt=value), space-separated */
	const char *longtarget;  /* of those, the ones whose value is a path written */
};

struct args {
	struct tok *ops[MAX_OPERANDS];
	size_t nops;
	bool flag[128];  /* short options seen */
	size_t first_op; /* index in w of the first operand (n when none) */
};

/* A word's literal value or "" (for option names, which are never computed). */
static const char *lit(const struct tok *t)
{
	return t->dyn || strchr(t->s, W_VAR_OPEN) ? "" : t->s;
}

static void opt_extract(struct sh *st, const char *what, const struct tok *model, const char *value)
{
	struct tok t = *model;

	t.s = (char *)value;
	t.nsub = 0;
	sh_target(st, what, &t, SHELL_REMOVE);
}

static void opt_target(struct sh *st, const char *what, const struct tok *model, const char *value)
{
	struct tok t = *model;

	t.s = (char *)value;
	t.nsub = 0;
	sh_target(st, what, &t, SHELL_WRITE);
}

/* Walk w[1..n): options per spec (targets checked as they come), operands collected. With
 * `stop_at_operand`, the first operand ends the options (a wrapper's command). */
static void parse_args(struct sh *st, struct tok **w, size_t n, const struct optspec *o, const char *what,
		       struct args *a, bool stop_at_operand)
{
	bool opts = true;

	memset(a, 0, sizeof(*a));
	a->first_op = n;
	for (size_t i = 1; i < n && !st->v->deny; i++) {
		const char *s = lit(w[i]);

		if (opts && !strcmp(s, "--")) {
			opts = false;
			continue;
		}
		if (opts && s[0] == '-' && s[1] == '-') {
			const char *eq = strchr(s, '=');
			size_t nl = eq ? (size_t)(eq - s) : strlen(s);
			bool takes = false, tgt = false;

			char name[128];

			snprintf(name, sizeof(name), "%.*s", (int)(nl < 127 ? nl : 127), s);
			/* An abbreviation counts only for a target option: it is then checked as a write
			 * whatever it was (the program may have an exact option it stands for instead, curl's
			 * --head beside --header), while taking the next word as another option's value
			 * would skip it unchecked. */
			tgt = long_is(name, o->longtarget);
			takes = in_words(name, o->longarg) || tgt;
			if (eq && tgt)
				opt_target(st, what, w[i], eq + 1);
			else if (!eq && takes && i + 1 < n) {
				if (tgt)
					sh_target(st, what, w[i + 1], SHELL_WRITE);
				i++;
			}
			continue;
		}
		if (opts && s[0] == '-' && s[1]) {
			for (const char *c = s + 1; *c; c++) {
				if ((unsigned char)*c < 128)
					a->flag[(unsigned char)*c] = true;
				if (o->shortarg && strchr(o->shortarg, *c)) {
					bool tgt = o->shorttarget && strchr(o->shorttarget, *c);

					if (c[1]) {
						if (tgt)
							opt_target(st, what, w[i], c + 1);
					} else if (i + 1 < n) {
						if (tgt)
							sh_target(st, what, w[i + 1], SHELL_WRITE);
						i++;
					}
					break;
				}
			}
			continue;
		}
		if (a->nops == 0)
			a->first_op = i;
		if (stop_at_operand)
			return;
		if (a->nops == MAX_OPERANDS) {
			sh_deny(st, "%s: more than %d operands; split the command", what, MAX_OPERANDS);
			return;
		}
		a->ops[a->nops++] = w[i];
	}
}

/* Whether a word is one of `words` (space-separated; one ending in '=' matches as a prefix). */
static bool has_word(struct tok **w, size_t n, const char *words)
{
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		for (const char *x = words; *x;) {
			size_t l = strcspn(x, " ");

			if ((strlen(s) == l && !strncmp(s, x, l)) || (l && x[l - 1] == '=' && !strncmp(s, x, l)))
				return true;
			x += l;
			x += *x == ' ';
		}
	}
	return false;
}

/* has_word, where an abbreviated long option counts too ("--exec" for --execute, "--conf=F"
 * for --config=F), unless it is one of `exact`: the program's own options that a listed one
 * begins with (tar's --checkpoint beside --checkpoint-action). For the options that make the
 * guard deny or check more, never for one that makes it check less (an abbreviation the
 * program resolves elsewhere would then slip by). */
static bool has_opt(struct tok **w, size_t n, const char *words, const char *exact)
{
	if (has_word(w, n, words))
		return true;
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);
		char name[128];

		if (!strcmp(s, "--"))
			break;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, "="), s);
		if (!in_words(name, exact ? exact : "") && abbrev_in(name, words))
			return true;
	}
	return false;
}

/* ---- programs that write named paths ------------------------------------------------------- */

enum opmode {
	OPS_NONE,     /* only option targets */
	OPS_ALL,      /* every operand is written */
	OPS_ALL_RM,   /* every operand is removed, moved or replaced */
	OPS_LAST2,    /* the last operand, when there are two or more (cp) */
	OPS_FROM2_RM, /* every operand but the first (chmod MODE FILE...) */
	OPS_FIRST,    /* the first operand (zip ARCHIVE files...) */
	OPS_SECOND,   /* the second operand (xxd IN OUT) */
};

struct writer {
	const char *name;
	struct optspec o;
	enum opmode mode;
};

static const struct writer writers[] = {
	{ "touch", { "dtr", "", "--date --reference --time", NULL }, OPS_ALL },
	{ "mkdir", { "m", "", "--mode", NULL }, OPS_ALL }, /* -Z takes no value, --context only with '=' */
	{ "rm", { "", "", NULL, NULL }, OPS_ALL_RM },
	{ "rmdir", { "", "", NULL, NULL }, OPS_ALL_RM },
	{ "unlink", { "", "", NULL, NULL }, OPS_ALL_RM },
	{ "shred", { "ns", "", "--iterations --size --random-source", NULL }, OPS_ALL_RM },
	{ "tee", { "", "", NULL, NULL }, OPS_ALL }, /* --output-error takes its value only with '=' */
	{ "sponge", { "", "", NULL, NULL }, OPS_ALL },
	{ "truncate", { "sr", "", "--size --reference", NULL }, OPS_ALL },
	{ "fallocate", { "lon", "", "--length --offset", NULL }, OPS_ALL },
	{ "mkfifo", { "m", "", "--mode", NULL }, OPS_ALL },
	{ "mknod", { "mZ", "", "--mode --context", NULL }, OPS_FIRST },
	{ "mv", { "tS", "t", "--target-directory --suffix", "--target-directory" }, OPS_ALL_RM },
	{ "cp", { "tS", "t", "--target-directory --suffix", "--target-directory" }, OPS_LAST2 },
	{ "chmod", { "", "", "--reference", NULL }, OPS_FROM2_RM },
	{ "chown", { "", "", "--reference --from", NULL }, OPS_FROM2_RM },
	{ "chgrp", { "", "", "--reference", NULL }, OPS_FROM2_RM },
	{ "chattr", { "pv", "", NULL, NULL }, OPS_FROM2_RM },
	{ "setfacl",
	  { "mMxX", "", "--modify --modify-file --remove --remove-file --set --set-file", NULL },
	  OPS_ALL_RM },
	{ "sort",
	  { "kotSTy", "o",
	    "--key --output --field-separator --temporary-directory --buffer-size --parallel --files0-from --compress-program --batch-size",
	    "--output" },
	  OPS_NONE },
	{ "uniq", { "fsw", "", "--skip-fields --skip-chars --check-chars", NULL }, OPS_SECOND }, /* --group and
	--all-repeated take their value only with '=' */
	{ "iconv", { "fto", "o", "--from-code --to-code --output", "--output" }, OPS_NONE },
	{ "gcc", { "oIDLlxUBTeFuzGV", "o", "--output", "--output" }, OPS_NONE },
	{ "cc", { "oIDLlxUBTeFuzGV", "o", "--output", "--output" }, OPS_NONE },
	{ "g++", { "oIDLlxUBTeFuzGV", "o", "--output", "--output" }, OPS_NONE },
	{ "c++", { "oIDLlxUBTeFuzGV", "o", "--output", "--output" }, OPS_NONE },
	{ "clang", { "oIDLlxUBTeFuzGV", "o", "--output", "--output" }, OPS_NONE },
	{ "clang++", { "oIDLlxUBTeFuzGV", "o", "--output", "--output" }, OPS_NONE },
	{ "ld", { "oLlTeuyYz", "o", "--output", "--output" }, OPS_NONE },
	{ "as", { "oI", "o", NULL, NULL }, OPS_NONE },
	{ "rustc", { "oLlC", "o", "--out-dir --emit --crate-name --edition --target", "--out-dir" }, OPS_NONE },
	{ "javac", { "dsh", "dsh", "--class-path -cp", NULL }, OPS_NONE },
	{ "zip", { "bntxi", "b", NULL, NULL }, OPS_FIRST },
	{ "sqlite3", { "", "", NULL, NULL }, OPS_FIRST },
	{ "xxd", { "cglos", "", NULL, NULL }, OPS_SECOND },
	{ "dos2unix", { "", "", NULL, NULL }, OPS_ALL },
	{ "unix2dos", { "", "", NULL, NULL }, OPS_ALL },
	{ "ed", { "p", "", NULL, NULL }, OPS_ALL },
	{ "ex", { "cSuUiwWTt", "", NULL, NULL }, OPS_ALL },
	{ "vi", { "cSuUiwWTt", "", NULL, NULL }, OPS_ALL },
	{ "vim", { "cSuUiwWTt", "", NULL, NULL }, OPS_ALL },
	{ "nvim", { "cSuUiwWTt", "", NULL, NULL }, OPS_ALL },
	{ "nano", { "", "", NULL, NULL }, OPS_ALL },
	{ "emacs", { "", "", NULL, NULL }, OPS_ALL },
	{ "black", { "lSWtc", "", "--line-length --target-version --config --include --exclude", NULL }, OPS_ALL },
	{ "isort", { "", "", NULL, NULL }, OPS_ALL },
	{ "rustfmt", { "", "", "--edition --config-path --emit", NULL }, OPS_ALL },
	{ "gofmt", { "r", "", NULL, NULL }, OPS_ALL },
	{ "clang-format", { "", "", NULL, NULL }, OPS_ALL },
	{ "prettier", { "", "", "--config --ignore-path --parser --plugin", NULL }, OPS_ALL },
	{ "autopep8", { "", "", NULL, NULL }, OPS_ALL },
	{ "yapf", { "", "", "--style", NULL }, OPS_ALL },
	{ "ssh-keygen", { "fbtCNZmOEIVnPYsz", "f", NULL, NULL }, OPS_NONE },
	{ "strip", { "oRKN", "o", NULL, NULL }, OPS_ALL },
	{ "objcopy", { "jRKNIOB", "", NULL, NULL }, OPS_SECOND },
	{ "ninja", { "Cfjkldt", "C", NULL, NULL }, OPS_NONE },
	{ "tic", { "o", "o", NULL, NULL }, OPS_NONE },
	{ "csplit", { "fbn", "f", "--prefix --suffix-format --digits", "--prefix" }, OPS_NONE },
	{ "base64", { "w", "", "--wrap", NULL }, OPS_NONE },
	{ "ar", { "", "", NULL, NULL }, OPS_SECOND },
	{ "scp", { "cFiJlPoSDX", "", NULL, NULL }, OPS_LAST2 },
	{ "split",
	  { "abClnt", "",
	    "--suffix-length --additional-suffix --bytes --line-bytes --lines --number --separator --filter", NULL },
	  OPS_SECOND },
	{ "tac", { "s", "", "--separator", NULL }, OPS_NONE },
};

static const struct writer *writer_get(const char *name)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (!strcmp(writers[i].name, name))
			return &writers[i];
	return NULL;
}

static void remote_check(struct sh *st, const char *what, const struct tok *t)
{
	char v[4096];
	const char *colon, *slash;

	if (!sh_word(st, t, v, sizeof(v)))
		return;
	colon = strchr(v, ':');
	slash = strchr(v, '/');
	if (colon && (!slash || colon < slash))
		sh_deny(st, "%s: copying to another host is not allowed (%s)", what, v);
}

static void run_writer(struct sh *st, const struct writer *wr, struct tok **w, size_t n, const char *name)
{
	struct args a;
	enum shell_op op = wr->mode == OPS_ALL_RM || wr->mode == OPS_FROM2_RM ? SHELL_REMOVE : SHELL_WRITE;
	bool t_opt = false;

	if ((!strcmp(name, "sort") && has_opt(w, n, "--compress-program --compress-program=", NULL)) ||
	    (!strcmp(name, "split") && has_opt(w, n, "--filter --filter=", NULL))) {
		sh_deny(st, "%s: an option that runs a command the guard does not analyse", name);
		return;
	}
	parse_args(st, w, n, &wr->o, name, &a, false);
	if (st->v->deny)
		return;
	for (size_t i = 1; i < n; i++)
		t_opt |= !strcmp(lit(w[i]), "-t") || !strncmp(lit(w[i]), "--target-directory", 18) ||
			 (lit(w[i])[0] == '-' && lit(w[i])[1] != '-' && strchr(lit(w[i]), 't') && wr->o.shorttarget &&
			  strchr(wr->o.shorttarget, 't'));
	if (!strcmp(name, "scp") && a.nops >= 2)
		remote_check(st, name, a.ops[a.nops - 1]);
	if (!strcmp(name, "cp") && (a.flag['s'] || a.flag['l'] || has_opt(w, n, "--symbolic-link --link", NULL)))
		for (size_t i = 0; i + 1 < a.nops; i++) /* links to the sources: a later write lands on them */
			sh_target(st, "cp -s/-l (links to the source)", a.ops[i], SHELL_WRITE);
	if (st->v->deny)
		return;
	switch (wr->mode) {
	case OPS_ALL:
	case OPS_ALL_RM:
		for (size_t i = 0; i < a.nops; i++)
			sh_target(st, name, a.ops[i], op);
		break;
	case OPS_LAST2:
		if (a.nops >= 2 && !t_opt)
			sh_target(st, name, a.ops[a.nops - 1], op);
		break;
	case OPS_FROM2_RM:
		for (size_t i = has_opt(w, n, "--reference=", NULL) ? 0 : 1; i < a.nops; i++)
			sh_target(st, name, a.ops[i], op);
		break;
	case OPS_FIRST:
		if (a.nops >= 1)
			sh_target(st, name, a.ops[0], op);
		break;
	case OPS_SECOND:
		if (a.nops >= 2)
			sh_target(st, name, a.ops[1], op);
		break;
	case OPS_NONE:
	default:
		break;
	}
}

/* ---- special writers ----------------------------------------------------------------------- */

static void prog_install(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = { "gmotSZ", "t", "--group --mode --owner --target-directory --suffix",
					  "--target-directory" };
	struct args a;

	if (has_opt(w, n, "--strip-program --strip-program=", NULL)) {
		sh_deny(st, "install --strip-program: runs a command the guard does not analyse");
		return;
	}
	parse_args(st, w, n, &o, "install", &a, false);
	if (a.flag['d'] || has_opt(w, n, "--directory", NULL))
		for (size_t i = 0; i < a.nops; i++)
			sh_target(st, "install -d", a.ops[i], SHELL_WRITE);
	else if (a.nops >= 1 && !a.flag['t'])
		sh_target(st, "install", a.ops[a.nops - 1], SHELL_WRITE);
}

/* ln: the link names are written; a link that points outside would let a later write escape, so
 * its target (relative to the link's own directory) must be inside too. */
static void prog_ln(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = { "tS", "t", "--target-directory --suffix", "--target-directory" };
	struct args a;
	char link[4096], tgt[4096], full[8192];

	parse_args(st, w, n, &o, "ln", &a, false);
	if (st->v->deny || a.nops == 0)
		return;
	if (a.nops == 1 || a.flag['t']) {
		for (size_t i = 0; i < a.nops; i++)
			sh_target(st, "ln", a.ops[i], SHELL_WRITE); /* links land in the cwd or -t DIR */
		if (a.nops == 1)
			sh_target(st, "ln", a.ops[0], SHELL_WRITE);
		return;
	}
	sh_target(st, "ln", a.ops[a.nops - 1], SHELL_REMOVE); /* ln -f replaces it */
	for (size_t i = 0; i + 1 < a.nops && !st->v->deny; i++) {
		if (!a.flag['s']) {
			sh_target(st, "ln (a hard link shares the file)", a.ops[i], SHELL_WRITE);
			continue;
		}
		if (!sh_word(st, a.ops[i], tgt, sizeof(tgt)) || !sh_word(st, a.ops[a.nops - 1], link, sizeof(link))) {
			sh_deny(st, "ln -s: the link or its target is computed at run time; write it literally");
			return;
		}
		if (tgt[0] == '/') {
			snprintf(full, sizeof(full), "%s", tgt);
		} else {
			char *slash = strrchr(link, '/');

			if (a.nops > 2) /* ln -s T1 T2 DIR: links inside DIR */
				snprintf(full, sizeof(full), "%s/%s", link, tgt);
			else if (slash)
				snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - link), link, tgt);
			else
				snprintf(full, sizeof(full), "%s", tgt);
		}
		sh_target_str(st, "ln -s (where the link points)", full, SHELL_WRITE);
	}
}

static void prog_dd(struct sh *st, struct tok **w, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (!strncmp(w[i]->s, "of=", 3))
			opt_target(st, "dd of=", w[i], w[i]->s + 3);
}

static void prog_rsync(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = {
		"efBTM", "T",
		"--rsh --rsync-path --temp-dir --backup-dir --log-file --partial-dir --filter --exclude --include --exclude-from --include-from --files-from --compare-dest --copy-dest --link-dest --chmod --chown --timeout --bwlimit --suffix --port --password-file --only-write-batch --write-batch",
		"--temp-dir --backup-dir --log-file --partial-dir --only-write-batch --write-batch"
	};
	struct args a;

	if (has_opt(w, n, "-e --rsh --rsh= --rsync-path --rsync-path=", NULL)) {
		sh_deny(st, "rsync -e/--rsync-path: runs a command the guard does not analyse");
		return;
	}
	parse_args(st, w, n, &o, "rsync", &a, false);
	if (a.nops >= 2) {
		bool del = false;

		for (size_t i = 1; i < n; i++)
			del |= !strncmp(lit(w[i]), "--delete", 8) || !strcmp(lit(w[i]), "--del") ||
			       !strcmp(lit(w[i]), "--remove-source-files") || !strcmp(lit(w[i]), "--remove-sent-files");
		remote_check(st, "rsync", a.ops[a.nops - 1]);
		/* --remove-source-files (--remove-sent-files, its old name) deletes what was sent: each
		 * source is removed; --del is --delete-during */
		for (size_t i = 0; has_opt(w, n, "--remove-source-files --remove-sent-files", NULL) && i + 1 < a.nops;
		     i++)
			sh_target(st, "rsync --remove-source-files", a.ops[i], SHELL_REMOVE);
		/* --delete removes what the source lacks, the guard's files included */
		sh_target(st, del ? "rsync --delete" : "rsync", a.ops[a.nops - 1], del ? SHELL_REMOVE : SHELL_WRITE);
	}
}

/* The end of a delimited part of a sed command (a regex, or s's replacement): the unescaped
 * delimiter `d`, or NULL when there is none. */
static const char *sed_delimited(const char *p, char d)
{
	for (; *p && *p != d; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p == d ? p : NULL;
}

/* Past one sed address (a line number, first~step, $, /re/ or \cREc with its I and M flags),
 * or p itself when there is none; NULL when it is not one the guard can read. */
static const char *sed_address(const char *p)
{
	if (*p >= '0' && *p <= '9') {
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '~')
			for (p++; *p >= '0' && *p <= '9'; p++)
				;
		return p;
	}
	if (*p == '$')
		return p + 1;
	if (*p == '/' || *p == '\\') {
		char d = *p == '/' ? '/' : p[1];

		if (!d || d == '\n' || d == '\\')
			return NULL;
		if (!(p = sed_delimited(p + (*p == '/' ? 1 : 2), d)))
			return NULL;
		for (p++; *p == 'I' || *p == 'M'; p++)
			;
	}
	return p;
}

static const char *sed_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The rest of the line from p (a file name, a command, a label or text: GNU sed reads it to the
 * newline, ';' included), copied into out. Returns the newline or the end. */
static const char *sed_rest(const char *p, char *out, size_t n)
{
	size_t l = strcspn(p, "\n");

	snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), p);
	return p + l;
}

/* sed's script, read as GNU sed reads it: commands separated by ';', newlines and braces, each
 * with up to two addresses and '!'. "w FILE", "W FILE" and s///w are writes; e and s///e run
 * commands and are refused; anything the guard cannot read is refused. */
static void sed_script(struct sh *st, const struct tok *t, const char *text)
{
	char script[8192], arg[8192];
	const char *p = script;

	if (t && !sh_word(st, t, script, sizeof(script))) {
		sh_deny(st, "sed: the script is computed at run time; write it literally");
		return;
	}
	if (!t && snprintf(script, sizeof(script), "%s", text) >= (int)sizeof(script)) {
		sh_deny(st, "sed: the script is too long to check");
		return;
	}
	while (*p && !st->v->deny) {
		char c;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == ';' || *p == '{' || *p == '}')
			p++;
		if (!*p)
			break;
		if (*p == '#') { /* a comment, to the end of the line */
			p += strcspn(p, "\n");
			continue;
		}
		for (int k = 0; k < 2 && p; k++) { /* ADDR, ADDR,ADDR, ADDR,+N, ADDR,~N */
			p = sed_address(sed_blanks(p));
			if (p && k == 0 && *(p = sed_blanks(p)) == ',') {
				p = sed_blanks(p + 1);
				if (*p == '+' || *p == '~') {
					for (p++; *p >= '0' && *p <= '9'; p++)
						;
					break;
				}
				continue;
			}
			break;
		}
		if (!p) {
			sh_deny(st, "sed: an address the guard cannot read");
			return;
		}
		for (p = sed_blanks(p); *p == '!'; p = sed_blanks(p + 1))
			;
		c = *p++;
		switch (c) {
		case '{':
		case '}':
			break;
		case 'w':
		case 'W':
			p = sed_rest(sed_blanks(p), arg, sizeof(arg));
			if (!arg[0]) {
				sh_deny(st, "sed w: no file named");
				return;
			}
			sh_target_str(st, "sed w", arg, SHELL_WRITE);
			break;
		case 'e':
			sh_deny(st, "sed e: runs a command the guard does not analyse");
			return;
		case 'r':
		case 'R': /* a file read: its name is the rest of the line */
			p = sed_rest(p, arg, sizeof(arg));
			break;
		case 'a':
		case 'i':
		case 'c': /* text: the rest of the line, and the next while a line ends in a backslash */
			while (*(p = sed_rest(p, arg, sizeof(arg))) == '\n' && arg[0] && arg[strlen(arg) - 1] == '\\')
				p++;
			break;
		case ':':
		case 'b':
		case 't':
		case 'T':
		case 'v': /* a label (or version): to ';' or the end of the line */
			p += strcspn(p, ";\n");
			break;
		case 's':
		case 'y': {
			char d = *p;
			const char *e;

			if (!d || d == '\n' || d == '\\' || !(e = sed_delimited(p + 1, d)) ||
			    !(e = sed_delimited(e + 1, d))) {
				sh_deny(st, "sed %c: a command the guard cannot read", c);
				return;
			}
			for (p = e + 1; c == 's' && *p && !strchr(";\n}#", *p); p++) {
				if (*p == 'e') {
					sh_deny(st, "sed s///e: runs a command the guard does not analyse");
					return;
				}
				if (*p == 'w') {
					p = sed_rest(sed_blanks(p + 1), arg, sizeof(arg));
					if (!arg[0]) {
						sh_deny(st, "sed s///w: no file named");
						return;
					}
					sh_target_str(st, "sed s///w", arg, SHELL_WRITE);
					break;
				}
				if (!strchr("gpiImM0123456789 \t", *p)) {
					sh_deny(st, "sed s: a flag the guard does not know");
					return;
				}
			}
			break;
		}
		case 'q':
		case 'Q':
		case 'l':
		case 'L':
			for (p = sed_blanks(p); *p >= '0' && *p <= '9'; p++)
				;
			break;
		default:
			if (!strchr("=dDgGhHnNpPxzF", c)) {
				sh_deny(st, "sed: a command the guard does not know");
				return;
			}
		}
	}
}

/* GNU sed's long options, and the short one each stands for ('-': none). getopt_long takes any
 * unambiguous prefix ("--i" is --in-place), and a value after '=' or in the next word. */
static const struct {
	const char *name;
	char c;
} sed_longs[] = { { "binary", 'b' },     { "debug", '-' },           { "expression", 'e' },
		  { "file", 'f' },       { "follow-symlinks", '-' }, { "help", '-' },
		  { "in-place", 'i' },   { "line-length", 'l' },     { "null-data", 'z' },
		  { "posix", '-' },      { "quiet", 'n' },           { "regexp-extended", 'r' },
		  { "sandbox", '-' },    { "separate", 's' },        { "silent", 'n' },
		  { "unbuffered", 'u' }, { "version", '-' },         { "zero-terminated", 'z' } };

/* The short option a long one (`--NAME` or `--NAME=...`, NAME possibly abbreviated) stands for;
 * 0 when it is unknown or ambiguous. */
static char sed_long(const char *s)
{
	size_t len = strcspn(s + 2, "=");
	char found = 0;
	size_t hits = 0;

	for (size_t k = 0; k < sizeof(sed_longs) / sizeof(sed_longs[0]); k++) {
		if (len && !strncmp(sed_longs[k].name, s + 2, len)) {
			if (strlen(sed_longs[k].name) == len)
				return sed_longs[k].c; /* exact */
			hits += !found || found != sed_longs[k].c;
			found = sed_longs[k].c;
		}
	}
	return hits == 1 ? found : 0;
}

/* sed, its options read as GNU sed reads them (options anywhere, clusters such as -ne, values
 * attached or in the next word, -i's suffix attached only, long options abbreviated): -i makes
 * every file operand a write; every script (-e, --expression, else the first operand) is read
 * for its own writes; a script from a file (-f) is refused, since the guard cannot see it. */
static void prog_sed(struct sh *st, struct tok **w, size_t n)
{
	static const char from_file[] = "sed -f: the script is in a file the guard does not read; give it with -e";
	struct tok *ops[MAX_OPERANDS];
	size_t nops = 0;
	bool inplace = false, script_opt = false, opts = true;

	for (size_t i = 1; i < n && !st->v->deny; i++) {
		const char *s = lit(w[i]);

		if (!opts || s[0] != '-' || !s[1]) { /* an operand (a computed word too) */
			if (nops == MAX_OPERANDS) {
				sh_deny(st, "sed: too many operands to check");
				return;
			}
			ops[nops++] = w[i];
		} else if (!strcmp(s, "--")) {
			opts = false;
		} else if (s[1] == '-') {
			const char *eq = strchr(s, '=');
			char c = sed_long(s);

			if (!c) {
				sh_deny(st, "sed: an option the guard does not know, or an ambiguous one");
				return;
			}
			if (c == 'f') {
				sh_deny(st, from_file);
				return;
			}
			inplace |= c == 'i';
			script_opt |= c == 'e';
			if (c == 'i' && eq && strchr(eq, '/')) {
				sh_deny(st, "sed -i SUFFIX with '/': the backup is written where it points");
				return;
			}
			if (c == 'e' && eq)
				sed_script(st, NULL, eq + 1);
			else if ((c == 'e' || c == 'l') && !eq && ++i < n && c == 'e')
				sed_script(st, w[i], NULL);
		} else {
			for (const char *c = s + 1; *c; c++) {
				if (*c == 'i') { /* the rest of the word is the backup suffix */
					inplace = true;
					if (strchr(c + 1, '/')) {
						sh_deny(st,
							"sed -i SUFFIX with '/': the backup is written where it points");
						return;
					}
					break;
				}
				if (*c == 'f') {
					sh_deny(st, from_file);
					return;
				}
				if (*c == 'e' || *c == 'l') { /* its value: the rest of the word, or the next one */
					script_opt |= *c == 'e';
					if (*c == 'e' && c[1])
						sed_script(st, NULL, c + 1);
					else if (!c[1] && ++i < n && *c == 'e')
						sed_script(st, w[i], NULL);
					break;
				}
				if (!strchr("bsnrzuE", *c)) {
					sh_deny(st, "sed: an option the guard does not know");
					return;
				}
			}
		}
	}
	/* GNU sed reads every option first: the first operand is the script unless -e gave one */
	for (size_t k = 0; k < nops && !st->v->deny; k++) {
		if (k == 0 && !script_opt)
			sed_script(st, ops[0], NULL);
		else if (inplace)
			sh_target(st, "sed -i", ops[k], SHELL_WRITE);
	}
}

/* tar: -f ARCHIVE is written when creating; files land in -C DIR (or the cwd) when extracting. */
static void prog_tar(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = {
		"fCbHKLgNTVXI", "",
		"--file --directory --blocking-factor --format --starting-file --newer --after-date --files-from --volno-file --label --exclude --exclude-from --owner --group --mode --mtime --transform --xform --listed-incremental --use-compress-program --backup --suffix",
		NULL
	};
	struct args a;
	bool extract = false, create = false; /* both, when the options leave it unclear */
	const struct tok *file = NULL, *dir = NULL;
	struct tok here = { .kind = T_WORD, .s = (char *)"." };

	if (has_opt(w, n,
		    "--to-command --to-command= --checkpoint-action= --info-script --info-script= --new-volume-script --new-volume-script= --rsh-command= --use-compress-program --use-compress-program= -I -F",
		    "--checkpoint")) {
		sh_deny(st, "tar: an option that runs a command the guard does not analyse");
		return;
	}
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);
		bool old = i == 1 && s[0] != '-'; /* tar xzf ARCHIVE */

		if (!strcmp(s, "--"))
			break;
		if (s[0] == '-' && s[1] == '-') { /* long options, abbreviated as tar allows */
			char name[128];
			bool eq = strchr(s, '=') != NULL;

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, "="), s);
			if (long_is(name, "--extract --get"))
				extract = true;
			if (long_is(name, "--create --append --update --concatenate --catenate --delete"))
				create = true;
			if (long_is(name, "--file"))
				file = eq ? w[i] : i + 1 < n ? w[i + 1] : NULL;
			if (long_is(name, "--directory"))
				dir = eq ? w[i] : i + 1 < n ? w[i + 1] : NULL;
			continue;
		}
		if ((s[0] == '-' && s[1]) || old) {
			const char *c = s + (old ? 0 : 1);
			size_t k = i;

			for (; *c; c++) {
				extract |= *c == 'x';
				create |= strchr("cruA", *c) != NULL;
				if (*c == 'f' || *c == 'C') {
					/* the value is the next word, or (attached, or none left) this one */
					const struct tok *v = !c[1] && k + 1 < n ? w[++k] : w[i];

					if (*c == 'f')
						file = v;
					else
						dir = v;
					if (!old)
						break;
				}
			}
		}
	}
	parse_args(st, w, n, &o, "tar", &a, false);
	if (st->v->deny)
		return;
	if (file && create) {
		char v[4096];
		const char *val = v;

		if (sh_word(st, file, v, sizeof(v)) && v[0] == '-' && v[1] == '-' && strchr(v, '='))
			val = strchr(v, '=') + 1; /* --file=F, or abbreviated */
		else if (sh_word(st, file, v, sizeof(v)) && v[0] == '-' && strchr(v, 'f') && v[strlen(v) - 1] != 'f')
			val = strchr(v, 'f') + 1;
		if (!sh_word(st, file, v, sizeof(v)))
			sh_target(st, "tar -f", file, SHELL_WRITE);
		else if (strcmp(val, "-")) {
			struct tok t = *file;

			if (strchr(val, ':') && (!strchr(val, '/') || strchr(val, ':') < strchr(val, '/')))
				sh_deny(st, "tar -f %s: a remote archive is not allowed", val);
			t.s = (char *)val;
			t.nsub = 0;
			if (val != v)
				sh_target_str(st, "tar -f", val, SHELL_WRITE);
			else
				sh_target(st, "tar -f", &t, SHELL_WRITE);
		}
	}
	if (extract && dir && lit(dir)[0] == '-' && lit(dir)[1] == '-' && strchr(lit(dir), '='))
		opt_extract(st, "tar (extracts into)", dir, strchr(dir->s, '=') + 1); /* --directory=D */
	else if (extract) /* an archive may replace any file below: as a removal of the directory */
		sh_target(st, "tar (extracts into)", dir ? dir : &here, SHELL_REMOVE);
}

static void prog_unzip(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = { "xP", "", NULL, NULL };
	struct args a;
	struct tok here = { .kind = T_WORD, .s = (char *)"." };

	for (size_t i = 1; i + 1 < n; i++)
		if (!strcmp(lit(w[i]), "-d"))
			sh_target(st, "unzip -d", w[i + 1], SHELL_REMOVE);
	parse_args(st, w, n, &o, "unzip -d", &a, false);
	for (size_t i = 1; i < n; i++)
		a.flag['d'] |= !strcmp(lit(w[i]), "-d");
	if (!a.flag['d'] && !a.flag['l'] && !a.flag['p'] && !a.flag['t'] && !a.flag['v'] && !a.flag['Z'])
		sh_target(st, "unzip (extracts into)", &here, SHELL_REMOVE);
}

static void prog_7z(struct sh *st, struct tok **w, size_t n)
{
	struct tok here = { .kind = T_WORD, .s = (char *)"." };
	const char *verb = n > 1 ? lit(w[1]) : "";
	bool outdir = false;

	for (size_t i = 2; i < n; i++)
		if (!strncmp(w[i]->s, "-o", 2)) {
			opt_target(st, "7z -o", w[i], w[i]->s + 2);
			outdir = true;
		}
	if ((!strcmp(verb, "x") || !strcmp(verb, "e")) && !outdir)
		sh_target(st, "7z (extracts into)", &here, SHELL_REMOVE);
	else if ((!strcmp(verb, "a") || !strcmp(verb, "u") || !strcmp(verb, "d") || !strcmp(verb, "rn")) && n > 2)
		for (size_t i = 2; i < n; i++)
			if (w[i]->s[0] != '-') {
				sh_target(st, "7z", w[i], SHELL_WRITE);
				break;
			}
}

static void prog_compress(struct sh *st, struct tok **w, size_t n, const char *name)
{
	static const struct optspec o = { "oSbLT", "o", "--suffix --output", "--output" };
	struct args a;

	parse_args(st, w, n, &o, name, &a, false);
	if (a.flag['c'] || a.flag['l'] || a.flag['t'] || has_word(w, n, "--stdout --to-stdout --list --test"))
		return;
	for (size_t i = 0; i < a.nops; i++)
		sh_target(st, name, a.ops[i], SHELL_REMOVE);
}

static void prog_patch(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = {
		"oidpBDFrYVzg", "orBY",
		"--output --input --directory --strip --prefix --ifdef --fuzz --reject-file --basename-prefix --suffix",
		"--output --reject-file --prefix --basename-prefix" /* backups go to PREFIX+file */
	};
	struct args a;
	struct tok here = { .kind = T_WORD, .s = (char *)"." };
	const struct tok *dir = NULL;

	for (size_t i = 1; i + 1 < n; i++)
		if (!strcmp(lit(w[i]), "-d") || !strcmp(lit(w[i]), "--directory"))
			dir = w[i + 1];
	parse_args(st, w, n, &o, "patch", &a, false);
	if (a.nops >= 1)
		sh_target(st, "patch", a.ops[0], SHELL_WRITE);
	else if (!a.flag['o'])
		sh_target(st, "patch (patches files under)", dir ? dir : &here, SHELL_WRITE);
}

/* awk: print > "file" and print | "cmd", system(), getline from a command. */
static void prog_awk(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = { "fvFE", "", "--file --assign --field-separator --include --load", NULL };
	struct args a;
	char prog[16384];
	bool from_file = false;

	for (size_t i = 1; i < n; i++)
		from_file |= !strcmp(lit(w[i]), "-f") || !strncmp(lit(w[i]), "--file", 6);
	parse_args(st, w, n, &o, "awk", &a, false);
	if (from_file || a.nops == 0 || st->v->deny)
		return;
	if (!sh_word(st, a.ops[0], prog, sizeof(prog))) {
		sh_deny(st, "awk: the program is computed at run time; write it literally");
		return;
	}
	if (strstr(prog, "system") || strstr(prog, "| getline") || strstr(prog, "|getline") || strstr(prog, "|&")) {
		sh_deny(st, "awk: the program runs commands (system, | getline); not analysed");
		return;
	}
	for (char *p = strstr(prog, "print"); p && !st->v->deny; p = strstr(p + 5, "print")) {
		bool q = false;

		for (char *c = p; *c && *c != ';' && *c != '}' && *c != '\n'; c++) {
			if (*c == '"' && c[-1] != '\\')
				q = !q;
			if (q || (*c != '>' && *c != '|'))
				continue;
			if (*c == '|') {
				sh_deny(st, "awk: print | \"command\" runs a command; not analysed");
				break;
			}
			for (c += c[1] == '>' ? 2 : 1; *c == ' '; c++)
				;
			if (*c == '"') {
				char *end = strchr(c + 1, '"');

				if (end) {
					*end = '\0';
					if (strcmp(c + 1, "/dev/stdout") && strcmp(c + 1, "/dev/stderr"))
						sh_target_str(st, "awk print >", c + 1, SHELL_WRITE);
					*end = '"';
				}
			} else {
				sh_deny(st, "awk: print > a computed file name; not analysed");
			}
			break;
		}
	}
}

static void prog_curl(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = {
		"AbcCdDeEFHhKmoOPQrtTuUwxXyYz", "cDo",
		"--output --output-dir --cookie-jar --dump-header --trace --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc --config --user-agent --header --data --data-raw --data-binary --data-urlencode --request --user --write-out --max-time --connect-timeout --retry --form --upload-file --url --cookie --range --referer --proxy",
		"--output --output-dir --cookie-jar --dump-header --trace --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc"
	};
	struct args a;
	struct tok here = { .kind = T_WORD, .s = (char *)"." };

	if (has_opt(w, n, "-K --config --config=", NULL)) {
		sh_deny(st, "curl -K/--config: a config file can name outputs; not analysed");
		return;
	}
	parse_args(st, w, n, &o, "curl", &a, false);
	if (!st->v->deny && (a.flag['O'] || a.flag['J'] || has_opt(w, n, "--remote-name --remote-name-all", NULL)) &&
	    !has_word(w, n, "--output-dir --output-dir="))
		sh_target(st, "curl -O (into the current directory)", &here, SHELL_WRITE);
}

static void prog_wget(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = {
		"oaOPeiBtTwQUlARDIXF", "oaOP",
		"--output-file --append-output --output-document --directory-prefix --input-file --base --tries --timeout --wait --quota --user-agent --level --accept --reject --domains --header --post-data --post-file --user --password --save-cookies --load-cookies --execute --config",
		"--output-file --append-output --output-document --directory-prefix --save-cookies"
	};
	struct args a;
	struct tok here = { .kind = T_WORD, .s = (char *)"." };

	if (has_opt(w, n, "-e --execute --execute= --config --config=", NULL)) {
		sh_deny(st, "wget -e/--config: wgetrc commands can name outputs; not analysed");
		return;
	}
	parse_args(st, w, n, &o, "wget", &a, false);
	if (!st->v->deny && !a.flag['O'] && !a.flag['P'] &&
	    !has_word(w, n, "--output-document --output-document= --directory-prefix --directory-prefix= --spider"))
		sh_target(st, "wget (into the current directory)", &here, SHELL_WRITE);
}

static void prog_openssl(struct sh *st, struct tok **w, size_t n)
{
	for (size_t i = 1; i + 1 < n; i++)
		if (!strcmp(lit(w[i]), "-out") || !strcmp(lit(w[i]), "-keyout") || !strcmp(lit(w[i]), "-certout"))
			sh_target(st, "openssl -out", w[i + 1], SHELL_WRITE);
}

static void prog_make(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec o = {
		"CfIjlOoWE", "C",
		"--directory --file --makefile --include-dir --jobs --load-average --old-file --what-if --assume-new --new-file --eval",
		"--directory"
	};
	struct args a;

	for (size_t i = 1; i + 1 < n; i++)
		if ((!strcmp(lit(w[i]), "-f") || !strcmp(lit(w[i]), "--file") || !strcmp(lit(w[i]), "--makefile")) &&
		    (!strcmp(w[i + 1]->s, "-") || !strncmp(w[i + 1]->s, "/dev/", 5) || w[i + 1]->dyn)) {
			sh_deny(st, "make -f -: a makefile read from input is not analysed");
			return;
		}
	if (has_opt(w, n, "--eval --eval= -E", NULL)) {
		sh_deny(st, "make --eval: runs make code the guard does not analyse");
		return;
	}
	parse_args(st, w, n, &o, "make -C", &a, false);
}

/* cmake -E TOOL: the portable file tools, mapped to their Unix equivalents. */
static void prog_cmake(struct sh *st, struct tok **w, size_t n)
{
	static const char *const map[][2] = { { "rm", "rm" },
					      { "remove", "rm" },
					      { "remove_directory", "rm" },
					      { "touch", "touch" },
					      { "touch_nocreate", "touch" },
					      { "copy", "cp" },
					      { "copy_directory", "cp" },
					      { "copy_if_different", "cp" },
					      { "rename", "mv" },
					      { "make_directory", "mkdir" },
					      { "create_symlink", "ln" },
					      { "create_hardlink", "ln" },
					      { "tar", "tar" },
					      { "env", "env" },
					      { "chdir", "cd" },
					      { "true", "true" },
					      { "false", "false" } };
	static const struct optspec o = { "BSGCDUTAj", "B", "--build --install --install-prefix", "--build" };
	struct args a;

	for (size_t i = 1; i + 1 < n; i++) {
		if (strcmp(lit(w[i]), "-E"))
			continue;
		for (size_t m = 0; m < sizeof(map) / sizeof(map[0]); m++)
			if (!strcmp(lit(w[i + 1]), map[m][0])) {
				struct tok t = *w[i + 1], **nw = calloc(n, sizeof(struct tok *));

				if (!nw) {
					sh_deny(st, "out of memory");
					return;
				}
				t.s = (char *)map[m][1];
				t.nsub = 0;
				nw[0] = &t;
				for (size_t k = i + 2; k < n; k++)
					nw[k - i - 1] = w[k];
				if (!strcmp(map[m][1], "ln")) /* create_symlink OLD NEW */
					sh_target(st, "cmake -E create_symlink", w[n - 1], SHELL_WRITE);
				else if (!strcmp(map[m][1], "cd"))
					sh_deny(st, "cmake -E chdir: runs a command the guard does not analyse");
				else
					sh_command(st, nw, n - i - 1);
				free(nw);
				return;
			}
		return; /* other -E tools (echo, compare_files, ...) do not write */
	}
	parse_args(st, w, n, &o, "cmake", &a, false);
}

/* ---- wrappers ----------------------------------------------------------------------------- */

struct wrapper {
	const char *name;
	struct optspec o;
	int skip;              /* operands before the command (timeout's duration) */
	const char *chdir_opt; /* short option that changes directory for the command */
};

static const struct wrapper wrappers[] = {
	{ "timeout", { "sk", "", "--signal --kill-after", NULL }, 1, NULL },
	{ "nice", { "n", "", "--adjustment", NULL }, 0, NULL },
	{ "nohup", { "", "", NULL, NULL }, 0, NULL },
	{ "setsid", { "", "", NULL, NULL }, 0, NULL },
	{ "stdbuf", { "ioe", "", "--input --output --error", NULL }, 0, NULL },
	{ "ionice", { "cnpPu", "", "--class --classdata --pid --pgid --uid", NULL }, 0, NULL },
	{ "chrt", { "T", "", "--sched-runtime --sched-period --sched-deadline", NULL }, 1, NULL },
	{ "taskset", { "", "", NULL, NULL }, 1, NULL },
	{ "time", { "fo", "o", "--format --output", "--output" }, 0, NULL },
	{ "builtin", { "", "", NULL, NULL }, 0, NULL },
	{ "exec", { "a", "", NULL, NULL }, 0, NULL },
	{ "sudo",
	  { "ugCDhpRrtTU", "",
	    "--user --group --close-from --chdir --host --prompt --chroot --role --type --command-timeout --other-user",
	    NULL },
	  0,
	  "D" },
	{ "doas", { "uC", "", NULL, NULL }, 0, NULL },
	{ "pkexec", { "", "", "--user", NULL }, 0, NULL },
	{ "strace", { "oeEpsuPSaIXb", "o", "--output --trace --signal --attach --user", "--output" }, 0, NULL },
	{ "ltrace", { "oeEpsuaAnIlLxF", "o", "--output", "--output" }, 0, NULL },
	{ "valgrind", { "", "", "--log-file --xml-file --tool", "--log-file --xml-file" }, 0, NULL },
	{ "unshare", { "SGRw", "", "--setuid --setgid --root --wd --map-user --map-group", NULL }, 0, "w" },
	{ "nsenter", { "tSGrw", "", "--target --setuid --setgid --root --wd", NULL }, 0, NULL },
	{ "caffeinate", { "t", "", NULL, NULL }, 0, NULL },
	{ "unbuffer", { "", "", NULL, NULL }, 0, NULL },
	{ "catchsegv", { "", "", NULL, NULL }, 0, NULL },
	{ "fakeroot", { "l", "", "--lib --faked", NULL }, 0, NULL },
	{ "firejail", { "", "", NULL, NULL }, 0, NULL },
	{ "proot", { "rbwqk", "", NULL, NULL }, 0, NULL },
	{ "coproc", { "", "", NULL, NULL }, 0, NULL },
	{ "busybox", { "", "", NULL, NULL }, 0, NULL },
	{ "command", { "", "", NULL, NULL }, 0, NULL },
	{ "env",
	  { "uCSa", "", "--unset --chdir --split-string --argv0 --block-signal --default-signal --ignore-signal",
	    NULL },
	  0,
	  "C" },
	{ "runuser", { "ugGlsw", "", "--user --group --supp-group --shell --whitelist-environment", NULL }, 0, NULL },
	{ "chronic", { "", "", NULL, NULL }, 0, NULL },
	{ "ts", { "", "", NULL, NULL }, 0, NULL },
	{ "dotenv", { "fe", "", NULL, NULL }, 0, NULL },
	{ "perf", { "", "", NULL, NULL }, 1, NULL },
};

static const struct wrapper *wrapper_get(const char *name)
{
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (!strcmp(wrappers[i].name, name))
			return &wrappers[i];
	return NULL;
}

/* Run the command at w[i..n) after a wrapper, in directory `dir` when the wrapper changes it. */
static void inner(struct sh *st, struct tok **w, size_t n, size_t i, const struct tok *dir)
{
	char saved[PATH_MAX], d[PATH_MAX];
	bool known = st->cwd_known;

	if (i >= n)
		return;
	memcpy(saved, st->cwd, sizeof(saved));
	if (dir)
		sh_cd(st, sh_word(st, dir, d, sizeof(d)) && d[0] != '~' ? d : NULL);
	st->wrapped = true;
	sh_command(st, w + i, n - i);
	memcpy(st->cwd, saved, sizeof(saved));
	st->cwd_known = known;
}

/* A shell that reads its commands from stdin: a heredoc or here-string is analysed, a pipe or a
 * file is refused (the guard cannot see what it holds). */
static void shell_on_stdin(struct sh *st, const char *name)
{
	if (st->stdin_text)
		sh_script(st, name, st->stdin_text);
	else if (st->stdin_unknown || st->stdin_file)
		sh_deny(st, "%s: reads the commands to run from its input; run them directly", name);
}

/* nsenter -r/-w (--root/--wd, a value only when attached) and -W (--wdns) move the command to the
 * target's root or directory, which the guard cannot know. Options end at the first operand. */
static bool nsenter_moves(struct tok **w, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (!strcmp(s, "--"))
			return false;
		if (!strncmp(s, "--root", 6) || !strncmp(s, "--wd", 4))
			return true;
		if (s[0] != '-')
			return false; /* the command */
		if (in_words(s, "--target --setuid --setgid"))
			i++;
		for (const char *c = s + 1; s[1] != '-' && *c; c++) {
			if (strchr("rwW", *c))
				return true;
			if (strchr("tSG", *c)) {
				i += !c[1];
				break;
			}
		}
	}
	return false;
}

/* perf SUBCOMMAND [options] [command]: -o/--output, and perf data convert's --to-json and
 * --to-ctf, name the file or directory written; the profiled command follows "--" or is found as
 * an unknown wrapper's is, by the first word that names a program the guard knows. A word computed
 * at run time might be that command: refused, as a computed command name is. */
static void run_perf(struct sh *st, struct tok **w, size_t n)
{
	static const char *const outs[] = { "-o", "--output", "--to-json", "--to-ctf", NULL };
	char v[PATH_MAX];

	for (size_t i = 2; i < n; i++) {
		const char *s = lit(w[i]);
		size_t l = strcspn(s, "=");
		bool done = false;

		for (const char *const *o = outs; *o && !done; o++) {
			const char *what = o - outs < 2 ? "perf -o" : "perf data convert";

			if (!strcmp(s, *o) && i + 1 < n)
				sh_target(st, what, w[++i], SHELL_WRITE);
			else if (s[l] == '=' && l == strlen(*o) && !strncmp(s, *o, l) && o != outs)
				opt_target(st, what, w[i], s + l + 1);
			else
				continue;
			done = true;
		}
		if (done)
			continue;
		if (!strncmp(s, "-o", 2) && s[2]) {
			opt_target(st, "perf -o", w[i], s + 2);
		} else if (!strcmp(s, "--") || (s[0] != '-' && !sh_word(st, w[i], v, sizeof(v)))) {
			st->wrapped = true;
			sh_command(st, w + i + !strcmp(s, "--"), n - i - !strcmp(s, "--"));
			return;
		} else if (s[0] != '-' && tables_is_known_actor(sh_base(v))) {
			st->wrapped = true;
			sh_command(st, w + i, n - i);
			return;
		}
	}
}

/* Whether `name` (a long option, "--x") is a prefix getopt_long would accept for one of the
 * space-separated `longs` without being one of them exactly. */
static bool long_abbrev(const char *name, const char *longs)
{
	size_t l = strlen(name);

	if (!longs || l < 3 || in_words(name, longs))
		return false;
	for (const char *x = longs; *x;) {
		size_t wl = strcspn(x, " ");

		if (l < wl && !strncmp(name, x, l))
			return true;
		x += wl;
		x += *x == ' ';
	}
	return false;
}

/* The directory a wrapper's options move its command to (env -C, unshare -w, sudo -D) in every
 * spelling getopt accepts: a separate or attached value, a letter cluster (env -iC DIR,
 * unshare -rw/x), --opt=DIR, --opt DIR and a prefix of the long name. Options end at the first
 * operand. *dir is left NULL when the directory does not change; false after a deny (an option
 * computed at run time, or a long option abbreviated, whose value the guard would misplace). */
static bool wrapper_dir(struct sh *st, const struct wrapper *wr, const char *name, struct tok **w, size_t n,
			struct tok *dtok, char *dval, size_t dn, const struct tok **dir)
{
	const char *dirlong = !strcmp(name, "unshare") ? "--wd" : "--chdir";
	char v[PATH_MAX];

	for (size_t i = 1; i < n; i++) {
		const char *s = v, *at = NULL;

		if (!sh_word(st, w[i], v, sizeof(v))) {
			if (sh_is_assignment(w[i]->s) || w[i]->s[0] != '-') /* env NAME=$V, or the command */
				return true;
			sh_deny(st, "%s: an option is computed at run time; write it literally", name);
			return false;
		}
		if (!strcmp(s, "--") || s[0] != '-' || !s[1])
			return true;
		if (s[1] == '-') {
			const char *eq = strchr(s, '=');
			size_t l = eq ? (size_t)(eq - s) : strlen(s);
			char nm[128];

			snprintf(nm, sizeof(nm), "%.*s", (int)(l < 127 ? l : 127), s);
			if (l >= 3 && !strncmp(nm, dirlong, l))
				at = eq ? eq + 1 : "";
			else if (long_abbrev(nm, wr->o.longarg)) {
				sh_deny(st, "%s %s: write the option in full", name, nm);
				return false;
			} else if (!eq && in_words(nm, wr->o.longarg))
				i++;
		} else {
			for (const char *c = s + 1; *c; c++) {
				if (*c == wr->chdir_opt[0]) {
					at = c + 1;
					break;
				}
				if (wr->o.shortarg && strchr(wr->o.shortarg, *c)) {
					i += !c[1];
					break;
				}
			}
		}
		if (at && *at) {
			snprintf(dval, dn, "%s", at);
			*dtok = (struct tok){ .kind = T_WORD, .s = dval };
			*dir = dtok;
		} else if (at) {
			*dir = i + 1 < n ? w[++i] : NULL;
		}
	}
	return true;
}

/* unshare -r/-m (--map-root-user, --mount, --mount-proc, --map-user, ...), in any cluster: a user
 * namespace with root and a mount namespace let the command bind any directory beneath the
 * workspace, so a later write lands anywhere. -R/--root change the root. Options end at the first
 * operand. */
static bool unshare_mounts(struct tok **w, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (!strcmp(s, "--") || s[0] != '-' || !s[1])
			return false;
		if (s[1] == '-') {
			if (!strncmp(s, "--m", 3) || !strncmp(s, "--r", 3))
				return true;
			if (!strchr(s, '=') && in_words(s, "--setuid --setgid --wd --propagation --setgroups"))
				i++;
			continue;
		}
		for (const char *c = s + 1; *c; c++) {
			if (strchr("rmR", *c))
				return true;
			if (strchr("SGw", *c)) {
				i += !c[1];
				break;
			}
		}
	}
	return false;
}

static void run_wrapper(struct sh *st, const struct wrapper *wr, struct tok **w, size_t n, const char *name)
{
	struct args a;
	struct tok dtok;
	const struct tok *dir = NULL;
	char dval[PATH_MAX];
	size_t i;

	if (!strcmp(name, "command") || !strcmp(name, "builtin")) {
		for (i = 1; i < n && lit(w[i])[0] == '-'; i++)
			if (strchr(lit(w[i]), 'v') || strchr(lit(w[i]), 'V'))
				return; /* command -v: a lookup, runs nothing */
		/* runs in this shell: `command cd DIR` moves it, so the directory is not restored */
		st->wrapped = i < n;
		if (i < n)
			sh_command(st, w + i, n - i);
		return;
	}
	if (!strcmp(name, "env")) {
		for (i = 1; i < n; i++) {
			const char *s = lit(w[i]);

			if ((!strcmp(s, "-S") || !strcmp(s, "--split-string")) && i + 1 < n) {
				struct buf b;
				char v[8192];

				buf_init(&b, 0);
				if (!sh_word(st, w[i + 1], v, sizeof(v))) {
					sh_deny(st, "env -S: the command is computed at run time");
					return;
				}
				buf_printf(&b, "%s", v);
				for (size_t k = i + 2; k < n; k++) {
					if (!sh_word(st, w[k], v, sizeof(v))) {
						sh_deny(st, "env -S: an argument is computed at run time");
						buf_free(&b);
						return;
					}
					if (buf_putc(&b, ' ') < 0 || shell_join((const char *const[]){ v }, 1, &b) < 0)
						break;
				}
				if (buf_putc(&b, '\0') < 0 || b.err || !b.data)
					sh_deny(st, "env -S: out of memory");
				else
					sh_script(st, "env -S", b.data);
				buf_free(&b);
				return;
			}
			if (!strncmp(s, "--split-string=", 15)) {
				sh_script(st, "env -S", s + 15);
				return;
			}
			if (!strncmp(s, "-S", 2) && s[2]) {
				sh_deny(st, "env -S: write the command as separate words");
				return;
			}
		}
	}
	if (wr->chdir_opt && !wrapper_dir(st, wr, name, w, n, &dtok, dval, sizeof(dval), &dir))
		return;
	for (i = 1; i + 1 < n; i++) {
		const char *s = lit(w[i]);

		/* unshare -r maps root (no directory); nsenter's -r and -w take their value attached or not
		 * at all (the target's root and directory), checked by nsenter_moves() */
		if (!strncmp(s, "--chdir=", 8) || !strcmp(s, "-R") || !strncmp(s, "--chroot", 8) ||
		    !strncmp(s, "--root", 6) || (!strcmp(s, "-r") && strcmp(name, "unshare"))) {
			if (!strcmp(name, "sudo") || !strcmp(name, "unshare") || !strcmp(name, "nsenter") ||
			    !strcmp(name, "proot")) {
				sh_deny(st, "%s: changes the root or directory in a way the guard does not follow",
					name);
				return;
			}
		}
	}
	if (!strcmp(name, "unshare") && unshare_mounts(w, n)) {
		sh_deny(st, "unshare -r/-m: a user or mount namespace lets the command mount any directory beneath "
			    "the workspace, so its writes land anywhere; not allowed");
		return;
	}
	if (!strcmp(name, "nsenter") && nsenter_moves(w, n)) {
		sh_deny(st, "nsenter: changes the root or directory in a way the guard does not follow");
		return;
	}
	if (!strcmp(name, "perf")) {
		run_perf(st, w, n);
		return;
	}
	parse_args(st, w, n, &wr->o, name, &a, true);
	if (st->v->deny)
		return;
	i = a.first_op;
	/* env's NAME=VALUE words and the wrapper's own operands (timeout's duration) */
	while (i < n && !strcmp(name, "env") && sh_is_assignment(w[i]->s)) {
		struct tok **one = &w[i];

		sh_command(st, one, 1); /* checks GIT_DIR=... and friends without persisting */
		i++;
	}
	for (int k = 0; k < wr->skip && i < n; k++)
		i++;
	if (!strcmp(name, "sudo") && a.flag['e']) {
		for (size_t k = i; k < n; k++)
			sh_target(st, "sudo -e", w[k], SHELL_WRITE);
		return;
	}
	/* sudo -s/-i, doas -s and pkexec with no command run a shell that reads its commands from stdin */
	if (i >= n && ((!strcmp(name, "sudo") && (a.flag['s'] || a.flag['i'])) ||
		       (!strcmp(name, "doas") && a.flag['s']) || !strcmp(name, "pkexec"))) {
		shell_on_stdin(st, name);
		return;
	}
	inner(st, w, n, i, dir);
}

static const char *const shells[] = { "sh",   "bash", "dash", "zsh",   "ksh",   "mksh", "ash",
				      "yash", "posh", "fish", "rbash", "ksh93", NULL };

/* su/runuser -s SHELL: the -c text and the arguments go to SHELL, which must be a shell the guard
 * analyses (su -s /usr/bin/install -c x root /outside runs install). False after a deny. */
static bool su_shell_known(struct sh *st, struct tok **w, size_t n, const char *name)
{
	char v[PATH_MAX], sv[PATH_MAX];

	for (size_t i = 1; i < n; i++) {
		const char *s = v, *val = NULL;
		bool next = false;

		if (!sh_word(st, w[i], v, sizeof(v))) {
			if (w[i]->s[0] != '-')
				continue;
			sh_deny(st, "%s: an option is computed at run time; write it literally", name);
			return false;
		}
		if (!strcmp(s, "--"))
			break;
		if (s[0] == '-' && s[1] == '-') {
			size_t l = strcspn(s, "=");

			if (l >= 4 && !strncmp(s, "--shell", l)) {
				val = s[l] ? s + l + 1 : NULL;
				next = !s[l];
			} else if (!s[l] && in_words(s, "--command --session-command --group --supp-group --user "
							"--whitelist-environment")) {
				i++;
			}
		} else if (s[0] == '-') {
			const char *c = s + 1 + strcspn(s + 1, "cgGsuw");

			if (*c == 's') {
				val = c[1] ? c + 1 : NULL;
				next = !c[1];
			} else if (*c && !c[1]) {
				i++;
			}
		}
		if (next && i + 1 < n) {
			if (!sh_word(st, w[++i], sv, sizeof(sv))) {
				sh_deny(st, "%s -s: the shell is computed at run time", name);
				return false;
			}
			val = sv;
		}
		if (val && !in_list(sh_base(val), shells)) {
			sh_deny(st, "%s -s %s: not a shell the guard knows; it would run the command unanalysed", name,
				val);
			return false;
		}
	}
	return true;
}

static void run_su(struct sh *st, struct tok **w, size_t n, const char *name)
{
	static const struct optspec o = {
		"cgGsuw", "", "--command --session-command --shell --group --supp-group --user --whitelist-environment",
		NULL
	};
	struct args a;
	char v[SHELL_MAX_SCRIPT_BYTES > 8192 ? 8192 : SHELL_MAX_SCRIPT_BYTES];

	if (!su_shell_known(st, w, n, name))
		return;
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]), *c = s[0] ? s + 1 : s;

		if (long_abbrev(s, "--command --session-command")) {
			sh_deny(st, "%s %s: write the option in full", name, s);
			return;
		}
		if (!strncmp(s, "--command=", 10) || !strncmp(s, "--session-command=", 18)) {
			sh_script(st, name, strchr(s, '=') + 1);
			return;
		}
		/* -c SCRIPT, -cSCRIPT and clusters such as -lc or -mc; -s, -g, -G, -u, -w take a value */
		if (s[0] == '-' && s[1] != '-')
			c += strcspn(c, "cgGsuw");
		if ((s[0] == '-' && s[1] != '-' && *c == 'c') || !strcmp(s, "--command") ||
		    !strcmp(s, "--session-command")) {
			if (s[1] != '-' && c[1])
				sh_script(st, name, c + 1);
			else if (i + 1 >= n || !sh_word(st, w[i + 1], v, sizeof(v)))
				sh_deny(st, "%s -c: the script is computed at run time", name);
			else
				sh_script(st, name, v);
			return;
		}
	}
	parse_args(st, w, n, &o, name, &a, false);
	for (size_t i = 1; i + 1 < n; i++)
		if (!strcmp(lit(w[i]), "--")) { /* runuser -u USER -- CMD */
			inner(st, w, n, i + 1, NULL);
			return;
		}
	shell_on_stdin(st, name);
}

/* xargs: the command runs with words the guard cannot see appended. */
static void run_xargs(struct sh *st, struct tok **w, size_t n)
{
	static const struct optspec xo = {
		"aEILnPsd", "",
		"--arg-file --eof --replace --max-lines --max-args --max-procs --max-chars --delimiter --process-slot-var",
		NULL
	};
	struct args a;
	struct tok unknown = { .kind = T_WORD, .s = (char *)"", .dyn = true };
	struct tok **nw;
	const char *repl = NULL;
	size_t k = 0;

	for (size_t i = 1; i + 1 < n; i++)
		if (!strcmp(lit(w[i]), "-I") || !strcmp(lit(w[i]), "--replace"))
			repl = lit(w[i + 1]);
	for (size_t i = 1; i < n; i++) {
		if (!strncmp(lit(w[i]), "-I", 2) && lit(w[i])[2])
			repl = lit(w[i]) + 2;
		else if (!strcmp(lit(w[i]), "-i") || !strncmp(lit(w[i]), "--replace=", 10))
			repl = lit(w[i])[1] == 'i' ? "{}" : lit(w[i]) + 10;
	}
	parse_args(st, w, n, &xo, "xargs", &a, true);
	if (st->v->deny || a.first_op >= n)
		return; /* xargs alone runs echo */
	nw = calloc(n - a.first_op + 2, sizeof(struct tok *));
	if (!nw) {
		sh_deny(st, "out of memory");
		return;
	}
	for (size_t i = a.first_op; i < n; i++)
		nw[k++] = repl && *repl && strstr(lit(w[i]), repl) ? &unknown : w[i];
	if (!repl)
		nw[k++] = &unknown;
	st->wrapped = true;
	sh_command(st, nw, k);
	free(nw);
}

/* watch [options] COMMAND...: the words are joined and run by `sh -c`, or with -x/--exec run as
 * they are (argv). Options end at the first operand; -n and -q take a value (attached or not), -d
 * only an attached one; a long option may be any unambiguous prefix (getopt_long). */
static void run_watch(struct sh *st, struct tok **w, size_t n)
{
	struct buf b;
	char v[4096];
	bool exec = false;
	size_t i = 1;

	for (; i < n && lit(w[i])[0] == '-' && lit(w[i])[1]; i++) {
		const char *s = lit(w[i]);
		size_t l = strlen(s);

		if (!strcmp(s, "--")) {
			i++;
			break;
		}
		if (s[1] == '-') {
			exec |= l >= 4 && !strncmp(s, "--exec", l);
			if (!strchr(s, '=') && l >= 3 && (!strncmp(s, "--interval", l) || !strncmp(s, "--equexit", l)))
				i++;
			continue;
		}
		for (const char *c = s + 1; *c; c++) {
			exec |= *c == 'x';
			if (*c == 'n' || *c == 'q') {
				i += !c[1];
				break;
			}
			if (*c == 'd')
				break;
		}
	}
	if (i >= n)
		return;
	if (exec) {
		st->wrapped = true;
		sh_command(st, w + i, n - i);
		return;
	}
	buf_init(&b, 0);
	for (; i < n; i++) {
		if (!sh_word(st, w[i], v, sizeof(v))) {
			sh_deny(st, "watch: the command is computed at run time");
			break;
		}
		buf_printf(&b, "%s ", v);
	}
	if (!st->v->deny && b.data)
		sh_script(st, "watch", b.data);
	buf_free(&b);
}

#define FIND_MAX_BRACE_WORDS 16

/* One -exec/-execdir command for one start. find puts the matched path in place of each {} in a
 * word; a match is the start or a path beneath it. A bare {} is the start (or, when the name tests
 * cannot match the guard's files, a file beneath it); {}SUFFIX with no '/' in SUFFIX is checked as
 * both STARTSUFFIX and START/fSUFFIX, which bound every match; any other word holding {} is unknown.
 * -execdir runs in the matched file's directory, which is unknown: only the {} words, made absolute
 * from here, are known paths there. */
static void find_exec(struct sh *st, const struct tok *start, struct tok **cmd, size_t nc, bool indir, bool whole)
{
	/* an unset variable no assignment can name, so a reason says where the unknown came from */
	struct tok unknown = { .kind = T_WORD, .s = (char *)"\1{}: a path find matches\2" };
	struct tok **nw = calloc(nc, sizeof(struct tok *)), *toks = calloc(nc, sizeof(struct tok));
	char *vals = calloc(FIND_MAX_BRACE_WORDS, PATH_MAX), sv[PATH_MAX], abs[PATH_MAX], v[PATH_MAX], saved[PATH_MAX];
	bool suffixed = false, known = st->cwd_known;
	size_t used;

	if (!nw || !toks || !vals) {
		sh_deny(st, "out of memory");
		goto out;
	}
	if (!sh_word(st, start, sv, sizeof(sv))) {
		sh_deny(st, "find: the start directory is computed at run time");
		goto out;
	}
	/* a relative start in an unknown directory stays relative, so its paths stay unknown */
	if ((sv[0] == '/' || !st->cwd_known ? snprintf(abs, sizeof(abs), "%s", sv) :
					      snprintf(abs, sizeof(abs), "%s/%s", st->cwd, sv)) >= (int)sizeof(abs)) {
		sh_deny(st, "find: the start path is too long");
		goto out;
	}
	for (int pass = 0; pass < 2 && !st->v->deny && (pass == 0 || suffixed); pass++) {
		used = 0;
		for (size_t k = 0; k < nc; k++) {
			const char *br = sh_word(st, cmd[k], v, sizeof(v)) ? strstr(v, "{}") : NULL;
			char *out = vals + used * PATH_MAX;

			nw[k] = cmd[k];
			if (!br && (!cmd[k]->dyn || !strstr(cmd[k]->s, "{}")))
				continue;
			nw[k] = &unknown;
			if (!br || k == 0 || br != v || strchr(br + 2, '/') || strstr(br + 2, "{}") ||
			    used == FIND_MAX_BRACE_WORDS)
				continue; /* the command name, a prefix, a '/' after it, or two: unknown */
			used++;
			if (!br[2])
				snprintf(out, PATH_MAX, whole ? "%s" : "%s/f", abs);
			else
				snprintf(out, PATH_MAX, pass ? "%s/f%s" : "%s%s", abs, br + 2);
			suffixed |= br[2] != '\0';
			toks[k] = (struct tok){ .kind = T_WORD, .s = out, .quoted = true };
			nw[k] = &toks[k];
		}
		memcpy(saved, st->cwd, sizeof(saved));
		if (indir)
			sh_cd(st, NULL);
		st->wrapped = true;
		sh_command(st, nw, nc);
		memcpy(st->cwd, saved, sizeof(saved));
		st->cwd_known = known;
	}
out:
	free(nw);
	free(toks);
	free(vals);
}

/* find: -delete and -exec act on what the expression matches under each start. */
static void run_find(struct sh *st, struct tok **w, size_t n)
{
	static const char *const guard_names[] = { ".proctor-guard.json",
						   ".proctor-guard.manifest.json",
						   "settings.local.json",
						   "settings.json",
						   "hooks.json",
						   "config.toml",
						   ".claude",
						   ".codex",
						   ".agents",
						   "skills",
						   NULL };
	const struct tok *starts[64];
	size_t ns = 0, i;
	bool may_match_guard = true, named = false;
	struct tok here = { .kind = T_WORD, .s = (char *)"." };

	for (i = 1; i < n && ns < 64; i++) {
		const char *s = lit(w[i]);

		if ((s[0] == '-' && s[1]) || !strcmp(s, "(") || !strcmp(s, "!") || (!s[0] && !w[i]->dyn))
			break;
		if (!strcmp(s, "-H") || !strcmp(s, "-L") || !strcmp(s, "-P"))
			continue;
		starts[ns++] = w[i];
	}
	if (ns == 0)
		starts[ns++] = &here;
	/* Only name tests that cannot match the guard's files narrow the walk enough to not count
	 * as an operation on the whole start directory. */
	for (size_t k = i; k + 1 < n; k++) {
		const char *s = lit(w[k]);

		if (!strcmp(s, "!") || !strcmp(s, "-not") || !strcmp(s, "-o") || !strcmp(s, "-or") ||
		    !strcmp(s, "-regex") || !strcmp(s, "-path") || !strcmp(s, "-ipath") || !strcmp(s, "-wholename") ||
		    !strcmp(s, "-iregex")) {
			named = false;
			break;
		}
		if (!strcmp(s, "-name") || !strcmp(s, "-iname")) {
			const char *pat = lit(w[k + 1]);
			bool hit = false;

			for (const char *const *g = guard_names; *g; g++)
				hit |= fnmatch(pat, *g, !strcmp(s, "-iname") ? FNM_CASEFOLD : 0) == 0;
			if (hit || w[k + 1]->dyn) {
				named = false;
				break;
			}
			named = true;
		}
	}
	may_match_guard = !named;
	for (; i < n && !st->v->deny; i++) {
		const char *s = lit(w[i]);

		if (!strcmp(s, "-delete")) {
			for (size_t k = 0; k < ns; k++)
				sh_target(st, "find -delete", starts[k], may_match_guard ? SHELL_REMOVE : SHELL_WRITE);
		} else if ((!strcmp(s, "-fprint") || !strcmp(s, "-fprint0") || !strcmp(s, "-fls") ||
			    !strcmp(s, "-fprintf")) &&
			   i + 1 < n) {
			sh_target(st, s, w[++i], SHELL_WRITE);
		} else if (!strcmp(s, "-exec") || !strcmp(s, "-execdir") || !strcmp(s, "-ok") || !strcmp(s, "-okdir")) {
			size_t j;

			for (j = i + 1; j < n && strcmp(lit(w[j]), ";") && strcmp(lit(w[j]), "+"); j++)
				;
			for (size_t k = 0; k < ns && j > i + 1 && !st->v->deny; k++)
				find_exec(st, starts[k], w + i + 1, j - i - 1,
					  !strcmp(s, "-execdir") || !strcmp(s, "-okdir"), may_match_guard);
			i = j;
		}
	}
}

/* ---- shells, eval, source ------------------------------------------------------------------ */

static void run_shell(struct sh *st, struct tok **w, size_t n, const char *name)
{
	bool cflag = false, sflag = false;
	size_t i;
	char v[SHELL_MAX_SCRIPT_BYTES > 8192 ? 8192 : SHELL_MAX_SCRIPT_BYTES];
	char *big;

	for (i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (!strcmp(s, "--") || !strcmp(s, "-")) {
			i++;
			break;
		}
		if (!strcmp(s, "--rcfile") || !strcmp(s, "--init-file")) {
			if (i + 1 < n && sh_word(st, w[i + 1], v, sizeof(v)))
				sh_script_file(st, name, v);
			i++;
			continue;
		}
		if (s[0] == '-' && s[1] == '-')
			continue;
		if ((s[0] == '-' || s[0] == '+') && s[1]) {
			cflag |= strchr(s, 'c') != NULL;
			sflag |= strchr(s, 's') != NULL;
			if (strchr(s, 'o') || strchr(s, 'O'))
				i++; /* -o pipefail */
			continue;
		}
		break;
	}
	if (cflag) {
		if (i >= n) {
			sh_deny(st, "%s -c without a script", name);
			return;
		}
		big = malloc(SHELL_MAX_COMMAND_BYTES + 1);
		if (!big || !sh_word(st, w[i], big, SHELL_MAX_COMMAND_BYTES + 1))
			sh_deny(st, "%s -c: the script is computed at run time; write it literally", name);
		else
			sh_script(st, name, big);
		free(big);
		return;
	}
	if (i < n && !sflag) {
		if (!sh_word(st, w[i], v, sizeof(v)))
			sh_deny(st, "%s: the script path is computed at run time", name);
		else
			sh_script_file(st, name, v);
		return;
	}
	if (st->stdin_text) {
		sh_script(st, name, st->stdin_text);
	} else if (st->stdin_file) {
		if (!sh_word(st, st->stdin_file, v, sizeof(v)))
			sh_deny(st, "%s: reads its script from a file named at run time", name);
		else
			sh_script_file(st, name, v);
	} else if (st->stdin_unknown) {
		sh_deny(st, "%s: reads the commands to run from a pipe; run them directly", name);
	}
}

/* A program run by path (./build.sh): a shell script is analysed like `sh FILE`. */
static bool run_path(struct sh *st, const char *path)
{
	char full[PATH_MAX * 2], line[256];
	FILE *f;
	bool shell = false;

	if (path[0] != '/' && !st->cwd_known) {
		sh_deny(st, "%s: relative path after a cd to an unknown directory", path);
		return true;
	}
	snprintf(full, sizeof(full), "%s%s%s", path[0] == '/' ? "" : st->cwd, path[0] == '/' ? "" : "/", path);
	f = fopen(full, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "#!", 2)) {
			char *interp = line + 2, *arg;

			while (*interp == ' ')
				interp++;
			interp[strcspn(interp, " \t\r\n")] = '\0';
			arg = interp + strlen(interp) + 1;
			if (!strcmp(sh_base(interp), "env")) {
				while (*arg == ' ' || *arg == '-' || *arg == 'S')
					arg++;
				arg[strcspn(arg, " \t\r\n")] = '\0';
				interp = arg;
			}
			shell = in_list(sh_base(interp), shells);
		} else {
			/* no #! and not ELF: sh runs it (one with NUL bytes is then refused as not a text script) */
			shell = (unsigned char)line[0] != 0x7f;
		}
	}
	(void)fclose(f);
	if (shell)
		sh_script_file(st, path, path);
	return shell;
}

/* ---- git ----------------------------------------------------------------------------------- */

/* Configuration keys a command line may set with -c: the rest can run programs or reach remotes
 * (alias.*, core.sshCommand, core.pager, remote.*, url.*, credential.*, include.*, ...). */
static bool git_config_safe(const char *kv)
{
	static const char *const safe[] = { "user.",
					    "color.",
					    "advice.",
					    "core.quotepath",
					    "core.autocrlf",
					    "core.safecrlf",
					    "init.defaultbranch",
					    "commit.gpgsign",
					    "tag.gpgsign",
					    "log.",
					    "format.pretty",
					    "diff.noprefix",
					    "diff.renames",
					    "merge.conflictstyle",
					    "pull.rebase",
					    "safe.directory",
					    "column.",
					    "status.",
					    "i18n.",
					    "gc.auto",
					    "core.abbrev",
					    "grep.",
					    "blame.",
					    "pager.",
					    "rebase.autosquash",
					    "rerere.enabled",
					    NULL };
	char key[256];
	size_t kl = strcspn(kv, "=");

	snprintf(key, sizeof(key), "%.*s", (int)(kl < 255 ? kl : 255), kv);
	for (char *p = key; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	for (const char *const *s = safe; *s; s++)
		if (!strncmp(key, *s, strlen(*s))) {
			if (!strncmp(key, "pager.", 6)) { /* pager.X=false/true only: otherwise a command */
				const char *v = kv[kl] == '=' ? kv + kl + 1 : "";

				return !strcmp(v, "false") || !strcmp(v, "true") || !strcmp(v, "0") || !strcmp(v, "1");
			}
			return true;
		}
	return false;
}

static void git_config(struct sh *st, struct tok **w, size_t n, size_t k)
{
	bool read_only = false, scope_out = false;
	size_t nkeys = 0;
	const char *key = NULL;

	for (size_t j = k + 1; j < n; j++) {
		const char *s = lit(w[j]);

		if (!strcmp(s, "--get") || !strcmp(s, "--get-all") || !strcmp(s, "--get-regexp") || !strcmp(s, "-l") ||
		    !strcmp(s, "--list") || !strcmp(s, "--get-urlmatch") || !strcmp(s, "get") || !strcmp(s, "list") ||
		    !strcmp(s, "--show-origin") || !strcmp(s, "--name-only"))
			read_only = true;
		else if (!strcmp(s, "--global") || !strcmp(s, "--system"))
			scope_out = true;
		else if ((!strcmp(s, "--file") || !strcmp(s, "-f")) && j + 1 < n)
			sh_target(st, "git config --file", w[++j], SHELL_WRITE);
		else if (!strncmp(s, "--file=", 7))
			opt_target(st, "git config --file", w[j], w[j]->s + 7);
		else if (s[0] != '-' && strcmp(s, "set") && strcmp(s, "unset") && nkeys++ == 0)
			key = w[j]->dyn ? "" : s;
	}
	if (read_only || nkeys == 0 || st->v->deny)
		return;
	if (nkeys == 1 && !scope_out)
		return; /* git config KEY: a read */
	if (scope_out)
		sh_deny(st, "git config --global/--system: writes configuration outside the workspace");
	else if (!key || !git_config_safe(key))
		sh_deny(st, "git config %s: this key can run programs or reach remotes; not allowed",
			key && key[0] ? key : "(computed)");
}

static void run_git(struct sh *st, struct tok **w, size_t n)
{
	static const char *const net[] = { "clone",
					   "fetch",
					   "pull",
					   "push",
					   "ls-remote",
					   "fetch-pack",
					   "send-pack",
					   "upload-pack",
					   "receive-pack",
					   "http-fetch",
					   "http-push",
					   "svn",
					   "p4",
					   "daemon",
					   "request-pull",
					   "credential",
					   "credential-store",
					   "credential-cache",
					   "imap-send",
					   "send-email",
					   "remote-http",
					   "remote-https",
					   "remote-ftp",
					   "archimport",
					   "cvsimport",
					   "quiltimport",
					   "instaweb",
					   "upload-archive",
					   NULL };
	char verb[256], dir[PATH_MAX];
	size_t k = 1;
	const struct tok *cdir = NULL;

	for (; k < n && lit(w[k])[0] == '-'; k++) {
		const char *s = lit(w[k]);

		if ((!strcmp(s, "-C") || !strcmp(s, "--git-dir") || !strcmp(s, "--work-tree") ||
		     !strcmp(s, "--namespace")) &&
		    k + 1 < n) {
			if (!strcmp(s, "-C"))
				cdir = w[k + 1];
			if (strcmp(s, "--namespace"))
				sh_target(st, "git routing", w[k + 1], SHELL_WRITE);
			k++;
		} else if (!strncmp(s, "--git-dir=", 10) || !strncmp(s, "--work-tree=", 12)) {
			opt_target(st, "git routing", w[k], strchr(w[k]->s, '=') + 1);
		} else if (!strcmp(s, "-c") && k + 1 < n) {
			k++;
			if (w[k]->dyn || !git_config_safe(lit(w[k])))
				sh_deny(st, "git -c %s: this setting can run programs or reach remotes; not allowed",
					w[k]->dyn ? "(computed)" : w[k]->s);
		} else if (!strncmp(s, "--exec-path", 11) || !strncmp(s, "--config-env", 12) ||
			   !strncmp(s, "--super-prefix", 14)) {
			sh_deny(st, "git %s: changes what git runs; not allowed", s);
		} else if (!strncmp(s, "--namespace=", 12) || !strcmp(s, "--list-cmds")) {
			continue;
		}
	}
	if (st->v->deny || k >= n)
		return;
	if (!sh_word(st, w[k], verb, sizeof(verb))) {
		sh_deny(st, "git: the subcommand is computed at run time; write it literally");
		return;
	}
	if (cdir && sh_word(st, cdir, dir, sizeof(dir))) {
		char saved[PATH_MAX];
		bool known = st->cwd_known;

		memcpy(saved, st->cwd, sizeof(saved));
		sh_cd(st, dir);
		/* the rest is relative to -C DIR: run the analysis there */
		{
			struct tok **nw = calloc(n, sizeof(struct tok *));
			struct tok g = *w[0];
			size_t m = 0;

			if (!nw) {
				sh_deny(st, "out of memory");
				return;
			}
			g.nsub = 0;
			nw[m++] = &g;
			for (size_t j = k; j < n; j++)
				nw[m++] = w[j];
			run_git(st, nw, m);
			free(nw);
		}
		memcpy(st->cwd, saved, sizeof(saved));
		st->cwd_known = known;
		return;
	}
	if (in_list(verb, net)) {
		sh_deny(st, "git %s: network operations are not allowed", verb);
		return;
	}
	if (!strcmp(verb, "remote")) {
		const char *sub = k + 1 < n ? lit(w[k + 1]) : "";

		if (!strcmp(sub, "add") || !strcmp(sub, "set-url") || !strcmp(sub, "update") || !strcmp(sub, "prune") ||
		    !strcmp(sub, "show") || !strcmp(sub, "set-head") || !strcmp(sub, "rename") ||
		    !strcmp(sub, "set-branches"))
			sh_deny(st, "git remote %s: remotes are not allowed", sub);
		return;
	}
	if (!strcmp(verb, "submodule")) {
		size_t j = k + 1;

		while (j < n && lit(w[j])[0] == '-')
			j++;
		if (j < n && strcmp(lit(w[j]), "status") && strcmp(lit(w[j]), "summary") && strcmp(lit(w[j]), "init") &&
		    strcmp(lit(w[j]), "deinit") && strcmp(lit(w[j]), "absorbgitdirs"))
			sh_deny(st, "git submodule %s: network or arbitrary commands; not allowed", lit(w[j]));
		return;
	}
	if (!strcmp(verb, "lfs")) {
		const char *sub = k + 1 < n ? lit(w[k + 1]) : "";

		if (strcmp(sub, "ls-files") && strcmp(sub, "status") && strcmp(sub, "env") && strcmp(sub, "version") &&
		    sub[0])
			sh_deny(st, "git lfs %s: network operations are not allowed", sub);
		return;
	}
	if (!strcmp(verb, "config")) {
		git_config(st, w, n, k);
		return;
	}
	if (!strcmp(verb, "clean")) {
		for (size_t j = k + 1; j < n; j++)
			if (!strcmp(lit(w[j]), "-n") || !strcmp(lit(w[j]), "--dry-run"))
				return;
		sh_deny(st, "git clean: deletes untracked files, which include the guard's own; delete files by name");
		return;
	}
	if (!strcmp(verb, "stash")) {
		for (size_t j = k + 1; j < n; j++) {
			const char *s = lit(w[j]);

			if (!strcmp(s, "-u") || !strcmp(s, "--include-untracked") || !strcmp(s, "-a") ||
			    !strcmp(s, "--all") || (s[0] == '-' && s[1] != '-' && (strchr(s, 'u') || strchr(s, 'a'))))
				sh_deny(st,
					"git stash -u/-a: stashes (removes) untracked files, which include the guard's own");
		}
		return;
	}
	if (!strcmp(verb, "init")) {
		struct tok here = { .kind = T_WORD, .s = (char *)"." };
		size_t ops = 0;

		for (size_t j = k + 1; j < n; j++) {
			const char *s = lit(w[j]);

			if ((!strcmp(s, "--separate-git-dir") || !strcmp(s, "--template")) && j + 1 < n)
				sh_target(st, "git init", w[++j], SHELL_WRITE);
			else if (!strncmp(s, "--separate-git-dir=", 19) || !strncmp(s, "--template=", 11))
				opt_target(st, "git init", w[j], strchr(w[j]->s, '=') + 1);
			else if (s[0] != '-' || w[j]->dyn)
				sh_target(st, "git init", w[j], SHELL_WRITE), ops++;
		}
		if (!ops)
			sh_target(st, "git init", &here, SHELL_WRITE);
		return;
	}
	if (!strcmp(verb, "worktree") && k + 1 < n && !strcmp(lit(w[k + 1]), "add")) {
		for (size_t j = k + 2; j < n; j++) {
			const char *s = lit(w[j]);

			if ((!strcmp(s, "-b") || !strcmp(s, "-B") || !strcmp(s, "--reason")) && j + 1 < n)
				j++;
			else if (s[0] != '-' || w[j]->dyn) {
				sh_target(st, "git worktree add", w[j], SHELL_WRITE);
				break;
			}
		}
		return;
	}
	if (!strcmp(verb, "mv")) {
		for (size_t j = k + 1; j < n; j++)
			if (lit(w[j])[0] != '-' || w[j]->dyn)
				sh_target(st, "git mv", w[j], SHELL_REMOVE);
		return;
	}
	if (!strcmp(verb, "archive")) {
		for (size_t j = k + 1; j < n; j++) {
			const char *s = lit(w[j]);

			if (!strncmp(s, "--remote", 8) || !strncmp(s, "--exec", 6))
				sh_deny(st, "git archive --remote: network operations are not allowed");
			else if ((!strcmp(s, "-o") || !strcmp(s, "--output")) && j + 1 < n)
				sh_target(st, "git archive -o", w[++j], SHELL_WRITE);
			else if (!strncmp(s, "--output=", 9))
				opt_target(st, "git archive -o", w[j], w[j]->s + 9);
			else if (!strncmp(s, "-o", 2) && s[2])
				opt_target(st, "git archive -o", w[j], w[j]->s + 2);
		}
		return;
	}
	if (!strcmp(verb, "bundle") && k + 2 < n && !strcmp(lit(w[k + 1]), "create")) {
		sh_target(st, "git bundle create", w[k + 2], SHELL_WRITE);
		return;
	}
	for (size_t j = k + 1; j < n; j++) { /* format-patch -o, diff/log --output (git takes abbreviations) */
		const char *s = lit(w[j]), *eq = strchr(s, '=');
		char name[128];
		bool out;

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, "="), s);
		out = long_is(name, "--output --output-directory");
		if (!strcmp(s, "--"))
			break;
		if (((!strcmp(s, "-o") && !strcmp(verb, "format-patch")) || (out && !eq)) && j + 1 < n)
			sh_target(st, "git output", w[++j], SHELL_WRITE);
		else if (out && eq)
			opt_target(st, "git output", w[j], strchr(w[j]->s, '=') + 1);
		else if (long_is(name, "--prefix") && (!strcmp(verb, "checkout-index") || !strcmp(verb, "read-tree")))
			sh_deny(st, "git %s --prefix: writes outside the work tree; not allowed", verb);
	}
	if (!strcmp(verb, "hook") || !strcmp(verb, "filter-branch"))
		sh_deny(st, "git %s: runs commands the guard does not analyse", verb);
}

/* ---- package managers ---------------------------------------------------------------------- */

enum { PM_ANY = 1, PM_BARE = 2 };

struct pm {
	const char *name;
	const char *verbs; /* space-separated: "install", or "pip+install" for a verb and its sub-verb */
	unsigned flags;
};

static const struct pm pms[] = {
	{ "npm",
	  "install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install install-clean ic install-test it install-ci-test cit update up upgrade udpate link ln exec x publish unpublish create innit audit+fix",
	  0 },
	{ "pnpm", "install i add update up upgrade dlx link ln publish import fetch install-test it create", 0 },
	{ "yarn", "install add upgrade up dlx global link publish import create upgrade-interactive", PM_BARE },
	{ "bun", "install i add a update upgrade x create link publish", 0 },
	{ "npx", NULL, PM_ANY },
	{ "pnpx", NULL, PM_ANY },
	{ "bunx", NULL, PM_ANY },
	{ "uvx", NULL, PM_ANY },
	{ "pip", "install download uninstall wheel", 0 },
	{ "uv",
	  "add sync lock remove pip+install pip+sync pip+uninstall pip+compile tool+install tool+run tool+upgrade python+install self",
	  0 },
	{ "pipx", "install inject run runpip upgrade upgrade-all reinstall reinstall-all uninstall install-all", 0 },
	{ "poetry", "add install update lock remove sync self", 0 },
	{ "pdm", "add install update sync lock remove", 0 },
	{ "conda", "install create update upgrade remove uninstall env+create env+update", 0 },
	{ "mamba", "install create update upgrade remove uninstall env+create env+update", 0 },
	{ "micromamba", "install create update remove env+create env+update", 0 },
	{ "cargo", "install add update fetch binstall", 0 },
	{ "go", "install get mod+download", 0 },
	{ "gem", "install update uninstall", 0 },
	{ "bundle", "install update add", 0 },
	{ "bundler", "install update add", 0 },
	{ "apt", "install remove purge upgrade dist-upgrade full-upgrade update build-dep source autoremove reinstall",
	  0 },
	{ "apt-get", "install remove purge upgrade dist-upgrade update build-dep source autoremove reinstall", 0 },
	{ "aptitude", "install remove purge upgrade full-upgrade safe-upgrade update reinstall", 0 },
	{ "dnf", "install remove update upgrade erase reinstall downgrade in rm up", 0 },
	{ "yum", "install remove update upgrade erase reinstall downgrade", 0 },
	{ "zypper", "install in remove rm update up dist-upgrade dup", 0 },
	{ "apk", "add del upgrade update fix", 0 },
	{ "pacman", NULL, PM_ANY },
	{ "brew", "install reinstall upgrade tap uninstall update link", 0 },
	{ "snap", "install remove refresh", 0 },
	{ "flatpak", "install update uninstall", 0 },
	{ "port", "install upgrade uninstall", 0 },
	{ "composer", "install require update remove create-project global", 0 },
	{ "dotnet", "add tool+install tool+update workload+install restore", 0 },
	{ "nuget", "install restore update", 0 },
	{ "deno", "install add upgrade", 0 },
	{ "corepack", "enable install prepare use up", 0 },
	{ "nix-env", NULL, PM_ANY },
	{ "luarocks", "install remove build make", 0 },
	{ "cpan", NULL, PM_ANY },
	{ "cpanm", NULL, PM_ANY },
	{ "opam", "install upgrade update remove pin", 0 },
	{ "cabal", "install update v2-install", 0 },
	{ "stack", "install upgrade setup", 0 },
	{ "rustup", "install update toolchain+install target+add component+add self", 0 },
	{ "sdk", "install upgrade", 0 },
	{ "asdf", "install plugin+add plugin-add", 0 },
	{ "mise", "install use upgrade", 0 },
	{ "gh", NULL, PM_ANY },
	{ "hub", NULL, PM_ANY },
	{ "glab", NULL, PM_ANY },
	{ "tea", NULL, PM_ANY },
	{ "easy_install", NULL, PM_ANY },
	{ "pipenv", "install sync update lock uninstall", 0 },
	{ "pixi", "add install update global", 0 },
	{ "rye", "add sync install", 0 },
};

static bool is_pip(const char *name)
{
	size_t l = strlen(name);

	return !strncmp(name, "pip", 3) && strspn(name + 3, "0123456789.") == l - 3;
}

static const struct pm *pm_get(const char *name)
{
	if (is_pip(name))
		name = "pip";
	for (size_t i = 0; i < sizeof(pms) / sizeof(pms[0]); i++)
		if (!strcmp(pms[i].name, name))
			return &pms[i];
	return NULL;
}

static void run_pm(struct sh *st, const struct pm *pm, struct tok **w, size_t n, const char *name)
{
	static const char *const valopts[] = {
		"--prefix", "-C",         "--dir",        "--cwd",       "--workspace",
		"-w",       "--registry", "--cache",      "--cache-dir", "--userconfig",
		"--python", "--log",      "--directory",  "--project",   "--manifest-path",
		"--config", "--root",     "--target-dir", "-p",          "--index-url",
		"--filter", "-F",         "--color",      "--loglevel",  "--package",
		"-P",       NULL
	};
	const char *ops[2] = { NULL, NULL };
	size_t nops = 0;

	if (pm->flags & PM_ANY) {
		if (n == 1 || (n == 2 && in_words(lit(w[1]), "--version -v version help --help")))
			return;
		sh_deny(st, "%s: %s", name,
			!strcmp(name, "gh") ? "talks to GitHub; network operations are not allowed" :
					      "installs or runs packages; not allowed");
		return;
	}
	for (size_t i = 1; i < n && nops < 2; i++) {
		const char *s = lit(w[i]);

		if (w[i]->dyn || strchr(w[i]->s, W_VAR_OPEN)) {
			if (nops == 0) {
				sh_deny(st, "%s: the subcommand is computed at run time; write it literally", name);
				return;
			}
			break;
		}
		if (!strcmp(s, "--"))
			break;
		if (s[0] == '-') {
			if (!strchr(s, '=') && in_list(s, valopts))
				i++;
			if ((!strcmp(s, "-g") || !strcmp(s, "--global") || !strncmp(s, "--global=", 9) ||
			     !strcmp(s, "--location=global")) &&
			    (!strcmp(name, "npm") || !strcmp(name, "pnpm") || !strcmp(name, "yarn") ||
			     !strcmp(name, "bun")) &&
			    n > 2) {
				for (size_t j = 1; j < n; j++)
					if (in_words(lit(w[j]), pm->verbs)) {
						sh_deny(st, "%s -g: installing packages is not allowed", name);
						return;
					}
			}
			continue;
		}
		ops[nops++] = s;
	}
	if (nops == 0) {
		if (pm->flags & PM_BARE)
			sh_deny(st, "%s: installing packages is not allowed", name);
		return;
	}
	for (const char *v = pm->verbs; v && *v;) {
		size_t l = strcspn(v, " ");
		const char *plus = memchr(v, '+', l);

		if (!plus && strlen(ops[0]) == l && !strncmp(ops[0], v, l)) {
			sh_deny(st, "%s %s: installing packages is not allowed", name, ops[0]);
			return;
		}
		if (plus && strlen(ops[0]) == (size_t)(plus - v) && !strncmp(ops[0], v, (size_t)(plus - v)) && ops[1] &&
		    strlen(ops[1]) == (size_t)(v + l - plus - 1) &&
		    !strncmp(ops[1], plus + 1, (size_t)(v + l - plus - 1))) {
			sh_deny(st, "%s %s %s: installing packages is not allowed", name, ops[0], ops[1]);
			return;
		}
		v += l;
		v += *v == ' ';
	}
	if ((!strcmp(name, "npm") || !strcmp(name, "pnpm") || !strcmp(name, "yarn") || !strcmp(name, "bun")) &&
	    (!strcmp(ops[0], "init") || !strcmp(ops[0], "create")) && ops[1]) {
		sh_deny(st, "%s %s %s: runs a package from the registry; not allowed", name, ops[0], ops[1]);
		return;
	}
	if ((!strcmp(name, "go") && (!strcmp(ops[0], "run") || !strcmp(ops[0], "build"))) ||
	    (!strcmp(name, "deno") && !strcmp(ops[0], "run")))
		for (size_t i = 2; i < n; i++)
			if (strchr(lit(w[i]), '@') || !strncmp(lit(w[i]), "http:", 5) ||
			    !strncmp(lit(w[i]), "https:", 6)) {
				sh_deny(st, "%s %s %s: fetches code from the network; not allowed", name, ops[0],
					lit(w[i]));
				return;
			}
	if (!strcmp(name, "uv") && !strcmp(ops[0], "run"))
		for (size_t i = 1; i < n; i++)
			if (!strncmp(lit(w[i]), "--with", 6)) {
				sh_deny(st, "uv run --with: installing packages is not allowed");
				return;
			}
}

static void run_dpkg_rpm(struct sh *st, struct tok **w, size_t n, const char *name)
{
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (!strcmp(s, "--install") || !strcmp(s, "--remove") || !strcmp(s, "--purge") ||
		    !strcmp(s, "--unpack") || !strcmp(s, "--configure") || !strcmp(s, "--upgrade") ||
		    !strcmp(s, "--erase") || !strcmp(s, "--freshen") ||
		    (s[0] == '-' && s[1] != '-' && strpbrk(s + 1, !strcmp(name, "dpkg") ? "irP" : "iUeF"))) {
			sh_deny(st, "%s %s: installing packages is not allowed", name, s);
			return;
		}
	}
}

/* ---- interpreters -------------------------------------------------------------------------- */

/* Inline code is screened, not understood: code that names a way to write files, run programs
 * or reach the network is refused (write it to a script file in the workspace instead, where
 * Landlock governs what it writes). Script files are run as they are.
 * Not formatted: clang-format puts a list of words this uneven one per line (300 lines). */
/* clang-format off */
static const char *const screen_python[] = { "subprocess", "os.system", "os.popen", "os.exec", "os.spawn", "pty.",
					     "socket", "urllib", "http.client", "requests", "httpx", "aiohttp", "ftplib",
					     "smtplib", "shutil", "os.remove", "os.unlink", "os.rename", "os.replace",
					     "os.rmdir", "os.removedirs", "os.mkdir", "os.makedirs", "os.symlink", "os.link",
					     "os.chmod", "os.chown", "os.truncate", "os.open", "os.write", "os.mkfifo",
					     "write_text", "write_bytes", ".touch(", ".unlink(", ".rmdir(", ".mkdir(",
					     ".rename(", ".replace(", "symlink_to", "hardlink_to", ".chmod(", "__import__",
					     "importlib", "exec(", "eval(", "compile(", "ctypes", "getattr(", "globals(",
					     "setattr(", "__builtins__", "builtins", "tempfile", "zipfile", "tarfile",
					     "sqlite3", "pip", "ensurepip", "os.environ[", "putenv", "multiprocessing",
					     "asyncio.create_subprocess", "webbrowser", "git ", "system(", "popen(",
					     "rmtree", "from os import", "from subprocess", "from shutil", "import os as",
					     "import subprocess as", "import shutil as", NULL };
static const char *const screen_node[] = { "writeFile", "appendFile", "createWriteStream", "fs.write", "writeSync",
					   ".rm(", "rmSync", "rmdir", "unlink", "rename", "mkdir", "symlink", "link(",
					   "chmod", "chown", "truncate", "copyFile", "cp(", "cpSync", "child_process",
					   "spawn", "exec", "fork(", "http", "net", "dgram", "tls", "fetch(", "WebSocket",
					   "eval(", "Function(", "import(", "process.binding", "vm.", "worker_threads",
					   "fs.open", "openSync", "Deno.", "Bun.", "require(\"fs/promises\")", "mkdtemp",
					   "utimes", "process.dlopen", "require('fs')[", "require(\"fs\")[", NULL };
static const char *const screen_perl[] = { "system", "exec", "`", "qx", "unlink", "rename", "mkdir", "rmdir", "symlink",
					   "link", "chmod", "chown", "truncate", "utime", "Socket", "LWP", "HTTP::", "Net::",
					   "eval", "require", "do ", "File::", "fork", "pipe", "sysopen", "IO::", ">", NULL };
static const char *const screen_ruby[] = { "File.", "IO.", "system", "`", "%x", "spawn", "exec", "Net::", "open-uri",
					   "FileUtils", "Dir.", "eval", "Kernel", "send(", "instance_eval", "fork", "open(",
					   "Socket", "require", "Pathname", NULL };
static const char *const screen_other[] = { "system", "exec", "shell", "file", "File", "write", "Write", "open", "Open",
					    "socket", "Socket", "http", "HTTP", "unlink", "rename", "mkdir", "remove", "eval",
					    "`", "install", "download", "Invoke-", "Set-Content", "Out-File", "Remove-", ">",
					    "Pkg.", "run(", "cp(", "mv(", "rm(", NULL };
/* clang-format on */

/* Python's open(..., 'w'): a mode literal with w, x, a or + in it, or mode= given. */
static bool py_open_writes(const char *code)
{
	for (const char *p = strstr(code, "open("); p; p = strstr(p + 5, "open(")) {
		int depth = 0;

		for (const char *q = p + 4; *q && q - p < 600; q++) {
			if (*q == '(')
				depth++;
			else if (*q == ')' && --depth == 0)
				break;
			if (!strncmp(q, "mode", 4))
				return true;
			if ((*q == '\'' || *q == '"') && q[1]) {
				size_t l = strspn(q + 1, "rwxabtU+");

				if (l && l <= 4 && q[1 + l] == *q && strpbrk(q + 1, "wxa+") &&
				    strpbrk(q + 1, "wxa+") < q + 1 + l)
					return true;
			}
		}
	}
	return false;
}

static void screen(struct sh *st, const char *lang, const char *code, const char *const *list)
{
	for (const char *const *k = list; *k; k++)
		if (strstr(code, *k)) {
			sh_deny(st,
				"%s inline code uses '%s' (files, processes or network); put the code in a script file "
				"in the workspace",
				lang, *k);
			return;
		}
	if (list == screen_python && py_open_writes(code))
		sh_deny(st,
			"%s inline code opens a file for writing; write files with the Write tool or a script in the "
			"workspace",
			lang);
	if (list == screen_python && strstr(code, "install.packages"))
		sh_deny(st, "%s: installing packages is not allowed", lang);
}

static bool is_python(const char *name)
{
	return (!strncmp(name, "python", 6) && strspn(name + 6, "0123456789.") == strlen(name + 6)) ||
	       (!strncmp(name, "pypy", 4) && strspn(name + 4, "0123456789.") == strlen(name + 4));
}

static void run_python(struct sh *st, struct tok **w, size_t n, const char *name)
{
	char code[SHELL_MAX_SCRIPT_BYTES > 16384 ? 16384 : SHELL_MAX_SCRIPT_BYTES];

	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (w[i]->dyn || s[0] != '-' || !strcmp(s, "-")) {
			if ((!strcmp(s, "-") || w[i]->dyn) && st->stdin_text)
				screen(st, name, st->stdin_text, screen_python);
			return; /* a script file: run as it is (Landlock governs its writes) */
		}
		if (!strcmp(s, "-W") || !strcmp(s, "-X") || !strcmp(s, "--check-hash-based-pycs")) {
			i++;
			continue;
		}
		if (s[1] != '-' && (strchr(s, 'c') || strchr(s, 'm'))) {
			const char *c = strpbrk(s + 1, "cm");
			const char *val = c[1] ? c + 1 : "";
			bool next_word = !c[1] && i + 1 < n; /* the value is the next word, not attached */

			if (next_word && !sh_word(st, w[i + 1], code, sizeof(code))) {
				sh_deny(st, "%s -%c: the code is computed at run time", name, *c);
				return;
			}
			if (!next_word)
				snprintf(code, sizeof(code), "%s", val);
			if (*c == 'c') {
				screen(st, name, code, screen_python);
				return;
			}
			/* -m MODULE: the package managers, venv, or a module run as it is */
			if (is_pip(code) || !strcmp(code, "uv") || !strcmp(code, "pipx") || !strcmp(code, "poetry") ||
			    !strcmp(code, "conda") || !strcmp(code, "pdm")) {
				struct tok **nw = calloc(n, sizeof(struct tok *));
				struct tok m = { .kind = T_WORD, .s = code };
				size_t k = 0;

				if (!nw) {
					sh_deny(st, "out of memory");
					return;
				}
				nw[k++] = &m;
				for (size_t j = i + (next_word ? 2 : 1); j < n; j++)
					nw[k++] = w[j];
				sh_command(st, nw, k);
				free(nw);
			} else if (!strcmp(code, "ensurepip")) {
				sh_deny(st, "%s -m ensurepip: installing packages is not allowed", name);
			} else if (!strcmp(code, "venv") || !strcmp(code, "virtualenv")) {
				for (size_t j = i + (next_word ? 2 : 1); j < n; j++)
					if (lit(w[j])[0] != '-' || w[j]->dyn)
						sh_target(st, "python -m venv", w[j], SHELL_WRITE);
			}
			return;
		}
	}
	if (st->stdin_text)
		screen(st, name, st->stdin_text, screen_python);
	else if (st->stdin_unknown || st->stdin_file)
		sh_deny(st, "%s: reads its program from input; put the code in a script file in the workspace", name);
}

/* perl/ruby: -e code is screened; -i edits the operands in place. */
static void run_perl_ruby(struct sh *st, struct tok **w, size_t n, const char *name)
{
	bool perl = !strcmp(name, "perl"), inplace = false, code_given = false;
	const char *const *list = perl ? screen_perl : screen_ruby;
	char code[16384];
	size_t i;

	for (i = 1; i < n; i++) { /* modules too: -MLWP::Simple, -rnet/http */
		const char *s = lit(w[i]);

		if (!strncmp(s, "-M", 2) || !strncmp(s, "-m", 2) || !strncmp(s, "-r", 2)) {
			screen(st, name, s + 2, list);
			if (!s[2] && i + 1 < n)
				screen(st, name, lit(w[i + 1]), list);
		}
	}
	if (st->v->deny)
		return;
	for (i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (w[i]->dyn || s[0] != '-' || !s[1])
			break;
		if (!strcmp(s, "--")) {
			i++;
			break;
		}
		for (const char *c = s + 1; *c; c++) {
			if (*c == 'i') {
				inplace = true;
				break; /* the rest is the backup suffix */
			}
			if (*c == 'e' || *c == 'E') {
				code_given = true;
				if (c[1])
					snprintf(code, sizeof(code), "%s", c + 1);
				else if (i + 1 < n && sh_word(st, w[++i], code, sizeof(code)))
					;
				else {
					sh_deny(st, "%s -e: the code is computed at run time", name);
					return;
				}
				screen(st, name, code, list);
				break;
			}
			if (strchr("IMmCrx0lFd", *c)) { /* options whose value follows */
				if (!c[1] && strchr("IMmCr", *c))
					i++;
				break;
			}
		}
	}
	if (st->v->deny)
		return;
	if (!code_given && i < n)
		i++; /* the first operand is the script file */
	if (!code_given && i >= n && st->stdin_text)
		screen(st, name, st->stdin_text, list);
	if (inplace)
		for (; i < n; i++)
			sh_target(st, perl ? "perl -i" : "ruby -i", w[i], SHELL_WRITE);
}

static void run_inline(struct sh *st, struct tok **w, size_t n, const char *name, const char *flags,
		       const char *const *list)
{
	char code[16384];

	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (s[0] != '-' || w[i]->dyn)
			return;
		if ((s[1] && strchr(flags, s[1]) && !s[2]) || !strcmp(s, "--eval") || !strcmp(s, "--print") ||
		    !strcmp(s, "-Command") || !strcmp(s, "-command")) {
			if (i + 1 >= n || !sh_word(st, w[i + 1], code, sizeof(code))) {
				sh_deny(st, "%s %s: the code is computed at run time", name, s);
				return;
			}
			screen(st, name, code, list);
			return;
		}
	}
	if (st->stdin_text && n == 1)
		screen(st, name, st->stdin_text, list);
}

/* ---- dispatch ------------------------------------------------------------------------------ */

/* Programs that neither write a named path nor run another command. */
static const char *const plain[] = {
	"echo",      "printf",    "cat",       "ls",       "ll",           "la",         "grep",       "egrep",
	"fgrep",     "rg",        "ag",        "ack",      "head",         "tail",       "wc",         "diff",
	"colordiff", "cmp",       "comm",      "cut",      "tr",           "paste",      "join",       "fold",
	"fmt",       "nl",        "od",        "hexdump",  "file",         "stat",       "du",         "df",
	"which",     "whereis",   "type",      "true",     "false",        "test",       "[",          "[[",
	"((",        ":",         "expr",      "seq",      "date",         "sleep",      "basename",   "dirname",
	"realpath",  "readlink",  "pwd",       "id",       "whoami",       "uname",      "hostname",   "printenv",
	"jq",        "less",      "more",      "man",      "tree",         "column",     "sha1sum",    "sha224sum",
	"sha256sum", "sha384sum", "sha512sum", "md5sum",   "cksum",        "b2sum",      "base32",     "zcat",
	"bzcat",     "xzcat",     "zless",     "ps",       "kill",         "pgrep",      "pkill",      "top",
	"free",      "uptime",    "set",       "shopt",    "hash",         "times",      "wait",       "return",
	"exit",      "break",     "continue",  "shift",    "ulimit",       "umask",      "history",    "help",
	"let",       "tput",      "clear",     "stty",     "locale",       "getconf",    "nproc",      "lscpu",
	"lsblk",     "rev",       "shuf",      "numfmt",   "factor",       "yes",        "look",       "strings",
	"nm",        "objdump",   "readelf",   "ldd",      "size",         "jobs",       "fg",         "bg",
	"disown",    "cal",       "bc",        "dc",       "ping",         "dig",        "nslookup",   "host",
	"lsof",      "netstat",   "ss",        "ip",       "pytest",       "tox",        "nox",        "mypy",
	"pylint",    "flake8",    "pyright",   "tsc",      "jest",         "vitest",     "mocha",      "java",
	"mvn",       "gradle",    "ruff",      "eslint",   "cargo-clippy", "ctest",      "lsattr",     "getfacl",
	"sha",       "fd",        "fdfind",    "fzf",      "bat",          "delta",      "tig",        "exa",
	"eza",       "dirs",      "popd",      "complete", "compgen",      "enable",     "caller",     "logname",
	"groups",    "users",     "who",       "w",        "last",         "tty",        "nohup_",     "envsubst",
	"gettext",   "ngettext",  "iconv_",    "locate",   "mdfind",       "cmake_",     "pkg-config", "ldconfig_",
	"time_",     "uptime",    "sensors",   "lsmod",    "dmesg",        "journalctl", "systemctl",  "service",
	"hexyl",     "xargs_",    "unzip_",    "zipinfo",  "tar_",         "gzip_",      "rustup_",    "node_",
	"true_",     NULL
};

static bool in_plain(const char *name)
{
	return in_list(name, plain);
}

static const char *const compressors[] = { "gzip",   "gunzip", "bzip2",  "bunzip2",  "xz",         "unxz",
					   "zstd",   "unzstd", "lz4",    "compress", "uncompress", "lzma",
					   "unlzma", "pigz",   "pbzip2", NULL };
static const char *const pythonish_other[] = { "php",       "lua",   "luajit",     "Rscript", "R",    "julia",
					       "osascript", "pwsh",  "powershell", "tclsh",   "wish", "groovy",
					       "jshell",    "scala", "kotlin",     NULL };
static const char *const builtins_vars[] = { "export", "declare", "typeset", "local", "readonly", NULL };

static void set_vars(struct sh *st, struct tok **w, size_t n, bool unknown)
{
	for (size_t i = 1; i < n; i++) {
		const char *s = lit(w[i]);

		if (s[0] == '-' || !s[0])
			continue;
		if (sh_is_assignment(w[i]->s) && !unknown)
			sh_command(st, &w[i], 1); /* an assignment on its own persists */
		else
			sh_setvar(st, w[i]->s, NULL);
	}
}

bool tables_is_known_actor(const char *name)
{
	return writer_get(name) || wrapper_get(name) || in_list(name, shells) || pm_get(name) || is_python(name) ||
	       in_list(name, compressors) || in_list(name, pythonish_other) ||
	       in_words(
		       name,
		       "git find xargs parallel env_parallel sem parset mount watch eval source . proctor apply_patch applypatch su sed perl ruby node nodejs tar unzip 7z 7za install ln dd rsync curl wget patch awk gawk mawk nawk make gmake cmake openssl dpkg rpm chroot trap alias crontab at batch systemd-run script flock hg svn cd pushd");
}

static void run_cd(struct sh *st, struct tok **w, size_t n, const char *name)
{
	char dir[PATH_MAX];
	size_t i = 1;

	if (!strcmp(name, "popd")) {
		sh_cd(st, NULL);
		return;
	}
	while (i < n && lit(w[i])[0] == '-' && lit(w[i])[1])
		i++;
	if (i >= n || !sh_word(st, w[i], dir, sizeof(dir)) || !strcmp(dir, "-") || dir[0] == '~' || !dir[0] ||
	    (st->cdpath && dir[0] != '/' && strncmp(dir, "./", 2) && strncmp(dir, "../", 3)))
		sh_cd(st, NULL);
	else
		sh_cd(st, dir);
}

static void run_misc(struct sh *st, struct tok **w, size_t n, const char *name)
{
	char v[8192];

	if (!strcmp(name, "eval")) {
		struct buf b;

		buf_init(&b, 0);
		for (size_t k = 1; k < n; k++) {
			if (!sh_word(st, w[k], v, sizeof(v))) {
				sh_deny(st, "eval: the script is computed at run time; write it literally");
				buf_free(&b);
				return;
			}
			buf_printf(&b, "%s%s", k > 1 ? " " : "", v);
		}
		if (b.data)
			sh_script(st, "eval", b.data);
		buf_free(&b);
	} else if (!strcmp(name, "source") || !strcmp(name, ".")) {
		if (n > 1 && sh_word(st, w[1], v, sizeof(v)))
			sh_script_file(st, name, v);
		else if (n > 1)
			sh_deny(st, "%s: the file is computed at run time", name);
	} else if (!strcmp(name, "trap") || !strcmp(name, "alias")) {
		for (size_t k = 1; k < n; k++) {
			const char *s = lit(w[k]);

			if (s[0] == '-')
				continue;
			if (!sh_word(st, w[k], v, sizeof(v))) {
				sh_deny(st, "%s: the command is computed at run time", name);
				return;
			}
			sh_script(st, name, !strcmp(name, "alias") && strchr(v, '=') ? strchr(v, '=') + 1 : v);
			if (!strcmp(name, "trap"))
				return; /* the rest are signal names */
		}
	} else if (!strcmp(name, "proctor")) {
		for (size_t k = 1; k + 1 < n; k++)
			if (!strcmp(lit(w[k]), "guard") && strcmp(lit(w[k + 1]), "status") &&
			    strcmp(lit(w[k + 1]), "hook") && strcmp(lit(w[k + 1]), "--help"))
				sh_deny(st, "proctor guard %s: the agent may not change the guard", lit(w[k + 1]));
	} else if (!strcmp(name, "apply_patch") || !strcmp(name, "applypatch")) {
		const char *why = NULL;

		if (n > 1 && sh_word(st, w[1], v, sizeof(v)))
			why = st->chk->patch ? st->chk->patch(st->chk->ctx, st->cwd_known ? st->cwd : NULL, v) : NULL;
		else if (st->stdin_text)
			why = st->chk->patch ?
				      st->chk->patch(st->chk->ctx, st->cwd_known ? st->cwd : NULL, st->stdin_text) :
				      NULL;
		else
			why = "apply_patch: the patch is not given literally";
		if (why)
			sh_deny(st, "%s", why);
	} else if (in_words(name, "gdb lldb")) {
		if (has_opt(w, n,
			    "-ex --ex -x --command -batch --batch --eval-command --eval-command= -iex -o -s --source",
			    NULL))
			sh_deny(st, "%s: debugger commands are not analysed", name);
	} else if (in_words(name, "chroot crontab at batch systemd-run")) {
		sh_deny(st, "%s: runs commands the guard does not follow; not allowed", name);
	} else if (!strcmp(name, "flock")) {
		size_t i = 1;

		for (; i < n && lit(w[i])[0] == '-'; i++) {
			const char *s = lit(w[i]);

			if ((!strcmp(s, "-c") || !strcmp(s, "--command")) && i + 2 < n) {
				sh_target(st, "flock", w[i + 2], SHELL_WRITE);
				if (sh_word(st, w[i + 1], v, sizeof(v)))
					sh_script(st, "flock -c", v);
				else
					sh_deny(st, "flock -c: the command is computed at run time");
				return;
			}
			if (!strcmp(s, "-w") || !strcmp(s, "-E") || !strcmp(s, "--timeout") ||
			    !strcmp(s, "--conflict-exit-code"))
				i++;
		}
		if (i < n && strspn(lit(w[i]), "0123456789") != strlen(w[i]->s))
			sh_target(st, "flock (creates the lock file)", w[i], SHELL_WRITE);
		if (i + 1 < n && !strcmp(lit(w[i + 1]), "-c") && i + 2 < n) {
			if (sh_word(st, w[i + 2], v, sizeof(v)))
				sh_script(st, "flock -c", v);
			else
				sh_deny(st, "flock -c: the command is computed at run time");
		} else {
			inner(st, w, n, i + 1, NULL);
		}
	} else if (!strcmp(name, "script")) {
		static const struct optspec o = { "cEIOBTm", "IOBT",
						  "--command --log-in --log-out --log-io --log-timing",
						  "--log-in --log-out --log-io --log-timing" };
		struct args a;
		struct tok ts = { .kind = T_WORD, .s = (char *)"typescript" };

		for (size_t k = 1; k + 1 < n; k++) {
			const char *s = lit(w[k]);

			if ((s[0] == '-' && s[1] != '-' && s[strlen(s) - 1] == 'c') || !strcmp(s, "--command")) {
				if (sh_word(st, w[k + 1], v, sizeof(v)))
					sh_script(st, "script -c", v);
				else
					sh_deny(st, "script -c: the command is computed at run time");
			}
		}
		parse_args(st, w, n, &o, "script", &a, false);
		sh_target(st, "script", a.nops ? a.ops[0] : &ts, SHELL_WRITE);
	} else if (!strcmp(name, "hg") || !strcmp(name, "svn")) {
		static const char *const net[] = { "clone", "pull",     "push",   "fetch",  "incoming", "outgoing",
						   "serve", "checkout", "co",     "update", "up",       "commit",
						   "ci",    "import",   "export", "switch", "sw",       "copy",
						   "cp",    "move",     "mv",     "delete", "rm",       "mkdir",
						   "lock",  NULL };

		for (size_t k = 1; k < n; k++)
			if (lit(w[k])[0] != '-') {
				if (in_list(lit(w[k]), net) &&
				    (!strcmp(name, "svn") ||
				     in_words(lit(w[k]), "clone pull push fetch incoming outgoing serve")))
					sh_deny(st, "%s %s: network operations are not allowed", name, lit(w[k]));
				break;
			}
	}
}

void tables_command(struct sh *st, struct tok **w, size_t n)
{
	char full[PATH_MAX];
	const char *name;
	const struct writer *wr;
	const struct wrapper *wp;
	const struct pm *pm;

	if (!sh_word(st, w[0], full, sizeof(full))) {
		sh_deny(st, "the command name is computed at run time; write it literally");
		return;
	}
	name = sh_base(full);
	if (strchr(full, '/') && !in_list(name, shells) && run_path(st, full))
		return;
	if (in_plain(name))
		return;
	if (!strcmp(name, "cd") || !strcmp(name, "pushd") || !strcmp(name, "popd"))
		run_cd(st, w, n, name);
	else if (in_list(name, builtins_vars))
		set_vars(st, w, n, false);
	else if (!strcmp(name, "unset") || !strcmp(name, "read") || !strcmp(name, "mapfile") ||
		 !strcmp(name, "readarray") || !strcmp(name, "getopts"))
		set_vars(st, w, n, true);
	else if (in_words(name, "su runuser") && !(n > 1 && !strcmp(name, "runuser") && !strcmp(lit(w[1]), "-u")))
		run_su(st, w, n, name);
	else if ((wp = wrapper_get(name)))
		run_wrapper(st, wp, w, n, name);
	else if (!strcmp(name, "watch"))
		run_watch(st, w, n);
	else if (!strcmp(name, "mount"))
		sh_deny(st, "mount: a mount can put any directory beneath the workspace, so a later write lands "
			    "anywhere; not allowed");
	else if (in_list(name, shells))
		run_shell(st, w, n, name);
	else if (!strcmp(name, "find"))
		run_find(st, w, n);
	else if (!strcmp(name, "xargs"))
		run_xargs(st, w, n);
	else if (in_words(name, "parallel env_parallel sem parset"))
		sh_deny(st,
			"%s: GNU parallel is not analysed: ~/.parallel/config, profiles (-J) and $PARALLEL can add "
			"any option (--workdir, --rpl, ...) the guard cannot see; run the commands directly or with xargs",
			name);
	else if (!strcmp(name, "git"))
		run_git(st, w, n);
	else if (!strcmp(name, "dpkg") || !strcmp(name, "rpm"))
		run_dpkg_rpm(st, w, n, name);
	else if ((pm = pm_get(name)))
		run_pm(st, pm, w, n, name);
	else if (is_python(name))
		run_python(st, w, n, name);
	else if (!strcmp(name, "perl") || !strcmp(name, "ruby"))
		run_perl_ruby(st, w, n, name);
	else if (!strcmp(name, "node") || !strcmp(name, "nodejs"))
		run_inline(st, w, n, name, "ep", screen_node);
	else if (in_list(name, pythonish_other))
		run_inline(st, w, n, name, "erc", screen_other);
	else if (!strcmp(name, "install"))
		prog_install(st, w, n);
	else if (!strcmp(name, "ln"))
		prog_ln(st, w, n);
	else if (!strcmp(name, "dd"))
		prog_dd(st, w, n);
	else if (!strcmp(name, "rsync"))
		prog_rsync(st, w, n);
	else if (!strcmp(name, "sed") || !strcmp(name, "gsed"))
		prog_sed(st, w, n);
	else if (!strcmp(name, "tar") || !strcmp(name, "bsdtar") || !strcmp(name, "gtar"))
		prog_tar(st, w, n);
	else if (!strcmp(name, "unzip"))
		prog_unzip(st, w, n);
	else if (!strcmp(name, "7z") || !strcmp(name, "7za") || !strcmp(name, "7zr"))
		prog_7z(st, w, n);
	else if (in_list(name, compressors))
		prog_compress(st, w, n, name);
	else if (!strcmp(name, "patch"))
		prog_patch(st, w, n);
	else if (in_words(name, "awk gawk mawk nawk"))
		prog_awk(st, w, n);
	else if (!strcmp(name, "curl"))
		prog_curl(st, w, n);
	else if (!strcmp(name, "wget"))
		prog_wget(st, w, n);
	else if (!strcmp(name, "openssl"))
		prog_openssl(st, w, n);
	else if (!strcmp(name, "make") || !strcmp(name, "gmake"))
		prog_make(st, w, n);
	else if (!strcmp(name, "cmake"))
		prog_cmake(st, w, n);
	else if ((wr = writer_get(name))) {
		if (in_words(name, "vi vim nvim ex ed emacs"))
			for (size_t i = 1; i < n; i++)
				if (lit(w[i])[0] == '+' ||
				    in_words(lit(w[i]), "-c --cmd -s -S -e -es -Es --batch --eval -x -l") ||
				    (st->stdin_text && !strcmp(name, "ed"))) {
					if (!strcmp(name, "ed") && st->stdin_text && !strstr(st->stdin_text, "!") &&
					    !strstr(st->stdin_text, "w "))
						break; /* ed reading plain commands that neither write elsewhere nor run */
					sh_deny(st, "%s: editor commands are not analysed; use the Edit tool", name);
					return;
				}
		run_writer(st, wr, w, n, name);
	} else if (
		in_words(
			name,
			"eval source . trap alias proctor apply_patch applypatch chroot crontab at batch systemd-run flock script hg svn gdb lldb"))
		run_misc(st, w, n, name);
	else {
		/* An unknown program: if one of its words names a program we know, treat the rest as
		 * that program's command (an unknown wrapper). */
		for (size_t i = 1; i < n; i++) {
			char v[PATH_MAX];

			if (sh_word(st, w[i], v, sizeof(v)) && v[0] != '-' && tables_is_known_actor(sh_base(v)) &&
			    !in_words(
				    sh_base(v),
				    "cd pushd . at install script time ts patch make ln dd split sort tac uniq base64 as ar go ed ex vi")) {
				sh_command(st, w + i, n - i);
				return;
			}
		}
	}
}
