/* SPDX-License-Identifier: MIT */
/* verdict.h: the one line `proctor run --termination-log PATH` leaves for a container's
 * termination message (Kubernetes reads /dev/termination-log, at most 4 KB): the run's status,
 * exit code, task id and the sha256 of its result.json, so a Job's status says what happened
 * and which result.json it was without reading the results volume. */
#ifndef PROCTOR_RUN_VERDICT_H
#define PROCTOR_RUN_VERDICT_H

#define VERDICT_MAX_BYTES 4096 /* Kubernetes truncates a termination message past this */
#define VERDICT_MAX_REASON 1024

/* The verdict as one line of JSON ending in '\n', at most VERDICT_MAX_BYTES with it:
 * {"status", "exit_code", "task_id", "result", "result_sha256", "reason"}. `dir` is the run
 * directory (NULL when no run started: then status, task_id, result and result_sha256 are null
 * and reason is `why`). A result.json that cannot be read or parsed gives status "unreadable"
 * and the error as the reason. 0 or -errno; *ret is malloc'd. */
int verdict_line(const char *dir, int exit_code, const char *why, char **ret);

#endif
