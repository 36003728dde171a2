/* SPDX-License-Identifier: MIT */
/* fuzz_guard_shell.c: the guard's Bash lexer and analyzer (src/guard/shell.c) on any bytes: it
 * must not crash, leak, read out of bounds or hang, and it must give a reason whenever it denies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/guard/shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's policy: anything under /etc is outside; everything else is allowed. */
static const char *target(void *ctx, const char *cwd, const char *path, enum shell_op op)
{
	(void)ctx;
	(void)op;
	if (!strncmp(path, "/etc", 4) || (!cwd && path[0] != '/'))
		return "outside";
	return NULL;
}

static const char *patch(void *ctx, const char *cwd, const char *text)
{
	(void)ctx;
	(void)cwd;
	return strstr(text, "/etc") ? "outside" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shell_check chk = { .target = target, .patch = patch, .cwd = "/nonexistent/ws" };
	struct shell_verdict v;
	char *cmd = malloc(size + 1);

	if (!cmd)
		return 0;
	memcpy(cmd, data, size);
	cmd[size] = '\0';
	shell_analyze(&chk, cmd, &v);
	if (v.deny && !v.reason[0])
		abort();
	free(cmd);
	return 0;
}
