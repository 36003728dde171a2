/* SPDX-License-Identifier: MIT */
/* service.c: the decision table of mockd. Order (ARCHITECTURE.md section 4): unknown tool ->
 * budget -> exact -> normalized -> subset -> allowlisted passthrough (cache first) -> default,
 * else "unmocked" (exit 2). Messages never say "mock": the agent must not learn where a
 * response came from. */
#include "service.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/path.h"

const char *mock_outcome_name(enum mock_outcome o)
{
	static const char *const names[] = {
		[OUTCOME_EXACT] = "exact",
		[OUTCOME_NORMALIZED] = "normalized",
		[OUTCOME_SUBSET] = "subset",
		[OUTCOME_PASSTHROUGH] = "passthrough",
		[OUTCOME_CACHED] = "cached",
		[OUTCOME_DEFAULT] = "default",
		[OUTCOME_UNMOCKED] = "unmocked",
		[OUTCOME_BUDGET] = "budget",
		[OUTCOME_REJECTED] = "rejected",
		[OUTCOME_UNKNOWN_TOOL] = "unknown_tool",
		[OUTCOME_BAD_REQUEST] = "bad_request",
		[OUTCOME_BUSY] = "busy",
		[OUTCOME_CLIENT_GONE] = "client_gone",
		[OUTCOME_ERROR] = "error",
	};

	return (size_t)o < sizeof(names) / sizeof(names[0]) ? names[o] : "?";
}

static void wire_free(struct wire *w)
{
	free(w->data);
	w->data = NULL;
	w->len = 0;
}

static int wire_encode(struct wire *w, const struct mock_response *r)
{
	struct buf b;
	int ret;

	buf_init(&b, MOCK_MAX_RESPONSE_BYTES);
	ret = mock_response_encode(&b, r->exit_code, r->out, r->out_len, r->err, r->err_len);
	if (ret < 0) {
		buf_free(&b);
		return ret;
	}
	w->data = b.data;
	w->len = b.len;
	w->exit_code = r->exit_code;
	return 0;
}

/* A shim points back at us (or at proctor-shim): running it as the real tool would loop. */
static int is_proctor(const char *real, void *self_real)
{
	const char *base = strrchr(real, '/') + 1;

	return !strcmp(real, self_real) || !strcmp(base, "proctor-shim") || !strcmp(base, "proctor");
}

static char *find_executable(const char *tool, const char *self_exe)
{
	char self_real[PATH_MAX];

	if (!self_exe || !realpath(self_exe, self_real))
		self_real[0] = '\0';
	return path_find_executable(tool, is_proctor, self_real);
}

int mock_tool_init(struct mock_tool *t, struct mock_tool_config *cfg, struct fixture *f, const char *self_exe,
		   struct diag *d)
{
	const char *const *noise = mock_default_noise_flags;
	size_t nnoise = mock_default_noise_count;
	int r;

	t->sandbox.ruleset_fd = -1;
	t->cfg = cfg;
	t->fixture = f;
	/* The tool config's noise flags win over the fixture's, which win over the default. */
	if (cfg->has_noise_flags) {
		noise = (const char *const *)cfg->noise_flags.v;
		nnoise = cfg->noise_flags.n;
	} else if (f->has_noise_flags) {
		noise = (const char *const *)f->noise_flags.v;
		nnoise = f->noise_flags.n;
	}
	r = matcher_build(f, noise, nnoise, d, &t->matcher);
	if (r < 0)
		return r;
	t->rule_wire = calloc(f->nrules + 1, sizeof(*t->rule_wire));
	if (!t->rule_wire)
		return -ENOMEM;
	if (f->has_default) {
		r = wire_encode(&t->default_wire, &f->dflt);
		if (r < 0)
			return r;
	}
	if (cfg->nprefixes) {
		if (cfg->passthrough_executable)
			t->exe = access(cfg->passthrough_executable, X_OK) == 0 ? strdup(cfg->passthrough_executable) :
										  NULL;
		else
			t->exe = find_executable(cfg->tool, self_exe);
	}
	return 0;
}

