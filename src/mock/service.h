/* SPDX-License-Identifier: MIT */
/* service.h: what mockd answers, decided without I/O: unknown tool, budget, the match tables,
 * the passthrough allowlist and cache, the default. The server (server.h) owns sockets,
 * processes and time; this file owns the decision, so it can be tested without either. */
#ifndef PROCTOR_MOCK_SERVICE_H
#define PROCTOR_MOCK_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../lib/buf.h"
#include "../lib/diag.h"
#include "fixture.h"
#include "match.h"
#include "protocol.h"
#include "sandbox.h"

enum mock_outcome {
	OUTCOME_EXACT,
	OUTCOME_NORMALIZED,
	OUTCOME_SUBSET,
	OUTCOME_PASSTHROUGH,
	OUTCOME_CACHED,
	OUTCOME_DEFAULT,
	OUTCOME_UNMOCKED,
	OUTCOME_BUDGET,
	OUTCOME_REJECTED,
	OUTCOME_UNKNOWN_TOOL,
	OUTCOME_BAD_REQUEST,
	OUTCOME_BUSY,        /* 69: the passthrough queue is full, its wait expired, or memory is short */
	OUTCOME_CLIENT_GONE, /* the client hung up before its answer (a queued or running passthrough) */
	OUTCOME_ERROR,       /* 70: an internal error, e.g. out of memory while matching: fail closed */
	OUTCOME__COUNT,
};
const char *mock_outcome_name(enum mock_outcome o);

struct wire {
	char *data; /* one encoded response line */
	size_t len;
	int exit_code;
};

struct cache_entry {
	char *key; /* argv joined with NUL separators */
	size_t key_len;
	struct wire w;
};

struct mock_tool {
	struct mock_tool_config *cfg;
	struct fixture *fixture;
	struct matcher *matcher;
	unsigned long served;   /* requests counted against max_requests */
	char *exe;              /* passthrough executable, NULL when unavailable */
	struct wire *rule_wire; /* per rule, encoded on first use */
	struct wire default_wire;
	struct cache_entry *cache; /* most recently used first */
	size_t ncache;
	bool record; /* recording mode: every call goes to the real tool */
	/* The real tool's sandbox (sandbox.h), built by mock_service_confine(); a passthrough is
	 * refused (69) while there is none, unless `unconfined` (recording mode, the operator's own
	 * tool) says to run it with mockd's view and environment. */
	struct pt_sandbox sandbox;
	bool unconfined;
};

struct mock_service {
	struct mock_config *cfg;
	struct mock_tool *tools;
	size_t ntools;
	unsigned long unknown_served; /* calls to tools not served, against cfg->unknown_tool_max_requests */
	struct buf scratch;           /* for responses made on the fly */
	struct wire scratch_wire;
};

/* Build a tool from its config and an already loaded fixture (which it takes, even on failure:
 * mock_tool_fini() frees what was built). */
int mock_tool_init(struct mock_tool *t, struct mock_tool_config *cfg, struct fixture *f, const char *self_exe,
		   struct diag *d);
void mock_tool_fini(struct mock_tool *t);
/* Load every tool's fixture and build its matcher. Takes ownership of cfg (freed on failure).
 * `self_exe`, when set, is never chosen as a passthrough executable (it would be our shim). */
int mock_service_load(struct mock_config *cfg, const char *self_exe, struct diag *d, struct mock_service **ret);
/* A service of the config's first tool over an already loaded fixture (both taken). */
int mock_service_single(struct mock_config *cfg, struct fixture *f, const char *self_exe, struct diag *d,
			struct mock_service **ret);
void mock_service_free(struct mock_service *s);
/* Build every passthrough tool's sandbox while the paths can still be opened (before a drop).
 * No granted path may contain a fixture, the config or one of `protect` (journal, socket, ...).
 * 0, or -errno with the reason in `d`. */
int mock_service_confine(struct mock_service *s, const char *const *protect, size_t nprotect, struct diag *d);

struct mock_decision {
	enum mock_outcome outcome;
	ssize_t rule;           /* the fixture rule, or -1 */
	struct mock_tool *tool; /* NULL for unknown tools */
	const struct wire *w;   /* the response; NULL when OUTCOME_PASSTHROUGH must be run */
};

/* The stateless part of the decision for one tool: the rule (exact, normalized, subset; rule in
 * *ret_rule), else passthrough, else default, else unmocked. No budget, no cache: this is what
 * `proctor fixtures replay` and `coverage` use, so they can never disagree with mockd. */
enum mock_outcome mock_tool_classify(struct mock_tool *t, const char *const *argv, size_t argc, ssize_t *ret_rule);
/* Decide the response to a parsed request. The returned wire stays valid until the next call. */
int mock_service_decide(struct mock_service *s, const struct mock_request *req, struct mock_decision *ret);
/* A ready response for an error outcome (bad request, rejected, passthrough failure). */
const struct wire *mock_service_error(struct mock_service *s, const char *tool, int exit_code, const char *msg);
/* Store a finished passthrough response in the tool's LRU cache (it takes `w`). */
void mock_service_cache_put(struct mock_service *s, struct mock_tool *t, const char *const *argv, size_t argc,
			    struct wire *w);

#endif
