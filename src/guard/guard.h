/* SPDX-License-Identifier: MIT */
/* guard.h: the write guard (ARCHITECTURE.md section 7). install.c owns the on-disk contract
 * (marker, manifest, the harness's hook file), decide.c the verdict for one tool call, shell.c
 * the Bash write-target analysis. The hook explains; Landlock enforces. */
#ifndef PROCTOR_GUARD_H
#define PROCTOR_GUARD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/buf.h"
#include "../lib/strv.h"

#define GUARD_MAX_INPUT_BYTES (4 * 1024 * 1024)
#define GUARD_MAX_FILE_BYTES (1024 * 1024)
#define GUARD_MARKER_NAME ".proctor-guard.json"
#define GUARD_MANIFEST_NAME ".proctor-guard.manifest.json"

enum harness { HARNESS_CLAUDE, HARNESS_CODEX };

/* "claude-code" / "codex" <-> enum; -1 when unknown. */
int harness_parse(const char *s);
const char *harness_name(enum harness h);

struct guard_paths {
	char *root;     /* absolute, resolved */
	char *skills;   /* DIR/.claude/skills or DIR/.agents/skills */
	char *marker;   /* skills/.proctor-guard.json */
	char *manifest; /* skills/.proctor-guard.manifest.json */
	char *hookdir;  /* DIR/.claude or DIR/.codex */
	char *hookfile; /* hookdir/settings.local.json or hookdir/hooks.json */
};
int guard_paths(enum harness h, const char *root, struct guard_paths *ret);
/* The same for a root that is already absolute and resolved (a marker's allowedRoots): no
 * filesystem access, for the hook's hot path. */
int guard_paths_resolved(enum harness h, const char *root, struct guard_paths *ret);
void guard_paths_free(struct guard_paths *p);

struct guard_marker {
	bool active;
	struct strv roots;
	int64_t expires_ms; /* epoch ms */
	char *denial_log;   /* or NULL */
};
/* Load a marker; 0 when well formed (armed or not), -EINVAL/-errno otherwise. */
int guard_marker_load(const char *path, struct guard_marker *ret);
void guard_marker_free(struct guard_marker *m);
bool guard_marker_armed(const struct guard_marker *m, int64_t now_ms);

/* Install: marker, merged hook entry, manifest. Refuses a hook file that is not valid JSON or
 * whose "hooks"/"PreToolUse" have the wrong type (nothing is written then). Installing again is
 * refused while a manifest exists (tear down first). Lines for the user go to `report`. */
int guard_install(enum harness h, const char *root, unsigned ttl_s, const char *denial_log, const char *exe,
		  struct buf *report);
/* Teardown: restore the hook file byte for byte (or delete it if we created it), remove marker and
 * manifest, prune directories we created. Safe when nothing is installed. Every step is tried;
 * the first failure is returned (-errno) and named in `report`, and the marker is kept while the
 * hook file still points at it. */
int guard_teardown(const char *root, struct buf *report);

/* For proctor run: write a marker at marker_path (absolute; the caller keeps it out of the
 * agent's reach) arming the hook for `root` (absolute, resolved) until now + ttl_s; denials are
 * appended to denial_log (may be NULL). The same bytes `guard_install` writes. 0 or -errno
 * (-EINVAL for a relative path or a zero ttl). */
int guard_marker_write(const char *marker_path, const char *root, unsigned ttl_s, const char *denial_log);
/* The same with several roots (a run's workspace, tmp and home); the first is where relative
 * paths resolve when the hook knows no cwd. */
int guard_marker_write_roots(const char *marker_path, const char *const *roots, size_t nroots, unsigned ttl_s,
			     const char *denial_log);
/* The harness's hook configuration whose command runs `exe guard hook --harness H marker_path`:
 * Claude Code, a settings object {"hooks":{"PreToolUse":[...]}} (for --settings FILE); Codex, a
 * hooks.json object of the same shape. The entry is the one `guard_install` merges. NULL on OOM. */
json_t *guard_hook_config(enum harness h, const char *exe, const char *marker_path);

#endif