void mock_tool_fini(struct mock_tool *t)
{
	for (size_t j = 0; t->rule_wire && j < t->fixture->nrules; j++)
		wire_free(&t->rule_wire[j]);
	free(t->rule_wire);
	wire_free(&t->default_wire);
	for (size_t j = 0; j < t->ncache; j++) {
		free(t->cache[j].key);
		wire_free(&t->cache[j].w);
	}
	free(t->cache);
	matcher_free(t->matcher);
	fixture_free(t->fixture);
	free(t->exe);
	pt_sandbox_free(&t->sandbox);
	memset(t, 0, sizeof(*t));
}

static int tool_load(struct mock_tool *t, struct mock_tool_config *cfg, const char *self_exe, struct diag *d)
{
	struct fixture *f = NULL;
	int r = fixture_load(cfg->fixture, d, &f);

	if (r < 0)
		return r;
	return mock_tool_init(t, cfg, f, self_exe, d);
}

int mock_service_load(struct mock_config *cfg, const char *self_exe, struct diag *d, struct mock_service **ret)
{
	struct mock_service *s = calloc(1, sizeof(*s));
	int r = 0, first = 0;

	if (!s) {
		mock_config_free(cfg);
		return -ENOMEM;
	}
	s->cfg = cfg;
	buf_init(&s->scratch, MOCK_MAX_RESPONSE_BYTES);
	s->tools = calloc(cfg->ntools, sizeof(*s->tools));
	if (!s->tools) {
		mock_service_free(s);
		return -ENOMEM;
	}
	s->ntools = cfg->ntools;
	/* Load every tool even after a failure, so one run reports every bad fixture. */
	for (size_t i = 0; i < cfg->ntools; i++) {
		r = tool_load(&s->tools[i], &cfg->tools[i], self_exe, d);
		if (r == -ENOMEM) {
			first = r;
			break;
		}
		if (r < 0 && !first)
			first = r;
	}
	if (first < 0) {
		mock_service_free(s);
		return first;
	}
	*ret = s;
	return 0;
}

int mock_service_single(struct mock_config *cfg, struct fixture *f, const char *self_exe, struct diag *d,
			struct mock_service **ret)
{
	struct mock_service *s = calloc(1, sizeof(*s));
	int r;

