/* SPDX-License-Identifier: MIT */
/* fuzz_events.c: an agent's event stream (the agent writes it) read with Claude Code's and
 * Codex's rules: every line fed as the worker feeds it. */
#include <stdint.h>
#include <string.h>

#include "../../src/agent/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const rules_text[] = {
	"{\"framing\":\"json_lines\",\"end\":{\"type\":\"result\"},\"failed\":{\"is_error\":true},"
	"\"session_id\":{\"when\":{\"type\":\"system\",\"subtype\":\"init\"},\"field\":\"session_id\"},"
	"\"usage\":{\"when\":{\"type\":\"result\"},\"field\":\"usage\"},"
	"\"error\":{\"when\":{\"type\":\"result\",\"is_error\":true},\"field\":\"result\"}}",
	"{\"framing\":\"json_lines\",\"end\":[{\"type\":\"turn.completed\"},{\"type\":\"turn.failed\"}],"
	"\"failed\":{\"type\":\"turn.failed\"},\"session_id\":{\"when\":{\"type\":\"thread.started\"},\"field\":\"thread_id\"},"
	"\"usage\":{\"when\":{\"type\":\"turn.completed\"},\"field\":\"usage\"},"
	"\"error\":{\"when\":{\"type\":\"turn.failed\"},\"field\":\"error.message\"}}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t k = 0; k < sizeof(rules_text) / sizeof(rules_text[0]); k++) {
		json_t *j = json_loads(rules_text[k], 0, NULL);
		struct events_rules r;
		struct events_turn t = { 0 };
		const char *key, *why;
		const char *p = (const char *)data, *end = p + size;

		if (events_rules_parse(j, &r, &key, &why) == 0) {
			while (p < end) {
				const char *nl = memchr(p, '\n', (size_t)(end - p));
				size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

				json_decref(events_feed(&r, &t, p, n));
				p += n + 1;
			}
			events_turn_free(&t);
			events_rules_free(&r);
		}
		json_decref(j);
	}
	return 0;
}
