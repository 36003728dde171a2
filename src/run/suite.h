/* SPDX-License-Identifier: MIT */
/* suite.h: `proctor run --suite`: which task a scheduler's index names (a directory of task files
 * in byte order, or a JSON Lines file of task paths), where the index came from (--index,
 * JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID), and the per-task directory OUT/<id>/ that makes a
 * second start of the same index idempotent. Does not run the task (run.h) and never prints. */
#ifndef PROCTOR_RUN_SUITE_H
#define PROCTOR_RUN_SUITE_H

#include <stdbool.h>
#include <stddef.h>

#include "../lib/strv.h"
#include "task.h"

#define SUITE_MAX_TASKS 100000
#define SUITE_MAX_FILE_BYTES (64u << 20)   /* a JSON Lines suite */
#define SUITE_MAX_LINE_BYTES 4096u         /* one line of it: a quoted path */
#define SUITE_MAX_RESULT_BYTES (16u << 20) /* a previous result.json, read to decide a restart */
#define SUITE_LOCK_WAIT_MS 60000u          /* a previous start of the same task still tearing down */
#define SUITE_MAX_ATTEMPT_NAMES 100u       /* OUT/.attempts/<id>-<ms>.N for starts in one millisecond */
#define SUITE_WHY_SIZE 1024

/* The scheduler variables, in the order they are consulted after --index. */
#define SUITE_ENV_K8S "JOB_COMPLETION_INDEX"
#define SUITE_ENV_SLURM "SLURM_ARRAY_TASK_ID"

struct suite {
	char *path;        /* as given */
	bool is_dir;       /* a directory of *.json, else a JSON Lines file */
	struct strv tasks; /* absolute paths, in suite order */
};

/* The index: `flag` (--index) when not NULL, else the first of JOB_COMPLETION_INDEX and
 * SLURM_ARRAY_TASK_ID that is set in `env` (even to a bad value: a malformed variable is an
 * error, never skipped for the next one). *ret_source is "--index" or the variable's name.
 * 0; -ENOENT when none is given; -EINVAL when the winner is not a decimal integer (why names
 * it and quotes the value). */
int suite_index_pick(const char *flag, char *const *env, unsigned long *ret_index, const char **ret_source,
		     char why[SUITE_WHY_SIZE]);

/* Load a suite: a directory (every entry directly in it whose name ends in .json, does not
 * start with '.', and is a regular file or a link to one, sorted by strcmp of the names) or a
 * JSON Lines file (one JSON string per line: a task path, relative to the file's directory;
 * blank lines are skipped). Task paths are made absolute. 0, or -errno with why naming the
 * suite, and the line for a bad line. An empty suite is -ENOENT. */
int suite_load(const char *path, struct suite *ret, char why[SUITE_WHY_SIZE]);
void suite_free(struct suite *s);

/* The JSON Lines parser of suite_load, on a buffer (the fuzzed entry point): `data` of `len`
 * bytes (at most SUITE_MAX_FILE_BYTES; NUL bytes are data, not an end) read from `name` (named
 * in why, with the line), each task path resolved relative to the directory of `base` (the
 * file's real path; a relative base gives relative paths). Lines end at '\n' (a '\r' before it
 * is blank space); a line over SUITE_MAX_LINE_BYTES, one that is not a non-empty JSON string
 * without NUL, and more than SUITE_MAX_TASKS tasks are errors. On success *ret is a new suite
 * (is_dir false, path a copy of name); -EFBIG, -EINVAL, -E2BIG, -ENOENT (no tasks) or -ENOMEM
 * otherwise, *ret untouched. */
int suite_parse_lines(const char *name, const char *base, const char *data, size_t len, struct suite *ret,
		      char why[SUITE_WHY_SIZE]);

/* The task at `index`, or -ERANGE with why naming `source`, the index and the valid range. */
int suite_select(const struct suite *s, unsigned long index, const char *source, const char **ret_task,
		 char why[SUITE_WHY_SIZE]);

/* The task file's id, read without the rest of validation (a task invalid otherwise still gets
 * OUT/<id>/ and a config_error result). -EINVAL with why naming the file and "id". */
int suite_task_id(const char *task_file, char ret_id[TASK_MAX_ID_LEN + 1], char why[SUITE_WHY_SIZE]);

enum suite_prior {
	SUITE_FRESH, /* OUT/<id>/ is absent or empty: run */
	SUITE_DONE,  /* a final result.json (exit 0 or 4) of this task file is there: skip */
	SUITE_MOVED, /* a retryable result (exit 3), an unreadable one, or none (the last start was
		      * killed): that directory moved to OUT/.attempts/<id>-<ms>; run */
};

/* Prepare OUT/<id>/ for `task_file` (absolute): create OUT when absent, take the task's lock
 * OUT/.locks/<id>.lock (waiting up to SUITE_LOCK_WAIT_MS for a previous start to finish; the
 * fd in *ret_lock, close-on-exec, holds it until closed), and decide. SUITE_DONE sets
 * *ret_exit and ret_status to the recorded exit code and status; SUITE_MOVED names the new
 * place in why. Errors: -EEXIST when the result there is of another task file (two tasks of the suite
 * share the id), -EWOULDBLOCK when the lock stayed taken, else -errno; why says which path. */
int suite_prepare_out(const char *out, const char *id, const char *task_file, int *ret_lock, int *ret_exit,
		      char ret_status[32], char why[SUITE_WHY_SIZE]);

#endif
