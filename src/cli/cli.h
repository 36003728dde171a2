/* SPDX-License-Identifier: MIT */
/* cli.h: the command table's entry points and their shared exit codes. */
#ifndef PROCTOR_CLI_H
#define PROCTOR_CLI_H

/* Exit codes shared by proctor's commands (the shim's are the protocol's, see PROTOCOL.md). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_ = 1, /* the command ran and failed: invalid input, startup failure */
	EXIT_USAGE = 2,
};

int cmd_mockd(int argc, char **argv);
/* The shim's whole life: call, print stdout and stderr exactly, return the exit code (125 on any
 * failure, with one line on stderr). Reads PROCTOR_MOCK_SOCKET and PROCTOR_MOCK_TIMEOUT. */
int mock_client_main(const char *tool, int argc, char **argv);
int cmd_mock_client(int argc, char **argv);
int cmd_fixtures(int argc, char **argv);
int cmd_bundle(int argc, char **argv);
int cmd_drop(int argc, char **argv);
int cmd_identity(int argc, char **argv);
int cmd_reap(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_guard(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_agents(int argc, char **argv);
/* Print a run's report (text, or JSON) to f; errors go to stderr. 0 or -errno. */
#include <stdbool.h>
#include <stdio.h>
int report_print(const char *dir, bool json, FILE *f);

#endif
