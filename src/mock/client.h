/* SPDX-License-Identifier: MIT */
/* client.h: one protocol v1 call: connect, send the request line, read and validate the
 * response line. Printing it is the command's job (src/cli/mock_client.c). Linked into the tiny proctor-shim, so it uses libc and jansson only. */
#ifndef PROCTOR_MOCK_CLIENT_H
#define PROCTOR_MOCK_CLIENT_H

#include <jansson.h>
#include <stddef.h>

/* Longer than the longest passthrough (60 s default) so a slow real tool is not cut short. */
#define MOCK_CLIENT_DEFAULT_TIMEOUT_MS 75000u

struct mock_reply {
	json_t *root; /* owns the strings */
	int exit_code;
	const char *out, *err;
	size_t out_len, err_len;
};

/* Perform the call. 0 with *ret filled, or -errno with a one-line reason in why[]. */
int mock_client_call(const char *socket_path, unsigned timeout_ms, const char *tool, char *const *argv, size_t argc,
		     struct mock_reply *ret, char *why, size_t why_len);
void mock_reply_free(struct mock_reply *r);

#endif
