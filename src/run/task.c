/* SPDX-License-Identifier: MIT */
/* task.c: the task file parser and its filesystem checks (doc/TASK.md). Unknown keys are errors:
 * a misspelt "private" must not silently expose the answer key. */
#include "task.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../guard/guard.h"
#include "../lib/buf.h"
#include "../lib/fd.h"
#include "../lib/json.h"
#include "../mock/protocol.h"

struct ctx {
	const char *file;
	struct diag *d;
	struct task *t;
};

#define ERR(c, ...) diag_error((c)->d, __VA_ARGS__)

static const char *const top_keys[] = { "version", "id",      "workspace", "agent",    "mocks",
					"guard",   "private", "limits",    "identity", NULL };
static const char *const agent_keys[] = { "kind", "command",  "args",    "prompt",   "turns",
					  "env",  "env_pass", "plugins", "ro_paths", NULL };
static const char *const identity_keys[] = { "agent_uid", "agent_gid", "mockd_uid", "rpc_gid", "slots", NULL };
static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", NULL
};

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

/* Unknown keys of an object are errors. */
static void check_keys(struct ctx *c, json_t *obj, const char *const *allowed, const char *where)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		(void)v;
		if (!in_list(allowed, k))
			ERR(c, "%s: %s%s%s: unknown key", c->file, where, *where ? "." : "", k);
	}
}

/* A string without NUL bytes, or NULL with an error. */
static const char *get_str(struct ctx *c, json_t *v, const char *field)
{
	if (!json_is_string(v)) {
		ERR(c, "%s: %s: must be a string, not %s", c->file, field, v ? json_type_name(v) : "missing");
		return NULL;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		ERR(c, "%s: %s: contains a NUL byte", c->file, field);
		return NULL;
	}
	return json_string_value(v);
}

static int get_uint(struct ctx *c, json_t *v, const char *field, unsigned long min, unsigned long max,
		    unsigned long *ret)
{
	if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min || json_integer_value(v) > (json_int_t)max) {
		ERR(c, "%s: %s: must be an integer from %lu to %lu", c->file, field, min, max);
		return -EINVAL;
	}
	*ret = (unsigned long)json_integer_value(v);
	return 0;
}

static char *task_path(const struct task *t, const char *p)
{
	char *out;

	if (p[0] == '/')
		return strdup(p);
	return asprintf(&out, "%s/%s", t->dir, p) < 0 ? NULL : out;
}

static bool name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

bool task_env_reserved(const char *name)
{
	return !strcmp(name, "HOME") || !strcmp(name, "TMPDIR") || !strcmp(name, "PWD") ||
	       !strncmp(name, "PROCTOR_", 8);
}

bool task_id_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > TASK_MAX_ID_LEN || s[0] == '.' || s[0] == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

static int push_or_oom(struct ctx *c, struct strv *s, const char *v)
{
	if (strv_push(s, v) < 0) {
		ERR(c, "%s: out of memory", c->file);
		return -ENOMEM;
	}
	return 0;
}

static int push_path(struct ctx *c, struct strv *s, const char *v)
{
	char *p = task_path(c->t, v);
	int r;

	if (!p) {
		ERR(c, "%s: out of memory", c->file);
		return -ENOMEM;
	}
	r = push_or_oom(c, s, p);
	free(p);
	return r;
}

/* A list of strings, each handed to `each`. */
static void string_list(struct ctx *c, json_t *v, const char *field, size_t max,
			void (*each)(struct ctx *, const char *, const char *))
{
	char where[128];
	size_t i;
	json_t *e;

	if (!v)
		return;
	if (!json_is_array(v) || json_array_size(v) > max) {
		ERR(c, "%s: %s: must be a list of at most %zu strings", c->file, field, max);
		return;
	}
	json_array_foreach(v, i, e) {
		const char *s;

		snprintf(where, sizeof(where), "%s[%zu]", field, i);
		if ((s = get_str(c, e, where)))
			each(c, where, s);
	}
}

static void each_argv(struct ctx *c, const char *where, const char *s)
{
	if (strlen(s) > TASK_MAX_ARG_BYTES) {
		ERR(c, "%s: %s: longer than %d bytes", c->file, where, TASK_MAX_ARG_BYTES);
		return;
	}
	push_or_oom(c, &c->t->argv, s);
}

