/* SPDX-License-Identifier: MIT */
/* fixture.c: load and validate fixtures and server configs. Collects every error, not just the
 * first, so `proctor fixtures check` and mockd report the same complete list. */
#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/json.h"
#include "../lib/path.h"
#include "../lib/util.h"
#include "protocol.h"
#include "sandbox.h"

const char *match_mode_name(enum match_mode m)
{
	switch (m) {
	case MATCH_EXACT:
		return "exact";
	case MATCH_NORMALIZED:
		return "normalized";
	case MATCH_SUBSET:
		return "subset";
	default:
		return "?";
	}
}

/* Validate a response body (a rule or the default). `ctx` is "responses[3]" or "default".
 * Strings are copied into `a` when given (rules), else kept in the JSON (the default). */
static int response_parse(const char *path, const char *ctx, json_t *o, struct mock_response *r, struct arena *a,
			  struct diag *d)
{
	json_t *ec = json_object_get(o, "exit_code");
	json_t *so = json_object_get(o, "stdout");
	json_t *se = json_object_get(o, "stderr");

	r->exit_code = 0;
	r->out = r->err = "";
	r->out_len = r->err_len = 0;
	if (ec) {
		if (!json_is_integer(ec))
			diag_error(d, "%s: %s.exit_code: must be an integer from 0 to 255, got %s", path, ctx,
				   json_type_name(ec));
		else if (json_integer_value(ec) < 0 || json_integer_value(ec) > 255)
			diag_error(d, "%s: %s.exit_code: must be an integer from 0 to 255, got %" JSON_INTEGER_FORMAT,
				   path, ctx, json_integer_value(ec));
		else
			r->exit_code = (int)json_integer_value(ec);
	}
	if (so && !json_is_string(so))
		diag_error(d, "%s: %s.stdout: must be a string, got %s", path, ctx, json_type_name(so));
	else if (so) {
		r->out_len = json_string_length(so);
		r->out = a ? arena_strndup(a, json_string_value(so), r->out_len) : json_string_value(so);
	}
	if (se && !json_is_string(se))
		diag_error(d, "%s: %s.stderr: must be a string, got %s", path, ctx, json_type_name(se));
	else if (se) {
		r->err_len = json_string_length(se);
		r->err = a ? arena_strndup(a, json_string_value(se), r->err_len) : json_string_value(se);
	}
	if (!r->out || !r->err)
		return -ENOMEM;
	if (r->out_len + r->err_len > MOCK_MAX_OUTPUT_BYTES)
		diag_error(d, "%s: %s: stdout and stderr together are %zu bytes, over the %d byte limit", path, ctx,
			   r->out_len + r->err_len, MOCK_MAX_OUTPUT_BYTES);
	return 0;
}

static enum match_mode rule_mode(const char *path, const char *ctx, json_t *mode, struct diag *d)
{
	const char *m = json_is_string(mode) ? json_string_value(mode) : NULL;

	if (!mode || (m && !strcmp(m, "exact")))
		return MATCH_EXACT;
	if (m && !strcmp(m, "normalized"))
		return MATCH_NORMALIZED;
	if (m && !strcmp(m, "subset"))
		return MATCH_SUBSET;
	diag_error(d, "%s: %s.match_mode: must be \"exact\", \"normalized\" or \"subset\", got %s%s%s", path, ctx,
		   m ? "\"" : "", m ? m : json_type_name(mode), m ? "\"" : "");
	return MATCH_EXACT;
}

