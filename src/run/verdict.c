/* SPDX-License-Identifier: MIT */
/* verdict.c: the termination-message line of a run (verdict.h). */
#include "verdict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../lib/buf.h"
#include "../lib/fd.h"
#include "../lib/hash.h"
#include "../lib/json.h"
#include "collect.h"

/* `s` cut to at most `max` bytes on a UTF-8 character boundary (jansson refuses a broken one). */
static json_t *str_cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return json_stringn(s, n);
}

static void from_result(json_t *v, const char *dir)
{
	char path[4200], hex[65], err[256];
	struct buf b;
	json_t *res = NULL;
	json_error_t je;
	int r;

	snprintf(path, sizeof(path), "%s/result.json", dir);
	json_object_set_new(v, "result", str_cut(path, 1024));
	buf_init(&b, COLLECT_MAX_RESULT_BYTES);
	if ((r = fd_read_file(path, COLLECT_MAX_RESULT_BYTES, &b)) < 0 || (r = sha256_hex(b.data, b.len, hex)) < 0) {
		snprintf(err, sizeof(err), "result.json: %s", strerror(-r));
		json_object_set_new(v, "status", json_string("unreadable"));
		json_object_set_new(v, "reason", json_string(err));
		buf_free(&b);
		return;
	}
	json_object_set_new(v, "result_sha256", json_string(hex));
	res = json_loadb(b.data ? b.data : "", b.len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_string(json_object_get(res, "status"))) {
		snprintf(err, sizeof(err), "result.json: %s", res ? "no status" : je.text);
		json_object_set_new(v, "status", json_string("unreadable"));
		json_object_set_new(v, "reason", str_cut(err, VERDICT_MAX_REASON));
	} else {
		json_object_set_new(v, "status", str_cut(json_string_value(json_object_get(res, "status")), 64));
		if (json_is_string(json_object_get(res, "task_id")))
			json_object_set_new(v, "task_id",
					    str_cut(json_string_value(json_object_get(res, "task_id")), 256));
		if (json_is_string(json_object_get(res, "reason")))
			json_object_set_new(
				v, "reason",
				str_cut(json_string_value(json_object_get(res, "reason")), VERDICT_MAX_REASON));
	}
	json_decref(res);
	buf_free(&b);
}

int verdict_line(const char *dir, int exit_code, const char *why, char **ret)
{
	json_t *v = json_pack("{s:n,s:i,s:n,s:n,s:n,s:n}", "status", "exit_code", exit_code, "task_id", "result",
			      "result_sha256", "reason");
	char *s = NULL;
	size_t n;

	*ret = NULL;
	if (!v)
		return -ENOMEM;
	if (dir)
		from_result(v, dir);
	else if (why)
		json_object_set_new(v, "reason", str_cut(why, VERDICT_MAX_REASON));
	/* Every field is cut above, but escaping can grow a string up to six times: shed the
	 * reason, then the path, rather than pass the limit. */
	for (int pass = 0;; pass++) {
		s = NULL;
		if (json_dump_str(v, JSON_COMPACT | JSON_PRESERVE_ORDER, &s) < 0 ||
		    strlen(s) + 1 <= VERDICT_MAX_BYTES || pass == 2)
			break;
		free(s);
		s = NULL;
		json_object_set_new(v, pass == 0 ? "reason" : "result", json_null());
	}
	json_decref(v);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n + 1 > VERDICT_MAX_BYTES) {
		free(s);
		return -E2BIG;
	}
	*ret = realloc(s, n + 2);
	if (!*ret) {
		free(s);
		return -ENOMEM;
	}
	(*ret)[n] = '\n';
	(*ret)[n + 1] = '\0';
	return 0;
}