static void each_arg(struct ctx *c, const char *where, const char *s)
{
	if (strlen(s) > TASK_MAX_ARG_BYTES)
		ERR(c, "%s: %s: longer than %d bytes", c->file, where, TASK_MAX_ARG_BYTES);
	else
		push_or_oom(c, &c->t->args, s);
}

static void each_turn(struct ctx *c, const char *where, const char *s)
{
	if (strlen(s) > TASK_MAX_PROMPT_BYTES)
		ERR(c, "%s: %s: longer than %d bytes", c->file, where, TASK_MAX_PROMPT_BYTES);
	else
		push_or_oom(c, &c->t->turns, s);
}

static void each_env_pass(struct ctx *c, const char *where, const char *s)
{
	if (!name_ok(s))
		ERR(c, "%s: %s: '%s' is not an environment variable name", c->file, where, s);
	else if (task_env_reserved(s))
		ERR(c, "%s: %s: %s is reserved (proctor sets it)", c->file, where, s);
	else if (!strcmp(s, "PATH"))
		ERR(c, "%s: %s: PATH cannot be passed through (the shims come first); set agent.env.PATH", c->file,
		    where);
	else
		push_or_oom(c, &c->t->env_pass, s);
}

static void each_ro_path(struct ctx *c, const char *where, const char *s)
{
	if (s[0] != '/')
		ERR(c, "%s: %s: '%s' must be an absolute path", c->file, where, s);
	else
		push_or_oom(c, &c->t->ro_paths, s);
}

static void each_private(struct ctx *c, const char *where, const char *s)
{
	if (!*s)
		ERR(c, "%s: %s: empty path", c->file, where);
	else
		push_path(c, &c->t->private_paths, s);
}

static void parse_env(struct ctx *c, json_t *env)
{
	const char *k;
	json_t *v;
	size_t bytes = 0;

	if (!env)
		return;
	if (!json_is_object(env) || json_object_size(env) > TASK_MAX_ENV) {
		ERR(c, "%s: agent.env: must be an object of at most %d strings", c->file, TASK_MAX_ENV);
		return;
	}
	json_object_foreach(env, k, v) {
		char field[300], *kv;
		const char *s;

		snprintf(field, sizeof(field), "agent.env.%s", k);
		if (!name_ok(k)) {
			ERR(c, "%s: %s: not an environment variable name", c->file, field);
			continue;
		}
		if (task_env_reserved(k)) {
			ERR(c, "%s: %s: reserved (proctor sets it)", c->file, field);
			continue;
		}
		if (!(s = get_str(c, v, field)))
			continue;
		bytes += strlen(k) + strlen(s) + 2;
		if (bytes > TASK_MAX_ENV_BYTES) {
			ERR(c, "%s: agent.env: more than %d bytes", c->file, TASK_MAX_ENV_BYTES);
			return;
		}
		if (asprintf(&kv, "%s=%s", k, s) < 0) {
			ERR(c, "%s: out of memory", c->file);
			return;
		}
		push_or_oom(c, &c->t->env, kv);
		free(kv);
	}
}

static void parse_plugins(struct ctx *c, json_t *v)
{
	size_t i;
	json_t *e;

	if (!v)
		return;
	if (!json_is_array(v) || json_array_size(v) > TASK_MAX_PLUGINS) {
		ERR(c, "%s: agent.plugins: must be a list of at most %d objects", c->file, TASK_MAX_PLUGINS);
		return;
	}
	json_array_foreach(v, i, e) {
		static const char *const keys[] = { "path", NULL };
		char where[64];
		const char *s;

		snprintf(where, sizeof(where), "agent.plugins[%zu]", i);
		if (!json_is_object(e)) {
			ERR(c, "%s: %s: must be an object {\"path\": DIR}", c->file, where);
			continue;
		}
		check_keys(c, e, keys, where);
		snprintf(where, sizeof(where), "agent.plugins[%zu].path", i);
		if ((s = get_str(c, json_object_get(e, "path"), where)))
			push_path(c, &c->t->plugins, s);
	}
}

