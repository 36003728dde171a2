/* SPDX-License-Identifier: MIT */
/* install.c: the guard's on-disk contract. The marker arms the hook; the manifest beside it holds
 * the hook file's original bytes so teardown restores them exactly. The manifest is written
 * first, so a crash between writes leaves teardown everything it needs. */
#include "guard.h"

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
#include "../lib/util.h"

int harness_parse(const char *s)
{
	return !strcmp(s, "claude-code") ? HARNESS_CLAUDE : !strcmp(s, "codex") ? HARNESS_CODEX : -1;
}

const char *harness_name(enum harness h)
{
	return h == HARNESS_CODEX ? "codex" : "claude-code";
}

void guard_paths_free(struct guard_paths *p)
{
	free(p->root);
	free(p->skills);
	free(p->marker);
	free(p->manifest);
	free(p->hookdir);
	free(p->hookfile);
	memset(p, 0, sizeof(*p));
}

int guard_paths(enum harness h, const char *root, struct guard_paths *ret)
{
	char *real = realpath(root, NULL);
	int r;

	if (!real)
		return -errno;
	r = guard_paths_resolved(h, real, ret);
	free(real);
	return r;
}

int guard_paths_resolved(enum harness h, const char *root, struct guard_paths *ret)
{
	struct guard_paths p = { 0 };
	const char *dot = h == HARNESS_CODEX ? ".codex" : ".claude";
	const char *sk = h == HARNESS_CODEX ? ".agents/skills" : ".claude/skills";
	const char *hf = h == HARNESS_CODEX ? "hooks.json" : "settings.local.json";

	p.root = strdup(root);
	if (!p.root)
		return -ENOMEM;
	/* NOLINTBEGIN(clang-analyzer-unix.Malloc): guard_paths_free() frees p.root; the analyzer
	 * loses track of it once &p's fields are handed to asprintf() */
	if (asprintf(&p.skills, "%s/%s", p.root, sk) < 0 ||
	    asprintf(&p.marker, "%s/%s", p.skills, GUARD_MARKER_NAME) < 0 ||
	    asprintf(&p.manifest, "%s/%s", p.skills, GUARD_MANIFEST_NAME) < 0 ||
	    asprintf(&p.hookdir, "%s/%s", p.root, dot) < 0 || asprintf(&p.hookfile, "%s/%s", p.hookdir, hf) < 0) {
		guard_paths_free(&p);
		return -ENOMEM;
	}
	/* NOLINTEND(clang-analyzer-unix.Malloc) */
	*ret = p;
	return 0;
}

static int write_json(const char *path, json_t *j)
{
	char *text = NULL;
	struct buf b;
	int r = json_dump_str(j, JSON_INDENT(2), &text);

	if (r < 0)
		return r;
	buf_init(&b, 0);
	r = buf_append(&b, text, strlen(text));
	if (r == 0)
		r = buf_putc(&b, '\n');
	if (r == 0)
		r = fd_write_atomic(path, b.data, b.len, 0644);
	free(text);
	buf_free(&b);
	return r;
}

/* mkdir -p below root for `path` (root itself exists); record the directories we made. */
static int mkdirs(const char *root, const char *path, json_t *created)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s/", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(buf, 0755) == 0)
			json_array_append_new(created, json_string(buf));
		else if (errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* The existing hook file, if any: its bytes (kept verbatim for teardown) and its JSON, which must
 * be an object whose "hooks" (if any) is an object and "hooks.PreToolUse" (if any) a list. */
static int settings_read(const char *path, struct buf *raw, json_t **ret, struct buf *report)
{
	json_error_t e;
	json_t *j, *hooks;
	int r = fd_read_file(path, GUARD_MAX_FILE_BYTES, raw);

	*ret = NULL;
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		buf_printf(report, "%s: %s\n", path, strerror(-r));
		return r;
	}
	j = json_loadb(raw->data ? raw->data : "", raw->len, 0, &e);
	if (!json_is_object(j)) {
		buf_printf(report, "%s: not a JSON object (%s); refusing to change it\n", path,
			   j ? "wrong type" : e.text);
		json_decref(j);
		return -EINVAL;
	}
	hooks = json_object_get(j, "hooks");
	if ((hooks && !json_is_object(hooks)) ||
	    (hooks && json_object_get(hooks, "PreToolUse") && !json_is_array(json_object_get(hooks, "PreToolUse")))) {
		buf_printf(report,
			   "%s: \"hooks\" must be an object and \"hooks.PreToolUse\" a list; refusing to change it\n",
			   path);
		json_decref(j);
		return -EINVAL;
	}
	*ret = j;
	return 1;
}

