/* SPDX-License-Identifier: MIT */
/* guard.c: `proctor guard install|teardown|status|hook`. The hook exits 0 and prints the deny
 * verdict, or nothing to allow; it fails closed: a marker that is absent, unreadable or expired
 * while the hook is still configured denies every call (only "active": false disarms it). A
 * misconfigured hook (unknown --harness, no marker argument) exits 2, which the harnesses treat
 * as a blocking error. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../guard/decide.h"
#include "../guard/guard.h"
#include "../lib/fd.h"
#include "../lib/log.h"
#include "../lib/util.h"

#define GUARD_DEFAULT_TTL 14400

static const char guard_usage[] =
	"usage: proctor guard install --harness claude-code|codex --root DIR [--ttl SECONDS] [--denial-log FILE]\n"
	"       proctor guard teardown DIR\n"
	"       proctor guard status DIR\n"
	"       proctor guard hook --harness claude-code|codex [MARKER]\n"
	"Install a PreToolUse hook that denies writes outside DIR (and git remote operations, package\n"
	"installs, writes to the guard's files), restore the hook file on teardown, or answer one hook\n"
	"call (the harness runs this; a missing or expired marker denies). See proctor-guard(1) and\n"
	"doc/GUARD.md.\n";

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

static int guard_install_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "harness", required_argument, NULL, 'H' }, { "root", required_argument, NULL, 'r' },
		{ "ttl", required_argument, NULL, 't' },     { "denial-log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 }
	};
	const char *root = NULL, *log_path = NULL;
	unsigned long ttl = GUARD_DEFAULT_TTL;
	char exe[PATH_MAX];
	int h = -1, c, r;
	ssize_t n;
	struct buf report;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'H' && (h = harness_parse(optarg)) < 0)
			die(EXIT_USAGE, "--harness: '%s' is not claude-code or codex", optarg);
		else if (c == 'r')
			root = optarg;
		else if (c == 't' && parse_ulong(optarg, 1, 7 * 86400, &ttl) < 0)
			die(EXIT_USAGE, "--ttl: whole seconds from 1 to 604800");
		else if (c == 'l')
			log_path = optarg;
		else if (c == 'h') {
			fputs(guard_usage, stdout);
			return EXIT_OK;
		} else if (c == '?')
			die(EXIT_USAGE, "see 'proctor guard --help'");
	}
	if (h < 0 || !root || optind != argc)
		die(EXIT_USAGE, "give --harness and --root (see --help)");
	if (log_path && log_path[0] != '/')
		die(EXIT_USAGE, "--denial-log: '%s' must be an absolute path", log_path);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		die(EXIT_FAILURE_, "cannot find this binary's path");
	exe[n] = '\0';
	buf_init(&report, 0);
	r = guard_install((enum harness)h, root, (unsigned)ttl, log_path, exe, &report);
	fputs(report.data ? report.data : "", r < 0 ? stderr : stdout);
	buf_free(&report);
	return r < 0 ? EXIT_FAILURE_ : EXIT_OK;
}

static int guard_teardown_cmd(int argc, char **argv)
{
	struct buf report;
	int r;

	if (wants_help(argc, argv)) {
		fputs(guard_usage, stdout);
		return EXIT_OK;
	}
	if (argc != 2)
		die(EXIT_USAGE, "usage: proctor guard teardown DIR");
	buf_init(&report, 0);
	r = guard_teardown(argv[1], &report);
	fputs(report.data ? report.data : "", r < 0 ? stderr : stdout);
	buf_free(&report);
	return r < 0 ? EXIT_FAILURE_ : EXIT_OK;
}

static int guard_status_cmd(int argc, char **argv)
{
	int armed_any = 0;

	if (wants_help(argc, argv)) {
		fputs(guard_usage, stdout);
		return EXIT_OK;
	}
	if (argc != 2)
		die(EXIT_USAGE, "usage: proctor guard status DIR");
	for (int h = HARNESS_CLAUDE; h <= HARNESS_CODEX; h++) {
		struct guard_paths p;
		struct guard_marker m;
		int r;

		if (guard_paths((enum harness)h, argv[1], &p) < 0)
			die(EXIT_FAILURE_, "%s: %s", argv[1], strerror(errno));
		r = guard_marker_load(p.marker, &m);
		if (r == -ENOENT) {
			guard_paths_free(&p);
			continue;
		}
		if (r < 0)
			printf("%s: not armed: marker %s is malformed\n", harness_name((enum harness)h), p.marker);
		else {
			bool armed = guard_marker_armed(&m, now_epoch_ms());
			time_t secs = (time_t)(m.expires_ms / 1000);
			struct tm tm;
			char when[64];

			gmtime_r(&secs, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			printf("%s: %s (active %s, expires %s, roots %s)\n", harness_name((enum harness)h),
			       armed ? "armed" : "not armed", m.active ? "true" : "false", when, m.roots.v[0]);
			armed_any |= armed;
			guard_marker_free(&m);
		}
		guard_paths_free(&p);
	}
	if (!armed_any)
		printf("%s: no armed guard\n", argv[1]);
	return armed_any ? EXIT_OK : EXIT_FAILURE_;
}

/* Why a marker does not arm the hook, or NULL when it does (*ret_disarmed: "active": false). */
static const char *marker_state(const char *path, struct guard_marker *m, bool *ret_disarmed)
{
	static char why[300];
	int r = guard_marker_load(path, m);

	*ret_disarmed = false;
	if (r < 0) {
		snprintf(why, sizeof(why), "the guard's marker %s is %s; the guard fails closed", path,
			 r == -ENOENT ? "missing" : "unreadable or malformed");
		return why;
	}
	if (!m->active) {
		*ret_disarmed = true;
		return NULL;
	}
	if (!guard_marker_armed(m, now_epoch_ms())) {
		time_t secs = (time_t)(m->expires_ms / 1000);
		struct tm tm;
		char when[64];

		gmtime_r(&secs, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(why, sizeof(why),
			 "the guard's marker expired at %s while the hook is still installed; the operator "
			 "must re-arm or tear it down",
			 when);
		return why;
	}
	return NULL;
}

/* The hook: read everything first, then decide. */
static int guard_hook_cmd(int argc, char **argv)
{
	static const struct option opts[] = { { "harness", required_argument, NULL, 'H' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct guard_marker m = { 0 };
	struct guard_verdict v = { 0 };
	struct buf in, out;
	json_error_t e;
	json_t *payload = NULL;
	int h = HARNESS_CLAUDE, c;
	bool disarmed = false, too_big = false;
	const char *why;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(guard_usage, stdout);
			return EXIT_OK;
		}
		if (c == 'H' && (h = harness_parse(optarg)) < 0)
			die(EXIT_USAGE, "--harness: '%s' is not claude-code or codex", optarg);
		if (c == '?')
			die(EXIT_USAGE, "see 'proctor guard --help'");
	}
	if (optind + 1 != argc)
		die(EXIT_USAGE, "guard hook: give the marker path (see --help)");
	buf_init(&in, GUARD_MAX_INPUT_BYTES);
	buf_init(&out, 0);
	/* All of stdin, so the harness never blocks writing to us. */
	for (char chunk[65536];;) {
		ssize_t n = read(0, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!too_big && buf_append(&in, chunk, (size_t)n) < 0)
			too_big = true; /* denied, but stdin is still drained */
	}
	why = marker_state(argv[optind], &m, &disarmed);
	if (disarmed)
		goto out; /* explicitly disarmed: allow (silence) */
	v.deny = true;
	if (why)
		snprintf(v.reason, sizeof(v.reason), "%s", why);
	else if (too_big)
		snprintf(v.reason, sizeof(v.reason), "payload larger than %d bytes", GUARD_MAX_INPUT_BYTES);
	else if (!(payload = json_loadb(in.data ? in.data : "", in.len, 0, &e)) || !json_is_object(payload))
		snprintf(v.reason, sizeof(v.reason), "unreadable hook payload");
	else
		guard_decide(&m, payload, &v);
	if (v.deny && guard_verdict_json((enum harness)h, v.reason, &out) == 0)
		fd_write_all(1, out.data, out.len);
	if (v.deny && m.denial_log)
		guard_log_denial(m.denial_log, payload, &v);
out:
	json_decref(payload);
	guard_verdict_free(&v);
	guard_marker_free(&m);
	buf_free(&in);
	buf_free(&out);
	return EXIT_OK;
}

int cmd_guard(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(guard_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(argv[1], "install"))
		return guard_install_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "teardown"))
		return guard_teardown_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return guard_status_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hook"))
		return guard_hook_cmd(argc - 1, argv + 1);
	log_error("unknown subcommand '%s' (see 'proctor guard --help')", argv[1]);
	return EXIT_USAGE;
}
