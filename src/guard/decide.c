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

/* Resolve `abs` (absolute, normalised) as the kernel would for a write: every symlink on the way,
 * including the last component and a dangling one, is followed, a relative target from the link's
 * own directory; components that do not exist are kept as they are. */
#define RESOLVE_MAX_LINKS 40

static char *resolve_links(const char *abs, const char **ret_why)
{
	char out[PATH_MAX * 2] = "", rest[PATH_MAX * 2], link[PATH_MAX];
	size_t on = 0;
	int links = 0;
	bool missing = false;

	snprintf(rest, sizeof(rest), "%s", abs);
	for (char *p = rest; *p;) {
		char *seg, *end;
		size_t n;
		struct stat st;
		ssize_t ln;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		seg = p;
		end = strchr(seg, '/');
		n = end ? (size_t)(end - seg) : strlen(seg);
		p = end ? end : seg + n;
		if (n == 1 && seg[0] == '.')
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (on > 0 && out[--on] != '/')
				;
			out[on] = '\0';
			continue;
		}
		if (on + 1 + n >= sizeof(out)) {
			*ret_why = "path too long";
			return NULL;
		}
		out[on++] = '/';
		memcpy(out + on, seg, n);
		on += n;
		out[on] = '\0';
		if (missing || lstat(out, &st) < 0) {
			missing = true; /* the rest does not exist yet: kept as written */
			continue;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > RESOLVE_MAX_LINKS) {
			*ret_why = "too many levels of symbolic links";
			return NULL;
		}
		ln = readlink(out, link, sizeof(link) - 1);
		if (ln < 0) {
			*ret_why = "unreadable symbolic link";
			return NULL;
		}
		link[ln] = '\0';
		/* drop the link from out, then continue with its target followed by the rest */
		while (on > 0 && out[--on] != '/')
			;
		out[on] = '\0';
		if (link[0] == '/')
			on = 0, out[0] = '\0';
		{
			char tmp[PATH_MAX * 2];

			if (snprintf(tmp, sizeof(tmp), "%s/%s", link, p) >= (int)sizeof(tmp)) {
				*ret_why = "path too long";
				return NULL;
			}
			memcpy(rest, tmp, sizeof(rest));
			p = rest;
		}
	}
	*ret_why = NULL;
	return strdup(on ? out : "/");
}

