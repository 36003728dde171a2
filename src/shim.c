/* SPDX-License-Identifier: MIT */
/* shim.c: proctor-shim, the agent-facing CLI stand-in. Symlink it as the tool's name (`uip`).
 * A separate binary from proctor because it is exec'd on every agent call: it links only libc
 * and jansson (statically where possible); libcrypto and libcap-ng, which proctor loads
 * with dlopen() when it needs them, would add about a millisecond of loader work to every call
 * (measured in bench/, see README). */
#include <stdio.h>
#include <string.h>

#include "lib/path.h"
#include "cli/cli.h"
#include "mock/protocol.h"

int main(int argc, char **argv)
{
	const char *name = argc > 0 ? path_basename(argv[0]) : "proctor-shim";

	if (strcmp(name, "proctor-shim") != 0)
		return mock_client_main(name, argc - 1, argv + 1);
	if (argc < 2) {
		fprintf(stderr, "usage: proctor-shim TOOL [ARGS...]  (or symlink it as TOOL)\n");
		return MOCK_EXIT_CLIENT_FAILURE;
	}
	return mock_client_main(argv[1], argc - 2, argv + 2);
}
