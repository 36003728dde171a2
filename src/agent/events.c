/* SPDX-License-Identifier: MIT */
/* events.c: turn bookkeeping over an agent's event stream (see events.h). */
#include "events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/json.h"

json_t *events_path(const json_t *ev, const char *path)
{
	char key[128];
	const char *p = path;
	json_t *cur = (json_t *)ev;

	for (int depth = 0; cur && *p && depth < EVENTS_MAX_PATH_DEPTH; depth++) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (n == 0 || n >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		p += n + (dot ? 1 : 0);
		if (!dot)
			return cur;
	}
	return NULL;
}

static bool match_one(const json_t *ev, const json_t *when)
{
	const char *k;
	json_t *want;

	if (!json_is_object(when) || !json_is_object(ev))
		return false;
	json_object_foreach((json_t *)when, k, want) {
		json_t *got = events_path(ev, k);

		if (!got || !json_equal(got, want))
			return false;
	}
	return true;
}

bool events_match(const json_t *ev, const json_t *when)
{
	size_t i;
	json_t *w;

	if (json_is_object(when))
		return match_one(ev, when);
	json_array_foreach((json_t *)when, i, w)
		if (match_one(ev, w))
			return true;
	return false;
}

/* A "when": an object of scalars, or a list of at most EVENTS_MAX_RULES such objects. */
static bool when_ok(const json_t *w)
{
	size_t i;
	json_t *o;

	if (json_is_object(w)) {
		const char *k;
		json_t *v;

		if (!json_object_size(w))
			return false;
		json_object_foreach((json_t *)w, k, v)
			if (json_is_object(v) || json_is_array(v) || !*k)
				return false;
		return true;
	}
	if (!json_is_array(w) || !json_array_size(w) || json_array_size(w) > EVENTS_MAX_RULES)
		return false;
	json_array_foreach((json_t *)w, i, o)
		if (!json_is_object(o) || !when_ok(o))
			return false;
	return true;
}

/* An extraction rule {"when": W, "field": "a.b"}. */
static int extract_rule(const json_t *j, const char *key, json_t **ret_when, char **ret_field, const char **ret_why)
{
	const json_t *r = json_object_get(j, key), *w, *f;
	const char *k;
	json_t *v;

	if (!r)
		return 0;
	if (!json_is_object(r))
		return *ret_why = "must be an object {\"when\": ..., \"field\": ...}", -EINVAL;
	json_object_foreach((json_t *)r, k, v)
		if (strcmp(k, "when") && strcmp(k, "field"))
			return *ret_why = "unknown key (allowed: when, field)", -EINVAL;
	w = json_object_get(r, "when");
	f = json_object_get(r, "field");
	if (!when_ok(w))
		return *ret_why = "\"when\" must be an object of scalars or a list of such objects", -EINVAL;
	if (!json_is_string(f) || !json_string_length(f) || json_string_length(f) > 127)
		return *ret_why = "\"field\" must be a dotted path", -EINVAL;
	*ret_when = json_deep_copy(w);
	*ret_field = strdup(json_string_value(f));
	return *ret_when && *ret_field ? 0 : -ENOMEM;
}

