/* SPDX-License-Identifier: MIT */
/* fuzz_apply_patch.c: the guard's apply_patch parser (Codex's patch text, which the agent writes):
 * the headers alone, then the whole decision for the apply_patch tool and Codex's argv form. Every
 * target is a non-empty single line, and a deny always carries a reason. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/guard/decide.h"
#include "../../src/guard/guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decide(struct guard_marker *m, json_t *payload)
{
	struct guard_verdict v;

	if (!payload)
		return;
	guard_decide(m, payload, &v);
	if (v.deny && !v.reason[0])
		abort();
	guard_verdict_free(&v);
	json_decref(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guard_marker m = { .active = true, .expires_ms = INT64_MAX };
	struct strv targets = { 0 };
	char *text = malloc(size + 1);
	const char *bad;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (guard_patch_targets(text, &targets, &bad) == 0) {
		for (size_t i = 0; i < targets.n; i++)
			if (!targets.v[i][0] || strchr(targets.v[i], '\n'))
				abort();
	} else if (!bad) {
		abort();
	}
	strv_free(&targets);
	/* json_pack fails (NULL) on text that is not UTF-8, as the hook's JSON would. */
	if (strv_push(&m.roots, "/nonexistent/ws") == 0) {
		decide(&m, json_pack("{s:s, s:s, s:{s:s}}", "tool_name", "apply_patch", "cwd", "/nonexistent/ws",
				     "tool_input", "input", text));
		decide(&m, json_pack("{s:s, s:{s:[s, s]}}", "tool_name", "shell", "tool_input", "command",
				     "apply_patch", text));
	}
	guard_marker_free(&m);
	free(text);
	return 0;
}
