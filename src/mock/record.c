/* SPDX-License-Identifier: MIT */
/* record.c: the recording fixture builder. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/strv.h"

int recorder_init(struct recorder *r, const char *out_path, char *const *patterns, size_t n, size_t *ret_bad)
{
	memset(r, 0, sizeof(*r));
	if (n > RECORD_MAX_PATTERNS) {
		*ret_bad = RECORD_MAX_PATTERNS;
		return -EINVAL;
	}
	for (; r->nredact < n; r->nredact++) {
		if (regcomp(&r->redact[r->nredact], patterns[r->nredact], REG_EXTENDED) != 0) {
			*ret_bad = r->nredact;
			recorder_free(r);
			return -EINVAL;
		}
	}
	r->out_path = strdup(out_path);
	r->rules = json_array();
	r->seen = json_object();
	if (!r->out_path || !r->rules || !r->seen) {
		recorder_free(r);
		return -ENOMEM;
	}
	return 0;
}

void recorder_free(struct recorder *r)
{
	for (size_t i = 0; i < r->nredact; i++)
		regfree(&r->redact[i]);
	r->nredact = 0;
	json_decref(r->rules);
	json_decref(r->seen);
	free(r->out_path);
	r->rules = r->seen = NULL;
	r->out_path = NULL;
}

/* One pattern over `in`, appending to `out`. Empty matches advance by one byte. */
static int redact_one(const regex_t *re, const char *in, struct buf *out)
{
	const char *p = in;
	regmatch_t m;
	int flags = 0, r = 0;

	while (r == 0 && *p && regexec(re, p, 1, &m, flags) == 0) {
		r = buf_append(out, p, (size_t)m.rm_so);
		if (r == 0)
			r = buf_append(out, RECORD_PLACEHOLDER, strlen(RECORD_PLACEHOLDER));
		if (r == 0 && m.rm_eo == m.rm_so) {
			r = buf_putc(out, p[m.rm_so]);
			m.rm_eo++;
		}
		p += m.rm_eo;
		flags = REG_NOTBOL;
	}
	return r ? r : buf_append(out, p, strlen(p));
}

int recorder_redact(const struct recorder *r, const char *s, size_t n, struct buf *out)
{
	struct buf a, b;
	int ret = 0;

	buf_init(&a, 0);
	buf_init(&b, 0);
	/* Strings here carry no NUL (JSON strings and sanitized output), so C-string regexec sees all. */
	ret = buf_append(&a, s, n);
	for (size_t i = 0; ret == 0 && i < r->nredact; i++) {
		buf_reset(&b);
		ret = redact_one(&r->redact[i], a.data ? a.data : "", &b);
		if (ret == 0) {
			struct buf t = a;

			a = b;
			b = t;
		}
	}
	if (ret == 0)
		ret = buf_append(out, a.data ? a.data : "", a.len);
	buf_free(&a);
	buf_free(&b);
	return ret;
}

static json_t *redacted_string(const struct recorder *r, const char *s, size_t n)
{
	struct buf b;
	json_t *j = NULL;

	buf_init(&b, 0);
	if (recorder_redact(r, s, n, &b) == 0)
		j = json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	return j;
}

int recorder_add(struct recorder *r, const char *const *argv, size_t argc, int exit_code, const char *out,
		 size_t out_len, const char *err, size_t err_len)
{
	json_t *rule = json_object(), *av = json_array();
	const char **red = calloc(argc + 1, sizeof(*red));
	struct buf key;
	int ret = -ENOMEM;

	buf_init(&key, 0);
	if (!rule || !av || !red)
		goto out;
	for (size_t i = 0; i < argc; i++) {
		json_t *a = redacted_string(r, argv[i], strlen(argv[i]));

		if (!a || json_array_append_new(av, a) < 0)
			goto out;
		red[i] = json_string_value(a);
	}
	if (shell_join(red, argc, &key) < 0)
		goto out;
	ret = 0;
	if (json_object_get(r->seen, key.data ? key.data : ""))
		goto out; /* the first answer for an argv is the one kept */
	ret = -ENOMEM;
	if (json_object_set(rule, "argv", av) || json_object_set_new(rule, "match_mode", json_string("exact")) ||
	    json_object_set_new(rule, "exit_code", json_integer(exit_code)) ||
	    json_object_set_new(rule, "stdout", redacted_string(r, out, out_len)) ||
	    json_object_set_new(rule, "stderr", redacted_string(r, err, err_len)) ||
	    json_array_append(r->rules, rule) || json_object_set_new(r->seen, key.data ? key.data : "", json_true()))
		goto out;
	ret = recorder_write(r);
	if (ret == 0)
		ret = 1;
out:
	json_decref(rule);
	json_decref(av);
	free(red);
	buf_free(&key);
	if (ret < 0)
		r->last_error = ret;
	return ret;
}

int recorder_write(struct recorder *r)
{
	json_t *doc = json_pack("{s:i,s:O}", "version", 1, "responses", r->rules);
	char *text = NULL;
	struct buf b;
	int ret = json_dump_str(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &text);

	json_decref(doc);
	buf_init(&b, 0);
	if (ret == 0)
		ret = buf_append(&b, text, strlen(text));
	if (ret == 0)
		ret = buf_putc(&b, '\n');
	if (ret == 0)
		ret = fd_write_atomic(r->out_path, b.data, b.len, 0644);
	free(text);
	buf_free(&b);
	return ret;
}