static int rule_parse(struct fixture *f, size_t i, json_t *o, struct diag *d)
{
	static const char *no_argv[1] = { NULL };
	struct fixture_rule *rule = &f->rules[i];
	json_t *argv = json_object_get(o, "argv");
	char ctx[48];

	memset(rule, 0, sizeof(*rule));
	snprintf(ctx, sizeof(ctx), "responses[%zu]", i);
	if (!json_is_object(o)) {
		diag_error(d, "%s: %s: must be an object, got %s", f->path, ctx, json_type_name(o));
		rule->argv = no_argv;
		rule->resp.out = rule->resp.err = "";
		return 0;
	}
	rule->mode = rule_mode(f->path, ctx, json_object_get(o, "match_mode"), d);
	rule->argc = json_array_size(argv);
	rule->argv = arena_alloc(&f->arena, (rule->argc + 1) * sizeof(*rule->argv));
	if (!rule->argv)
		return -ENOMEM;
	if (!json_is_array(argv))
		diag_error(d, "%s: %s.argv: must be a list of strings, got %s", f->path, ctx,
			   argv ? json_type_name(argv) : "nothing");
	for (size_t j = 0; j < rule->argc; j++) {
		json_t *a = json_array_get(argv, j);

		if (!json_is_string(a)) {
			diag_error(d, "%s: %s.argv[%zu]: must be a string, got %s", f->path, ctx, j, json_type_name(a));
			rule->argv[j] = "";
		} else if (!(rule->argv[j] = arena_strndup(&f->arena, json_string_value(a), json_string_length(a)))) {
			return -ENOMEM;
		}
	}
	rule->argv[rule->argc] = NULL;
	if (rule->mode == MATCH_SUBSET && json_is_array(argv) && rule->argc == 0)
		diag_error(d, "%s: %s.argv: must not be empty for subset matching", f->path, ctx);
	return response_parse(f->path, ctx, o, &rule->resp, &f->arena, d);
}

/* A noise_flags list (in a fixture, ctx "", or a tool config, ctx "tools[i]."): each a flag
 * starting with '-' and without '='. Valid ones are copied into *out. */