static json_t *hook_entry(enum harness h, const char *exe, const char *marker)
{
	char *cmd = NULL;
	json_t *e;

	if (asprintf(&cmd, "\"%s\" guard hook --harness %s \"%s\"", exe, harness_name(h), marker) < 0)
		return NULL;
	if (h == HARNESS_CODEX)
		e = json_pack("{s:s,s:[{s:s,s:s,s:i,s:s}]}", "matcher", "^Bash$|^apply_patch$|^Edit$|^Write$", "hooks",
			      "type", "command", "command", cmd, "timeout", 30, "statusMessage",
			      "proctor guard: checking write targets");
	else
		/* every tool: an unknown one (an MCP tool) is judged by the paths in its input */
		e = json_pack("{s:s,s:[{s:s,s:s}]}", "matcher", "*", "hooks", "type", "command", "command", cmd);
	free(cmd);
	return e;
}

/* The marker: a contract with the hook (guard_marker_load) and with `proctor run`. */
static json_t *marker_json(const char *root, const char *expires, const char *denial_log)
{
	return json_pack("{s:b,s:[s],s:s,s:o}", "active", 1, "allowedRoots", root, "expiresAt", expires,
			 "denialLogPath", denial_log ? json_string(denial_log) : json_null());
}

/* The settings with our entry appended to hooks.PreToolUse; every existing key keeps its place. */
static json_t *settings_merge(json_t *old, json_t *entry)
{
	json_t *s = old ? json_deep_copy(old) : json_object(), *hooks, *pre;

	if (!s)
		return NULL;
	hooks = json_object_get(s, "hooks");
	if (!hooks && json_object_set_new(s, "hooks", json_object()) == 0)
		hooks = json_object_get(s, "hooks");
	pre = json_object_get(hooks, "PreToolUse");
	if (hooks && !pre && json_object_set_new(hooks, "PreToolUse", json_array()) == 0)
		pre = json_object_get(hooks, "PreToolUse");
	if (!pre || json_array_append(pre, entry) < 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

int guard_install(enum harness h, const char *root, unsigned ttl_s, const char *denial_log, const char *exe,
		  struct buf *report)
{
	struct guard_paths p;
	struct buf raw;
	json_t *old = NULL, *entry = NULL, *merged = NULL, *marker = NULL, *manifest = NULL, *created = json_array();
	char stamp[TIME_RFC3339_MS_SIZE], expires[TIME_RFC3339_MS_SIZE];
	int64_t now = now_epoch_ms();
	struct stat st;
	int r, existed;

	buf_init(&raw, 0);
	r = guard_paths(h, root, &p);
	if (r < 0) {
		buf_printf(report, "%s: %s\n", root, strerror(-r));
		json_decref(created);
		return r;
	}
	/* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): guard_paths() filled p (r == 0) */
	if (lstat(p.manifest, &st) == 0) {
		buf_printf(report, "%s: already installed (run 'proctor guard teardown %s' first)\n", p.manifest,
			   p.root);
		r = -EEXIST;
		goto out;
	}
	r = existed = settings_read(p.hookfile, &raw, &old, report);
	if (r < 0)
		goto out;
	entry = hook_entry(h, exe, p.marker);
	merged = entry ? settings_merge(old, entry) : NULL;
	time_rfc3339_ms(now, stamp);
	time_rfc3339_ms(now + (int64_t)ttl_s * 1000, expires);
	marker = marker_json(p.root, expires, denial_log);
	if ((r = mkdirs(p.root, p.hookdir, created)) < 0 || (r = mkdirs(p.root, p.skills, created)) < 0) {
		buf_printf(report, "%s: cannot create directories: %s\n", p.root, strerror(-r));
		goto out;
	}
	manifest = json_pack("{s:s,s:s,s:b,s:o,s:s,s:s,s:O}", "created_at", stamp, "settings_path", p.hookfile,
			     "settings_existed", existed == 1, "settings_backup",
			     existed == 1 ? json_stringn(raw.data, raw.len) : json_null(), "marker_path", p.marker,
			     "harness", harness_name(h), "created_dirs", created);
	r = !merged || !marker || !manifest ? -ENOMEM : write_json(p.manifest, manifest);
	if (r == 0)
		r = write_json(p.marker, marker);
	if (r == 0)
		r = write_json(p.hookfile, merged);
	if (r < 0)
		buf_printf(report, "install failed: %s (run 'proctor guard teardown %s')\n", strerror(-r), p.root);
	else
		buf_printf(report, "armed %s guard on %s until %s\nmarker %s\nhook %s\n", harness_name(h), p.root,
			   expires, p.marker, p.hookfile);
out:
	json_decref(old);
	json_decref(entry);
	json_decref(merged);
	json_decref(marker);
	json_decref(manifest);
	json_decref(created);
	buf_free(&raw);
	guard_paths_free(&p);
	return r < 0 ? r : 0;
}

void guard_marker_free(struct guard_marker *m)
{
	strv_free(&m->roots);
	free(m->denial_log);
	memset(m, 0, sizeof(*m));
}

/* "2026-11-30T01:00:00.000Z" -> epoch ms, or -1. */
static int64_t parse_rfc3339_ms(const char *s)
{
	struct tm tm = { 0 };
	int ms = 0, n = 0;

	/* NOLINTNEXTLINE(cert-err34-c): the field widths bound every number */
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &ms, &n) != 7 ||
	    s[n] != '\0')
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

int guard_marker_load(const char *path, struct guard_marker *ret)
{
	json_t *j = NULL, *roots, *v;
	struct diag d;
	size_t i;
	int r;

	memset(ret, 0, sizeof(*ret));
	diag_init(&d);
	r = json_load_path(path, GUARD_MAX_FILE_BYTES, &d, &j);
	diag_free(&d);
	if (r < 0)
		return r;
	roots = json_object_get(j, "allowedRoots");
	v = json_object_get(j, "expiresAt");
	r = -EINVAL;
	if (!json_is_boolean(json_object_get(j, "active")) || !json_is_array(roots) || !json_array_size(roots) ||
	    !json_is_string(v) || (ret->expires_ms = parse_rfc3339_ms(json_string_value(v))) < 0)
		goto out;
	json_array_foreach(roots, i, v)
		if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
		    strv_push(&ret->roots, json_string_value(v)) < 0)
			goto out;
	ret->active = json_is_true(json_object_get(j, "active"));
	v = json_object_get(j, "denialLogPath");
	if (json_is_string(v) && !(ret->denial_log = strdup(json_string_value(v))))
		goto out;
	r = 0;
out:
	if (r < 0)
		guard_marker_free(ret);
	json_decref(j);
	return r;
}

