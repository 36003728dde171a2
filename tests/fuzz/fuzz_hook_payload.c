/* SPDX-License-Identifier: MIT */
/* fuzz_hook_payload.c: what `proctor guard hook` does with the harness's payload: parse it as
 * JSON, decide (Bash, Write/Edit, apply_patch, unknown tools), and format the verdict. No crash,
 * no leak, and a deny always carries a reason. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/guard/decide.h"
#include "../../src/guard/guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guard_marker m = { .active = true, .expires_ms = INT64_MAX };
	struct guard_verdict v;
	struct buf out;
	json_error_t e;
	json_t *payload;

	if (size > GUARD_MAX_INPUT_BYTES)
		return 0;
	payload = json_loadb((const char *)data, size, 0, &e);
	if (!json_is_object(payload)) {
		json_decref(payload);
		return 0;
	}
	strv_push(&m.roots, "/nonexistent/ws");
	guard_decide(&m, payload, &v);
	if (v.deny && !v.reason[0])
		abort();
	buf_init(&out, 0);
	if (v.deny && guard_verdict_json(HARNESS_CODEX, v.reason, &out) < 0)
		abort();
	buf_free(&out);
	guard_verdict_free(&v);
	guard_marker_free(&m);
	json_decref(payload);
	return 0;
}
