/* SPDX-License-Identifier: MIT */
/* report.c: the run report. Everything comes from files the agent could not write (result.json,
 * the journal, the staged fixtures), except the guard's denial count, which says so. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"
#include "../mock/analyze.h"
#include "../mock/fixture.h"
#include "../mock/service.h"

#define REPORT_MAX_JOURNAL_BYTES (256u << 20)

struct calls {
	json_t *lines; /* parsed journal lines */
	json_t *used;  /* {tool: {rule index: true}} */
};

static void read_journal(const char *dir, struct calls *c)
{
	char *path;
	struct buf b;

	c->lines = json_array();
	c->used = json_object();
	if (asprintf(&path, "%s/logs/calls.jsonl", dir) < 0)
		return;
	buf_init(&b, 0);
	if (fd_read_file(path, REPORT_MAX_JOURNAL_BYTES, &b) == 0) {
		for (char *p = b.data, *nl; p && (nl = strchr(p, '\n')); p = nl + 1) {
			json_t *j, *rule;
			const char *tool;

			*nl = '\0';
			if (!(j = json_loads(p, 0, NULL)) || !json_is_object(j)) {
				json_decref(j);
				continue;
			}
			rule = json_object_get(j, "rule");
			tool = json_string_value(json_object_get(j, "tool"));
			if (tool && json_is_integer(rule)) {
				char k[32];

				if (!json_object_get(c->used, tool))
					json_object_set_new(c->used, tool, json_object());
				snprintf(k, sizeof(k), "%lld", (long long)json_integer_value(rule));
				json_object_set_new(json_object_get(c->used, tool), k, json_true());
			}
			json_array_append_new(c->lines, j);
		}
	}
	buf_free(&b);
	free(path);
}

static json_t *tokens_array(const struct tokens *t)
{
	json_t *a = json_array();

	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(a, json_stringn(t->v[i].p, t->v[i].n));
	return a;
}

static struct mock_tool *find_tool(struct mock_service *svc, const char *name)
{
	for (size_t i = 0; svc && name && i < svc->ntools; i++)
		if (!strcmp(svc->tools[i].cfg->tool, name))
			return &svc->tools[i];
	return NULL;
}

static json_t *near_of(struct mock_tool *t, json_t *argv)
{
	struct near_miss near[REPORT_MAX_NEAR];
	const char *v[256];
	size_t argc = 0, i;
	json_t *a = json_array(), *s;
	ssize_t n;

	json_array_foreach(argv, i, s)
		if (argc < 256 && json_is_string(s))
			v[argc++] = json_string_value(s);
	n = t ? analyze_near_misses(t, v, argc, near, REPORT_MAX_NEAR) : 0;
	for (ssize_t k = 0; k < n; k++) {
		struct tokens missing = { 0 }, extra = { 0 };

		analyze_diff(t, near[k].rule, v, argc, &missing, &extra);
		json_array_append_new(a, json_pack("{s:I,s:o,s:o}", "rule", (json_int_t)near[k].rule, "missing",
						   tokens_array(&missing), "extra", tokens_array(&extra)));
		tokens_free(&missing);
		tokens_free(&extra);
	}
	return a;
}

static json_t *defaulted(struct calls *c, struct mock_service *svc)
{
	json_t *out = json_array(), *line;
	size_t i;

	json_array_foreach(c->lines, i, line) {
		const char *o = json_string_value(json_object_get(line, "outcome"));
		const char *tool = json_string_value(json_object_get(line, "tool"));

		if (!o || (strcmp(o, "default") && strcmp(o, "unmocked")) ||
		    json_array_size(out) == REPORT_MAX_DEFAULTED)
			continue;
		json_array_append_new(
			out,
			json_pack("{s:s?,s:O,s:s,s:O,s:o}", "tool", tool, "argv", json_object_get(line, "argv"),
				  "outcome", o, "exit", json_object_get(line, "exit"), "near",
				  svc ? near_of(find_tool(svc, tool), json_object_get(line, "argv")) : json_null()));
	}
	return out;
}

static json_t *unused(struct calls *c, struct mock_service *svc)
{
	json_t *out = json_object();

	for (size_t i = 0; svc && i < svc->ntools; i++) {
		json_t *idx = json_array(), *used = json_object_get(c->used, svc->tools[i].cfg->tool);

		for (size_t k = 0; k < svc->tools[i].fixture->nrules; k++) {
			char key[32];

			snprintf(key, sizeof(key), "%zu", k);
			if (!json_object_get(used, key))
				json_array_append_new(idx, json_integer((json_int_t)k));
		}
		json_object_set_new(out, svc->tools[i].cfg->tool, idx);
	}
	return out;
}

