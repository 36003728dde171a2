/* SPDX-License-Identifier: MIT */
/* fuzz_descriptor.c: the agent descriptor loader, and expansion of what it accepted. */
#include <stdint.h>

#include "../../src/agent/descriptor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_descriptor a;
	struct strv dirs = { 0 }, out = { 0 };
	struct agent_vars v = { .prompt = "p",
				.session_id = "s",
				.workspace = "/w",
				.home = "/h",
				.tmp = "/t",
				.guard_settings = "/g",
				.guard_marker = "/m",
				.exe = "/e",
				.turn = 1 };
	const char *why;
	struct diag d;

	diag_init(&d);
	if (agent_descriptor_parse("/fuzz/agent.json", (const char *)data, size, &d, &a) == 0) {
		if (strv_push(&dirs, "/p0") == 0)
			v.plugin_dirs = &dirs;
		if (agent_argv(&a, &v, &out, &why) == 0)
			strv_free(&out);
		v.turn = 0;
		if (agent_argv(&a, &v, &out, &why) == 0)
			strv_free(&out);
		agent_descriptor_free(&a);
	}
	strv_free(&dirs);
	diag_free(&d);
	return 0;
}
