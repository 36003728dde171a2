/* SPDX-License-Identifier: MIT */
/* build.h: the one entry point that turns a plugin checkout into a staged, verified, read-only
 * bundle with its manifest beside it (what `proctor bundle build` and `proctor run` both use).
 * The walk is manifest.h's, the copy and verify stage.h's; this file owns the limits. */
#ifndef PROCTOR_BUNDLE_BUILD_H
#define PROCTOR_BUNDLE_BUILD_H

#include <stdint.h>

#include "../lib/diag.h"
#include "manifest.h"

/* Defaults, documented in proctor-bundle(1). A plugin is prompts and small scripts: these are
 * generous for that and keep root from writing out a sparse 15 TiB file the agent made. */
#define BUNDLE_DEFAULT_MAX_FILE_BYTES (100ull * 1024 * 1024)
#define BUNDLE_DEFAULT_MAX_TOTAL_BYTES (1024ull * 1024 * 1024)
#define BUNDLE_DEFAULT_MAX_FILES 100000
#define BUNDLE_DEFAULT_MAX_DEPTH 32

/* What a bundle may hold. A zero field means its default; `rules` NULL means the default allow
 * and deny lists. max_files counts regular files, symlinks and directories; max_depth counts
 * directories below an allowed top-level entry (at most BUNDLE_MAX_DEPTH). */
struct bundle_limits {
	uint64_t max_file_bytes;
	uint64_t max_total_bytes;
	uint64_t max_files;
	unsigned max_depth;
	const struct bundle_rules *rules;
};

/* The limits in effect: `lim` (NULL for none) with every zero field replaced by its default. */
void bundle_limits_resolve(const struct bundle_limits *lim, struct bundle_limits *ret);

/* Walk SRC, stage it read-only into DEST (absent, or an empty directory), verify the result and
 * write DEST.manifest.json beside it. On failure nothing is left behind (DEST is removed, or
 * emptied when it existed, and so is the manifest) and every problem is in `d` as "REL: what",
 * with control characters in names escaped. 0 (and *ret, when ret is not NULL, owned by the
 * caller: manifest_free) or -errno: -EINVAL for a refused source, -EFBIG over a limit. */
int bundle_build(const char *src, const char *dest, const struct bundle_limits *lim, struct diag *d,
		 struct manifest **ret);

#endif
