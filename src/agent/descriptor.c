/* SPDX-License-Identifier: MIT */
/* descriptor.c: agent descriptors: load, validate, expand templates, search path. */
#include "descriptor.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../guard/guard.h"
#include "../lib/buf.h"
#include "../lib/fd.h"
#include "../lib/json.h"

/* Where each placeholder may appear. */
enum { IN_ARGV = 1, IN_RESUME = 2, IN_PLUGIN = 4, IN_GUARD = 8, IN_ENV = 16, IN_DIRS = 32, IN_LINK = 64 };
#define IN_ARGS (IN_ARGV | IN_RESUME)

static const struct placeholder {
	const char *name;
	unsigned where;
	bool whole; /* stands alone as one argv element and expands to several */
} placeholders[] = {
	{ "prompt", IN_ARGS, false },
	{ "prompt_file", IN_ARGS, false },
	{ "session_id", IN_RESUME, false },
	{ "workspace", IN_ARGS | IN_ENV | IN_DIRS | IN_GUARD | IN_LINK, false },
	{ "home", IN_ARGS | IN_ENV | IN_DIRS | IN_GUARD | IN_LINK, false },
	{ "tmp", IN_ARGS | IN_ENV | IN_DIRS | IN_GUARD | IN_LINK, false },
	{ "guard_settings", IN_GUARD | IN_ENV, false },
	{ "guard_marker", IN_GUARD | IN_ENV, false },
	{ "exe", IN_GUARD | IN_ENV | IN_ARGS, false },
	{ "turn", IN_ARGS | IN_ENV, false },
	{ "plugin_dir", IN_PLUGIN | IN_LINK, false },
	{ "plugin_bundle", IN_LINK, false },
	{ "task_command", IN_ARGS, true },
	{ "task_args", IN_ARGS, true },
	{ "plugin_args", IN_ARGS, true },
	{ "guard_args", IN_ARGS, true },
};

static const struct placeholder *placeholder_find(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(placeholders) / sizeof(placeholders[0]); i++)
		if (strlen(placeholders[i].name) == n && !strncmp(placeholders[i].name, name, n))
			return &placeholders[i];
	return NULL;
}

/* Check one template: "{{" and "}}" are literal braces; "{name}" a placeholder allowed `where`. */
static const char *template_check(const char *s, unsigned where)
{
	size_t len = strlen(s);

	for (const char *p = s; *p; p++) {
		const struct placeholder *ph;
		const char *end;

		if (p[0] == '{' && p[1] == '{') {
			p++;
			continue;
		}
		if (p[0] == '}' && p[1] == '}') {
			p++;
			continue;
		}
		if (*p != '{')
			continue;
		if (!(end = strchr(p, '}')))
			return "an unclosed '{' (write '{{' for a literal brace)";
		if (!(ph = placeholder_find(p + 1, (size_t)(end - p - 1))))
			return "an unknown placeholder (write '{{' for a literal brace)";
		if (!(ph->where & where))
			return "a placeholder that is not allowed here";
		if (ph->whole && (p != s || (size_t)(end - s) != len - 1))
			return "a list placeholder that is not a whole element";
		p = end;
	}
	return NULL;
}

struct loader {
	const char *file;
	struct diag *d;
};

static void bad(struct loader *l, const char *key, const char *why)
{
	diag_error(l->d, "%s: %s: %s", l->file, key, why);
}

static void string_list(struct loader *l, const json_t *j, const char *key, unsigned where, size_t max, bool required,
			struct strv *out)
{
	const json_t *v = json_object_get(j, key);
	char field[96];
	size_t i;
	json_t *e;

	if (!v) {
		if (required)
			bad(l, key, "required");
		return;
	}
	if (!json_is_array(v) || json_array_size(v) > max || (required && !json_array_size(v))) {
		snprintf(field, sizeof(field), "must be a list of %s%zu strings", required ? "1 to " : "at most ", max);
		bad(l, key, field);
		return;
	}
	json_array_foreach(v, i, e) {
		const char *why;

		snprintf(field, sizeof(field), "%s[%zu]", key, i);
		if (!json_is_string(e))
			bad(l, field, "must be a string");
		else if (where && (why = template_check(json_string_value(e), where)))
			bad(l, field, why);
		else if (strv_push(out, json_string_value(e)) < 0)
			bad(l, field, "out of memory");
	}
}