static int noise_flags_parse(const char *path, const char *ctx, json_t *nf, struct strv *out, struct diag *d)
{
	if (!json_is_array(nf) || json_array_size(nf) > MOCK_MAX_NOISE_FLAGS) {
		diag_error(d, "%s: %snoise_flags: must be a list of at most %d flags, got %s", path, ctx,
			   MOCK_MAX_NOISE_FLAGS, json_type_name(nf));
		return 0;
	}
	for (size_t i = 0; i < json_array_size(nf); i++) {
		json_t *s = json_array_get(nf, i);

		if (!json_is_string(s) || json_string_value(s)[0] != '-' || strchr(json_string_value(s), '='))
			diag_error(d, "%s: %snoise_flags[%zu]: must be a flag string starting with '-' and without '='",
				   path, ctx, i);
		else if (strv_push(out, json_string_value(s)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- the streaming walk ---------------------------------------------------------------------
 * jansson decodes every token (JSON_DISABLE_EOF_CHECK reports how many bytes a value took); this
 * code only steps over whitespace and the structural characters of the top two levels. */

struct walk {
	const char *path, *b;
	size_t n, p;
	struct diag *d;
};

static void walk_skip_ws(struct walk *w)
{
	while (w->p < w->n && (w->b[w->p] == ' ' || w->b[w->p] == '\t' || w->b[w->p] == '\n' || w->b[w->p] == '\r'))
		w->p++;
}

static int walk_error(struct walk *w, size_t off, const char *what)
{
	int line = 1, col = 1;

	for (size_t i = 0; i < off && i < w->n; i++, col++)
		if (w->b[i] == '\n') {
			line++;
			col = 0;
		}
	diag_error(w->d, "%s:%d:%d: invalid JSON: %s", w->path, line, col, what);
	return -EINVAL;
}

static json_t *walk_value(struct walk *w)
{
	json_error_t e;
	json_t *v = json_loadb(w->b + w->p, w->n - w->p,
			       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);

	if (!v) {
		/* jansson's position is just past the byte it could not use. */
		walk_error(w, w->p + (size_t)(e.position > 0 ? e.position - 1 : 0), e.text);
		return NULL;
	}
	w->p += (size_t)e.position;
	return v;
}

/* After an element: ',' continues (returns 1), `close` ends (0), anything else is an error. */
static int walk_next(struct walk *w, char close)
{
	walk_skip_ws(w);
	if (w->p < w->n && w->b[w->p] == ',') {
		w->p++;
		walk_skip_ws(w);
		return 1;
	}
	if (w->p < w->n && w->b[w->p] == close) {
		w->p++;
		return 0;
	}
	return walk_error(w, w->p, close == ']' ? "',' or ']' expected" : "',' or '}' expected");
}

static int walk_responses(struct walk *w, struct fixture *f, struct diag *d)
{
	size_t cap = 0;
	int more, r;

	w->p++; /* '[' */
	walk_skip_ws(w);
	if (w->p < w->n && w->b[w->p] == ']') {
		w->p++;
		return 0;
	}
	do {
		size_t start = w->p;
		json_t *el = walk_value(w);

		if (!el)
			return -EINVAL;
		if (f->nrules == cap) {
			struct fixture_rule *nr = realloc(f->rules, (cap ? cap * 2 : 64) * sizeof(*nr));

			if (!nr) {
				json_decref(el);
				return -ENOMEM;
			}
			f->rules = nr;
			cap = cap ? cap * 2 : 64;
		}
		r = rule_parse(f, f->nrules, el, d);
		json_decref(el);
		if (r < 0)
			return r;
		f->rules[f->nrules].span_off = start;
		f->rules[f->nrules].span_len = w->p - start;
		f->nrules++;
		more = walk_next(w, ']');
	} while (more == 1);
	return more;
}

static int walk_member(struct walk *w, struct fixture *f, bool *streamed, struct diag *d)
{
	json_t *key = walk_value(w), *v;
	const char *k;
	int r = 0;

	if (!key)
		return -EINVAL;
	if (!json_is_string(key)) {
		json_decref(key);
		return walk_error(w, w->p, "object key expected");
	}
	k = json_string_value(key);
	walk_skip_ws(w);
	if (w->p >= w->n || w->b[w->p] != ':') {
		r = walk_error(w, w->p, "':' expected");
	} else {
		w->p++;
		walk_skip_ws(w);
		if (json_object_get(f->meta, k) || (*streamed && !strcmp(k, "responses"))) {
			r = walk_error(w, w->p, "duplicate object key");
		} else if (!strcmp(k, "responses") && w->p < w->n && w->b[w->p] == '[') {
			*streamed = true;
			r = walk_responses(w, f, d);
		} else if (!(v = walk_value(w))) {
			r = -EINVAL;
		} else if (json_object_set_new(f->meta, k, v) < 0) {
			r = -ENOMEM;
		}
	}
	json_decref(key);
	return r;
}

static int walk_fixture(struct walk *w, struct fixture *f, bool *streamed, struct diag *d)
{
	int more = 1, r;

	walk_skip_ws(w);
	if (w->p >= w->n || w->b[w->p] != '{') {
		json_t *v = walk_value(w);

		if (v)
			diag_error(d, "%s: must be a JSON object, got %s", w->path, json_type_name(v));
		json_decref(v);
		return -EINVAL;
	}
	if (!(f->meta = json_object()))
		return -ENOMEM;
	w->p++;
	walk_skip_ws(w);
	if (w->p < w->n && w->b[w->p] == '}') {
		w->p++;
		more = 0;
	}
	while (more == 1) {
		r = walk_member(w, f, streamed, d);
		if (r < 0)
			return r;
		more = walk_next(w, '}');
	}
	if (more < 0)
		return more;
	walk_skip_ws(w);
	return w->p == w->n ? 0 : walk_error(w, w->p, "end of file expected");
}

static int fixture_check_meta(struct fixture *f, bool streamed, struct diag *d)
{
	json_t *v = json_object_get(f->meta, "version");
	json_t *resp = json_object_get(f->meta, "responses");
	json_t *dflt = json_object_get(f->meta, "default");
	json_t *nf = json_object_get(f->meta, "noise_flags");
	int r;

	if (!json_is_integer(v) || json_integer_value(v) != 1)
		diag_error(d, "%s: version: must be 1", f->path);
	if (!streamed)
		diag_error(d, "%s: responses: must be a list, got %s", f->path,
			   resp ? json_type_name(resp) : "nothing");
	if (dflt && !json_is_object(dflt)) {
		diag_error(d, "%s: default: must be an object, got %s", f->path, json_type_name(dflt));
	} else if (dflt) {
		f->has_default = true;
		r = response_parse(f->path, "default", dflt, &f->dflt, NULL, d);
		if (r < 0)
			return r;
	}
	if (nf) {
		f->has_noise_flags = true;
		return noise_flags_parse(f->path, "", nf, &f->noise_flags, d);
	}
	return 0;
}

static struct fixture *fixture_new(const char *path)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	arena_init(&f->arena);
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	return f;
}

/* *ret_complete: the whole file was read (any errors are in fields, not in the JSON). */
static int fixture_parse(struct fixture *f, const char *data, size_t len, struct diag *d, bool *ret_complete)
{
	size_t errors_before = d->errors;
	struct walk w = { .path = f->path, .b = data ? data : "", .n = len, .d = d };
	bool streamed = false;
	int r;

	*ret_complete = false;
	r = walk_fixture(&w, f, &streamed, d);
	if (r == 0)
		r = fixture_check_meta(f, streamed, d);
	*ret_complete = r == 0;
	if (r == 0 && d->errors > errors_before)
		r = -EINVAL;
	return r;
}

int fixture_load_buf(const char *path, const char *data, size_t len, struct diag *d, struct fixture **ret)
{
	struct fixture *f = fixture_new(path);
	bool complete;
	int r;

	if (!f)
		return -ENOMEM;
	r = fixture_parse(f, data, len, d, &complete);
	if (r < 0) {
		fixture_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

static int fixture_load_file(const char *path, bool keep_invalid, struct diag *d, struct fixture **ret)
{
	struct fixture *f = fixture_new(path);
	struct buf b;
	bool parsed = false;
	int r;

	if (!f)
		return -ENOMEM;
	buf_init(&b, 0);
	r = json_read_path(path, FIXTURE_MAX_FILE_BYTES, d, &b);
	/* Parsed through (errors only in fields): every rule slot is filled and safe to use. */
	if (r == 0)
		r = fixture_parse(f, b.data, b.len, d, &parsed);
	buf_free(&b); /* before the matcher is built: the file and the index never coexist */
	if (r < 0 && !(keep_invalid && parsed)) {
		fixture_free(f);
		return r;
	}
	*ret = f;
	return r;
}

int fixture_load(const char *path, struct diag *d, struct fixture **ret)
{
	return fixture_load_file(path, false, d, ret);
}

int fixture_load_keep(const char *path, struct diag *d, struct fixture **ret)
{
	return fixture_load_file(path, true, d, ret);
}

void fixture_free(struct fixture *f)
{
	if (!f)
		return;
	free(f->rules);
	strv_free(&f->noise_flags);
	if (f->meta)
		json_decref(f->meta);
	arena_free(&f->arena);
	free(f->path);
	free(f);
}

void mock_config_free(struct mock_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntools; i++) {
		struct mock_tool_config *t = &c->tools[i];

		free(t->tool);
		free(t->fixture);
		for (size_t j = 0; j < t->nprefixes; j++)
			strv_free(&t->prefixes[j]);
		free(t->prefixes);
		free(t->passthrough_executable);
		strv_free(&t->noise_flags);
		strv_free(&t->pt_read);
		strv_free(&t->pt_write);
		strv_free(&t->pt_env);
	}
	free(c->tools);
	free(c->allowed_uids);
	free(c->path);
	free(c);
}

static int prefix_push(struct mock_tool_config *t, struct strv *p)
{
	struct strv *v;

	for (size_t i = 0; i < t->nprefixes; i++) {
		size_t j;

		if (t->prefixes[i].n != p->n)
			continue;
		for (j = 0; j < p->n && !strcmp(t->prefixes[i].v[j], p->v[j]); j++)
			;
		if (j == p->n)
			return -EEXIST;
	}
	v = realloc(t->prefixes, (t->nprefixes + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->prefixes = v;
	t->prefixes[t->nprefixes++] = *p;
	*p = (struct strv){ 0 };
	return 0;
}

int mock_tool_add_prefix(struct mock_tool_config *t, const char *words)
{
	struct strv p = { 0 };
	_cleanup_free_ char *copy = strdup(words);
	char *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc): copy is freed by _cleanup_free_, which the analyzer does not model */
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		r = strv_push(&p, w);
		if (r < 0)
			goto out;
	}
	if (p.n == 0 || p.n > MOCK_MAX_PREFIX_TOKENS || t->nprefixes >= MOCK_MAX_PREFIXES) {
		r = -EINVAL;
		goto out;
	}
	r = prefix_push(t, &p);
out:
	strv_free(&p);
	return r;
}

/* A positive integer option, or absent. */
static void config_uint(const char *path, const char *ctx, json_t *o, const char *key, unsigned long min,
			unsigned long max, unsigned long *ret, struct diag *d)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return;
	if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min || json_integer_value(v) > (json_int_t)max)
		diag_error(d, "%s: %s%s: must be an integer from %lu to %lu", path, ctx, key, min, max);
	else
		*ret = (unsigned long)json_integer_value(v);
}

static int tool_prefixes_parse(const char *path, const char *ctx, json_t *list, struct mock_tool_config *t,
			       struct diag *d)
{
	size_t i, j;
	int r;

	if (!list)
		return 0;
	if (!json_is_array(list) || json_array_size(list) > MOCK_MAX_PREFIXES) {
		diag_error(d, "%s: %spassthrough_argv_prefixes: must be a list of at most %d prefixes", path, ctx,
			   MOCK_MAX_PREFIXES);
		return 0;
	}
	for (i = 0; i < json_array_size(list); i++) {
		json_t *p = json_array_get(list, i);
		struct strv sv = { 0 };

		if (!json_is_array(p) || json_array_size(p) < 1 || json_array_size(p) > MOCK_MAX_PREFIX_TOKENS) {
			diag_error(d,
				   "%s: %spassthrough_argv_prefixes[%zu]: must be a list of 1 to %d non-empty strings",
				   path, ctx, i, MOCK_MAX_PREFIX_TOKENS);
			continue;
		}
		for (j = 0; j < json_array_size(p); j++) {
			json_t *s = json_array_get(p, j);

			if (!json_is_string(s) || !json_string_length(s)) {
				diag_error(d, "%s: %spassthrough_argv_prefixes[%zu][%zu]: must be a non-empty string",
					   path, ctx, i, j);
				break;
			}
			if (strv_push(&sv, json_string_value(s)) < 0) {
				strv_free(&sv);
				return -ENOMEM;
			}
		}
		r = j == json_array_size(p) ? prefix_push(t, &sv) : 0;
		strv_free(&sv);
		if (r == -EEXIST)
			diag_error(d, "%s: %spassthrough_argv_prefixes[%zu]: duplicate prefix", path, ctx, i);
		else if (r < 0)
			return r;
	}
	return 0;
}

/* passthrough_read_paths / passthrough_write_paths: absolute paths. */
static int tool_paths_parse(const char *path, const char *ctx, json_t *o, const char *key, struct strv *out,
			    struct diag *d)
{
	json_t *l = json_object_get(o, key);

	if (!l)
		return 0;
	if (!json_is_array(l) || json_array_size(l) > SANDBOX_MAX_PATHS) {
		diag_error(d, "%s: %s%s: must be a list of at most %d absolute paths", path, ctx, key,
			   SANDBOX_MAX_PATHS);
		return 0;
	}
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *v = json_array_get(l, i);

		if (!json_is_string(v) || json_string_value(v)[0] != '/')
			diag_error(d, "%s: %s%s[%zu]: must be an absolute path", path, ctx, key, i);
		else if (strv_push(out, json_string_value(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* passthrough_env: {"NAME":"value"}, the real tool's whole environment besides PATH. */
static int tool_env_parse(const char *path, const char *ctx, json_t *o, struct strv *out, struct diag *d)
{
	json_t *env = json_object_get(o, "passthrough_env"), *v;
	const char *k;
	char line[4096];

	if (!env)
		return 0;
	if (!json_is_object(env) || json_object_size(env) > SANDBOX_MAX_ENV) {
		diag_error(d, "%s: %spassthrough_env: must be an object of at most %d strings", path, ctx,
			   SANDBOX_MAX_ENV);
		return 0;
	}
	json_object_foreach(env, k, v) {
		int n = json_is_string(v) ? snprintf(line, sizeof(line), "%s=%s", k, json_string_value(v)) : -1;

		if (n < 0 || n >= (int)sizeof(line) || !sandbox_env_valid(line) || strlen(line) != (size_t)n)
			diag_error(
				d,
				"%s: %spassthrough_env.%s: must be a variable name with a string value under %zu bytes",
				path, ctx, k, sizeof(line));
		else if (strv_push(out, line) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int tool_parse(struct mock_config *c, size_t i, json_t *o, struct diag *d)
{
	struct mock_tool_config *t = &c->tools[i];
	json_t *name = json_object_get(o, "tool"), *fx = json_object_get(o, "fixture");
	json_t *exe = json_object_get(o, "passthrough_executable");
	unsigned long timeout_s = MOCK_DEFAULT_PASSTHROUGH_TIMEOUT_MS / 1000;
	char ctx[48];
	int r;

	snprintf(ctx, sizeof(ctx), "tools[%zu].", i);
	if (!json_is_object(o)) {
		diag_error(d, "%s: tools[%zu]: must be an object", c->path, i);
		return 0;
	}
	if (!json_is_string(name) || !mock_tool_name_valid(json_string_value(name)))
		diag_error(d, "%s: %stool: must be a bare executable name (1-%d of A-Z a-z 0-9 . _ + -)", c->path, ctx,
			   MOCK_MAX_TOOL_NAME);
	else if (!(t->tool = strdup(json_string_value(name))))
		return -ENOMEM;
	for (size_t k = 0; t->tool && k < i; k++)
		if (c->tools[k].tool && !strcmp(c->tools[k].tool, t->tool))
			diag_error(d, "%s: %stool: duplicate tool \"%s\" (also tools[%zu])", c->path, ctx, t->tool, k);
	if (!json_is_string(fx) || !json_string_length(fx))
		diag_error(d, "%s: %sfixture: must be a non-empty path string", c->path, ctx);
	else if (!(t->fixture = path_relative_to_file(c->path, json_string_value(fx))))
		return -ENOMEM;
	/* Required, as the reference requires it: a missing budget must never mean "unlimited". */
	if (!json_object_get(o, "max_requests"))
		diag_error(d, "%s: %smax_requests: required (the tool's request budget, 1 to 100000000)", c->path, ctx);
	config_uint(c->path, ctx, o, "max_requests", 1, 100000000, &t->max_requests, d);
	config_uint(c->path, ctx, o, "passthrough_timeout_seconds", 1, 3600, &timeout_s, d);
	t->passthrough_timeout_ms = (unsigned)timeout_s * 1000u;
	if (exe && (!json_is_string(exe) || json_string_value(exe)[0] != '/'))
		diag_error(d, "%s: %spassthrough_executable: must be an absolute path", c->path, ctx);
	else if (exe && !(t->passthrough_executable = strdup(json_string_value(exe))))
		return -ENOMEM;
	r = tool_prefixes_parse(c->path, ctx, json_object_get(o, "passthrough_argv_prefixes"), t, d);
	if (r == 0)
		r = tool_paths_parse(c->path, ctx, o, "passthrough_read_paths", &t->pt_read, d);
	if (r == 0)
		r = tool_paths_parse(c->path, ctx, o, "passthrough_write_paths", &t->pt_write, d);
	if (r == 0)
		r = tool_env_parse(c->path, ctx, o, &t->pt_env, d);
	if (r == 0 && json_object_get(o, "noise_flags")) {
		t->has_noise_flags = true;
		r = noise_flags_parse(c->path, ctx, json_object_get(o, "noise_flags"), &t->noise_flags, d);
	}
	return r;
}

static int config_uids_parse(struct mock_config *c, json_t *list, struct diag *d)
{
	if (!list)
		return 0;
	if (!json_is_array(list) || json_array_size(list) > 64) {
		diag_error(d, "%s: allowed_uids: must be a list of at most 64 uids", c->path);
		return 0;
	}
	c->allowed_uids = calloc(json_array_size(list) + 1, sizeof(uid_t));
	if (!c->allowed_uids)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *u = json_array_get(list, i);

		if (!json_is_integer(u) || json_integer_value(u) < 0 || json_integer_value(u) >= 4294967295LL)
			diag_error(d, "%s: allowed_uids[%zu]: must be a uid number", c->path, i);
		else
			c->allowed_uids[c->nallowed++] = (uid_t)json_integer_value(u);
	}
	return 0;
}

static int config_parse(struct mock_config *c, json_t *root, struct diag *d)
{
	json_t *v = json_object_get(root, "version"), *tools = json_object_get(root, "tools");
	unsigned long timeout_s = 0, cache = MOCK_DEFAULT_CACHE_ENTRIES;
	int r;

	if (!json_is_integer(v) || json_integer_value(v) != 1)
		diag_error(d, "%s: version: must be 1", c->path);
	if (!json_is_array(tools) || json_array_size(tools) == 0 || json_array_size(tools) > MOCK_MAX_TOOLS) {
		diag_error(d, "%s: tools: must be a non-empty list of at most %d tools", c->path, MOCK_MAX_TOOLS);
		return 0;
	}
	c->ntools = json_array_size(tools);
	c->tools = calloc(c->ntools, sizeof(*c->tools));
	if (!c->tools)
		return -ENOMEM;
	for (size_t i = 0; i < c->ntools; i++) {
		r = tool_parse(c, i, json_array_get(tools, i), d);
		if (r < 0)
			return r;
	}
	config_uint(c->path, "", root, "client_timeout_seconds", 1, 3600, &timeout_s, d);
	c->client_timeout_ms = (unsigned)timeout_s * 1000u;
	config_uint(c->path, "", root, "passthrough_cache_entries", 0, 1000000, &cache, d);
	c->cache_entries = (unsigned)cache;
	c->unknown_tool_max_requests = MOCK_DEFAULT_UNKNOWN_TOOL_BUDGET;
	config_uint(c->path, "", root, "unknown_tool_max_requests", 1, 100000000, &c->unknown_tool_max_requests, d);
	return config_uids_parse(c, json_object_get(root, "allowed_uids"), d);
}

int mock_config_load(const char *path, struct diag *d, struct mock_config **ret)
{
	_cleanup_json_ json_t *root = NULL;
	struct mock_config *c;
	size_t errors_before = d->errors;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		return -ENOMEM;
	}
	r = json_load_path(path, MOCK_CONFIG_MAX_FILE_BYTES, d, &root);
	if (r == 0 && !json_is_object(root)) {
		diag_error(d, "%s: must be a JSON object", path);
		r = -EINVAL;
	}
	if (r == 0)
		r = config_parse(c, root, d);
	if (r == 0 && d->errors > errors_before)
		r = -EINVAL;
	if (r < 0) {
		mock_config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int mock_config_single(const char *tool, const char *fixture, struct mock_config **ret)
{
	struct mock_config *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->cache_entries = MOCK_DEFAULT_CACHE_ENTRIES;
	c->unknown_tool_max_requests = MOCK_DEFAULT_UNKNOWN_TOOL_BUDGET;
	c->tools = calloc(1, sizeof(*c->tools));
	if (!c->tools) {
		free(c);
		return -ENOMEM;
	}
	c->ntools = 1;
	c->tools[0].tool = strdup(tool);
	c->tools[0].fixture = strdup(fixture);
	c->tools[0].passthrough_timeout_ms = MOCK_DEFAULT_PASSTHROUGH_TIMEOUT_MS;
	c->tools[0].max_requests = MOCK_DEFAULT_MAX_REQUESTS;
	if (!c->tools[0].tool || !c->tools[0].fixture) {
		mock_config_free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}