int report_json(const char *dir, struct diag *d, json_t **ret)
{
	struct mock_service *svc = NULL;
	struct mock_config *cfg = NULL;
	struct calls c = { 0 };
	struct diag quiet;
	json_t *result = NULL;
	char *path = NULL;
	int err;

	if (asprintf(&path, "%s/result.json", dir) < 0)
		return -ENOMEM;
	err = json_load_path(path, REPORT_MAX_RESULT_BYTES, d, &result);
	free(path);
	if (err < 0)
		return err;
	read_journal(dir, &c);
	/* The fixtures are root's: without them there are no near misses, and the report says so. */
	diag_init(&quiet);
	if (asprintf(&path, "%s/private/mock-config.json", dir) >= 0 && mock_config_load(path, &quiet, &cfg) == 0 &&
	    mock_service_load(cfg, NULL, &quiet, &svc) < 0)
		svc = NULL;
	free(path);
	diag_free(&quiet);
	*ret = json_pack("{s:o,s:o,s:o,s:b}", "result", result, "defaulted", defaulted(&c, svc), "unused_rules",
			 unused(&c, svc), "fixtures_read", svc != NULL);
	mock_service_free(svc);
	json_decref(c.lines);
	json_decref(c.used);
	return *ret ? 0 : -ENOMEM;
}

/* Every string in the report may come from the agent (argv, tool names, its error text, file
 * names): shown escaped, so it cannot move the cursor, start an escape sequence or forge a line
 * of the report. A ring of buffers: a printf takes several at once. */
static const char *esc(const char *s)
{
	static char ring[16][2048];
	static unsigned next;
	char *e = s ? str_escape(s) : NULL, *out = ring[next++ % 16];

	snprintf(out, sizeof(ring[0]), "%s", e ? e : s ? "(unprintable)" : "-");
	free(e);
	return out;
}

static const char *str(const json_t *o, const char *k)
{
	return esc(json_string_value(json_object_get(o, k)));
}

