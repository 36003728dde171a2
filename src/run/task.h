/* SPDX-License-Identifier: MIT */
/* task.h: the task file (doc/TASK.md): parse and validate it into a struct task. Parsing checks
 * shapes and names; task_check_paths() checks what the filesystem says (existence, private
 * material outside everything the agent sees). Every error names the file and the field. */
#ifndef PROCTOR_RUN_TASK_H
#define PROCTOR_RUN_TASK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../lib/diag.h"
#include "../lib/strv.h"

#define TASK_MAX_FILE_BYTES (1024 * 1024)
/* The prompt also goes in PROCTOR_PROMPT, and one environment string is at most 128 KiB. */
#define TASK_MAX_PROMPT_BYTES (120 * 1024)
#define TASK_MAX_ID_LEN 64
#define TASK_MAX_ARGV 256
#define TASK_MAX_ARG_BYTES (128 * 1024)
#define TASK_MAX_ENV 256
#define TASK_MAX_ENV_BYTES (128 * 1024)
#define TASK_MAX_TURNS 64
#define TASK_GUARD_DEFAULT (-2) /* no "guard" key: the agent descriptor's harness, if it has one */
#define TASK_MAX_PLUGINS 16
#define TASK_MAX_RO_PATHS 32
#define TASK_MAX_MOCKS 32
#define TASK_MAX_PRIVATE 256
#define TASK_DEFAULT_TIMEOUT_S 600u
#define TASK_MAX_TIMEOUT_S 86400u
#define TASK_MAX_SLOTS 1024u
#define TASK_MAX_ID 4000000000u

struct task_mock {
	char *tool;
	char *fixture; /* absolute source path */
	json_t *entry; /* the entry as given (owned), for the generated mock-config.json */
};

struct task {
	char *file; /* as given */
	char *dir;  /* the task file's directory, absolute */
	char *id;
	char *workspace_from; /* absolute, or NULL: an empty workspace */
	char *agent_kind;     /* a descriptor's name (doc/AGENTS.md) */
	struct strv argv;     /* agent.command: may be empty when the descriptor does not use it */
	struct strv args;     /* agent.args: {task_args} */
	struct strv turns;    /* agent.turns: the follow-up prompts */
	char *agent_script;   /* absolute source of argv[0] when it is a task-relative script */
	char *prompt;
	struct strv env;      /* K=V, in the file's order */
	struct strv env_pass; /* names */
	struct strv plugins;  /* absolute source directories */
	struct strv ro_paths;
	struct task_mock mocks[TASK_MAX_MOCKS];
	size_t nmocks;
	int guard_harness;         /* enum harness, -1 for none (guard: false), TASK_GUARD_DEFAULT when absent */
	struct strv private_paths; /* absolute */
	unsigned timeout_s;
	unsigned turn_timeout_s; /* 0: the whole timeout_s */
	uid_t agent_uid, mockd_uid;
	gid_t agent_gid, rpc_gid;
	unsigned slots;
};

/* Parse `text` as the task file `file` (relative paths resolve against its directory, made
 * absolute from the current directory). Every error goes to `d`; -EINVAL if there was one. */
int task_parse(const char *file, const char *text, size_t len, struct diag *d, struct task *ret);
/* Read and parse the file. */
int task_load(const char *file, struct diag *d, struct task *ret);
/* What the filesystem must say: workspace, plugins and fixtures exist with the right type; the
 * agent script is a regular file; ro_paths exist; every private path exists and lies outside
 * the workspace source, the plugins and ro_paths. Errors to `d`; -EINVAL if any. */
int task_check_paths(const struct task *t, struct diag *d);
/* 1 to TASK_MAX_ID_LEN of A-Z a-z 0-9 . _ -, not starting with . or - (it names a directory). */
bool task_id_valid(const char *s);
/* Is `name` reserved for proctor in the agent's environment? */
bool task_env_reserved(const char *name);
void task_free(struct task *t);

#endif
