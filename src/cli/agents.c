/* SPDX-License-Identifier: MIT */
/* agents.c: `proctor agents list|show NAME [--agents DIR]`: the agent descriptor registry
 * (doc/AGENTS.md): the built-in directory, then $XDG_CONFIG_HOME/proctor/agents, then DIR. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agent/descriptor.h"
#include "../guard/guard.h"
#include "../lib/log.h"

static const char agents_usage[] =
	"usage: proctor agents list [--agents DIR]\n"
	"       proctor agents show NAME [--agents DIR]\n"
	"The agent descriptors proctor run can use (agent.kind in a task): the built-in directory,\n"
	"then $XDG_CONFIG_HOME/proctor/agents, then DIR; a later one overrides an earlier one by name.\n"
	"show validates the descriptor and prints what it runs. See proctor-agents(1), doc/AGENTS.md.\n"
	"Exit: 0, 1 a descriptor is invalid or missing, 2 usage.\n";

static void print_list(const char *label, const struct strv *v)
{
	printf("%-12s", label);
	for (size_t i = 0; i < v->n; i++)
		printf(" %s", v->v[i][0] ? v->v[i] : "''");
	printf("%s\n", v->n ? "" : " -");
}

static int show(const struct strv *dirs, const char *name)
{
	struct agent_descriptor a;
	struct diag d;
	int err;

	diag_init(&d);
	err = agent_find(dirs, name, &d, &a);
	for (size_t i = 0; i < d.n; i++)
		log_error("%s", d.msgs[i].text);
	diag_free(&d);
	if (err == -ENOENT)
		log_error("no agent descriptor named '%s' (see proctor agents list)", name);
	if (err < 0)
		return EXIT_FAILURE_;
	printf("name         %s\nfile         %s\ndescription  %s\n", a.name, a.file, a.description);
	print_list("argv", &a.argv);
	if (a.argv_resume.n)
		print_list("argv_resume", &a.argv_resume);
	printf("prompt       %s\nframing      %s\nguard        %s\n",
	       a.prompt == AGENT_PROMPT_STDIN ?
		       "on stdin (and in PROCTOR_PROMPT)" :
	       a.prompt == AGENT_PROMPT_FILE ?
		       "in a read-only file, RUN/agent/prompt-TURN.txt (and in PROCTOR_PROMPT)" :
		       "as an argument (and in PROCTOR_PROMPT)",
	       a.events.framing == EVENTS_JSON_LINES ? "JSON lines" : "plain lines",
	       a.guard_harness >= 0 ? harness_name((enum harness)a.guard_harness) : "none (no hooks)");
	print_list("env", &a.env);
	print_list("env_pass", &a.env_pass);
	agent_descriptor_free(&a);
	return EXIT_OK;
}

int cmd_agents(int argc, char **argv)
{
	static const struct option opts[] = { { "agents", required_argument, NULL, 'a' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	const char *extra = NULL;
	char exe[PATH_MAX];
	struct strv dirs = { 0 }, names = { 0 }, files = { 0 };
	ssize_t n;
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'a')
			extra = optarg;
		else if (c == 'h') {
			fputs(agents_usage, stdout);
			return EXIT_OK;
		} else {
			fputs(agents_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc || (strcmp(argv[optind], "list") && strcmp(argv[optind], "show")) ||
	    (!strcmp(argv[optind], "list") && optind + 1 != argc) ||
	    (!strcmp(argv[optind], "show") && optind + 2 != argc))
		die(EXIT_USAGE, "give list, or show NAME (see --help)");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (agent_search_dirs(exe, extra, &dirs) < 0)
		die(EXIT_FAILURE_, "out of memory");
	if (!strcmp(argv[optind], "show"))
		status = show(&dirs, argv[optind + 1]);
	else {
		if (agent_list(&dirs, &names, &files) < 0)
			die(EXIT_FAILURE_, "out of memory");
		for (size_t i = 0; i < names.n; i++) {
			struct agent_descriptor a;
			struct diag d;

			diag_init(&d);
			if (agent_descriptor_load(files.v[i], &d, &a) == 0) {
				printf("%-14s %s\n%-14s %s\n", a.name, files.v[i], "", a.description);
				agent_descriptor_free(&a);
			} else {
				printf("%-14s %s\n%-14s INVALID: %s\n", names.v[i], files.v[i], "",
				       d.n ? d.msgs[0].text : "?");
				status = EXIT_FAILURE_;
			}
			diag_free(&d);
		}
		if (!names.n)
			printf("no agent descriptors found\n");
	}
	strv_free(&dirs);
	strv_free(&names);
	strv_free(&files);
	return status;
}