static void parse_command(struct ctx *c, json_t *cmd)
{
	struct task *t = c->t;

	if (!cmd)
		return; /* required only by descriptors that use {task_command} (checked with the descriptor) */
	if (!json_is_array(cmd) || json_array_size(cmd) == 0 || json_array_size(cmd) > TASK_MAX_ARGV) {
		ERR(c, "%s: agent.command: must be a list of 1 to %d strings", c->file, TASK_MAX_ARGV);
		return;
	}
	string_list(c, cmd, "agent.command", TASK_MAX_ARGV, each_argv);
	if (t->argv.n != json_array_size(cmd))
		return;
	if (!t->argv.v[0][0])
		ERR(c, "%s: agent.command[0]: empty", c->file);
	else if (t->argv.v[0][0] != '/' && strchr(t->argv.v[0], '/') && !(t->agent_script = task_path(t, t->argv.v[0])))
		ERR(c, "%s: out of memory", c->file);
}

static void parse_agent(struct ctx *c, json_t *a)
{
	struct task *t = c->t;
	const char *s;

	if (!json_is_object(a)) {
		ERR(c, "%s: agent: must be an object, not %s", c->file, a ? json_type_name(a) : "missing");
		return;
	}
	check_keys(c, a, agent_keys, "agent");
	if ((s = get_str(c, json_object_get(a, "kind"), "agent.kind"))) {
		if (!*s || strlen(s) > 64 || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != strlen(s) ||
		    s[0] == '.')
			ERR(c, "%s: agent.kind: '%s' is not an agent descriptor's name (see proctor agents list)",
			    c->file, s);
		else if (!(t->agent_kind = strdup(s)))
			ERR(c, "%s: out of memory", c->file);
	}
	parse_command(c, json_object_get(a, "command"));
	string_list(c, json_object_get(a, "args"), "agent.args", TASK_MAX_ARGV, each_arg);
	string_list(c, json_object_get(a, "turns"), "agent.turns", TASK_MAX_TURNS, each_turn);
	if (json_object_get(a, "prompt") && (s = get_str(c, json_object_get(a, "prompt"), "agent.prompt"))) {
		if (strlen(s) > TASK_MAX_PROMPT_BYTES)
			ERR(c, "%s: agent.prompt: longer than %d bytes", c->file, TASK_MAX_PROMPT_BYTES);
		else
			t->prompt = strdup(s);
	}
	if (!t->prompt && !(t->prompt = strdup("")))
		ERR(c, "%s: out of memory", c->file);
	parse_env(c, json_object_get(a, "env"));
	string_list(c, json_object_get(a, "env_pass"), "agent.env_pass", TASK_MAX_ENV, each_env_pass);
	for (size_t i = 0; i < t->env_pass.n; i++)
		for (size_t j = 0; j < t->env.n; j++)
			if (!strncmp(t->env.v[j], t->env_pass.v[i], strlen(t->env_pass.v[i])) &&
			    t->env.v[j][strlen(t->env_pass.v[i])] == '=')
				ERR(c, "%s: agent.env_pass[%zu]: %s is also set in agent.env", c->file, i,
				    t->env_pass.v[i]);
	parse_plugins(c, json_object_get(a, "plugins"));
	string_list(c, json_object_get(a, "ro_paths"), "agent.ro_paths", TASK_MAX_RO_PATHS, each_ro_path);
}

static void parse_mock(struct ctx *c, size_t i, json_t *e)
{
	struct task_mock *m = &c->t->mocks[c->t->nmocks];
	char where[64];
	const char *tool, *fx;

	snprintf(where, sizeof(where), "mocks[%zu]", i);
	if (!json_is_object(e)) {
		ERR(c, "%s: %s: must be an object (a mock-config.json tool entry)", c->file, where);
		return;
	}
	snprintf(where, sizeof(where), "mocks[%zu].tool", i);
	if (!(tool = get_str(c, json_object_get(e, "tool"), where)))
		return;
	if (!mock_tool_name_valid(tool)) {
		ERR(c, "%s: %s: '%s' is not a bare executable name", c->file, where, tool);
		return;
	}
	for (size_t j = 0; j < c->t->nmocks; j++)
		if (!strcmp(c->t->mocks[j].tool, tool)) {
			ERR(c, "%s: %s: '%s' is mocked twice", c->file, where, tool);
			return;
		}
	snprintf(where, sizeof(where), "mocks[%zu].fixture", i);
	if (!(fx = get_str(c, json_object_get(e, "fixture"), where)))
		return;
	m->tool = strdup(tool);
	m->fixture = task_path(c->t, fx);
	m->entry = json_deep_copy(e);
	c->t->nmocks++;
	if (!m->tool || !m->fixture || !m->entry)
		ERR(c, "%s: out of memory", c->file);
}

