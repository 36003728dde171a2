/* SPDX-License-Identifier: MIT */
/* events.h: reading an agent's event stream (doc/AGENTS.md): its framing (JSON lines or plain
 * lines), which event ends a turn, which marks it failed, where the session id, the token
 * usage and the error message are. The rules are data from the agent's descriptor; matching is
 * a pure function over one parsed line, so it is unit-tested and fuzzed on its own. */
#ifndef PROCTOR_AGENT_EVENTS_H
#define PROCTOR_AGENT_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define EVENTS_MAX_ID_BYTES 256
#define EVENTS_MAX_ERROR_BYTES 2048
#define EVENTS_MAX_RULES 16
#define EVENTS_MAX_PATH_DEPTH 8

enum events_framing { EVENTS_LINES, EVENTS_JSON_LINES };

/* A rule: "when" (one object, or a list of objects; an event matches an object when every key
 * of it has the same scalar value in the event, dotted keys reaching into nested objects) and,
 * for extraction rules, "field" (a dotted path to the value to take). */
struct events_rules {
	enum events_framing framing;
	json_t *end;          /* a list of "when" objects: the turn's last event */
	json_t *failed;       /* the end event matches one of these too: the turn failed */
	json_t *session_when; /* the event that carries the session id ... */
	char *session_field;  /* ... and where */
	json_t *usage_when;
	char *usage_field;
	json_t *error_when;
	char *error_field;
};

struct events_turn {
	bool ended, failed;
	unsigned long long lines, recognised; /* recognised: JSON objects (with a "type" key) */
	char *session_id;
	json_t *usage;
	char *error;
};

/* Rules from their JSON (a descriptor's "events" object). -EINVAL with the key at fault in
 * *ret_key and why in *ret_why. */
int events_rules_parse(const json_t *j, struct events_rules *ret, const char **ret_key, const char **ret_why);
void events_rules_free(struct events_rules *r);
/* Does `ev` match `when` (an object or a list of objects)? */
bool events_match(const json_t *ev, const json_t *when);
/* The value at a dotted path, or NULL. */
json_t *events_path(const json_t *ev, const char *path);
/* One line of the agent's stdout: updates the turn; returns the line as JSON when the framing is
 * JSON lines and it parses to an object (a new reference), else NULL. */
json_t *events_feed(const struct events_rules *r, struct events_turn *t, const char *line, size_t len);
void events_turn_free(struct events_turn *t);

#endif
