/* SPDX-License-Identifier: MIT */
/* decide.c: one tool call's verdict. Write tools name their target; apply_patch patches name
 * theirs in "*** Add/Update/Delete File:" and "*** Move to:" lines; Bash goes through shell.c. */
#include "decide.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "shell.h"

void guard_verdict_free(struct guard_verdict *v)
{
	strv_free(&v->targets);
}

/* "/a/./b/../c" -> "/a/c"; ".." never climbs above "/". */
static void normalise(char *p)
{
	char *out = p, *seg = p;

	while (*seg) {
		char *end;
		size_t n;

		while (*seg == '/')
			seg++;
		end = strchr(seg, '/');
		n = end ? (size_t)(end - seg) : strlen(seg);
		if (n == 0)
			break;
		if (n == 1 && seg[0] == '.') {
		} else if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > p && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, seg, n);
			out += n;
		}
		seg += n;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

char *guard_resolve(const char *cwd, const char *path, const char **ret_why)
{
	char abs[PATH_MAX * 2], probe[PATH_MAX * 2], real[PATH_MAX], *out = NULL;
	size_t cut;

	if (!path[0] || path[0] == '~' || (path[0] != '/' && !cwd)) {
		*ret_why = !path[0] ? "empty path" : path[0] == '~' ? "home-relative path"
								    : "relative path after a cd to an unknown directory";
		return NULL;
	}
	if (snprintf(abs, sizeof(abs), "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/", path) >=
	    (int)sizeof(abs)) {
		*ret_why = "path too long";
		return NULL;
	}
	normalise(abs);
	/* The longest existing prefix is resolved on disk: a symlink in it (one the agent may have
	 * made inside a root, pointing outside) counts for where the write really lands. */
	memcpy(probe, abs, strlen(abs) + 1);
	cut = strlen(probe);
	while (!realpath(probe, real)) {
		char *slash = strrchr(probe, '/');

		if (!slash || slash == probe) {
			strcpy(real, "/");
			cut = 0;
			break;
		}
		*slash = '\0';
		cut = (size_t)(slash - probe);
	}
	if (asprintf(&out, "%s%s", strcmp(real, "/") ? real : "", abs + cut) < 0)
		return NULL;
	if (!out[0]) {
		free(out);
		out = strdup("/");
	}
	*ret_why = NULL;
	return out;
}

struct check_ctx {
	const struct guard_marker *m;
	struct strv protect; /* the guard's own files under each root */
	struct guard_verdict *v;
};

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	return !strcmp(root, "/") || (!strncmp(path, root, n) && (path[n] == '/' || path[n] == '\0'));
}

static const char *check_target(void *ctx, const char *cwd, const char *path)
{
	struct check_ctx *c = ctx;
	const char *why;
	char *r = guard_resolve(cwd, path, &why);
	bool inside = false;

	if (!r)
		return why ? why : "cannot resolve";
	strv_push(&c->v->targets, r);
	for (size_t i = 0; i < c->protect.n; i++)
		if (!strcmp(r, c->protect.v[i])) {
			free(r);
			return "the guard's own files are not writable";
		}
	for (size_t i = 0; i < c->m->roots.n; i++)
		inside |= under(r, c->m->roots.v[i]);
	free(r);
	return inside ? NULL : "outside the allowed roots";
}

/* Every file an apply_patch patch touches. */
static void patch_targets(const char *patch, struct strv *out)
{
	static const char *const heads[] = { "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: " };

	for (const char *line = patch; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		for (size_t i = 0; i < 4; i++) {
			size_t hl = strlen(heads[i]);

			if (len > hl && !strncmp(line, heads[i], hl)) {
				size_t n = len - hl;

				while (n && (line[hl + n - 1] == '\r' || line[hl + n - 1] == ' '))
					n--;
				strv_pushn(out, line + hl, n);
			}
		}
	}
}

/* The patch text of an apply_patch call: any string in tool_input that holds a patch. */
static const char *find_patch(json_t *j)
{
	const char *k, *r = NULL;
	json_t *v;
	size_t i;

	if (json_is_string(j))
		return strstr(json_string_value(j), "*** Begin Patch") ? json_string_value(j) : NULL;
	if (json_is_array(j))
		json_array_foreach(j, i, v)
			if ((r = find_patch(v)))
				return r;
	if (json_is_object(j))
		json_object_foreach(j, k, v)
			if ((r = find_patch(v)))
				return r;
	return NULL;
}

static void deny_v(struct guard_verdict *v, const char *what, const char *path, const char *why)
{
	if (v->deny)
		return;
	v->deny = true;
	snprintf(v->reason, sizeof(v->reason), "%s%s%s: %s", what, path ? " " : "", path ? path : "", why);
}

static void protect_paths(const struct guard_marker *m, struct strv *out)
{
	for (size_t i = 0; i < m->roots.n; i++)
		for (int h = HARNESS_CLAUDE; h <= HARNESS_CODEX; h++) {
			struct guard_paths p;

			if (guard_paths_resolved((enum harness)h, m->roots.v[i], &p) < 0)
				continue;
			strv_push(out, p.marker);
			strv_push(out, p.manifest);
			strv_push(out, p.hookfile);
			guard_paths_free(&p);
		}
}

