/* SPDX-License-Identifier: MIT */
/* helpers.h: scratch directories and files for unit tests (each test owns and removes its own). */
#ifndef PROCTOR_TEST_HELPERS_H
#define PROCTOR_TEST_HELPERS_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch_dir[64];

static inline int scratch_setup(void **state)
{
	(void)state;
	strcpy(scratch_dir, "/tmp/proctor-unit-XXXXXX");
	return mkdtemp(scratch_dir) ? 0 : -1;
}

static inline int scratch_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_dir);
	/* NOLINTNEXTLINE(cert-env33-c): a fixed command on the test's own scratch directory */
	return system(cmd) == 0 ? 0 : -1;
}

/* Write `text` to scratch_dir/name; returns the path (static buffer, one at a time). */
static inline const char *scratch_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scratch_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

#endif
