/* SPDX-License-Identifier: MIT */
/* manifest.h: the bundle walk and the manifest format (ARCHITECTURE.md section 5).
 * <bundle>.manifest.json = {"source", "files":{rel:sha256}, "symlinks":{rel:target}, "digest"};
 * digest = SHA-256 of the compact, key-sorted JSON of {"files","symlinks"} (a contract, pinned by
 * tests). Walking and validating only; copying is stage.h's job. */
#ifndef PROCTOR_BUNDLE_MANIFEST_H
#define PROCTOR_BUNDLE_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../lib/diag.h"
#include "../lib/hash.h"

#define BUNDLE_MAX_ENTRIES 1000000
#define BUNDLE_MAX_DEPTH 64
#define BUNDLE_MAX_RULES 64
#define BUNDLE_MANIFEST_MAX_BYTES (256u * 1024 * 1024)

struct bundle_file {
	char *rel;
	char sha256[SHA256_HEX_LEN + 1];
};

struct bundle_link {
	char *rel;
	char *target;
};

struct manifest {
	char *source;
	struct bundle_file *files; /* sorted by rel */
	size_t nfiles, capf;
	struct bundle_link *links; /* sorted by rel */
	size_t nlinks, capl;
	char digest[SHA256_HEX_LEN + 1];
};

struct bundle_rules {
	const char *const *allow; /* top-level entries walked */
	size_t nallow;
	const char *const *deny;  /* case-insensitive globs on a name; "name/" matches directories only */
	size_t ndeny;
};

extern const char *const bundle_default_allow[];
extern const size_t bundle_default_nallow;
extern const char *const bundle_default_deny[];
extern const size_t bundle_default_ndeny;
extern const struct bundle_rules bundle_default_rules;

/* Walk SRC's allowed entries without following links, hash every regular file and validate
 * every symlink. Every problem is added to `d` as "REL: what is wrong"; -EINVAL when there was
 * any. The manifest is sorted and has its digest. */
int bundle_walk(const char *src, const struct bundle_rules *rules, struct diag *d, struct manifest **ret);
/* The pattern that `name` (a directory when is_dir) matches, or NULL. */
const char *bundle_denied(const struct bundle_rules *rules, const char *name, bool is_dir);
/* Resolve a symlink's target against its own directory, lexically. 0 with the normalised path
 * (relative to SRC) in *ret, or -EINVAL with *ret_why: absolute, escapes SRC, or outside the
 * allowed entries. */
int bundle_link_lexical(const struct bundle_rules *rules, const char *link_rel, const char *target, char **ret,
			const char **ret_why);

void manifest_sort(struct manifest *m);
int manifest_add_file(struct manifest *m, const char *rel, const char *sha256);
int manifest_add_link(struct manifest *m, const char *rel, const char *target);
/* The canonical text the digest covers, and the digest itself (into m->digest). */
int manifest_canonical(const struct manifest *m, char **ret_text);
int manifest_digest(struct manifest *m);
/* The manifest document; written with 2-space indentation and sorted keys. */
json_t *manifest_json(const struct manifest *m);
/* Load a manifest file; its own digest must match its contents. */
int manifest_load(const char *path, struct diag *d, struct manifest **ret);
const struct bundle_file *manifest_file(const struct manifest *m, const char *rel);
const struct bundle_link *manifest_link(const struct manifest *m, const char *rel);
void manifest_free(struct manifest *m);

#endif
