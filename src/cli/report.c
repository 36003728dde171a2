/* SPDX-License-Identifier: MIT */
/* report.c: `proctor report RUN_DIR [--json]`, and the report `proctor run` prints. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/json.h"
#include "../lib/log.h"
#include "../run/report.h"

static const char report_usage[] =
	"usage: proctor report RUN_DIR [--json]\n"
	"What happened in a run: status, each isolation layer as verified, bundle digests, mock calls\n"
	"by outcome (calls that fell through with their nearest rules, and unused rules, as root),\n"
	"guard denials, private material found in the workspace, teardown. See proctor-report(1).\n"
	"Exit: 0 printed, 1 RUN_DIR has no readable result.json, 2 usage.\n";

int report_print(const char *dir, bool json, FILE *f)
{
	struct diag d;
	struct buf b;
	json_t *rep = NULL;
	int err;

	diag_init(&d);
	buf_init(&b, 0);
	err = report_json(dir, &d, &rep);
	if (err == 0)
		err = json ? json_dump_buf(rep, JSON_INDENT(2), &b) : report_text(rep, &b);
	if (err == 0 && json)
		err = buf_putc(&b, '\n');
	if (err == 0)
		fputs(b.data ? b.data : "", f);
	for (size_t i = 0; i < d.n; i++)
		log_error("%s", d.msgs[i].text);
	json_decref(rep);
	buf_free(&b);
	diag_free(&d);
	return err;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'h') {
			fputs(report_usage, stdout);
			return EXIT_OK;
		} else {
			fputs(report_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		die(EXIT_USAGE, "give one run directory (see --help)");
	return report_print(argv[optind], json, stdout) < 0 ? EXIT_FAILURE_ : EXIT_OK;
}
