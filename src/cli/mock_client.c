/* SPDX-License-Identifier: MIT */
/* mock_client.c: the shim's life (call, print exactly, exit with the served code), shared by
 * proctor-shim, proctor under a tool's name, and `proctor mock-client TOOL ARGS...`. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fd.h"
#include "../lib/util.h"
#include "../mock/client.h"
#include "../mock/protocol.h"

int mock_client_main(const char *tool, int argc, char **argv)
{
	const char *sock = getenv("PROCTOR_MOCK_SOCKET");
	const char *tmo = getenv("PROCTOR_MOCK_TIMEOUT");
	unsigned long timeout_s = MOCK_CLIENT_DEFAULT_TIMEOUT_MS / 1000;
	struct mock_reply reply = { 0 };
	char why[512];
	int r;

	if (!sock || !*sock)
		sock = MOCK_DEFAULT_SOCKET;
	if (tmo && *tmo && parse_ulong(tmo, 1, 86400, &timeout_s) < 0) {
		fprintf(stderr, "%s: PROCTOR_MOCK_TIMEOUT: must be whole seconds from 1 to 86400\n", tool);
		return MOCK_EXIT_CLIENT_FAILURE;
	}
	r = mock_client_call(sock, (unsigned)timeout_s * 1000u, tool, argv, (size_t)argc, &reply, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", tool, why);
		return MOCK_EXIT_CLIENT_FAILURE;
	}
	/* Exactly the bytes served; stdout first, as the response orders them. */
	if ((reply.out_len && fd_write_all(1, reply.out, reply.out_len) < 0) ||
	    (reply.err_len && fd_write_all(2, reply.err, reply.err_len) < 0)) {
		mock_reply_free(&reply);
		return MOCK_EXIT_CLIENT_FAILURE;
	}
	r = reply.exit_code;
	mock_reply_free(&reply);
	return r;
}

int cmd_mock_client(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: proctor mock-client TOOL [ARGS...]\n"
			"Send one call to mockd and print its stdout and stderr; exit with its code.\n"
			"Environment: PROCTOR_MOCK_SOCKET (default %s), PROCTOR_MOCK_TIMEOUT (seconds, default %u).\n"
			"Exit: the response's code, or 125 on any client-side failure.\n",
			MOCK_DEFAULT_SOCKET, MOCK_CLIENT_DEFAULT_TIMEOUT_MS / 1000);
		return argc < 2 ? MOCK_EXIT_CLIENT_FAILURE : 0;
	}
	return mock_client_main(argv[1], argc - 2, argv + 2);
}
