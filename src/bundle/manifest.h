/* SPDX-License-Identifier: MIT */
/* manifest.h: the bundle walk, its limits, and the manifest format (ARCHITECTURE.md section 5).
 * <bundle>.manifest.json = {"source", "files":{rel:sha256}, "symlinks":{rel:target},
 * ["executable":[rel...]], "digest"}; digest = SHA-256 of the compact, key-sorted JSON of
 * {"files","symlinks"} plus "executable" (sorted) when any file is executable, so manifests
 * written before that key existed keep their digest (a contract, pinned by tests). Walking and
 * validating only; copying is stage.h's job. */
#ifndef PROCTOR_BUNDLE_MANIFEST_H
#define PROCTOR_BUNDLE_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../lib/diag.h"
#include "../lib/hash.h"

#define BUNDLE_MAX_ENTRIES 1000000
#define BUNDLE_MAX_DEPTH 64
#define BUNDLE_MAX_RULES 64
#define BUNDLE_MANIFEST_MAX_BYTES (256u * 1024 * 1024)

struct bundle_file {
	char *rel;
	char sha256[SHA256_HEX_LEN + 1]; /* "" until hashed (bundle_build hashes as it copies) */
	bool exec;                       /* owner-executable in the source, as git records it: 0555 */
	/* What the walk saw (not in the manifest file): the copy must find this very inode again,
	 * unchanged, and verify after staging compares the size. */
	bool walked;
	uint64_t size, dev, ino;
	struct timespec mtime, ctime;
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
	const char *const *deny; /* case-insensitive globs on a name; "name/" matches directories only */
	size_t ndeny;
};

extern const char *const bundle_default_allow[];
extern const size_t bundle_default_nallow;
extern const char *const bundle_default_deny[];
extern const size_t bundle_default_ndeny;
extern const struct bundle_rules bundle_default_rules;

/* Defaults, documented in proctor-bundle(1). A plugin is prompts and small scripts: these are
 * generous for that and keep root from reading and writing out a sparse 15 TiB file. */
#define BUNDLE_DEFAULT_MAX_FILE_BYTES (100ull * 1024 * 1024)
#define BUNDLE_DEFAULT_MAX_TOTAL_BYTES (1024ull * 1024 * 1024)
#define BUNDLE_DEFAULT_MAX_FILES 100000
#define BUNDLE_DEFAULT_MAX_DEPTH 32

/* What a bundle may hold, checked by the walk from each entry's metadata before any byte is read
 * or copied. A zero field means its default; `rules` NULL means the default allow and deny lists.
 * max_files counts regular files, symlinks and directories; max_depth counts directories below
 * an allowed top-level entry (at most BUNDLE_MAX_DEPTH). */
struct bundle_limits {
	uint64_t max_file_bytes;
	uint64_t max_total_bytes;
	uint64_t max_files;
	unsigned max_depth;
	const struct bundle_rules *rules;
};

/* The limits in effect: `lim` (NULL for none) with every zero field replaced by its default. */
void bundle_limits_resolve(const struct bundle_limits *lim, struct bundle_limits *ret);

/* Add an error to `d` with every control character, invalid UTF-8 byte and bidirectional
 * override in it escaped (\n, \x1b, \u202e; a backslash doubled), so a file name cannot
 * write to the operator's terminal. Every message of src/bundle goes through here. */
void bundle_diag(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same escaping of `s` into a new string; NULL on ENOMEM. */
char *bundle_escape(const char *s);

/* Walk SRC's allowed entries without following links, within the limits (NULL: defaults), and
 * validate every entry: names, hidden material, special and hard-linked files, symlinks. With
 * `hash`, hash every regular file (reading at most the size the walk saw) and compute the digest;
 * without, leave sha256 "" for bundle_stage to fill as it copies. Every problem is added to `d`
 * as "REL: what is wrong": -EFBIG when a limit was exceeded (the walk stops there), else -EINVAL
 * when there was any problem. The manifest is sorted. */
int bundle_walk_limited(const char *src, const struct bundle_limits *lim, bool hash, struct diag *d,
			struct manifest **ret);
/* bundle_walk_limited() with default limits and the given rules, hashing. */
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
/* The canonical text the digest covers, and the digest itself (into m->digest). Fails closed:
 * -ENOMEM, or -EINVAL for an unhashed file or a name jansson cannot encode, never an entry
 * silently left out. */
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
