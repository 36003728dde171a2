/* SPDX-License-Identifier: MIT */
/* fixture.h: the fixture file (uip-fixture.json) and server config (mock-config.json) formats,
 * loaded and validated. The only loader: mockd and `proctor fixtures` both use it. It does not
 * match (match.h) and does not serve (server.h). */
#ifndef PROCTOR_MOCK_FIXTURE_H
#define PROCTOR_MOCK_FIXTURE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../lib/arena.h"
#include "../lib/diag.h"
#include "../lib/strv.h"

#define FIXTURE_MAX_FILE_BYTES (512u * 1024 * 1024)
#define MOCK_CONFIG_MAX_FILE_BYTES (1024u * 1024)
#define MOCK_MAX_TOOLS 64
#define MOCK_MAX_PREFIXES 64
#define MOCK_MAX_PREFIX_TOKENS 8
#define MOCK_MAX_NOISE_FLAGS 64
#define MOCK_DEFAULT_PASSTHROUGH_TIMEOUT_MS 60000u
#define MOCK_DEFAULT_CACHE_ENTRIES 256u
/* --tool without --max-requests: a budget is never silently unlimited. */
#define MOCK_DEFAULT_MAX_REQUESTS 1000u
/* Calls naming a tool that is not served (127), before they get 75 instead. */
#define MOCK_DEFAULT_UNKNOWN_TOOL_BUDGET 100u

enum match_mode { MATCH_EXACT, MATCH_NORMALIZED, MATCH_SUBSET };

struct mock_response {
	int exit_code;
	const char *out, *err; /* UTF-8, no NUL; owned by the fixture's arena or meta */
	size_t out_len, err_len;
};

struct fixture_rule {
	size_t span_off, span_len; /* where the rule's JSON text sits in the file (for `fixtures sort`) */
	enum match_mode mode;
	const char **argv; /* argc strings in fixture->arena */
	size_t argc;
	struct mock_response resp;
};

struct fixture {
	char *path;
	json_t *meta;       /* top-level keys other than "responses" (default, noise_flags, ...) */
	struct arena arena; /* every rule's strings: the JSON tree of the rules is never kept */
	struct fixture_rule *rules;
	size_t nrules;
	bool has_default;
	struct mock_response dflt;
	bool has_noise_flags;
	struct strv noise_flags;
};

/* Load and validate a fixture. The "responses" array is decoded one element at a time and each
 * rule copied into the arena, so peak memory is the file plus the compact rules, never a JSON
 * tree of the whole file. Every problem is added to `d` as "PATH: responses[i].field: ...".
 * Returns 0, or -EINVAL (validation), or -errno (I/O), with *ret set only on success. */
int fixture_load(const char *path, struct diag *d, struct fixture **ret);
/* For `fixtures check`: as fixture_load, but a fixture with validation errors is still returned
 * (*ret set, -EINVAL), with every bad field neutralised (empty strings, exit 0), so the matcher
 * can be built and report duplicate keys as well. I/O and syntax errors return no fixture. */
int fixture_load_keep(const char *path, struct diag *d, struct fixture **ret);
/* The same from `len` bytes already in memory (`path` names them in messages). */
int fixture_load_buf(const char *path, const char *data, size_t len, struct diag *d, struct fixture **ret);
void fixture_free(struct fixture *f);
const char *match_mode_name(enum match_mode m);

struct mock_tool_config {
	char *tool;
	char *fixture;              /* resolved relative to the config file */
	unsigned long max_requests; /* required in mock-config.json; never 0 once loaded */
	struct strv *prefixes;      /* passthrough_argv_prefixes */
	size_t nprefixes;
	char *passthrough_executable; /* NULL: search PATH for the tool at start-up */
	unsigned passthrough_timeout_ms;
	bool has_noise_flags;
	struct strv noise_flags;
	/* The real tool's sandbox (sandbox.h): extra read-only and read-write paths, and the
	 * "NAME=VALUE" environment it gets instead of mockd's. */
	struct strv pt_read, pt_write, pt_env;
};

struct mock_config {
	char *path; /* NULL for a config built from command-line options */
	struct mock_tool_config *tools;
	size_t ntools;
	uid_t *allowed_uids;
	size_t nallowed;
	unsigned client_timeout_ms; /* 0: the command-line or built-in default */
	unsigned cache_entries;
	unsigned long unknown_tool_max_requests; /* calls to tools not served, before 75 */
};

int mock_config_load(const char *path, struct diag *d, struct mock_config **ret);
/* A one-tool config as `--tool T --fixture F` builds it. */
int mock_config_single(const char *tool, const char *fixture, struct mock_config **ret);
void mock_config_free(struct mock_config *c);
/* Validate and append a passthrough prefix given as one space-separated string. */
int mock_tool_add_prefix(struct mock_tool_config *t, const char *words);

#endif
