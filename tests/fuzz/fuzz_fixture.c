/* SPDX-License-Identifier: MIT */
/* fuzz_fixture.c: the fixture loader and matcher build, then a few matches against the result. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/lib/diag.h"
#include "../../src/mock/fixture.h"
#include "../../src/mock/match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const noise[] = { "--output" };
	static const char *const q[] = { "or", "jobs", "get", "--output=json", "--limit", "5" };
	char path[] = "/tmp/proctor-fuzz-XXXXXX";
	struct fixture *f = NULL;
	struct matcher *m = NULL;
	enum match_mode mode;
	struct diag d;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	diag_init(&d);
	/* fixture_load_keep: also fixtures with field errors reach the matcher, as in `check`. */
	if ((fixture_load_keep(path, &d, &f) == 0 || f) && matcher_build(f, noise, 1, &d, &m) == 0) {
		for (size_t n = 0; n <= 6; n++)
			(void)matcher_match(m, q, n, &mode);
	}
	matcher_free(m);
	fixture_free(f);
	diag_free(&d);
	unlink(path);
	return 0;
}
