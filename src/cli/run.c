/* SPDX-License-Identifier: MIT */
/* run.c: `proctor run TASK.json [--out DIR]`: one task in the whole cage, then the report.
 * Exit codes (doc/RESULT.md): 0 result final, 3 infrastructure fault, 4 invalid task or missing
 * layer, 2 usage. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../run/report.h"
#include "../run/run.h"

static const char run_usage[] =
	"usage: proctor run TASK.json [--out DIR] [--agents DIR] [--quiet] [--json]\n"
	"Evaluate one task inside the whole cage: stage the workspace and bundles, start mockd as its\n"
	"own user, arm the guard, run the agent as an unprivileged uid under Landlock (in its own pid\n"
	"namespace where the host allows), tear everything down, write DIR/result.json and print the\n"
	"report. Needs root. The task format is doc/TASK.md; result.json is doc/RESULT.md.\n"
	"  --out DIR   the run directory (default runs/<id>-<UTC time>-<pid>; must be absent or empty)\n"
	"  --agents DIR  agent descriptors searched after the built-in ones (proctor agents list)\n"
	"  --quiet     no progress lines and no report, only errors\n"
	"  --json      print `proctor report --json` at the end instead of the text report\n"
	"Exit: 0 the run is over and result.json is final; 3 infrastructure fault (retry); 4 invalid\n"
	"task or a required isolation layer missing (do not retry); 2 usage. See proctor-run(1).\n";

static void progress(const char *line)
{
	fprintf(stderr, "proctor run: %s\n", line);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },    { "quiet", no_argument, NULL, 'q' },
		{ "agents", required_argument, NULL, 'a' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 }
	};
	struct run_opts o = { .log = progress };
	struct diag d;
	char *dir = NULL;
	bool quiet = false, json = false;
	int c, code;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.out = optarg;
			break;
		case 'a':
			o.agents_dir = optarg;
			break;
		case 'q':
			quiet = true;
			o.log = NULL;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return EXIT_OK;
		default:
			fputs(run_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		die(EXIT_USAGE, "give one task file (see --help)");
	if (geteuid() != 0)
		die(RUN_EXIT_INVALID,
		    "needs root: it creates the agent's and mockd's identities and tears them down "
		    "(try: sudo proctor run %s)",
		    argv[optind]);
	o.task_file = argv[optind];
	code = run_task(&o, &d, &dir);
	for (size_t i = 0; i < d.n; i++) {
		/* A reason can quote the agent's own error text: never raw on a terminal. */
		char *e = str_escape(d.msgs[i].text);

		fprintf(stderr, "%s: %s%s\n", log_prog(), d.msgs[i].level == DIAG_WARNING ? "warning: " : "",
			e ? e : "(unprintable)");
		free(e);
	}
	if (d.errors + d.warnings > d.n)
		fprintf(stderr, "%s: ... and %zu more\n", log_prog(), d.errors + d.warnings - d.n);
	diag_free(&d);
	if (dir && !quiet)
		report_print(dir, json, stdout);
	if (dir && !quiet)
		fprintf(stderr, "proctor run: result in %s/result.json (exit %d)\n", dir, code);
	free(dir);
	return code;
}
