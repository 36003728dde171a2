/* SPDX-License-Identifier: MIT */
/* identity.c: `proctor identity [--expect-...]`: print this process's kernel identity as JSON;
 * with expectations, exit 0 only when every one holds. */
#include "cli.h"

#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../priv/identity.h"

static const char identity_usage[] =
	"usage: proctor identity [--expect-uid U] [--expect-gid G] [--expect-groups LIST]\n"
	"                        [--expect-no-caps] [--expect-nnp] [--expect-landlock] [--quiet]\n"
	"Print this process's uid and gid (all four slots), groups, the five capability sets,\n"
	"no_new_privs, seccomp and Landlock as JSON. With --expect-*, exit 0 only if every expectation\n"
	"holds, else print each mismatch and exit 1. LIST is comma-separated ('' for none).\n";

static unsigned long id_or_die(const char *opt, const char *v)
{
	unsigned long n;

	if (parse_ulong(v, 0, 4294967294UL, &n) < 0)
		die(EXIT_USAGE, "%s: '%s' is not a number", opt, v);
	return n;
}

static void expect_groups(struct identity_expect *e, const char *list)
{
	char *copy = strdup(list), *save = NULL;

	e->groups = true;
	for (char *g = strtok_r(copy, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		if (e->nwant_groups == IDENTITY_MAX_GROUPS)
			die(EXIT_USAGE, "--expect-groups: too many");
		e->want_groups[e->nwant_groups++] = (gid_t)id_or_die("--expect-groups", g);
	}
	free(copy);
}

int cmd_identity(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "expect-uid", required_argument, NULL, 'u' },
		{ "expect-gid", required_argument, NULL, 'g' },
		{ "expect-groups", required_argument, NULL, 'G' },
		{ "expect-no-caps", no_argument, NULL, 'c' },
		{ "expect-nnp", no_argument, NULL, 'n' },
		{ "expect-landlock", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct identity_expect e = { 0 };
	struct identity id;
	const char *field;
	char *report = NULL;
	bool quiet = false;
	size_t bad;
	json_t *doc;
	int c;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			e.uid = true;
			e.want_uid = (uid_t)id_or_die("--expect-uid", optarg);
			break;
		case 'g':
			e.gid = true;
			e.want_gid = (gid_t)id_or_die("--expect-gid", optarg);
			break;
		case 'G':
			expect_groups(&e, optarg);
			break;
		case 'c':
			e.no_caps = true;
			break;
		case 'n':
			e.nnp = true;
			break;
		case 'l':
			e.landlock = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(identity_usage, stdout);
			return EXIT_OK;
		default:
			fputs(identity_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (identity_read(&id, &field) < 0)
		die(EXIT_FAILURE_, "cannot read the identity: %s", field ? field : "?");
	if (!quiet && (doc = identity_json(&id))) {
		json_dumpf(doc, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(doc);
	}
	bad = identity_check(&id, &e, &report);
	if (bad)
		fputs(report, stderr);
	free(report);
	return bad ? EXIT_FAILURE_ : EXIT_OK;
}
