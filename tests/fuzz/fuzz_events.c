/* SPDX-License-Identifier: MIT */
/* fuzz_events.c: an agent's event stream (the agent writes it) read with Claude Code's
 * (stream-json), Codex's (exec --json) and the command agent's (plain lines) rules: every line fed
 * as the worker feeds it, and made the frame's JSON string as the worker makes it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/agent/events.h"
#include "../../src/lib/buf.h"
#include "../../src/lib/util.h"

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
	"{\"framing\":\"lines\"}",
};

/* The worker's text_json(): any bytes become a JSON string (invalid UTF-8 as U+FFFD). */
static void line_text(const char *p, size_t n)
{
	struct buf b;
	json_t *j;

	buf_init(&b, 0);
	if (utf8_sanitize(&b, p, n) == 0) {
		if (!(j = json_stringn(b.data ? b.data : "", b.len)))
			abort();
		json_decref(j);
	}
	buf_free(&b);
}

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

				if (k == 0)
					line_text(p, n);
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
