/* SPDX-License-Identifier: MIT */
/* proctor.c: main: argv[0] dispatch and the command table; nothing else. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/log.h"
#include "lib/path.h"

#ifndef PROCTOR_VERSION
#define PROCTOR_VERSION "0.1.0"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "run", cmd_run, "evaluate one task inside the whole cage and report what happened" },
	{ "collect", cmd_collect, "summarise a suite's results: status counts and one row per task" },
	{ "agents", cmd_agents, "list or show the agent descriptors proctor run can use" },
	{ "report", cmd_report, "what happened in a run, for a person (text) or a machine (--json)" },
	{ "mockd", cmd_mockd, "serve recorded CLI responses to the agent over a protected socket" },
	{ "mock-client", cmd_mock_client, "send one call to mockd (what a shim does)" },
	{ "fixtures", cmd_fixtures, "check, sort, replay, coverage and record fixtures" },
	{ "bundle", cmd_bundle, "project a plugin into a sanitized, hashed, read-only bundle" },
	{ "drop", cmd_drop, "run a command as an unprivileged, proven identity (setpriv-like)" },
	{ "identity", cmd_identity, "print or check this process's kernel identity as JSON" },
	{ "reap", cmd_reap, "kill every process of a uid and fail closed if any survive" },
	{ "doctor", cmd_doctor, "report which isolation layers this host supports" },
	{ "guard", cmd_guard, "the write guard: install, teardown, status, and the PreToolUse hook" },
	{ "worker", cmd_worker, "internal: the unprivileged agent host that proctor run starts" },
};

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: proctor COMMAND [OPTIONS]\n"
		   "       TOOL [ARGS...]   (proctor invoked under another name is that tool's shim)\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'proctor COMMAND --help' for a command's options; man proctor(1).\n");
	return status;
}

int main(int argc, char **argv)
{
	const char *name = argc > 0 ? path_basename(argv[0]) : "proctor";

	if (strcmp(name, "proctor") != 0)
		return mock_client_main(name, argc - 1, argv + 1);
	if (argc < 2)
		return usage(stderr, EXIT_USAGE);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout, EXIT_OK);
	if (!strcmp(argv[1], "--version")) {
		printf("proctor %s\n", PROCTOR_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			static char prog[64];

			snprintf(prog, sizeof(prog), "proctor %s", commands[i].name);
			log_set_prog(prog);
			return commands[i].fn(argc - 1, argv + 1);
		}
	}
	log_error("unknown command '%s' (see 'proctor --help')", argv[1]);
	return EXIT_USAGE;
}