bool guard_marker_armed(const struct guard_marker *m, int64_t now)
{
	return m->active && m->roots.n && now < m->expires_ms;
}

/* unlink/rmdir that reports a failure (a file already gone is not one). */
static int remove_reported(const char *path, bool dir, struct buf *report)
{
	if ((dir ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT)
		return 0;
	if (dir && (errno == ENOTEMPTY || errno == EEXIST))
		return 0; /* a directory the user has put files in is theirs now */
	buf_printf(report, "%s: cannot remove: %s\n", path, strerror(errno));
	return -errno;
}

/* Undo one harness's install under root; appends what was done to report. 0, or the first
 * failure (-errno) after trying every step. */
static int teardown_one(enum harness h, const char *root, struct buf *report, bool *did)
{
	struct guard_paths p;
	json_t *m = NULL, *created, *v;
	struct diag d;
	struct stat st;
	size_t i;
	int r = 0, k;

	if ((k = guard_paths(h, root, &p)) < 0) {
		buf_printf(report, "%s: %s\n", root, strerror(-k));
		return k;
	}
	diag_init(&d);
	/* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): guard_paths() filled p (k == 0) */
	if (lstat(p.manifest, &st) == 0 && json_load_path(p.manifest, GUARD_MAX_FILE_BYTES, &d, &m) == 0 &&
	    json_is_boolean(json_object_get(m, "settings_existed")) &&
	    json_is_string(json_object_get(m, "settings_path")) &&
	    !strcmp(json_string_value(json_object_get(m, "settings_path")), p.hookfile)) {
		v = json_object_get(m, "settings_backup");
		if (json_is_true(json_object_get(m, "settings_existed")) && json_is_string(v)) {
			if ((k = fd_write_atomic(p.hookfile, json_string_value(v), json_string_length(v), 0644)) == 0)
				buf_printf(report, "restored %s\n", p.hookfile);
			else
				buf_printf(report, "%s: cannot restore: %s\n", p.hookfile, strerror(-k)), r = r ? r : k;
		} else if ((k = remove_reported(p.hookfile, false, report)) == 0) {
			buf_printf(report, "removed %s (we created it)\n", p.hookfile);
		} else {
			r = r ? r : k;
		}
		/* the marker goes only once the hook no longer points at it */
		if (r == 0 && (k = remove_reported(p.marker, false, report)) < 0)
			r = k;
		if (r == 0 && (k = remove_reported(p.manifest, false, report)) < 0)
			r = k;
		created = json_object_get(m, "created_dirs");
		for (i = json_array_size(created); r == 0 && i-- > 0;)
			if (json_is_string(json_array_get(created, i))) {
				const char *dir = json_string_value(json_array_get(created, i));

				if ((k = remove_reported(dir, true, report)) < 0)
					r = k;
				else if (lstat(dir, &st) < 0)
					buf_printf(report, "removed directory %s\n", dir);
			}
		if (r == 0)
			buf_printf(report, "disarmed %s guard on %s\n", harness_name(h), p.root);
		*did = true;
	} else if (lstat(p.manifest, &st) == 0) {
		/* Corrupt manifest: we cannot restore, but we can disarm. */
		if ((k = remove_reported(p.marker, false, report)) < 0 ||
		    (k = remove_reported(p.manifest, false, report)) < 0)
			r = k;
		else
			buf_printf(report, "%s: corrupt manifest; removed it and the marker (hook file left as is)\n",
				   p.manifest);
		*did = true;
	} else if (lstat(p.marker, &st) == 0) {
		if ((k = remove_reported(p.marker, false, report)) < 0)
			r = k;
		else
			buf_printf(report, "removed stray marker %s (no manifest)\n", p.marker);
		*did = true;
	}
	json_decref(m);
	diag_free(&d);
	guard_paths_free(&p);
	return r;
}

int guard_teardown(const char *root, struct buf *report)
{
	bool did = false;
	struct stat st;
	int r, r2;

	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		buf_printf(report, "%s: %s\n", root, strerror(errno ? errno : ENOTDIR));
		return -ENOENT;
	}
	r = teardown_one(HARNESS_CLAUDE, root, report, &did);
	r2 = teardown_one(HARNESS_CODEX, root, report, &did);
	if (r < 0 || r2 < 0) {
		buf_printf(report, "teardown of %s incomplete: the guard may still be armed\n", root);
		return r < 0 ? r : r2;
	}
	if (!did)
		buf_printf(report, "nothing installed under %s\n", root);
	return 0;
}

