/* SPDX-License-Identifier: MIT */
/* bundle.c: `proctor bundle build|verify|manifest`: parse, call src/bundle, report. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bundle/build.h"
#include "../bundle/manifest.h"
#include "../bundle/stage.h"
#include "../lib/log.h"

static const char bundle_usage[] =
	"usage: proctor bundle build SRC DEST [--allow NAME]... [--deny-pattern GLOB]...\n"
	"       proctor bundle verify DEST [--manifest FILE]\n"
	"       proctor bundle manifest SRC [--allow NAME]... [--deny-pattern GLOB]...\n"
	"\n"
	"Project a plugin checkout into a sanitized, hashed, read-only bundle: only the allowed\n"
	"top-level entries (default skills, commands, agents, .claude-plugin, hooks), never following\n"
	"links, no hidden grading material (default resolution.md, check_*.py, tests/), every file\n"
	"SHA-256'd into DEST.manifest.json beside the bundle. verify reports drift.\n"
	"Exit: 0 ok, 1 refused or drift, 2 usage. See proctor-bundle(1).\n";

struct bundle_args {
	const char *allow[BUNDLE_MAX_RULES], *deny[BUNDLE_MAX_RULES], *manifest;
	size_t nallow, ndeny;
	bool deny_given;
};

static void print_diag(const struct diag *d, const char *prefix)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s%s\n", prefix, d->msgs[i].text);
	if (d->errors > d->n)
		fprintf(stderr, "%s... and %zu more\n", prefix, d->errors - d->n);
}

static int bundle_parse(struct bundle_args *a, int argc, char **argv, int npos)
{
	static const struct option opts[] = { { "allow", required_argument, NULL, 'a' },
					      { "deny-pattern", required_argument, NULL, 'd' },
					      { "manifest", required_argument, NULL, 'm' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'a' && a->nallow < BUNDLE_MAX_RULES && optarg[0] && !strchr(optarg, '/') &&
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
	struct bundle_limits lim = { .rules = &rules };
	struct manifest *m = NULL;
	struct diag d;
	int r;

	diag_init(&d);
	r = bundle_build(argv[i], argv[i + 1], &lim, &d, &m);
	print_diag(&d, "");
	if (r == 0)
		printf("%s: %zu files, %zu symlinks, digest %s\n", argv[i + 1], m->nfiles, m->nlinks, m->digest);
	else
		log_error("%s: nothing staged", argv[i + 1]);
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
	struct bundle_drift drift;
	struct diag d;
	int r;

	diag_init(&d);
	r = mpath ? manifest_load(mpath, &d, &m) : -1;
	if (r == 0)
		r = bundle_verify(argv[i], m, &d, &drift);
	print_diag(&d, "");
	if (r == 0)
		printf("%s: clean (%zu files, %zu symlinks)\n", argv[i], m->nfiles, m->nlinks);
	else if (r == 1)
		printf("%s: drift: %zu missing, %zu undeclared, %zu changed, %zu symlink, %zu mode\n", argv[i],
		       drift.missing, drift.undeclared, drift.changed, drift.links, drift.modes);
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
	r = bundle_walk(argv[i], &rules, &d, &m);
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
	log_set_prog(!strcmp(argv[1], "build") ? "proctor bundle build" : !strcmp(argv[1], "verify") ?
		     "proctor bundle verify" : "proctor bundle manifest");
	if (!strcmp(argv[1], "build"))
		return bundle_build_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "verify"))
		return bundle_verify_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "manifest"))
		return bundle_manifest_cmd(argc - 1, argv + 1);
	log_error("unknown subcommand '%s' (see 'proctor bundle --help')", argv[1]);
	return EXIT_USAGE;
}
