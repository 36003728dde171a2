/* SPDX-License-Identifier: MIT */
/* protocol.c: encode and decode protocol v1 lines. Decoding is the untrusted boundary: every
 * field is type-checked and bounded; anything unexpected is a bad request (64). */
#include "protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/json.h"
#include "../lib/util.h"

int mock_tool_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > MOCK_MAX_TOOL_NAME || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '+' || c == '-'))
			return 0;
	}
	return 1;
}

void mock_request_free(struct mock_request *req)
{
	free(req->argv);
	memset(req, 0, sizeof(*req));
}

/* Copy tool and argv out of the tree into one block: [argv pointers, NULL][tool\0][arg\0]... */
static int request_compact(const char *tool, json_t *argv, struct mock_request *ret)
{
	size_t argc = json_array_size(argv), bytes = (argc + 1) * sizeof(char *) + strlen(tool) + 1;
	const char **v;
	char *p;

	for (size_t i = 0; i < argc; i++)
		bytes += json_string_length(json_array_get(argv, i)) + 1;
	v = malloc(bytes);
	if (!v)
		return -ENOMEM;
	p = (char *)(v + argc + 1);
	ret->tool = p;
	p = stpcpy(p, tool) + 1;
	for (size_t i = 0; i < argc; i++) {
		v[i] = p;
		p = stpcpy(p, json_string_value(json_array_get(argv, i))) + 1;
	}
	v[argc] = NULL;
	ret->argv = v;
	ret->argc = argc;
	ret->bytes = bytes;
	return 0;
}

int mock_request_parse(const char *line, size_t len, struct mock_request *ret, const char **ret_why)
{
	json_error_t err;
	json_t *root, *v, *argv;
	int r = -EINVAL;

	*ret_why = "invalid request";
	if (len >= MOCK_MAX_REQUEST_BYTES) {
		*ret_why = "invalid request size";
		return -EINVAL;
	}
	/* jansson rejects invalid UTF-8 and (without JSON_ALLOW_NUL) NUL escapes. */
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	if (!root || !json_is_object(root))
		goto out;
	v = json_object_get(root, "version");
	if (!json_is_integer(v) || json_integer_value(v) != MOCK_PROTOCOL_VERSION) {
		*ret_why = "unsupported protocol version";
		goto out;
	}
	v = json_object_get(root, "tool");
	argv = json_object_get(root, "argv");
	if (!json_is_string(v) || !json_is_array(argv) || json_array_size(argv) > MOCK_MAX_ARGC)
		goto out;
	for (size_t i = 0; i < json_array_size(argv); i++) {
		if (!json_is_string(json_array_get(argv, i))) {
			*ret_why = "argv must be a list of strings";
			goto out;
		}
	}
	r = request_compact(json_string_value(v), argv, ret);
	if (r < 0)
		*ret_why = "out of memory";
out:
	json_decref(root);
	return r;
}

int mock_response_encode(struct buf *out, int exit_code, const char *out_s, size_t out_n, const char *err_s,
			 size_t err_n)
{
	json_t *o = json_object();
	size_t before = out->len;
	int r = -ENOMEM;

	if (!o)
		return -ENOMEM;
	if (json_object_set_new(o, "version", json_integer(MOCK_PROTOCOL_VERSION)) ||
	    json_object_set_new(o, "exit_code", json_integer(exit_code)) ||
	    json_object_set_new(o, "stdout", json_stringn_nocheck(out_s, out_n)) ||
	    json_object_set_new(o, "stderr", json_stringn_nocheck(err_s, err_n)))
		goto out;
	r = json_dump_buf(o, 0, out);
	if (r == 0)
		r = buf_putc(out, '\n');
	if (r == 0 && out->len - before > MOCK_MAX_RESPONSE_BYTES)
		r = -E2BIG;
	if (r < 0) {
		out->len = before;
		if (out->data)
			out->data[before] = '\0';
	}
out:
	json_decref(o);
	return r;
}

int mock_request_encode(struct buf *out, const char *tool, char *const *argv, size_t argc, long *ret_bad_index)
{
	json_t *o = NULL, *a = NULL;
	size_t before = out->len;
	int r = -ENOMEM;

	*ret_bad_index = -1;
	if (!utf8_valid(tool, strlen(tool)))
		return -EILSEQ;
	for (size_t i = 0; i < argc; i++) {
		if (!utf8_valid(argv[i], strlen(argv[i]))) {
			*ret_bad_index = (long)i;
			return -EILSEQ;
		}
	}
	o = json_object();
	a = json_array();
	if (!o || !a)
		goto out;
	for (size_t i = 0; i < argc; i++)
		if (json_array_append_new(a, json_string_nocheck(argv[i])))
			goto out;
	if (json_object_set_new(o, "version", json_integer(MOCK_PROTOCOL_VERSION)) ||
	    json_object_set_new(o, "tool", json_string_nocheck(tool)) || json_object_set(o, "argv", a))
		goto out;
	r = json_dump_buf(o, 0, out);
	if (r == 0)
		r = buf_putc(out, '\n');
	if (r == 0 && out->len - before > MOCK_MAX_REQUEST_BYTES)
		r = -E2BIG;
	if (r < 0)
		out->len = before;
out:
	json_decref(a);
	json_decref(o);
	return r;
}