static void parse_mocks(struct ctx *c, json_t *v)
{
	size_t i;
	json_t *e;

	if (!v)
		return;
	if (!json_is_array(v) || json_array_size(v) > TASK_MAX_MOCKS) {
		ERR(c, "%s: mocks: must be a list of at most %d tool entries", c->file, TASK_MAX_MOCKS);
		return;
	}
	json_array_foreach(v, i, e)
		parse_mock(c, i, e);
}

static void parse_guard(struct ctx *c, json_t *g)
{
	static const char *const keys[] = { "harness", NULL };
	const char *s;

	c->t->guard_harness = g ? -1 : TASK_GUARD_DEFAULT;
	if (!g || json_is_false(g))
		return;
	if (!json_is_object(g)) {
		ERR(c, "%s: guard: must be {\"harness\": \"claude-code\"|\"codex\"} or false", c->file);
		return;
	}
	check_keys(c, g, keys, "guard");
	if ((s = get_str(c, json_object_get(g, "harness"), "guard.harness")) &&
	    (c->t->guard_harness = harness_parse(s)) < 0)
		ERR(c, "%s: guard.harness: '%s' is not claude-code or codex", c->file, s);
}

static void parse_limits(struct ctx *c, json_t *l)
{
	static const char *const keys[] = { "timeout_s", "turn_timeout_s", NULL };
	unsigned long v;

	c->t->timeout_s = TASK_DEFAULT_TIMEOUT_S;
	if (!l)
		return;
	if (!json_is_object(l)) {
		ERR(c, "%s: limits: must be an object", c->file);
		return;
	}
	check_keys(c, l, keys, "limits");
	if (json_object_get(l, "timeout_s") &&
	    get_uint(c, json_object_get(l, "timeout_s"), "limits.timeout_s", 1, TASK_MAX_TIMEOUT_S, &v) == 0)
		c->t->timeout_s = (unsigned)v;
	if (json_object_get(l, "turn_timeout_s") &&
	    get_uint(c, json_object_get(l, "turn_timeout_s"), "limits.turn_timeout_s", 1, TASK_MAX_TIMEOUT_S, &v) == 0)
		c->t->turn_timeout_s = (unsigned)v;
}

/* Ranges [base, base + slots) of the ids must not overlap where they would share a meaning. */
static bool overlap(unsigned long a, unsigned long b, unsigned long n)
{
	return a < b + n && b < a + n;
}

static void parse_identity(struct ctx *c, json_t *v)
{
	static const char *const names[] = { "identity.agent_uid", "identity.agent_gid", "identity.mockd_uid",
					     "identity.rpc_gid" };
	unsigned long ids[4] = { 2000, 2000, 2100, 2200 }, slots = 1;
	struct task *t = c->t;

	if (v && !json_is_object(v)) {
		ERR(c, "%s: identity: must be an object", c->file);
		return;
	}
	if (v) {
		check_keys(c, v, identity_keys, "identity");
		for (size_t i = 0; i < 4; i++)
			if (json_object_get(v, identity_keys[i]))
				get_uint(c, json_object_get(v, identity_keys[i]), names[i], 1, TASK_MAX_ID, &ids[i]);
		if (json_object_get(v, "slots"))
			get_uint(c, json_object_get(v, "slots"), "identity.slots", 1, TASK_MAX_SLOTS, &slots);
	}
	if (overlap(ids[0], ids[2], slots))
		ERR(c, "%s: identity: agent_uid and mockd_uid ranges overlap (each run k of %lu slots uses id + k)",
		    c->file, slots);
	if (overlap(ids[1], ids[2], slots) || overlap(ids[1], ids[3], slots) || overlap(ids[2], ids[3], slots))
		ERR(c, "%s: identity: agent_gid, mockd_uid (its gid) and rpc_gid ranges must not overlap", c->file);
	t->agent_uid = (uid_t)ids[0];
	t->agent_gid = (gid_t)ids[1];
	t->mockd_uid = (uid_t)ids[2];
	t->rpc_gid = (gid_t)ids[3];
	t->slots = (unsigned)slots;
}

