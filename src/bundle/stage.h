/* SPDX-License-Identifier: MIT */
/* stage.h: copy a walked manifest into a read-only bundle, and verify a bundle against its
 * manifest. What to copy is manifest.h's business; this file only copies and checks. */
#ifndef PROCTOR_BUNDLE_STAGE_H
#define PROCTOR_BUNDLE_STAGE_H

#include <stddef.h>

#include "../lib/diag.h"
#include "manifest.h"

#define BUNDLE_FILE_MODE 0444
#define BUNDLE_EXEC_MODE 0555 /* a file executable by its owner in the source */
#define BUNDLE_DIR_MODE 0555
#define BUNDLE_DRIFT_EXAMPLES 5

/* "DEST.manifest.json" (DEST without trailing slashes). Caller frees. */
char *bundle_manifest_path(const char *dest);
/* Stage SRC into DEST (absent, or an empty directory) per `m`, a manifest from the walk: the
 * directories of the listed entries (empty directories are not staged), exactly the listed files
 * (each the same unchanged inode the walk saw, with one link, opened beneath SRC with no symlink
 * on the way, at most the size the walk saw, hashed as copied: the hash fills an empty sha256 or
 * must equal it), the symlinks; then the digest, DEST.manifest.json beside it, modes 0444, 0555
 * for executables and directories (owner root when run as root), and a final verify without
 * hashing again that also resolves every symlink inside the staged tree. On any failure DEST is
 * removed (or emptied when it existed) and the manifest too. Problems go to `d` ("REL: what").
 * 0 or -errno. */
int bundle_stage(const char *src, const char *dest, struct manifest *m, struct diag *d);

struct bundle_drift {
	size_t missing, undeclared, changed, links, modes;
};
/* Re-walk DEST without following links and compare with `m`: missing, undeclared, changed files
 * (content or type), symlink drift (a changed target, or one that does not resolve to a file or
 * directory beneath DEST: escaping, broken, looping) and mode drift. The first few of each go to
 * `d` as errors. 0 when clean, 1 on drift, -errno when DEST cannot be read. */
int bundle_verify(const char *dest, const struct manifest *m, struct diag *d, struct bundle_drift *ret);

#endif
