/* SPDX-License-Identifier: MIT */
/* descriptor.h: agents are data (doc/AGENTS.md). A descriptor says how to run an agent for the
 * first and the later turns (argv templates), how the prompt reaches it, how to read its events,
 * what environment it gets and which guard harness it speaks. Loading validates every key and
 * every template: an unknown key or placeholder is an error naming the file and the key. */
#ifndef PROCTOR_AGENT_DESCRIPTOR_H
#define PROCTOR_AGENT_DESCRIPTOR_H

#include <jansson.h>
#include <stdbool.h>

#include "../lib/diag.h"
#include "../lib/strv.h"
#include "events.h"

#define AGENT_MAX_FILE_BYTES (256 * 1024)
#define AGENT_MAX_ARGV 128
#define AGENT_MAX_ENV 64
#define AGENT_MAX_DIRS 8
#define AGENT_MAX_PLUGIN_LINKS 8
#define AGENT_MAX_NAME 64
#define AGENT_MAX_SEARCH_DIRS 4
#define AGENT_MAX_DESCRIPTORS 256

enum agent_prompt { AGENT_PROMPT_ARGUMENT, AGENT_PROMPT_STDIN, AGENT_PROMPT_FILE };

struct agent_descriptor {
	char *file;
	char *name, *description;
	struct strv argv, argv_resume; /* argv_resume empty: argv for every turn */
	struct strv plugin_arg, guard_arg;
	enum agent_prompt prompt;
	struct events_rules events;
	json_t *events_json;  /* the same as given, for the worker */
	struct strv env;      /* K=template */
	struct strv env_pass; /* names */
	struct strv dirs;     /* templates of directories made (agent-owned) before the first turn */
	/* plugin_links: per staged plugin, a link at link_at[i] to link_to[i] (templates; link_to is
	 * {plugin_dir} or {plugin_dir}/REL, link_at lies beneath {home}, {tmp} or {workspace}) */
	struct strv link_at, link_to;
	int guard_harness; /* enum harness, or -1 */
};

/* What a template may refer to. */
struct agent_vars {
	const char *prompt, *session_id, *workspace, *home, *tmp, *guard_settings, *guard_marker, *exe;
	const char *prompt_file; /* {prompt_file}: the turn's prompt in a file (prompt "file") */
	const struct strv *plugin_dirs;
	const char *plugin_dir, *plugin_bundle; /* one plugin's, for plugin_links */
	const struct strv *task_command;        /* {task_command}: the task's agent.command */
	const struct strv *task_args;           /* {task_args}: the task's agent.args */
	int turn;
};

int agent_descriptor_load(const char *file, struct diag *d, struct agent_descriptor *ret);
int agent_descriptor_parse(const char *file, const char *text, size_t len, struct diag *d,
			   struct agent_descriptor *ret);
void agent_descriptor_free(struct agent_descriptor *a);
/* The argv of turn `v->turn` (0: argv, later: argv_resume). Whole-element placeholders
 * ({task_command}, {task_args}, {plugin_args}, {guard_args}) expand to several elements or none;
 * the others are replaced inside strings. -EINVAL when a value is missing (e.g. no session id to
 * resume), with the placeholder in *ret_why. */
int agent_argv(const struct agent_descriptor *a, const struct agent_vars *v, struct strv *ret, const char **ret_why);
/* One template string. */
int agent_expand(const char *tmpl, const struct agent_vars *v, char **ret, const char **ret_why);

/* The descriptor search path: the built-in directory, $XDG_CONFIG_HOME/proctor/agents (or
 * ~/.config/...), then `extra` (may be NULL). Later directories override earlier ones by name. */
int agent_search_dirs(const char *exe, const char *extra, struct strv *ret);
/* Find descriptor `name` along the search path. -ENOENT when there is none. */
int agent_find(const struct strv *dirs, const char *name, struct diag *d, struct agent_descriptor *ret);
/* Every descriptor's name and file, by name (later directories win). -ENOMEM, with neither list
 * written, when out of memory. */
int agent_list(const struct strv *dirs, struct strv *ret_names, struct strv *ret_files);

#endif