static void parse_top(struct ctx *c, json_t *j)
{
	struct task *t = c->t;
	unsigned long version;
	json_t *ws;
	const char *s;

	check_keys(c, j, top_keys, "");
	if (get_uint(c, json_object_get(j, "version"), "version", 1, 1, &version) < 0)
		return; /* another version: its fields may mean other things */
	if ((s = get_str(c, json_object_get(j, "id"), "id"))) {
		if (!task_id_valid(s))
			ERR(c, "%s: id: '%s' must be 1 to %d of A-Z a-z 0-9 . _ -, not starting with . or -", c->file,
			    s, TASK_MAX_ID_LEN);
		else
			t->id = strdup(s);
	}
	if ((ws = json_object_get(j, "workspace"))) {
		static const char *const keys[] = { "from", NULL };

		if (!json_is_object(ws))
			ERR(c, "%s: workspace: must be an object {\"from\": DIR}", c->file);
		else {
			check_keys(c, ws, keys, "workspace");
			if ((s = get_str(c, json_object_get(ws, "from"), "workspace.from")))
				t->workspace_from = task_path(t, s);
		}
	}
	parse_agent(c, json_object_get(j, "agent"));
	parse_mocks(c, json_object_get(j, "mocks"));
	parse_guard(c, json_object_get(j, "guard"));
	string_list(c, json_object_get(j, "private"), "private", TASK_MAX_PRIVATE, each_private);
	parse_limits(c, json_object_get(j, "limits"));
	parse_identity(c, json_object_get(j, "identity"));
}

/* The task file's directory, absolute (from the current directory when `file` is relative). */
static char *dir_of(const char *file)
{
	char cwd[PATH_MAX], *abs, *slash;
	bool rel = file[0] != '/';

	if (rel && !getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&abs, "%s%s%s", rel ? cwd : "", rel ? "/" : "", file) < 0)
		return NULL;
	slash = strrchr(abs, '/');
	if (slash == abs)
		slash[1] = '\0';
	else
		*slash = '\0';
	return abs;
}