/* A name the descriptor may set or pass through: not empty, no '=', and none of proctor's own
 * (HOME, TMPDIR, PWD, PATH, PROCTOR_*), which always win. */
static bool env_name_settable(const char *k)
{
	return *k && !strchr(k, '=') && strncmp(k, "PROCTOR_", 8) != 0 && strcmp(k, "HOME") != 0 &&
	       strcmp(k, "TMPDIR") != 0 && strcmp(k, "PWD") != 0 && strcmp(k, "PATH") != 0;
}

static void parse_env(struct loader *l, const json_t *j, struct agent_descriptor *a)
{
	const json_t *env = json_object_get(j, "env");
	const char *k;
	json_t *v;

	if (!env)
		return;
	if (!json_is_object(env) || json_object_size(env) > AGENT_MAX_ENV) {
		bad(l, "env", "must be an object of at most 64 strings");
		return;
	}
	json_object_foreach((json_t *)env, k, v) {
		char field[128], *kv;
		const char *why;

		snprintf(field, sizeof(field), "env.%s", k);
		if (!json_is_string(v))
			bad(l, field, "must be a string");
		else if (!env_name_settable(k))
			bad(l, field, "not a name an agent descriptor may set");
		else if ((why = template_check(json_string_value(v), IN_ENV)))
			bad(l, field, why);
		else if (asprintf(&kv, "%s=%s", k, json_string_value(v)) < 0 || strv_push(&a->env, kv) < 0)
			bad(l, field, "out of memory");
		else
			free(kv);
	}
}

