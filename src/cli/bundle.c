/* SPDX-License-Identifier: MIT */
/* bundle.c: `proctor bundle build|verify|manifest`: parse, call src/bundle, report. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bundle/build.h"
#include "../bundle/manifest.h"
#include "../bundle/stage.h"
#include "../lib/log.h"
#include "../lib/util.h"

static const char bundle_usage[] =
	"usage: proctor bundle build SRC DEST [--allow NAME]... [--deny-pattern GLOB]... [LIMITS]\n"
	"       proctor bundle verify DEST [--manifest FILE]\n"
	"       proctor bundle manifest SRC [--allow NAME]... [--deny-pattern GLOB]... [LIMITS]\n"
	"LIMITS: --max-file-size BYTES (default 100M)  --max-total-size BYTES (default 1G)\n"
	"        --max-files N (files, symlinks and directories; default 100000)\n"
	"        --max-depth N (nested directories, skills/a/b is 3; default 32)\n"
	"        (BYTES takes a K, M, G or T suffix, powers of 1024)\n"
	"\n"
	"Project a plugin checkout into a sanitized, hashed, read-only bundle: only the allowed\n"
	"top-level entries (default skills, commands, agents, .claude-plugin, hooks), never following\n"
	"links, no hidden grading material (default resolution.md, check_*.py, tests/), no hard-linked\n"
	"or special files, every file SHA-256'd into DEST.manifest.json beside the bundle; files 0444,\n"
	"0555 when executable in SRC. verify reports drift and unsafe symlinks.\n"
	"Exit: 0 ok, 1 refused or drift, 2 usage. See proctor-bundle(1).\n";

struct bundle_args {
	const char *allow[BUNDLE_MAX_RULES], *deny[BUNDLE_MAX_RULES], *manifest;
	size_t nallow, ndeny;
	bool deny_given;
	struct bundle_limits lim;
};

/* The messages of src/bundle are escaped there (bundle_diag), so a file name cannot write to
 * the terminal. */
static void print_diag(const struct diag *d, const char *prefix)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s%s\n", prefix, d->msgs[i].text);
	if (d->errors > d->n)
		fprintf(stderr, "%s... and %zu more\n", prefix, d->errors - d->n);
}

/* A path from argv, printed escaped. */
static const char *esc_arg(const char *s, char **keep)
{
	free(*keep);
	*keep = bundle_escape(s);
	return *keep ? *keep : "(out of memory)";
}

/* "123", "64K", "100M", "2G", "1T" (powers of 1024), at least 1. */
static int parse_size(const char *s, uint64_t *ret)
{
	static const char units[] = "KMGT";
	unsigned long v;
	size_t n = strlen(s);
	const char *u = n ? strchr(units, s[n - 1]) : NULL;
	char num[32];
	uint64_t mul = 1;

	if (!n || n >= sizeof(num) || (u && !*u))
		return -EINVAL;
	memcpy(num, s, n + 1);
	if (u) {
		num[n - 1] = '\0';
		for (const char *p = units; p <= u; p++)
			mul *= 1024;
	}
	if (parse_ulong(num, 1, ULONG_MAX, &v) < 0 || (uint64_t)v > UINT64_MAX / mul)
		return -EINVAL;
	*ret = (uint64_t)v * mul;
	return 0;
}

static void bundle_parse_limit(struct bundle_args *a, int c, const char *name, const char *arg)
{
	unsigned long v;

	if ((c == 'S' && parse_size(arg, &a->lim.max_file_bytes) == 0) ||
	    (c == 'T' && parse_size(arg, &a->lim.max_total_bytes) == 0) ||
	    (c == 'F' && parse_ulong(arg, 1, ULONG_MAX, &v) == 0 && (a->lim.max_files = v)) ||
	    (c == 'D' && parse_ulong(arg, 1, BUNDLE_MAX_DEPTH, &v) == 0 && (a->lim.max_depth = (unsigned)v)))
		return;
	if (c == 'D')
		die(EXIT_USAGE, "--max-depth: '%s' is not a number from 1 to %d", arg, BUNDLE_MAX_DEPTH);
	die(EXIT_USAGE, "--%s: '%s' is not a %s", name, arg,
	    c == 'F' ? "positive number" : "size (bytes, at least 1, with an optional K, M, G or T suffix)");
}