int guard_marker_write_roots(const char *marker_path, const char *const *roots, size_t nroots, unsigned ttl_s,
			     const char *denial_log)
{
	char expires[TIME_RFC3339_MS_SIZE];
	json_t *marker, *list;
	int r;

	if (!marker_path || marker_path[0] != '/' || !nroots || ttl_s == 0 || (denial_log && denial_log[0] != '/'))
		return -EINVAL;
	for (size_t i = 0; i < nroots; i++)
		if (!roots[i] || roots[i][0] != '/')
			return -EINVAL;
	time_rfc3339_ms(now_epoch_ms() + (int64_t)ttl_s * 1000, expires);
	marker = marker_json(roots[0], expires, denial_log);
	list = json_object_get(marker, "allowedRoots");
	for (size_t i = 1; list && i < nroots; i++)
		if (json_array_append_new(list, json_string(roots[i])) < 0)
			list = NULL;
	r = marker && list ? write_json(marker_path, marker) : -ENOMEM;
	json_decref(marker);
	return r;
}

int guard_marker_write(const char *marker_path, const char *root, unsigned ttl_s, const char *denial_log)
{
	return guard_marker_write_roots(marker_path, &root, 1, ttl_s, denial_log);
}

json_t *guard_hook_config(enum harness h, const char *exe, const char *marker_path)
{
	json_t *entry = hook_entry(h, exe, marker_path), *config;

	if (!entry)
		return NULL;
	config = settings_merge(NULL, entry);
	json_decref(entry);
	return config;
}