char *guard_resolve(const char *cwd, const char *path, const char **ret_why)
{
	char abs[PATH_MAX * 2];

	if (!path[0] || path[0] == '~' || (path[0] != '/' && !cwd)) {
		*ret_why = !path[0]       ? "empty path" :
			   path[0] == '~' ? "home-relative path" :
					    "relative path after a cd to an unknown directory";
		return NULL;
	}
	if (snprintf(abs, sizeof(abs), "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/", path) >=
	    (int)sizeof(abs)) {
		*ret_why = "path too long";
		return NULL;
	}
	normalise(abs);
	return resolve_links(abs, ret_why);
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

/* Devices a command may write anywhere: the null device and its own standard streams. */
static bool dev_ok(const char *abs)
{
	return !strcmp(abs, "/dev/null") || !strcmp(abs, "/dev/stdout") || !strcmp(abs, "/dev/stderr") ||
	       !strcmp(abs, "/dev/tty") ||
	       (!strncmp(abs, "/dev/fd/", 8) && abs[8] && strspn(abs + 8, "0123456789") == strlen(abs + 8));
}

/* A repository's config and hooks decide what git runs (aliases, hooks, core.sshCommand): a write
 * there would turn the next git command into anything, so they are the guard's to keep. */
static bool git_runs(const char *abs)
{
	for (const char *g = strstr(abs, "/.git/"); g; g = strstr(g + 1, "/.git/")) {
		const char *rest = g + 6;

		if (!strcmp(rest, "config") || !strcmp(rest, "info/attributes") ||
		    (!strncmp(rest, "hooks", 5) && (rest[5] == '\0' || rest[5] == '/')))
			return true;
	}
	return false;
}

static const char *check_target(void *ctx, const char *cwd, const char *path, enum shell_op op)
{
	struct check_ctx *c = ctx;
	const char *why;
	char lexical[PATH_MAX * 2], *r;
	bool inside = false;
	struct stat st;

	if (path[0] == '/' || cwd) {
		snprintf(lexical, sizeof(lexical), "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/",
			 path);
		normalise(lexical);
		if (dev_ok(lexical))
			return NULL;
	}
	r = guard_resolve(cwd, path, &why);
	if (!r)
		return why ? why : "cannot resolve";
	if (strv_push(&c->v->targets, r) < 0) {
		free(r);
		return "out of memory";
	}
	for (size_t i = 0; i < c->protect.n; i++) {
		if (!strcmp(r, c->protect.v[i])) {
			free(r);
			return "the guard's own files are not writable";
		}
		if (op == SHELL_REMOVE && under(c->protect.v[i], r) && lstat(c->protect.v[i], &st) == 0) {
			free(r);
			return "holds the guard's own files; it may not be removed, moved or changed";
		}
	}
	if (git_runs(r)) {
		free(r);
		return "changes what git runs (.git/config, .git/hooks); use git config for user settings";
	}
	for (size_t i = 0; i < c->m->roots.n; i++)
		inside |= under(r, c->m->roots.v[i]);
	free(r);
	return inside ? NULL : "outside the allowed roots";
}

static const char *patch_check(void *ctx, const char *cwd, const char *patch);

static void deny_msg(struct guard_verdict *v, const char *msg)
{
	if (v->deny)
		return;
	v->deny = true;
	snprintf(v->reason, sizeof(v->reason), "%s", msg);
}

static void deny_v(struct guard_verdict *v, const char *what, const char *path, const char *why)
{
	if (v->deny)
		return;
	v->deny = true;
	snprintf(v->reason, sizeof(v->reason), "%s%s%s: %s", what, path ? " " : "", path ? path : "", why);
}

/* Codex trims each line before it looks for a header, so we do too; a "***" line we do not know
 * is refused rather than guessed at. */
int guard_patch_targets(const char *patch, struct strv *out, const char **ret_bad)
{
	static const char *const heads[] = { "*** Add File: ", "*** Update File: ", "*** Delete File: ",
					     "*** Move to: " };
	static const char *const plain[] = { "*** Begin Patch", "*** End Patch", "*** End of File" };

	*ret_bad = NULL;
	for (const char *line = patch; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *nl = strchr(line, '\n'), *b = line;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		bool known = false;

		while (len && (*b == ' ' || *b == '\t' || *b == '\r' || *b == '\f' || *b == '\v'))
			b++, len--;
		while (len && (b[len - 1] == ' ' || b[len - 1] == '\t' || b[len - 1] == '\r' || b[len - 1] == '\f' ||
			       b[len - 1] == '\v'))
			len--;
		if (len < 3 || strncmp(b, "***", 3))
			continue;
		for (size_t i = 0; i < 4; i++) {
			size_t hl = strlen(heads[i]);

			if (len > hl && !strncmp(b, heads[i], hl)) {
				if (strv_pushn(out, b + hl, len - hl) < 0) {
					*ret_bad = "out of memory";
					return -ENOMEM;
				}
				known = true;
			}
		}
		for (size_t i = 0; i < 3 && !known; i++)
			known = len == strlen(plain[i]) && !strncmp(b, plain[i], len);
		if (!known) {
			*ret_bad = "a '***' line that is not a patch header Codex knows";
			return -EINVAL;
		}
	}
	return 0;
}

/* The patch text of an apply_patch call: any string in tool_input that holds a patch. */
static const char *find_patch(json_t *j, int depth)
{
	const char *k, *r = NULL;
	json_t *v;
	size_t i;

	if (depth > 8)
		return NULL;
	if (json_is_string(j))
		return strstr(json_string_value(j), "*** Begin Patch") ? json_string_value(j) : NULL;
	if (json_is_array(j))
		json_array_foreach(j, i, v)
			if ((r = find_patch(v, depth + 1)))
				return r;
	if (json_is_object(j))
		json_object_foreach(j, k, v)
			if ((r = find_patch(v, depth + 1)))
				return r;
	return NULL;
}

static const char *patch_check(void *ctx, const char *cwd, const char *patch)
{
	static __thread char reason[600];
	struct check_ctx *c = ctx;
	struct strv targets = { 0 };
	const char *why = NULL, *bad;

	if (guard_patch_targets(patch, &targets, &bad) < 0) {
		snprintf(reason, sizeof(reason), "apply_patch: %s", bad);
		why = reason;
	} else if (!targets.n) {
		why = "apply_patch: no file targets found in the patch";
	}
	for (size_t i = 0; i < targets.n && !why; i++) {
		const char *w = check_target(c, cwd, targets.v[i], SHELL_WRITE);

		if (w) {
			snprintf(reason, sizeof(reason), "apply_patch %s: %s", targets.v[i], w);
			why = reason;
		}
	}
	strv_free(&targets);
	return why;
}

/* The guard's own files under every root. -ENOMEM when the list is incomplete: the caller
 * must then deny, as a file left off would be writable. */
static int protect_paths(const struct guard_marker *m, struct strv *out)
{
	int err = 0;

	for (size_t i = 0; i < m->roots.n && err == 0; i++) {
		char *extra = NULL;

		for (int h = HARNESS_CLAUDE; h <= HARNESS_CODEX && err == 0; h++) {
			struct guard_paths p;

			if (guard_paths_resolved((enum harness)h, m->roots.v[i], &p) < 0) {
				err = -ENOMEM;
				break;
			}
			if (strv_push(out, p.marker) < 0 || strv_push(out, p.manifest) < 0 ||
			    strv_push(out, p.hookfile) < 0)
				err = -ENOMEM;
			guard_paths_free(&p);
		}
		/* settings that can switch hooks off: Claude Code's shared settings, Codex's config */
		if (err == 0 &&
		    (asprintf(&extra, "%s/.claude/settings.json", m->roots.v[i]) < 0 || strv_push(out, extra) < 0))
			err = -ENOMEM;
		free(extra);
		extra = NULL;
		if (err == 0 &&
		    (asprintf(&extra, "%s/.codex/config.toml", m->roots.v[i]) < 0 || strv_push(out, extra) < 0))
			err = -ENOMEM;
		free(extra);
	}
	return err;
}

/* Tools that only read or talk to the agent: nothing to check. */
static const char *const read_tools[] = { "Read",
					  "Glob",
					  "Grep",
					  "LS",
					  "NotebookRead",
					  "WebFetch",
					  "WebSearch",
					  "TodoWrite",
					  "TodoRead",
					  "Task",
					  "Agent",
					  "BashOutput",
					  "KillShell",
					  "KillBash",
					  "ExitPlanMode",
					  "EnterPlanMode",
					  "AskUserQuestion",
					  "ListMcpResourcesTool",
					  "ReadMcpResourceTool",
					  "Skill",
					  "SlashCommand",
					  "TaskOutput",
					  "view_image",
					  "update_plan",
					  "web_search",
					  "read_file",
					  "list_dir",
					  "grep_files",
					  NULL };
static const char *const shell_tools[] = { "Bash",          "shell", "exec_command", "local_shell", "container.exec",
					   "shell_command", NULL };

static bool listed(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return true;
	return false;
}

/* A tool we do not know (an MCP tool): judged by the paths in its input, under keys that name
 * paths (path, file, dir, dest, target, output, root, cwd, folder, location). */
static void unknown_tool(struct check_ctx *c, const char *tool, const char *cwd, json_t *j, const char *key, int depth)
{
	static const char *const keys[] = { "path", "file", "dir",    "dest",     "target", "output",
					    "root", "cwd",  "folder", "location", NULL };
	const char *k;
	json_t *v;
	size_t i;

	if (depth > 8 || c->v->deny)
		return;
	if (json_is_string(j) && key) {
		char low[128];
		bool pathy = false;

		snprintf(low, sizeof(low), "%s", key);
		for (char *p = low; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		for (const char *const *x = keys; *x && !pathy; x++)
			pathy = strstr(low, *x) != NULL;
		if (pathy && json_string_value(j)[0]) {
			const char *why = check_target(c, cwd, json_string_value(j), SHELL_WRITE);

			if (why)
				deny_v(c->v, tool, json_string_value(j), why);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			unknown_tool(c, tool, cwd, v, key, depth + 1);
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			unknown_tool(c, tool, cwd, v, k, depth + 1);
	}
}

static void decide_shell(struct check_ctx *c, const char *tool, const char *cwd, json_t *in)
{
	struct shell_check chk = { .target = check_target, .patch = patch_check, .ctx = c, .cwd = cwd };
	struct shell_verdict sv;
	json_t *cmd = json_object_get(in, "command");
	struct buf joined;
	const char *why;

	if (!cmd)
		cmd = json_object_get(in, "cmd");
	buf_init(&joined, 0);
	if (json_is_array(cmd)) { /* codex may pass argv: quote it back into one command line */
		struct strv av = { 0 };
		size_t i;
		json_t *a;

		json_array_foreach(cmd, i, a) {
			if (!json_is_string(a)) {
				deny_v(c->v, tool, NULL, "a command word that is not a string");
				strv_free(&av);
				buf_free(&joined);
				return;
			}
			if (strv_push(&av, json_string_value(a)) < 0) {
				deny_v(c->v, tool, NULL, "out of memory");
				strv_free(&av);
				buf_free(&joined);
				return;
			}
		}
		if (av.n == 2 && (!strcmp(av.v[0], "apply_patch") || !strcmp(av.v[0], "applypatch"))) {
			if ((why = patch_check(c, cwd, av.v[1])))
				deny_msg(c->v, why);
			strv_free(&av);
			buf_free(&joined);
			return;
		}
		if (av.n)
			shell_join((const char *const *)av.v, av.n, &joined);
		strv_free(&av);
	}
	if (!json_is_string(cmd) && !joined.data) {
		deny_v(c->v, tool, NULL, "no command");
	} else {
		shell_analyze(&chk, json_is_string(cmd) ? json_string_value(cmd) : joined.data, &sv);
		if (sv.deny)
			deny_v(c->v, "Bash", NULL, sv.reason);
	}
	buf_free(&joined);
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
	if (protect_paths(m, &c.protect) < 0) {
		strv_free(&c.protect);
		deny_v(v, "guard", NULL, "out of memory: the guard's own files could not all be listed");
		return;
	}
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(tool, write_tools[i]))
			continue;
		const char *path = json_string_value(json_object_get(in, i == 3 ? "notebook_path" : "file_path"));

		if (!path)
			path = json_string_value(json_object_get(in, "file_path"));
		if (!path)
			deny_v(v, tool, NULL, "no file_path");
		else if ((why = check_target(&c, cwd, path, SHELL_WRITE)))
			deny_v(v, tool, path, why);
		goto out;
	}
	if (!strcmp(tool, "apply_patch")) {
		const char *patch = find_patch(in, 0);

		if (!patch)
			deny_v(v, tool, NULL, "no file targets found in the patch");
		else if ((why = patch_check(&c, cwd, patch)))
			deny_msg(v, why);
		goto out;
	}
	if (listed(tool, shell_tools)) {
		decide_shell(&c, tool, cwd, in);
		goto out;
	}
	if (!listed(tool, read_tools))
		unknown_tool(&c, tool, cwd, in, NULL, 0);
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
	json_object_foreach(in, k, val) {
		if (strv_push(&names, k) < 0) {
			strv_free(&names);
			json_decref(keys);
			json_decref(targets);
			return -ENOMEM; /* no line rather than a line that hides a key */
		}
	}
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