static int bundle_parse(struct bundle_args *a, int argc, char **argv, int npos)
{
	static const struct option opts[] = { { "allow", required_argument, NULL, 'a' },
					      { "deny-pattern", required_argument, NULL, 'd' },
					      { "manifest", required_argument, NULL, 'm' },
					      { "max-file-size", required_argument, NULL, 'S' },
					      { "max-total-size", required_argument, NULL, 'T' },
					      { "max-files", required_argument, NULL, 'F' },
					      { "max-depth", required_argument, NULL, 'D' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	int c, idx = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		if (c == 'S' || c == 'T' || c == 'F' || c == 'D')
			bundle_parse_limit(a, c, opts[idx].name, optarg);
		else if (c == 'a' && a->nallow < BUNDLE_MAX_RULES && optarg[0] && !strchr(optarg, '/') &&
			 strcmp(optarg, ".") && strcmp(optarg, ".."))
			a->allow[a->nallow++] = optarg;
		else if (c == 'd' && a->ndeny < BUNDLE_MAX_RULES && optarg[0])
			a->deny[a->ndeny++] = optarg;
		else if (c == 'm')
			a->manifest = optarg;
		else if (c == 'h') {
			fputs(bundle_usage, stdout);
			exit(EXIT_OK);
		} else
			die(EXIT_USAGE, "bad option (an --allow NAME is one top-level name; see --help)");
	}
	if (argc - optind != npos)
		die(EXIT_USAGE, "expected %d argument%s (see --help)", npos, npos == 1 ? "" : "s");
	return optind;
}

static struct bundle_rules bundle_rules_of(struct bundle_args *a)
{
	struct bundle_rules r = { bundle_default_allow, bundle_default_nallow, bundle_default_deny,
				  bundle_default_ndeny };

	if (a->nallow) {
		r.allow = a->allow;
		r.nallow = a->nallow;
	}
	/* Extra deny patterns add to the defaults: hidden material is always refused. */
	for (size_t i = 0; a->ndeny && i < bundle_default_ndeny && a->ndeny < BUNDLE_MAX_RULES; i++)
		a->deny[a->ndeny++] = bundle_default_deny[i];
	if (a->ndeny) {
		r.deny = a->deny;
		r.ndeny = a->ndeny;
	}
	return r;
}

static int bundle_build_cmd(int argc, char **argv)
{
	struct bundle_args a = { 0 };
	int i = bundle_parse(&a, argc, argv, 2);
	struct bundle_rules rules = bundle_rules_of(&a);
	struct manifest *m = NULL;
	char *esc = NULL;
	struct diag d;
	int r;

	diag_init(&d);
	a.lim.rules = &rules;
	r = bundle_build(argv[i], argv[i + 1], &a.lim, &d, &m);
	print_diag(&d, "");
	if (r == 0)
		printf("%s: %zu files, %zu symlinks, digest %s\n", esc_arg(argv[i + 1], &esc), m->nfiles, m->nlinks,
		       m->digest);
	else
		log_error("%s: nothing staged%s", esc_arg(argv[i + 1], &esc),
			  r == -EFBIG ? " (over a limit; see --help for the flags that raise it)" : "");
	free(esc);
	manifest_free(m);
	diag_free(&d);
	return r == 0 ? EXIT_OK : EXIT_FAILURE_;
}

static int bundle_verify_cmd(int argc, char **argv)
{
	struct bundle_args a = { 0 };
	int i = bundle_parse(&a, argc, argv, 1);
	char *mpath = a.manifest ? strdup(a.manifest) : bundle_manifest_path(argv[i]);
	struct manifest *m = NULL;
	struct bundle_drift drift = { 0 };
	char *esc = NULL;
	struct diag d;
	int r;

	diag_init(&d);
	r = mpath ? manifest_load(mpath, &d, &m) : -1;
	if (r == 0)
		r = bundle_verify(argv[i], m, &d, &drift);
	print_diag(&d, "");
	if (r == 0)
		printf("%s: clean (%zu files, %zu symlinks)\n", esc_arg(argv[i], &esc), m->nfiles, m->nlinks);
	else if (r == 1)
		printf("%s: drift: %zu missing, %zu undeclared, %zu changed, %zu symlink, %zu mode\n",
		       esc_arg(argv[i], &esc), drift.missing, drift.undeclared, drift.changed, drift.links,
		       drift.modes);
	free(esc);
	manifest_free(m);
	diag_free(&d);
	free(mpath);
	return r == 0 ? EXIT_OK : EXIT_FAILURE_;
}

static int bundle_manifest_cmd(int argc, char **argv)
{
	struct bundle_args a = { 0 };
	int i = bundle_parse(&a, argc, argv, 1);
	struct bundle_rules rules = bundle_rules_of(&a);
	struct manifest *m = NULL;
	struct diag d;
	json_t *doc;
	int r;

	diag_init(&d);
	a.lim.rules = &rules;
	r = bundle_walk_limited(argv[i], &a.lim, true, &d, &m);
	print_diag(&d, "");
	if (r == 0 && (doc = manifest_json(m))) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	}
	manifest_free(m);
	diag_free(&d);
	return r == 0 ? EXIT_OK : EXIT_FAILURE_;
}

int cmd_bundle(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(bundle_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	log_set_prog(!strcmp(argv[1], "build")  ? "proctor bundle build" :
		     !strcmp(argv[1], "verify") ? "proctor bundle verify" :
						  "proctor bundle manifest");
	if (!strcmp(argv[1], "build"))
		return bundle_build_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "verify"))
		return bundle_verify_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "manifest"))
		return bundle_manifest_cmd(argc - 1, argv + 1);
	log_error("unknown subcommand '%s' (see 'proctor bundle --help')", argv[1]);
	return EXIT_USAGE;
}
