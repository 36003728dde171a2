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

static int dump_cb(const char *p, size_t n, void *data)
{
	return buf_append(data, p, n) < 0 ? -1 : 0;
}

int json_dump_buf(const json_t *j, size_t flags, struct buf *out)
{
	size_t before = out->len;

	if (json_dump_callback(j, dump_cb, out, flags | JSON_COMPACT | JSON_ENSURE_ASCII) < 0) {
		out->len = before;
		if (out->data)
			out->data[before] = '\0';
		return -E2BIG;
	}
	return 0;
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
