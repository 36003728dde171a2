/* SPDX-License-Identifier: MIT */
/* fixtures.h: shared between the `proctor fixtures` subcommands (src/cli only). */
#ifndef PROCTOR_CLI_FIXTURES_H
#define PROCTOR_CLI_FIXTURES_H

#include <stdbool.h>
#include <stdio.h>

#include "../lib/diag.h"
#include "../lib/strv.h"
#include "../mock/service.h"

/* How a fixture is turned into a tool: the same options mockd takes. */
struct fx_source {
	const char *config; /* --config FILE, or NULL */
	const char *tool;   /* --tool NAME (default "uip", or the config's first tool) */
	struct strv noise;  /* --noise-flag */
	bool has_noise;
	struct strv prefixes; /* --passthrough */
};

/* Parse a source option (--config, --tool, --noise-flag, --passthrough); 1 if it was one. */
int fx_source_option(struct fx_source *src, int opt, const char *arg);
void fx_source_free(struct fx_source *src);
/* Load the tool (mockd's loader and matcher). On failure prints every problem, returns -1. */
int fx_open(const struct fx_source *src, const char *fixture, struct mock_service **ret_svc,
	    struct mock_tool **ret_tool);
void fx_print_diag(FILE *f, const struct diag *d);

int fixtures_check(int argc, char **argv);
int fixtures_sort(int argc, char **argv);
int fixtures_replay(int argc, char **argv);
int fixtures_coverage(int argc, char **argv);
int fixtures_record(int argc, char **argv);

enum { FX_OPT_CONFIG = 300, FX_OPT_TOOL, FX_OPT_NOISE, FX_OPT_PASSTHROUGH };
/* Not formatted: clang-format takes the entries for one braced list and breaks them apart. */
/* clang-format off */
#define FX_SOURCE_OPTIONS                                                  \
	{ "config", required_argument, NULL, FX_OPT_CONFIG },              \
	{ "tool", required_argument, NULL, FX_OPT_TOOL },                  \
	{ "noise-flag", required_argument, NULL, FX_OPT_NOISE },           \
	{ "passthrough", required_argument, NULL, FX_OPT_PASSTHROUGH }
/* clang-format on */

#endif
