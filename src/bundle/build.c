/* SPDX-License-Identifier: MIT */
/* build.c: bundle_build(), the sequence walk -> stage -> verify -> manifest, and its limits. */
#include "build.h"

#include <errno.h>
#include <stddef.h>

#include "stage.h"

void bundle_limits_resolve(const struct bundle_limits *lim, struct bundle_limits *ret)
{
	struct bundle_limits l = { 0 };

	if (lim)
		l = *lim;
	if (!l.max_file_bytes)
		l.max_file_bytes = BUNDLE_DEFAULT_MAX_FILE_BYTES;
	if (!l.max_total_bytes)
		l.max_total_bytes = BUNDLE_DEFAULT_MAX_TOTAL_BYTES;
	if (!l.max_files)
		l.max_files = BUNDLE_DEFAULT_MAX_FILES;
	if (!l.max_depth)
		l.max_depth = BUNDLE_DEFAULT_MAX_DEPTH;
	if (l.max_depth > BUNDLE_MAX_DEPTH)
		l.max_depth = BUNDLE_MAX_DEPTH;
	if (!l.rules)
		l.rules = &bundle_default_rules;
	*ret = l;
}

int bundle_build(const char *src, const char *dest, const struct bundle_limits *lim, struct diag *d,
		 struct manifest **ret)
{
	struct bundle_limits l;
	struct manifest *m = NULL;
	int r;

	bundle_limits_resolve(lim, &l);
	r = bundle_walk(src, l.rules, d, &m);
	if (r == 0)
		r = bundle_stage(src, dest, m, d);
	if (r == 0 && ret) {
		*ret = m;
		m = NULL;
	}
	manifest_free(m);
	return r;
}
