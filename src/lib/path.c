/* SPDX-License-Identifier: MIT */
/* path.c: lexical path helpers. */
#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *path_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

char *path_relative_to_file(const char *base_file, const char *rel)
{
	const char *slash;
	char *out;

	if (rel[0] == '/')
		return strdup(rel);
	slash = strrchr(base_file, '/');
	if (!slash)
		return strdup(rel);
	if (asprintf(&out, "%.*s/%s", (int)(slash - base_file), base_file, rel) < 0)
		return NULL;
	return out;
}
