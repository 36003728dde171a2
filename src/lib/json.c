/* SPDX-License-Identifier: MIT */
/* json.c: jansson helpers. */
#include "json.h"

#include <errno.h>
#include <string.h>

#include "fd.h"

int json_read_path(const char *path, size_t limit, struct diag *d, struct buf *out)
{
	int r = fd_read_file(path, limit, out);

	if (r == -EFBIG)
		diag_error(d, "%s: file is larger than the %zu byte limit", path, limit);
	else if (r < 0)
		diag_error(d, "%s: %s", path, strerror(-r));
	return r;
}

int json_load_path(const char *path, size_t limit, struct diag *d, json_t **ret)
{
	struct buf b;
	json_error_t err;
	json_t *j;
	int r;

	buf_init(&b, 0);
	r = json_read_path(path, limit, d, &b);
	if (r < 0) {
		buf_free(&b);
		return r;
	}
	j = json_loadb(b.data ? b.data : "", b.len, JSON_REJECT_DUPLICATES, &err);
	buf_free(&b);
	if (!j) {
		diag_error(d, "%s:%d:%d: invalid JSON: %s", path, err.line, err.column, err.text);
		return -EINVAL;
	}
	*ret = j;
	return 0;
}

/* jansson 2.14 ignores the callback's failure for an object's key (dump.c: dump_string's
 * result is not checked) and carries on, so a failed append (out of memory, or the buffer's
 * limit) could leave text with a key's quote or more missing, reported as success. The first
 * failure is latched here: every later append fails too, and the dump is an error. */
struct dump_ctx {
	struct buf *out;
	int err;
};

static int dump_cb(const char *p, size_t n, void *data)
{
	struct dump_ctx *c = data;

	if (c->err == 0)
		c->err = buf_append(c->out, p, n);
	return c->err < 0 ? -1 : 0;
}

static int dump_exact(const json_t *j, size_t flags, struct buf *out)
{
	struct dump_ctx c = { .out = out, .err = 0 };
	size_t before = out->len;

	if (json_dump_callback(j, dump_cb, &c, flags) < 0 || c.err < 0) {
		out->len = before;
		if (out->data)
			out->data[before] = '\0';
		return c.err < 0 ? c.err : -ENOMEM;
	}
	return 0;
}

int json_dump_buf(const json_t *j, size_t flags, struct buf *out)
{
	return dump_exact(j, flags | JSON_COMPACT | JSON_ENSURE_ASCII, out);
}

int json_dump_str(const json_t *j, size_t flags, char **ret)
{
	struct buf b;
	int r = -ENOMEM;

	buf_init(&b, 0);
	if (!j || (r = dump_exact(j, flags, &b)) < 0 || (r = buf_reserve(&b, 0)) < 0) {
		buf_free(&b);
		return r;
	}
	*ret = b.data; /* NUL-terminated, owned by the caller */
	return 0;
}

size_t json_depth(const json_t *j, size_t limit)
{
	size_t most = 0, i;
	const char *k;
	json_t *v;

	if (!json_is_object(j) && !json_is_array(j))
		return 0;
	if (limit == 0)
		return 1;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v) {
			size_t d = json_depth(v, limit - 1);

			most = d > most ? d : most;
		}
	} else {
		json_array_foreach(j, i, v) {
			size_t d = json_depth(v, limit - 1);

			most = d > most ? d : most;
		}
	}
	return 1 + most;
}

const char *json_type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	default:
		return "unknown";
	}
}
