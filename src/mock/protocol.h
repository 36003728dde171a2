/* SPDX-License-Identifier: MIT */
/* protocol.h: wire protocol v1 between the shim and mockd (doc/PROTOCOL.md is the contract).
 * One request line in, one response line out, compact ASCII-only JSON, one request per
 * connection. Shared by the server and the client so both sides enforce the same limits. */
#ifndef PROCTOR_MOCK_PROTOCOL_H
#define PROCTOR_MOCK_PROTOCOL_H

#include <jansson.h>
#include <stddef.h>

#include "../lib/buf.h"

#define MOCK_PROTOCOL_VERSION 1
/* Request line including its '\n'. */
#define MOCK_MAX_REQUEST_BYTES (64 * 1024)
/* Response line including its '\n'. */
#define MOCK_MAX_RESPONSE_BYTES (1024 * 1024)
/* stdout + stderr of one response, in UTF-8 bytes: half the line, so escaping always fits. */
#define MOCK_MAX_OUTPUT_BYTES (MOCK_MAX_RESPONSE_BYTES / 2)
#define MOCK_MAX_ARGC 4096
#define MOCK_MAX_TOOL_NAME 64
#define MOCK_DEFAULT_SOCKET "/run/proctor/mock.sock"

/* Exit codes carried in responses (and the client's own). */
enum {
	MOCK_EXIT_UNMOCKED = 2,
	MOCK_EXIT_BAD_REQUEST = 64,
	MOCK_EXIT_PASSTHROUGH_UNAVAILABLE = 69,
	MOCK_EXIT_PASSTHROUGH_FAILED = 70,
	MOCK_EXIT_BUDGET = 75,
	MOCK_EXIT_REJECTED = 77,
	MOCK_EXIT_CLIENT_FAILURE = 125,
	MOCK_EXIT_UNKNOWN_TOOL = 127,
};

/* A parsed request keeps only what is used: one allocation holding the argv pointer array, the
 * tool name and the arguments. The JSON tree (which an ignored key padded with `{}` can make
 * 80 times the size of the line) is freed before parse returns. */
struct mock_request {
	const char *tool;  /* NULL: no request was read */
	const char **argv; /* argc entries, then NULL; owns the whole block */
	size_t argc;
	size_t bytes; /* size of the block, for the server's memory account */
};

/* Parse one request line (without its '\n'). 0, or -EINVAL with a short reason in *ret_why
 * (-ENOMEM: out of memory). */
int mock_request_parse(const char *line, size_t len, struct mock_request *ret, const char **ret_why);
void mock_request_free(struct mock_request *req);
/* True when `name` is a bare tool name: 1..64 bytes of [A-Za-z0-9._+-], not "." or "..". */
int mock_tool_name_valid(const char *name);

/* Append the response line (with '\n') to out. stdout/stderr must be valid UTF-8 (callers
 * sanitize passthrough output). 0, or -E2BIG when the line would exceed the limit. */
int mock_response_encode(struct buf *out, int exit_code, const char *out_s, size_t out_n, const char *err_s,
			 size_t err_n);
/* Encode the request line for tool/argv (with '\n'). 0, -E2BIG over the limit, -EILSEQ when an
 * argument is not valid UTF-8 (*ret_bad_index says which; -1 for the tool). */
int mock_request_encode(struct buf *out, const char *tool, char *const *argv, size_t argc, long *ret_bad_index);

#endif