int task_parse(const char *file, const char *text, size_t len, struct diag *d, struct task *ret)
{
	struct task t = { .guard_harness = -1, .timeout_s = TASK_DEFAULT_TIMEOUT_S };
	struct ctx c = { .file = file, .d = d, .t = &t };
	size_t before = d->errors;
	json_error_t e;
	json_t *j;

	t.file = strdup(file);
	t.dir = dir_of(file);
	if (!t.file || !t.dir) {
		task_free(&t);
		diag_error(d, "%s: out of memory", file);
		return -ENOMEM;
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		diag_error(d, "%s:%d:%d: invalid JSON: %s", file, e.line, e.column, e.text);
	else if (!json_is_object(j))
		diag_error(d, "%s: must be a JSON object, not %s", file, json_type_name(j));
	else
		parse_top(&c, j);
	json_decref(j);
	if (d->errors != before) {
		task_free(&t);
		return -EINVAL;
	}
	*ret = t;
	return 0;
}

int task_load(const char *file, struct diag *d, struct task *ret)
{
	struct buf b;
	int r;

	buf_init(&b, 0);
	r = fd_read_file(file, TASK_MAX_FILE_BYTES, &b);
	if (r == -EFBIG)
		diag_error(d, "%s: larger than the %d byte limit", file, TASK_MAX_FILE_BYTES);
	else if (r < 0)
		diag_error(d, "%s: %s", file, strerror(-r));
	else
		r = task_parse(file, b.data ? b.data : "", b.len, d, ret);
	buf_free(&b);
	return r;
}

/* Is `path` (resolved) `dir` (resolved) or beneath it? */
static bool beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static void check_type(struct ctx *c, const char *path, const char *field, mode_t want)
{
	struct stat st;

	if (stat(path, &st) < 0)
		ERR(c, "%s: %s: %s: %s", c->file, field, path, strerror(errno));
	else if ((st.st_mode & S_IFMT) != want)
		ERR(c, "%s: %s: %s: not a %s", c->file, field, path, want == S_IFDIR ? "directory" : "regular file");
}

/* Private material (and fixtures) must lie outside everything that enters the agent's view. */
static void check_hidden(struct ctx *c, const char *path, const char *field, const struct strv *views)
{
	char *real = realpath(path, NULL);

	if (!real) {
		ERR(c, "%s: %s: %s: %s", c->file, field, path, strerror(errno));
		return;
	}
	for (size_t i = 0; i < views->n; i++)
		if (beneath(real, views->v[i]))
			ERR(c, "%s: %s: %s lies inside %s, which the agent can read", c->file, field, path,
			    views->v[i]);
	free(real);
}

static bool exec_reachable(const struct task *t, const char *real)
{
	for (size_t i = 0; system_dirs[i]; i++)
		if (beneath(real, system_dirs[i]))
			return true;
	for (size_t i = 0; i < t->ro_paths.n; i++)
		if (beneath(real, t->ro_paths.v[i]))
			return true;
	return false;
}

static void check_views(struct ctx *c, const struct task *t, struct strv *views)
{
	char field[64], *real;

	if (t->workspace_from) {
		check_type(c, t->workspace_from, "workspace.from", S_IFDIR);
		if ((real = realpath(t->workspace_from, NULL)))
			push_or_oom(c, views, real);
		free(real);
	}
	for (size_t i = 0; i < t->plugins.n; i++) {
		snprintf(field, sizeof(field), "agent.plugins[%zu].path", i);
		check_type(c, t->plugins.v[i], field, S_IFDIR);
		if ((real = realpath(t->plugins.v[i], NULL)))
			push_or_oom(c, views, real);
		free(real);
	}
	for (size_t i = 0; i < t->ro_paths.n; i++) {
		snprintf(field, sizeof(field), "agent.ro_paths[%zu]", i);
		if (!(real = realpath(t->ro_paths.v[i], NULL)))
			ERR(c, "%s: %s: %s: %s", c->file, field, t->ro_paths.v[i], strerror(errno));
		else
			push_or_oom(c, views, real);
		free(real);
	}
}

int task_check_paths(const struct task *t, struct diag *d)
{
	struct ctx c = { .file = t->file, .d = d, .t = (struct task *)t };
	struct strv views = { 0 };
	size_t before = d->errors;
	char field[64], *real;

	check_views(&c, t, &views);
	if (t->agent_script)
		check_type(&c, t->agent_script, "agent.command[0]", S_IFREG);
	else if (t->argv.n && t->argv.v[0][0] == '/') {
		if (!(real = realpath(t->argv.v[0], NULL)))
			ERR(&c, "%s: agent.command[0]: %s: %s", t->file, t->argv.v[0], strerror(errno));
		else if (!exec_reachable(t, real))
			ERR(&c,
			    "%s: agent.command[0]: %s is outside the system directories and agent.ro_paths, so the "
			    "agent could not run it",
			    t->file, t->argv.v[0]);
		free(real);
	}
	for (size_t i = 0; i < t->nmocks; i++) {
		snprintf(field, sizeof(field), "mocks[%zu].fixture", i);
		check_type(&c, t->mocks[i].fixture, field, S_IFREG);
		if (d->errors == before)
			check_hidden(&c, t->mocks[i].fixture, field, &views);
	}
	for (size_t i = 0; i < t->private_paths.n; i++) {
		snprintf(field, sizeof(field), "private[%zu]", i);
		check_hidden(&c, t->private_paths.v[i], field, &views);
	}
	strv_free(&views);
	return d->errors != before ? -EINVAL : 0;
}

void task_free(struct task *t)
{
	free(t->file);
	free(t->dir);
	free(t->id);
	free(t->workspace_from);
	free(t->agent_kind);
	strv_free(&t->argv);
	strv_free(&t->args);
	strv_free(&t->turns);
	free(t->agent_script);
	free(t->prompt);
	strv_free(&t->env);
	strv_free(&t->env_pass);
	strv_free(&t->plugins);
	strv_free(&t->ro_paths);
	for (size_t i = 0; i < t->nmocks; i++) {
		free(t->mocks[i].tool);
		free(t->mocks[i].fixture);
		json_decref(t->mocks[i].entry);
	}
	strv_free(&t->private_paths);
	memset(t, 0, sizeof(*t));
}
