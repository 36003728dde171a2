/* SPDX-License-Identifier: MIT */
/* replay_main.c: run a fuzz harness over every file of a corpus directory, as an ordinary test
 * (TAP output), so `make check` replays the corpus with no fuzzing compiler. Build the same
 * harness with `clang -fsanitize=fuzzer` (without this file) to fuzz for real. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/buf.h"
#include "../../src/lib/fd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char *names[4096];
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	if (argc != 2 || !(d = opendir(argv[1]))) {
		printf("1..1\nnot ok 1 - corpus directory %s\n", argc > 1 ? argv[1] : "(none)");
		return 1;
	}
	while ((e = readdir(d)) && n < 4096)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct buf b;

		snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]);
		buf_init(&b, 0);
		if (fd_read_file(path, 1 << 24, &b) < 0) {
			printf("not ok %zu - %s (unreadable)\n", i + 1, names[i]);
		} else {
			LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
			printf("ok %zu - %s\n", i + 1, names[i]);
		}
		buf_free(&b);
		free(names[i]);
	}
	return 0;
}
