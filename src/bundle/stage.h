/* SPDX-License-Identifier: MIT */
/* stage.h: copy a walked manifest into a read-only bundle, and verify a bundle against its
 * manifest. What to copy is manifest.h's business; this file only copies and checks. */
#ifndef PROCTOR_BUNDLE_STAGE_H
#define PROCTOR_BUNDLE_STAGE_H

#include <stddef.h>

#include "../lib/diag.h"
#include "manifest.h"

#define BUNDLE_FILE_MODE 0444
#define BUNDLE_DIR_MODE 0555
#define BUNDLE_DRIFT_EXAMPLES 5

/* "DEST.manifest.json" (DEST without trailing slashes). Caller frees. */
char *bundle_manifest_path(const char *dest);
/* Stage SRC into DEST (absent, or an empty directory) per `m`: directories, exactly the listed
 * files (each opened beneath its root with no symlink on the way, hashed as copied and compared
 * to the manifest), the symlinks; then DEST.manifest.json beside it, modes 0444/0555 (owner root
 * when run as root), and a final verify. On any failure DEST is removed (or emptied when it
 * existed) and the manifest too. Problems go to `d` ("REL: what"). 0 or -errno. */
int bundle_stage(const char *src, const char *dest, const struct manifest *m, struct diag *d);

struct bundle_drift {
	size_t missing, undeclared, changed, links, modes;
};
/* Re-walk DEST without following links and compare with `m`: missing, undeclared, changed files
 * (content or type), symlink drift and mode drift. The first few of each go to `d` as errors.
 * 0 when clean, 1 on drift, -errno when DEST cannot be read. */
int bundle_verify(const char *dest, const struct manifest *m, struct diag *d, struct bundle_drift *ret);

#endif
