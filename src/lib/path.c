/* SPDX-License-Identifier: MIT */
/* path.c: lexical path helpers. */
#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static char *executable_real(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return NULL;
	return realpath(path, NULL);
}

char *path_find_executable(const char *name, int (*skip)(const char *real, void *ctx), void *ctx)
{
	const char *env = getenv("PATH");
	char *copy, *save = NULL, *found = NULL, cand[PATH_MAX];

	if (strchr(name, '/'))
		return executable_real(name);
	if (!env || !(copy = strdup(env)))
		return NULL;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/' || snprintf(cand, sizeof(cand), "%s/%s", d, name) >= (int)sizeof(cand))
			continue;
		found = executable_real(cand);
		if (found && skip && skip(found, ctx)) {
			free(found);
			found = NULL;
		}
	}
	free(copy);
	return found;
}