int events_rules_parse(const json_t *j, struct events_rules *ret, const char **ret_key, const char **ret_why)
{
	static const char *const keys[] = { "framing", "end", "failed", "session_id", "usage", "error", NULL };
	struct events_rules r = { 0 };
	const char *k, *fr;
	json_t *v;
	int err = -EINVAL;

	*ret_key = "events";
	if (!json_is_object(j))
		return *ret_why = "must be an object", -EINVAL;
	json_object_foreach((json_t *)j, k, v) {
		bool known = false;

		for (size_t i = 0; keys[i]; i++)
			known |= !strcmp(keys[i], k);
		if (!known) {
			*ret_key = k;
			*ret_why = "unknown key";
			return -EINVAL;
		}
	}
	*ret_key = "events.framing";
	fr = json_string_value(json_object_get(j, "framing"));
	if (!fr || (strcmp(fr, "json_lines") && strcmp(fr, "lines")))
		return *ret_why = "must be \"json_lines\" or \"lines\"", -EINVAL;
	r.framing = !strcmp(fr, "json_lines") ? EVENTS_JSON_LINES : EVENTS_LINES;
	*ret_key = "events.end";
	if (json_object_get(j, "end") && !when_ok(json_object_get(j, "end"))) {
		*ret_why = "must be an object of scalars or a list of such objects";
		goto out;
	}
	if (r.framing == EVENTS_JSON_LINES && !json_object_get(j, "end")) {
		*ret_why = "JSON-lines agents must say which event ends a turn";
		goto out;
	}
	r.end = json_deep_copy(json_object_get(j, "end"));
	*ret_key = "events.failed";
	if (json_object_get(j, "failed") && !when_ok(json_object_get(j, "failed"))) {
		*ret_why = "must be an object of scalars or a list of such objects";
		goto out;
	}
	r.failed = json_deep_copy(json_object_get(j, "failed"));
	*ret_key = "events.session_id";
	if ((err = extract_rule(j, "session_id", &r.session_when, &r.session_field, ret_why)) < 0)
		goto out;
	*ret_key = "events.usage";
	if ((err = extract_rule(j, "usage", &r.usage_when, &r.usage_field, ret_why)) < 0)
		goto out;
	*ret_key = "events.error";
	if ((err = extract_rule(j, "error", &r.error_when, &r.error_field, ret_why)) < 0)
		goto out;
	*ret = r;
	return 0;
out:
	events_rules_free(&r);
	return err < 0 ? err : -EINVAL;
}

void events_rules_free(struct events_rules *r)
{
	json_decref(r->end);
	json_decref(r->failed);
	json_decref(r->session_when);
	json_decref(r->usage_when);
	json_decref(r->error_when);
	free(r->session_field);
	free(r->usage_field);
	free(r->error_field);
	memset(r, 0, sizeof(*r));
}

static void take_string(char **dst, const json_t *v, size_t max)
{
	const char *s = json_string_value(v);

	if (!s || json_string_length(v) > max)
		return;
	free(*dst);
	*dst = strdup(s);
}

json_t *events_feed(const struct events_rules *r, struct events_turn *t, const char *line, size_t len)
{
	json_t *ev;

	t->lines++;
	if (r->framing != EVENTS_JSON_LINES)
		return NULL;
	ev = json_loadb(line, len, 0, NULL);
	if (!json_is_object(ev)) {
		json_decref(ev);
		return NULL;
	}
	if (json_is_string(json_object_get(ev, "type")))
		t->recognised++;
	if (r->session_when && events_match(ev, r->session_when))
		take_string(&t->session_id, events_path(ev, r->session_field), EVENTS_MAX_ID_BYTES);
	if (r->usage_when && events_match(ev, r->usage_when) && events_path(ev, r->usage_field)) {
		json_decref(t->usage);
		t->usage = json_deep_copy(events_path(ev, r->usage_field));
	}
	if (r->error_when && events_match(ev, r->error_when)) {
		json_t *e = events_path(ev, r->error_field);

		if (json_is_string(e))
			take_string(&t->error, e, EVENTS_MAX_ERROR_BYTES);
		else if (e) {
			char *dump = NULL;

			if (json_dump_str(e, JSON_COMPACT, &dump) == 0 && strlen(dump) <= EVENTS_MAX_ERROR_BYTES) {
				free(t->error);
				t->error = dump;
				dump = NULL;
			}
			free(dump);
		}
	}
	if (!t->ended && r->end && events_match(ev, r->end)) {
		t->ended = true;
		t->failed = r->failed && events_match(ev, r->failed);
	}
	return ev;
}

void events_turn_free(struct events_turn *t)
{
	free(t->session_id);
	free(t->error);
	json_decref(t->usage);
	memset(t, 0, sizeof(*t));
}