void guard_decide(const struct guard_marker *m, json_t *payload, struct guard_verdict *v)
{
	static const char *const write_tools[] = { "Write", "Edit", "MultiEdit", "NotebookEdit" };
	struct check_ctx c = { .m = m, .v = v };
	json_t *in = json_object_get(payload, "tool_input");
	const char *tool = json_string_value(json_object_get(payload, "tool_name"));
	const char *cwd = json_string_value(json_object_get(payload, "cwd"));
	const char *why;

	memset(v, 0, sizeof(*v));
	if (!tool || !json_is_object(in)) {
		deny_v(v, "payload", NULL, "no tool_name or tool_input");
		return;
	}
	if (!cwd || cwd[0] != '/')
		cwd = m->roots.v[0];
	protect_paths(m, &c.protect);
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(tool, write_tools[i]))
			continue;
		const char *path = json_string_value(json_object_get(in, i == 3 ? "notebook_path" : "file_path"));

		if (!path)
			path = json_string_value(json_object_get(in, "file_path"));
		if (!path)
			deny_v(v, tool, NULL, "no file_path");
		else if ((why = check_target(&c, cwd, path)))
			deny_v(v, tool, path, why);
		goto out;
	}
	if (!strcmp(tool, "apply_patch") || find_patch(in)) {
		struct strv targets = { 0 };
		const char *patch = find_patch(in);

		if (patch)
			patch_targets(patch, &targets);
		if (!targets.n)
			deny_v(v, tool, NULL, "no file targets found in the patch");
		for (size_t i = 0; i < targets.n && !v->deny; i++)
			if ((why = check_target(&c, cwd, targets.v[i])))
				deny_v(v, "apply_patch", targets.v[i], why);
		strv_free(&targets);
		goto out;
	}
	if (!strcmp(tool, "Bash") || !strcmp(tool, "shell") || json_is_string(json_object_get(in, "command"))) {
		struct shell_check chk = { .target = check_target, .ctx = &c, .cwd = cwd };
		struct shell_verdict sv;
		json_t *cmd = json_object_get(in, "command");
		struct buf joined;

		buf_init(&joined, 0);
		if (json_is_array(cmd)) { /* codex may pass argv: quote it back into one command line */
			struct strv av = { 0 };
			size_t i;
			json_t *a;

			json_array_foreach(cmd, i, a)
				if (json_is_string(a))
					strv_push(&av, json_string_value(a));
			shell_join((const char *const *)av.v, av.n, &joined);
			strv_free(&av);
		}
		if (!json_is_string(cmd) && !joined.data) {
			deny_v(v, tool, NULL, "no command");
		} else {
			shell_analyze(&chk, json_is_string(cmd) ? json_string_value(cmd) : joined.data, &sv);
			if (sv.deny)
				deny_v(v, "Bash", NULL, sv.reason);
		}
		buf_free(&joined);
	}
out:
	strv_free(&c.protect);
}

int guard_verdict_json(enum harness h, const char *reason, struct buf *out)
{
	char msg[700];
	json_t *j;
	int r;

	snprintf(msg, sizeof(msg), "proctor guard: %s", reason);
	if (h == HARNESS_CODEX)
		j = json_pack("{s:s,s:s}", "decision", "block", "reason", msg);
	else
		j = json_pack("{s:{s:s,s:s,s:s}}", "hookSpecificOutput", "hookEventName", "PreToolUse",
			      "permissionDecision", "deny", "permissionDecisionReason", msg);
	r = j ? json_dump_buf(j, 0, out) : -ENOMEM;
	if (r == 0)
		r = buf_putc(out, '\n');
	json_decref(j);
	return r;
}

int guard_log_denial(const char *log_path, json_t *payload, const struct guard_verdict *v)
{
	json_t *keys = json_array(), *targets = json_array(), *line, *in = json_object_get(payload, "tool_input");
	const char *k, *tool = json_string_value(json_object_get(payload, "tool_name"));
	struct buf b;
	json_t *val;
	char stamp[64];
	time_t now = time(NULL);
	struct tm tm;
	int fd, r;

	struct strv names = { 0 };

	/* Never the command text or file contents: only what was decided and about which paths. */
	json_object_foreach(in, k, val)
		strv_push(&names, k);
strv_sort(&names);
	for (size_t i = 0; i < names.n; i++)
		json_array_append_new(keys, json_string(names.v[i]));
	strv_free(&names);
	for (size_t i = 0; i < v->targets.n; i++)
		json_array_append_new(targets, json_string(v->targets.v[i]));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	line = json_pack("{s:s,s:s,s:s,s:o,s:o}", "time", stamp, "tool", tool ? tool : "", "reason", v->reason,
			 "targets", targets, "input_keys", keys);
	buf_init(&b, 0);
	r = line ? json_dump_buf(line, JSON_SORT_KEYS, &b) : -ENOMEM;
	json_decref(line);
	if (r == 0)
		r = buf_putc(&b, '\n');
	fd = r == 0 ? open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (r == 0 && fd < 0)
		r = -errno;
	if (r == 0)
		r = fd_write_all(fd, b.data, b.len);
	if (fd >= 0)
		close(fd);
	buf_free(&b);
	return r;
}
