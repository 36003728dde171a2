/* SPDX-License-Identifier: MIT */
/* collect.h: `proctor collect OUT`: one summary of every OUT/<task>/result.json a suite left
 * (status counts and, per task, status, durations, mock calls, guard denials, teardown). A bad
 * result.json is one task's problem, recorded in its row, never the whole summary's. Builds the
 * JSON only; src/cli/collect.c prints it as JSON, CSV or a table. */
#ifndef PROCTOR_RUN_COLLECT_H
#define PROCTOR_RUN_COLLECT_H

#include <jansson.h>

#define COLLECT_MAX_TASKS 100000
#define COLLECT_MAX_RESULT_BYTES (16u << 20)

/* The statuses counted, in the order they are printed: result.json's six, then "unreadable"
 * (a result.json that is not what doc/RESULT.md says) and "no_result" (a task directory without
 * one: still running, or killed before it wrote it). NULL-terminated. */
extern const char *const collect_statuses[];

/* The summary of OUT (format in doc/proctor-collect.1): *ret owned by the caller. Task
 * directories are OUT's subdirectories not starting with '.', in byte order of their names.
 * 0, or -errno when OUT cannot be read (-E2BIG past COLLECT_MAX_TASKS). */
int collect_summary(const char *out, json_t **ret);

#endif
