/* SPDX-License-Identifier: MIT */
/* strv.c: string vectors and shell words. */
#include "strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int strv_pushn(struct strv *s, const char *str, size_t n)
{
	char **v = realloc(s->v, (s->n + 2) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->v = v;
	s->v[s->n] = strndup(str, n);
	if (!s->v[s->n])
		return -ENOMEM;
	s->v[++s->n] = NULL;
	return 0;
}

static int strv_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(struct strv *s)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), strv_cmp);
}

int strv_push(struct strv *s, const char *str)
{
	return strv_pushn(s, str, strlen(str));
}

/* One word starting at *pp (not a blank). Appends it to `w`; returns 0 or -EINVAL. */
static int shell_word(const char **pp, struct buf *w, const char **ret_why)
{
	const char *p = *pp;

	for (; *p && *p != ' ' && *p != '\t' && *p != '\n'; p++) {
		if (*p == '\\') {
			if (!p[1]) {
				*ret_why = "backslash at the end of the line";
				return -EINVAL;
			}
			p++;
			if (buf_putc(w, *p) < 0)
				return -ENOMEM;
		} else if (*p == '\'') {
			const char *end = strchr(p + 1, '\'');

			if (!end) {
				*ret_why = "unbalanced single quote";
				return -EINVAL;
			}
			if (buf_append(w, p + 1, (size_t)(end - p - 1)) < 0)
				return -ENOMEM;
			p = end;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1]))
					p++;
				if (*p != '\n' || p[-1] != '\\')
					if (buf_putc(w, *p) < 0)
						return -ENOMEM;
			}
			if (!*p) {
				*ret_why = "unbalanced double quote";
				return -EINVAL;
			}
		} else if (buf_putc(w, *p) < 0) {
			return -ENOMEM;
		}
	}
	*pp = p;
	return 0;
}

int shell_split(const char *line, struct strv *ret, const char **ret_why)
{
	struct strv out = { 0 };
	struct buf w;
	const char *p = line;
	int r = 0;

	*ret_why = NULL;
	if (strlen(line) > SHELL_MAX_LINE_BYTES) {
		*ret_why = "line too long";
		return -EINVAL;
	}
	buf_init(&w, SHELL_MAX_LINE_BYTES);
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			break;
		buf_reset(&w);
		r = shell_word(&p, &w, ret_why);
		if (r == 0)
			r = strv_pushn(&out, w.data ? w.data : "", w.len);
		if (r < 0)
			break;
	}
	buf_free(&w);
	if (r < 0) {
		strv_free(&out);
		return r;
	}
	*ret = out;
	return 0;
}

static int word_is_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("@%+=:,./_-", *s)))
			return 0;
	return 1;
}

int shell_join(const char *const *argv, size_t argc, struct buf *out)
{
	int r = 0;

	for (size_t i = 0; i < argc && r == 0; i++) {
		if (i)
			r = buf_putc(out, ' ');
		if (r == 0 && word_is_safe(argv[i])) {
			r = buf_append(out, argv[i], strlen(argv[i]));
			continue;
		}
		r = r ? r : buf_putc(out, '\'');
		for (const char *p = argv[i]; r == 0 && *p; p++)
			r = *p == '\'' ? buf_append(out, "'\"'\"'", 5) : buf_putc(out, *p);
		r = r ? r : buf_putc(out, '\'');
	}
	return r;
}