static long long num(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void text_head(const json_t *res, struct buf *out)
{
	const json_t *dur = json_object_get(res, "durations_ms"), *agent = json_object_get(res, "agent");
	static const char *const phases[] = { "stage", "bundles", "mockd", "guard", "worker", "agent", "teardown" };

	buf_printf(out, "run       %s\ntask      %s (%s)\nstatus    %s (exit %lld)%s%s\n", str(res, "run_dir"),
		   str(res, "task_id"), str(res, "task_file"), str(res, "status"), num(res, "exit_code"),
		   json_is_string(json_object_get(res, "reason")) ? ": " : "",
		   json_is_string(json_object_get(res, "reason")) ? str(res, "reason") : "");
	buf_printf(out, "time      %.2f s (", (double)num(dur, "total") / 1000.0);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		buf_printf(out, "%s%s %lld ms", i ? ", " : "", phases[i], num(dur, phases[i]));
	buf_printf(out, ")\n");
	if (json_array_size(json_object_get(agent, "turns"))) {
		char last[64] = "";

		if (json_is_integer(json_object_get(agent, "exit_code")))
			snprintf(last, sizeof(last), ", last exit status %lld", num(agent, "exit_code"));
		else if (json_is_integer(json_object_get(agent, "signal")))
			snprintf(last, sizeof(last), ", last killed by signal %lld", num(agent, "signal"));
		buf_printf(out, "agent     %s: %zu turns, %lld lines on stdout, %lld bytes on stderr%s%s\n",
			   str(agent, "kind"), json_array_size(json_object_get(agent, "turns")), num(agent, "events"),
			   num(agent, "stderr_bytes"), last,
			   json_is_true(json_object_get(agent, "timed_out")) ? " (stopped at the time limit)" : "");
	}
}

static void text_layers(const json_t *res, struct buf *out)
{
	const char *k;
	json_t *v;

	buf_printf(out, "\nisolation (each layer checked, not assumed)\n");
	json_object_foreach(json_object_get(res, "isolation"), k, v)
		buf_printf(out, "  %-9s %-17s %s\n", str(v, "state"), esc(k), str(v, "detail"));
	if (!json_object_size(json_object_get(res, "isolation")))
		buf_printf(out, "  none set up (the run stopped before the agent's sandbox)\n");
}

static void text_mocks(const json_t *rep, struct buf *out)
{
	const json_t *res = json_object_get(rep, "result"), *m = json_object_get(res, "mocks"), *by;
	const char *tool, *o;
	json_t *counts, *n, *d;
	size_t i;

	if (!json_is_object(m))
		return;
	buf_printf(out, "\nmock calls %lld (journal written by mockd, not the agent)\n", num(m, "calls"));
	by = json_object_get(m, "by_tool");
	json_object_foreach((json_t *)by, tool, counts) {
		buf_printf(out, "  %-10s", esc(tool));
		json_object_foreach(counts, o, n)
			buf_printf(out, " %s %lld", esc(o), (long long)json_integer_value(n));
		buf_printf(out, "\n");
	}
	json_array_foreach(json_object_get(rep, "defaulted"), i, d) {
		size_t k;
		json_t *a, *near;

		buf_printf(out, "  fell through (%s):", str(d, "outcome"));
		json_array_foreach(json_object_get(d, "argv"), k, a)
			buf_printf(out, " %s", esc(json_string_value(a)));
		buf_printf(out, "\n");
		json_array_foreach(json_object_get(d, "near"), k, near)
			buf_printf(out, "      nearest rule #%lld: %zu tokens missing, %zu extra\n", num(near, "rule"),
				   json_array_size(json_object_get(near, "missing")),
				   json_array_size(json_object_get(near, "extra")));
	}
	if (!json_is_true(json_object_get(rep, "fixtures_read")))
		buf_printf(out, "  (run as root for near misses and unused rules: the fixtures are root's)\n");
	json_object_foreach(json_object_get(rep, "unused_rules"), tool, counts) {
		json_t *x;

		buf_printf(out, "  unused rules of %s:", esc(tool));
		json_array_foreach(counts, i, x)
			buf_printf(out, " #%lld", (long long)json_integer_value(x));
		buf_printf(out, "%s\n", json_array_size(counts) ? "" : " none");
	}
}

static void text_rest(const json_t *res, struct buf *out)
{
	const json_t *g = json_object_get(res, "guard"), *td = json_object_get(res, "teardown"), *b, *p;
	char left[32];
	size_t i, k;
	json_t *e;

	json_array_foreach(json_object_get(res, "bundles"), i, b)
		buf_printf(out, "%s  %s  sha256 %.16s...  %lld files  %s\n", i ? "" : "\nbundles\n", str(b, "path"),
			   str(b, "digest"), num(b, "files"),
			   json_is_true(json_object_get(b, "verified_after")) ? "unchanged after the run" :
										"CHANGED or unverified");
	if (json_is_object(g))
		buf_printf(
			out,
			"\nguard     %s: %lld denials reported by the hook (unverified: the agent can write that log)\n",
			str(g, "harness"), num(g, "denials"));
	json_array_foreach(json_object_get(res, "private"), i, p) {
		buf_printf(out, "%s  %s: ", i ? "" : "\nprivate material\n", str(p, "path"));
		if (!json_array_size(json_object_get(p, "leaked_into")))
			buf_printf(out, "not in the workspace\n");
		json_array_foreach(json_object_get(p, "leaked_into"), k, e)
			buf_printf(out, "%sLEAKED into %s", k ? ", " : "", esc(json_string_value(e)));
		if (json_array_size(json_object_get(p, "leaked_into")))
			buf_printf(out, "\n");
	}
	if (json_is_integer(json_object_get(td, "left_behind")))
		snprintf(left, sizeof(left), "%lld", num(td, "left_behind"));
	else
		snprintf(left, sizeof(left), "no count of");
	buf_printf(out, "\nteardown  %s: %s processes left behind at the agent's exit, %zu survivors%s\n",
		   str(td, "method"), left, json_array_size(json_object_get(td, "survivors")),
		   json_is_true(json_object_get(td, "socket_removed")) ? ", socket removed" : ", SOCKET LEFT");
	json_array_foreach(json_object_get(td, "errors"), i, e)
		buf_printf(out, "  error: %s\n", esc(json_string_value(e)));
}

int report_text(const json_t *rep, struct buf *out)
{
	const json_t *res = json_object_get(rep, "result");

	text_head(res, out);
	text_layers(res, out);
	text_mocks(rep, out);
	text_rest(res, out);
	return 0;
}
