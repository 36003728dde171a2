/* SPDX-License-Identifier: MIT */
/* build.h: the one entry point that turns a plugin checkout into a staged, verified, read-only
 * bundle with its manifest beside it (what `proctor bundle build` and `proctor run` both use).
 * The walk is manifest.h's, the copy and verify stage.h's; this file owns the limits. */
#ifndef PROCTOR_BUNDLE_BUILD_H
#define PROCTOR_BUNDLE_BUILD_H

#include "../lib/diag.h"
#include "manifest.h"

/* Walk SRC, stage it read-only into DEST (absent, or an empty directory), verify the result and
 * write DEST.manifest.json beside it. On failure nothing is left behind (DEST is removed, or
 * emptied when it existed, and so is the manifest) and every problem is in `d` as "REL: what",
 * with control characters in names escaped. 0 (and *ret, when ret is not NULL, owned by the
 * caller: manifest_free) or -errno: -EINVAL for a refused source, -EFBIG over a limit. */
int bundle_build(const char *src, const char *dest, const struct bundle_limits *lim, struct diag *d,
		 struct manifest **ret);

#endif