	if (!s || !(s->tools = calloc(1, sizeof(*s->tools)))) {
		free(s);
		fixture_free(f);
		mock_config_free(cfg);
		return -ENOMEM;
	}
	s->cfg = cfg;
	s->ntools = 1;
	buf_init(&s->scratch, MOCK_MAX_RESPONSE_BYTES);
	r = mock_tool_init(&s->tools[0], &cfg->tools[0], f, self_exe, d);
	if (r < 0) {
		mock_service_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void mock_service_free(struct mock_service *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->tools && i < s->ntools; i++)
		if (s->tools[i].cfg)
			mock_tool_fini(&s->tools[i]);
	free(s->tools);
	buf_free(&s->scratch);
	mock_config_free(s->cfg);
	free(s);
}

int mock_service_confine(struct mock_service *s, const char *const *protect, size_t nprotect, struct diag *d)
{
	size_t n = 0;
	const char **all = calloc(s->ntools + nprotect + 1, sizeof(*all));
	int r = 0;

	if (!all)
		return -ENOMEM;
	/* What the tool must never reach: every fixture, the config, and the caller's list. */
	for (size_t i = 0; i < s->ntools; i++)
		all[n++] = s->tools[i].cfg->fixture;
	if (s->cfg->path)
		all[n++] = s->cfg->path;
	for (size_t i = 0; i < nprotect; i++)
		all[n++] = protect[i];
	for (size_t i = 0; i < s->ntools && r == 0; i++) {
		struct mock_tool *t = &s->tools[i];
		struct pt_sandbox_spec spec = { .exe = t->exe,
						.read = &t->cfg->pt_read,
						.write = &t->cfg->pt_write,
						.env = &t->cfg->pt_env,
						.protect = all,
						.nprotect = n };

		if (!t->exe || t->unconfined)
			continue;
		pt_sandbox_free(&t->sandbox);
		r = pt_sandbox_build(&spec, d, &t->sandbox);
		if (r < 0)
			diag_error(d, "%s: the real tool's sandbox cannot be built, so passthrough is refused",
				   t->cfg->tool);
	}
	free(all);
	return r;
}

const struct wire *mock_service_error(struct mock_service *s, const char *tool, int exit_code, const char *msg)
{
	char text[256];
	/* "TOOL: message", as a real CLI says it; without a tool (the request was never read) the
	 * bare message: no real CLI prints an "error:" prefix. */
	int n = tool && *tool ? snprintf(text, sizeof(text), "%s: %s\n", tool, msg) :
				snprintf(text, sizeof(text), "%s\n", msg);

	if (n < 0 || n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	buf_reset(&s->scratch);
	/* A 256-byte stderr always fits; an encoding failure here could only be ENOMEM. */
	if (mock_response_encode(&s->scratch, exit_code, "", 0, text, (size_t)n) < 0)
		return NULL;
	s->scratch_wire.data = s->scratch.data;
	s->scratch_wire.len = s->scratch.len;
	s->scratch_wire.exit_code = exit_code;
	return &s->scratch_wire;
}

static struct mock_tool *tool_find(struct mock_service *s, const char *name)
{
	for (size_t i = 0; i < s->ntools; i++)
		if (!strcmp(s->tools[i].cfg->tool, name))
			return &s->tools[i];
	return NULL;
}

static bool prefix_allowed(const struct mock_tool *t, const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < t->cfg->nprefixes; i++) {
		const struct strv *p = &t->cfg->prefixes[i];
		size_t j;

		if (p->n > argc)
			continue;
		for (j = 0; j < p->n && !strcmp(p->v[j], argv[j]); j++)
			;
		if (j == p->n)
			return true;
	}
	return false;
}

/* The cache key: every argument followed by a NUL (arguments cannot contain NUL). */
static char *cache_key(const char *const *argv, size_t argc, size_t *ret_len)
{
	size_t len = 0, off = 0;
	char *k;

	for (size_t i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	k = malloc(len + 1);
	if (!k)
		return NULL;
	for (size_t i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(k + off, argv[i], n);
		off += n;
	}
	*ret_len = len;
	return k;
}

static const struct wire *cache_get(struct mock_tool *t, const char *const *argv, size_t argc)
{
	size_t len;
	char *k = cache_key(argv, argc, &len);
	const struct wire *found = NULL;

	if (!k)
		return NULL;
	for (size_t i = 0; i < t->ncache; i++) {
		if (t->cache[i].key_len != len || memcmp(t->cache[i].key, k, len))
			continue;
		/* Move to the front: least recently used entries sit at the end. */
		struct cache_entry e = t->cache[i];

		memmove(&t->cache[1], &t->cache[0], i * sizeof(e));
		t->cache[0] = e;
		found = &t->cache[0].w;
		break;
	}
	free(k);
	return found;
}

void mock_service_cache_put(struct mock_service *s, struct mock_tool *t, const char *const *argv, size_t argc,
			    struct wire *w)
{
	size_t cap = s->cfg->cache_entries, len;
	char *k;

	if (cap == 0 || !(k = cache_key(argv, argc, &len))) {
		wire_free(w);
		return;
	}
	if (!t->cache && !(t->cache = calloc(cap, sizeof(*t->cache)))) {
		free(k);
		wire_free(w);
		return;
	}
	if (t->ncache == cap) {
		free(t->cache[cap - 1].key);
		wire_free(&t->cache[cap - 1].w);
		t->ncache--;
	}
	memmove(&t->cache[1], &t->cache[0], t->ncache * sizeof(*t->cache));
	t->cache[0] = (struct cache_entry){ .key = k, .key_len = len, .w = *w };
	t->ncache++;
	*w = (struct wire){ 0 };
}

enum mock_outcome mock_tool_classify(struct mock_tool *t, const char *const *argv, size_t argc, ssize_t *ret_rule)
{
	enum match_mode mode;
	ssize_t rule;

	*ret_rule = -1;
	if (t->record)
		return OUTCOME_PASSTHROUGH;
	rule = matcher_match(t->matcher, argv, argc, &mode);
	if (rule < -1)
		return OUTCOME_ERROR; /* out of memory: fail closed, never on to passthrough */
	if (rule >= 0) {
		*ret_rule = rule;
		return mode == MATCH_EXACT      ? OUTCOME_EXACT :
		       mode == MATCH_NORMALIZED ? OUTCOME_NORMALIZED :
						  OUTCOME_SUBSET;
	}
	if (prefix_allowed(t, argv, argc))
		return OUTCOME_PASSTHROUGH;
	return t->fixture->has_default ? OUTCOME_DEFAULT : OUTCOME_UNMOCKED;
}

static int decide_error(struct mock_service *s, struct mock_decision *ret, enum mock_outcome o, int code,
			const char *msg)
{
	ret->outcome = o;
	ret->w = mock_service_error(s, ret->tool ? ret->tool->cfg->tool : NULL, code, msg);
	return ret->w ? 0 : -ENOMEM;
}

int mock_service_decide(struct mock_service *s, const struct mock_request *req, struct mock_decision *ret)
{
	struct mock_tool *t = tool_find(s, req->tool);
	ssize_t rule;

	*ret = (struct mock_decision){ .rule = -1, .tool = t };
	if (!t && s->unknown_served >= s->cfg->unknown_tool_max_requests) {
		ret->outcome = OUTCOME_BUDGET;
		ret->w = mock_service_error(s, mock_tool_name_valid(req->tool) ? req->tool : NULL, MOCK_EXIT_BUDGET,
					    "request budget exhausted");
		return ret->w ? 0 : -ENOMEM;
	}
	if (!t) {
		s->unknown_served++;
		ret->w = mock_service_error(s, mock_tool_name_valid(req->tool) ? req->tool : NULL,
					    MOCK_EXIT_UNKNOWN_TOOL, "command not found");
		ret->outcome = OUTCOME_UNKNOWN_TOOL;
		return ret->w ? 0 : -ENOMEM;
	}
	/* max_requests is never 0 once loaded; a 0 left by a caller's own config is no budget at
	 * all, so nothing is served (fail closed) rather than everything. */
	if (t->served >= t->cfg->max_requests)
		return decide_error(s, ret, OUTCOME_BUDGET, MOCK_EXIT_BUDGET, "request budget exhausted");
	t->served++;
	ret->outcome = mock_tool_classify(t, req->argv, req->argc, &rule);
	ret->rule = rule;
	switch (ret->outcome) {
	case OUTCOME_EXACT:
	case OUTCOME_NORMALIZED:
	case OUTCOME_SUBSET:
		if (!t->rule_wire[rule].data && wire_encode(&t->rule_wire[rule], &t->fixture->rules[rule].resp) < 0)
			return decide_error(s, ret, ret->outcome, MOCK_EXIT_PASSTHROUGH_FAILED, "internal error");
		ret->w = &t->rule_wire[rule];
		return 0;
	case OUTCOME_PASSTHROUGH:
		ret->w = t->record ? NULL : cache_get(t, req->argv, req->argc);
		if (ret->w)
			ret->outcome = OUTCOME_CACHED;
		else if (!t->exe)
			return decide_error(s, ret, OUTCOME_PASSTHROUGH, MOCK_EXIT_PASSTHROUGH_UNAVAILABLE,
					    "service unavailable");
		return 0;
	case OUTCOME_DEFAULT:
		ret->w = &t->default_wire;
		return 0;
	case OUTCOME_ERROR:
		return decide_error(s, ret, OUTCOME_ERROR, MOCK_EXIT_PASSTHROUGH_FAILED, "internal error");
	default:
		return decide_error(s, ret, OUTCOME_UNMOCKED, MOCK_EXIT_UNMOCKED, "this command is not available");
	}
}
