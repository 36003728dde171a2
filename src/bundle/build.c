/* SPDX-License-Identifier: MIT */
/* build.c: bundle_build(), the sequence walk (no hashing) -> stage (hash as copied, manifest, verify). */
#include "build.h"

#include <errno.h>
#include <stddef.h>

#include "stage.h"

int bundle_build(const char *src, const char *dest, const struct bundle_limits *lim, struct diag *d,
		 struct manifest **ret)
{
	struct bundle_limits l;
	struct manifest *m = NULL;
	int r;

	bundle_limits_resolve(lim, &l);
	r = bundle_walk_limited(src, &l, false, d, &m);
	if (r == 0)
		r = bundle_stage(src, dest, m, d);
	if (r == 0 && ret) {
		*ret = m;
		m = NULL;
	}
	manifest_free(m);
	return r;
}