/* A path below a fixed start: components that are not empty, "." or "..". */
static bool components_ok(const char *s)
{
	if (!*s)
		return false;
	for (const char *p = s;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

/* One plugin_links entry: "at" names a new link beneath {home}, {tmp} or {workspace}, one per
 * plugin ({plugin_bundle}); "to" is the bundle or a path inside it, nothing else. */
static const char *link_check(const char *at, const char *to)
{
	static const char *const starts[] = { "{home}/", "{tmp}/", "{workspace}/" };
	const char *why, *rest;
	size_t k;

	if ((why = template_check(at, IN_LINK)) || (why = template_check(to, IN_LINK)))
		return why;
	for (k = 0; k < 3 && strncmp(at, starts[k], strlen(starts[k])); k++)
		;
	if (k == 3)
		return "\"at\" must start with {home}/, {tmp}/ or {workspace}/";
	if (!strstr(at, "{plugin_bundle}") || strstr(at, "{plugin_dir}"))
		return "\"at\" must name each plugin's link with {plugin_bundle} (and not {plugin_dir})";
	rest = at + strlen(starts[k]);
	if (strchr(rest, '{') != strstr(rest, "{plugin_bundle}") || strchr(strstr(rest, "{plugin_bundle}") + 1, '{') ||
	    !components_ok(rest))
		return "\"at\" must be a plain path below its start (no empty, '.' or '..' component)";
	if (strncmp(to, "{plugin_dir}", 12) ||
	    (to[12] && (to[12] != '/' || strchr(to + 12, '{') || !components_ok(to + 13))))
		return "\"to\" must be {plugin_dir} or {plugin_dir}/PATH (no empty, '.' or '..' component)";
	return NULL;
}

static void parse_plugin_links(struct loader *l, const json_t *j, struct agent_descriptor *a)
{
	const json_t *v = json_object_get(j, "plugin_links");
	char field[64];
	size_t i;
	json_t *e;

	if (!v)
		return;
	if (!json_is_array(v) || json_array_size(v) > AGENT_MAX_PLUGIN_LINKS) {
		bad(l, "plugin_links", "must be a list of at most 8 {\"at\", \"to\"} objects");
		return;
	}
	json_array_foreach(v, i, e) {
		const char *at = json_string_value(json_object_get(e, "at"));
		const char *to = json_string_value(json_object_get(e, "to"));
		const char *why;

		snprintf(field, sizeof(field), "plugin_links[%zu]", i);
		if (!json_is_object(e) || json_object_size(e) != 2 || !at || !to)
			bad(l, field, "must be an object with exactly the strings \"at\" and \"to\"");
		else if ((why = link_check(at, to)))
			bad(l, field, why);
		else if (strv_push(&a->link_at, at) < 0 || strv_push(&a->link_to, to) < 0)
			bad(l, field, "out of memory");
	}
}

static void parse_fields(struct loader *l, const json_t *j, struct agent_descriptor *a)
{
	const char *s, *key, *why;
	const json_t *ev;

	if (!json_is_integer(json_object_get(j, "version")) || json_integer_value(json_object_get(j, "version")) != 1)
		bad(l, "version", "must be 1");
	s = json_string_value(json_object_get(j, "name"));
	if (!s || !*s || strlen(s) > AGENT_MAX_NAME ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != strlen(s))
		bad(l, "name", "must be 1 to 64 of a-z 0-9 - _ .");
	else
		a->name = strdup(s);
	s = json_string_value(json_object_get(j, "description"));
	a->description = strdup(s ? s : "");
	string_list(l, j, "argv", IN_ARGV, AGENT_MAX_ARGV, true, &a->argv);
	string_list(l, j, "argv_resume", IN_RESUME, AGENT_MAX_ARGV, false, &a->argv_resume);
	string_list(l, j, "plugin_arg", IN_PLUGIN, 8, false, &a->plugin_arg);
	string_list(l, j, "guard_arg", IN_GUARD, 32, false, &a->guard_arg);
	string_list(l, j, "env_pass", 0, AGENT_MAX_ENV, false, &a->env_pass);
	for (size_t i = 0; i < a->env_pass.n; i++)
		if (!env_name_settable(a->env_pass.v[i])) {
			char field[64];

			snprintf(field, sizeof(field), "env_pass[%zu]", i);
			bad(l, field, "not a name an agent descriptor may pass through");
		}
	string_list(l, j, "dirs", IN_DIRS, AGENT_MAX_DIRS, false, &a->dirs);
	parse_plugin_links(l, j, a);
	parse_env(l, j, a);
	s = json_string_value(json_object_get(j, "prompt"));
	if (!s || (strcmp(s, "argument") && strcmp(s, "stdin") && strcmp(s, "file")))
		bad(l, "prompt",
		    "must be \"argument\" (the argv has {prompt}), \"stdin\" or \"file\" (the argv has {prompt_file})");
	else
		a->prompt = !strcmp(s, "stdin") ? AGENT_PROMPT_STDIN :
			    !strcmp(s, "file")  ? AGENT_PROMPT_FILE :
						  AGENT_PROMPT_ARGUMENT;
	a->guard_harness = -1;
	if ((s = json_string_value(json_object_get(j, "guard"))) && (a->guard_harness = harness_parse(s)) < 0)
		bad(l, "guard", "must be \"claude-code\" or \"codex\" (or absent: the agent has no hooks)");
	else if (json_object_get(j, "guard") && !json_is_string(json_object_get(j, "guard")))
		bad(l, "guard", "must be \"claude-code\" or \"codex\"");
	ev = json_object_get(j, "events");
	if (events_rules_parse(ev, &a->events, &key, &why) < 0)
		bad(l, key, why);
	else
		a->events_json = json_deep_copy(ev);
}

/* Cross-key rules: where the prompt goes, resuming needs a session id. */
static void check_consistency(struct loader *l, struct agent_descriptor *a)
{
	const char *want = a->prompt == AGENT_PROMPT_ARGUMENT ? "{prompt}" :
			   a->prompt == AGENT_PROMPT_FILE     ? "{prompt_file}" :
								NULL;
	bool has_prompt = false, resume_has_prompt = false, resume_has_sid = false, has_guard_args = false;

	for (size_t i = 0; i < a->argv.n; i++) {
		has_prompt |= want && strstr(a->argv.v[i], want) != NULL;
		has_guard_args |= !strcmp(a->argv.v[i], "{guard_args}");
	}
	for (size_t i = 0; i < a->argv_resume.n; i++) {
		resume_has_prompt |= want && strstr(a->argv_resume.v[i], want) != NULL;
		resume_has_sid |= strstr(a->argv_resume.v[i], "{session_id}") != NULL;
	}
	/* A later turn's prompt goes where the first one's does: a template without it would run
	 * the turn with no prompt at all. */
	if (want && !has_prompt)
		bad(l, "argv",
		    a->prompt == AGENT_PROMPT_FILE ? "\"prompt\" is \"file\" but no element has {prompt_file}" :
						     "\"prompt\" is \"argument\" but no element has {prompt}");
	if (want && a->argv_resume.n && !resume_has_prompt)
		bad(l, "argv_resume",
		    a->prompt == AGENT_PROMPT_FILE ? "no element has {prompt_file}" : "no element has {prompt}");
	if (a->argv_resume.n && !resume_has_sid)
		bad(l, "argv_resume", "resuming needs {session_id}");
	if (a->argv_resume.n && !a->events.session_when)
		bad(l, "events.session_id", "argv_resume needs the rule that finds the session id");
	if (a->guard_harness >= 0 && !has_guard_args && !a->guard_arg.n)
		bad(l, "guard_arg",
		    "a guard harness needs guard_arg and {guard_args} in argv, or the hook is never loaded");
}

int agent_descriptor_parse(const char *file, const char *text, size_t len, struct diag *d, struct agent_descriptor *ret)
{
	static const char *const keys[] = { "version",    "name",      "description", "argv",         "argv_resume",
					    "plugin_arg", "guard_arg", "prompt",      "events",       "env",
					    "env_pass",   "dirs",      "guard",       "plugin_links", NULL };
	struct agent_descriptor a = { .guard_harness = -1 };
	struct loader l = { .file = file, .d = d };
	size_t before = d->errors;
	json_error_t e;
	const char *k;
	json_t *j, *v;

	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
	if (!json_is_object(j)) {
		if (j)
			diag_error(d, "%s: must be a JSON object", file);
		else
			diag_error(d, "%s:%d:%d: invalid JSON: %s", file, e.line, e.column, e.text);
		json_decref(j);
		return -EINVAL;
	}
	json_object_foreach(j, k, v) {
		bool known = false;

		(void)v;
		for (size_t i = 0; keys[i]; i++)
			known |= !strcmp(keys[i], k);
		if (!known)
			bad(&l, k, "unknown key");
	}
	parse_fields(&l, j, &a);
	if (d->errors == before)
		check_consistency(&l, &a);
	json_decref(j);
	if (d->errors != before || !(a.file = strdup(file))) {
		agent_descriptor_free(&a);
		return -EINVAL;
	}
	*ret = a;
	return 0;
}

int agent_descriptor_load(const char *file, struct diag *d, struct agent_descriptor *ret)
{
	struct buf b;
	int err;

	buf_init(&b, 0);
	err = json_read_path(file, AGENT_MAX_FILE_BYTES, d, &b);
	if (err == 0)
		err = agent_descriptor_parse(file, b.data ? b.data : "", b.len, d, ret);
	buf_free(&b);
	return err;
}

void agent_descriptor_free(struct agent_descriptor *a)
{
	free(a->file);
	free(a->name);
	free(a->description);
	strv_free(&a->argv);
	strv_free(&a->argv_resume);
	strv_free(&a->plugin_arg);
	strv_free(&a->guard_arg);
	events_rules_free(&a->events);
	json_decref(a->events_json);
	strv_free(&a->env);
	strv_free(&a->env_pass);
	strv_free(&a->dirs);
	strv_free(&a->link_at);
	strv_free(&a->link_to);
	memset(a, 0, sizeof(*a));
}

static const char *var_value(const struct agent_vars *v, const char *name, size_t n, char num[16])
{
#define IS(s) (strlen(s) == n && !strncmp(name, s, n))
	if (IS("prompt"))
		return v->prompt;
	if (IS("prompt_file"))
		return v->prompt_file;
	if (IS("session_id"))
		return v->session_id;
	if (IS("workspace"))
		return v->workspace;
	if (IS("home"))
		return v->home;
	if (IS("tmp"))
		return v->tmp;
	if (IS("guard_settings"))
		return v->guard_settings;
	if (IS("guard_marker"))
		return v->guard_marker;
	if (IS("exe"))
		return v->exe;
	if (IS("plugin_dir"))
		return v->plugin_dir;
	if (IS("plugin_bundle"))
		return v->plugin_bundle;
	if (IS("turn")) {
		snprintf(num, 16, "%d", v->turn);
		return num;
	}
#undef IS
	return NULL;
}

int agent_expand(const char *tmpl, const struct agent_vars *v, char **ret, const char **ret_why)
{
	struct buf b;
	char num[16];
	int err = 0;

	buf_init(&b, 0);
	for (const char *p = tmpl; *p && err == 0; p++) {
		const char *end, *val;

		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			err = buf_putc(&b, *p++);
			continue;
		}
		if (*p != '{' || !(end = strchr(p, '}'))) {
			err = buf_putc(&b, *p);
			continue;
		}
		if (!(val = var_value(v, p + 1, (size_t)(end - p - 1), num))) {
			*ret_why = tmpl;
			err = -EINVAL;
			break;
		}
		err = buf_append(&b, val, strlen(val));
		p = end;
	}
	if (err == 0 && buf_putc(&b, '\0') == 0) {
		*ret = b.data;
		return 0;
	}
	buf_free(&b);
	return err < 0 ? err : -ENOMEM;
}

static int push_expanded(struct strv *out, const char *tmpl, const struct agent_vars *v, const char **ret_why)
{
	char *s = NULL;
	int err = agent_expand(tmpl, v, &s, ret_why);

	if (err == 0)
		err = strv_push(out, s);
	free(s);
	return err;
}

static int expand_list(const struct agent_descriptor *a, const char *el, const struct agent_vars *v, struct strv *out,
		       const char **ret_why)
{
	int err = 0;

	if (!strcmp(el, "{task_command}") || !strcmp(el, "{task_args}")) {
		const struct strv *s = el[6] == 'c' ? v->task_command : v->task_args;

		for (size_t i = 0; s && i < s->n && err == 0; i++)
			err = strv_push(out, s->v[i]);
	} else if (!strcmp(el, "{plugin_args}")) {
		for (size_t i = 0; v->plugin_dirs && i < v->plugin_dirs->n && err == 0; i++) {
			struct agent_vars pv = *v;

			pv.prompt = NULL;
			for (size_t k = 0; k < a->plugin_arg.n && err == 0; k++) {
				char *s = NULL;

				/* {plugin_dir} is the only placeholder there */
				if (!strcmp(a->plugin_arg.v[k], "{plugin_dir}"))
					err = strv_push(out, v->plugin_dirs->v[i]);
				else if ((err = agent_expand(a->plugin_arg.v[k], &pv, &s, ret_why)) == 0)
					err = strv_push(out, s);
				free(s);
			}
		}
	} else if (!strcmp(el, "{guard_args}")) {
		for (size_t k = 0; v->guard_settings && k < a->guard_arg.n && err == 0; k++)
			err = push_expanded(out, a->guard_arg.v[k], v, ret_why);
	}
	return err;
}

int agent_argv(const struct agent_descriptor *a, const struct agent_vars *v, struct strv *ret, const char **ret_why)
{
	const struct strv *t = v->turn > 0 && a->argv_resume.n ? &a->argv_resume : &a->argv;
	struct strv out = { 0 };
	int err = 0;

	if (t == &a->argv_resume && !v->session_id) {
		*ret_why = "{session_id}: the previous turn reported no session id";
		return -EINVAL;
	}
	for (size_t i = 0; i < t->n && err == 0; i++) {
		const char *el = t->v[i];

		if (el[0] == '{' && (!strcmp(el, "{task_command}") || !strcmp(el, "{task_args}") ||
				     !strcmp(el, "{plugin_args}") || !strcmp(el, "{guard_args}")))
			err = expand_list(a, el, v, &out, ret_why);
		else
			err = push_expanded(&out, el, v, ret_why);
	}
	if (err == 0 && out.n == 0) {
		*ret_why = "the argv expanded to nothing";
		err = -EINVAL;
	}
	if (err < 0) {
		strv_free(&out);
		return err;
	}
	*ret = out;
	return 0;
}

int agent_search_dirs(const char *exe, const char *extra, struct strv *ret)
{
	char buf[PATH_MAX], *slash;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	struct strv out = { 0 };
	int err = 0;

	/* Built in: beside an installed binary ($PREFIX/share/proctor/agents), or the source tree's
	 * agents/ when running from build/. */
	snprintf(buf, sizeof(buf), "%s", exe);
	if ((slash = strrchr(buf, '/'))) {
		char *p = NULL, *real = NULL;

		*slash = '\0';

		if (asprintf(&p, "%s/../share/proctor/agents", buf) >= 0 && (real = realpath(p, NULL)))
			err = strv_push(&out, real);
		else {
			free(p);
			p = NULL;
			if (asprintf(&p, "%s/../agents", buf) >= 0 && (real = realpath(p, NULL)))
				err = strv_push(&out, real);
		}
		free(real);
		free(p);
	}
	if (err == 0 && (xdg || home)) {
		if (xdg && *xdg)
			snprintf(buf, sizeof(buf), "%s/proctor/agents", xdg);
		else
			snprintf(buf, sizeof(buf), "%s/.config/proctor/agents", home);
		if (access(buf, R_OK) == 0)
			err = strv_push(&out, buf);
	}
	if (err == 0 && extra)
		err = strv_push(&out, extra);
	if (err < 0) {
		strv_free(&out);
		return err;
	}
	*ret = out;
	return 0;
}

int agent_find(const struct strv *dirs, const char *name, struct diag *d, struct agent_descriptor *ret)
{
	char path[PATH_MAX];

	if (!*name || strlen(name) > AGENT_MAX_NAME || strchr(name, '/') || name[0] == '.')
		return -EINVAL;
	for (size_t i = dirs->n; i-- > 0;) {
		snprintf(path, sizeof(path), "%s/%s.json", dirs->v[i], name);
		if (access(path, F_OK) == 0)
			return agent_descriptor_load(path, d, ret);
	}
	return -ENOENT;
}

int agent_list(const struct strv *dirs, struct strv *ret_names, struct strv *ret_files)
{
	struct strv names = { 0 }, files = { 0 };
	int err = 0;

	for (size_t i = 0; i < dirs->n && err == 0; i++) {
		DIR *dp = opendir(dirs->v[i]);
		struct dirent *e;

		while (dp && (e = readdir(dp)) && names.n < AGENT_MAX_DESCRIPTORS) {
			size_t n = strlen(e->d_name), k;
			char path[PATH_MAX];

			if (n <= 5 || strcmp(e->d_name + n - 5, ".json") || e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs->v[i], e->d_name);
			e->d_name[n - 5] = '\0';
			for (k = 0; k < names.n && strcmp(names.v[k], e->d_name); k++)
				;
			if (k < names.n) { /* a later directory overrides */
				char *p = strdup(path);

				if (!p) {
					err = -ENOMEM;
					break;
				}
				free(files.v[k]);
				files.v[k] = p;
			} else if ((err = strv_push(&names, e->d_name)) < 0 || (err = strv_push(&files, path)) < 0) {
				break;
			}
		}
		if (dp)
			closedir(dp);
	}
	/* Out of memory: names and files may no longer match one to one, so hand back neither. */
	if (err < 0) {
		strv_free(&names);
		strv_free(&files);
		return err;
	}
	*ret_names = names;
	*ret_files = files;
	return 0;
}
