/* SPDX-License-Identifier: MIT */
/* decide.h: the verdict for one harness tool call: which paths it would write and whether each
 * is inside the allowed roots (and not one of the guard's own files). */
#ifndef PROCTOR_GUARD_DECIDE_H
#define PROCTOR_GUARD_DECIDE_H

#include <jansson.h>
#include <stdbool.h>

#include "../lib/buf.h"
#include "../lib/strv.h"
#include "guard.h"

struct guard_verdict {
	bool deny;
	char reason[600];
	struct strv targets; /* resolved paths looked at */
};

/* Decide for a PreToolUse payload (`payload` is the harness's JSON) under an armed marker. */
void guard_decide(const struct guard_marker *m, json_t *payload, struct guard_verdict *ret);
void guard_verdict_free(struct guard_verdict *v);
/* Lexically normalise `path` against `cwd`, then resolve the symlinks of its existing part on
 * disk. NULL (with *ret_why) when it cannot be resolved. Caller frees. */
char *guard_resolve(const char *cwd, const char *path, const char **ret_why);
/* Every file an apply_patch patch (Codex's text, which the agent writes) touches, appended to
 * `out` as written in its "*** Add/Update/Delete File:" and "*** Move to:" lines. -EINVAL with
 * *ret_bad for a "***" line that is not a header Codex knows, -ENOMEM. */
int guard_patch_targets(const char *patch, struct strv *out, const char **ret_bad);
/* The harness's verdict line (with '\n') for a deny. */
int guard_verdict_json(enum harness h, const char *reason, struct buf *out);
/* One JSON line in the denial log: time, tool, reason, targets, the sorted input key names. */
int guard_log_denial(const char *log_path, json_t *payload, const struct guard_verdict *v);

#endif
