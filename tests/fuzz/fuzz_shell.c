/* SPDX-License-Identifier: MIT */
/* fuzz_shell.c: the shell-word splitter `fixtures replay` runs over ARGVS files, and the join
 * that must round-trip what it splits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct strv w = { 0 }, back = { 0 };
	const char *why;
	struct buf b;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	buf_init(&b, 0);
	if (shell_split(line, &w, &why) == 0 && shell_join((const char *const *)w.v, w.n, &b) == 0 &&
	    shell_split(b.data ? b.data : "", &back, &why) == 0) {
		if (back.n != w.n)
			abort();
		for (size_t i = 0; i < w.n; i++)
			if (strcmp(back.v[i], w.v[i]))
				abort();
	}
	strv_free(&w);
	strv_free(&back);
	buf_free(&b);
	free(line);
	return 0;
}
