/* SPDX-License-Identifier: MIT */
/* reap.c: `proctor reap --uid U [--pgid P]`: teardown that fails closed. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../lib/json.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../priv/reap.h"

static const char reap_usage[] =
	"usage: proctor reap --uid U [--pgid P] [--grace MS] [--timeout MS]\n"
	"Stop process group P (TERM, grace, KILL), then kill every process with uid U in any uid slot,\n"
	"threads included: TERM, grace, then KILL, sent as kill(-1) with U as this thread's effective\n"
	"uid (so a process forking to new pids cannot slip past), until two scans in a row find none\n"
	"or the timeout passes. Nothing U runs can signal the reaper meanwhile.\n"
	"Prints JSON; exit 0 when nothing survived, 1 when something did (the caller must fail\n"
	"closed), 2 usage. Defaults: --grace 500, --timeout 5000 (ms). U may not be 0 or the caller's.\n";

int cmd_reap(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uid", required_argument, NULL, 'u' },   { "pgid", required_argument, NULL, 'p' },
		{ "grace", required_argument, NULL, 'g' }, { "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },        { NULL, 0, NULL, 0 }
	};
	unsigned long uid = 0, pgid = 0, grace = 500, timeout = 5000;
	struct reap_result res;
	json_t *surv, *doc;
	uint64_t t0;
	int c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		unsigned long *dst = c == 'u' ? &uid : c == 'p' ? &pgid : c == 'g' ? &grace : &timeout;

		if (c == 'h') {
			fputs(reap_usage, stdout);
			return EXIT_OK;
		}
		if (c == '?' || parse_ulong(optarg, c == 'u' || c == 'p' ? 1 : 0,
					    c == 'u' ? 4294967294UL :
					    c == 'p' ? 4194304 :
						       600000,
					    dst) < 0)
			die(EXIT_USAGE, "bad option value (see --help)");
	}
	if (!uid || optind != argc)
		die(EXIT_USAGE, "give --uid U (see --help)");
	t0 = now_mono_ms();
	if (pgid)
		reap_pgroup((pid_t)pgid, (unsigned)grace);
	r = reap_uid((uid_t)uid, (unsigned)grace, (unsigned)timeout, &res);
	if (r == -EINVAL)
		die(EXIT_USAGE, "--uid %lu: refusing to sweep root, ourselves or uid %u", uid,
		    (unsigned)REAP_KILL_RUID);
	surv = json_array();
	for (size_t i = 0; r < 0 && i < res.nsurvivors; i++)
		json_array_append_new(surv, json_integer(res.survivors[i]));
	doc = json_pack("{s:s,s:I,s:I,s:o,s:I,s:b,s:I,s:b,s:b,s:b}", "path", "uid-sweep", "uid", (json_int_t)uid,
			"signalled", (json_int_t)res.signalled, "survivors", surv, "ms",
			(json_int_t)(now_mono_ms() - t0), "timed_out", res.timed_out, "passes", (json_int_t)res.passes,
			"cgroup", res.cgroup_used, "kill_as_uid", res.kill_as_uid, "pidns_available",
			reap_pidns_available());
	json_dumpf(doc, stdout, JSON_COMPACT);
	putchar('\n');
	fflush(stdout); /* the report first, then the verdict */
	json_decref(doc);
	if (r < 0)
		log_error("uid %lu: %zu processes survived%s; fail closed", uid, res.nsurvivors,
			  res.timed_out ? " the timeout" : "");
	return r < 0 ? EXIT_FAILURE_ : EXIT_OK;
}
