/* SPDX-License-Identifier: MIT */
/* mock_client.c: `proctor mock-client TOOL ARGS...`, the shim as an explicit command. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "../mock/client.h"
#include "../mock/protocol.h"

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
