/* SPDX-License-Identifier: MIT */
/* passthrough.h: run the real tool for an allowlisted argv, without a shell, bounded in time
 * and output. The caller (the server's event loop) waits on the fds; this file spawns, reads,
 * kills and turns the result into a response line. */
#ifndef PROCTOR_MOCK_PASSTHROUGH_H
#define PROCTOR_MOCK_PASSTHROUGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/buf.h"
#include "sandbox.h"
#include "service.h"

struct pt_job {
	pid_t pid;
	int pidfd;          /* readable when the child exits */
	int out_fd, err_fd; /* -1 once at EOF */
	struct buf out, err;
	bool exited, overflow, timed_out;
	int status;
	uint64_t deadline_ms;
};

/* Spawn `exe` with argv[0] = tool and the request's arguments; stdin is /dev/null, cwd is /,
 * the child leads a new process group and inherits no fd but 0-2. With `sb` the tool runs in
 * that sandbox with its environment (nothing of mockd's); NULL (recording mode only) keeps
 * mockd's environment and filesystem view. 0 or -errno (the tool did not run). */
int pt_spawn(struct pt_job *job, const char *exe, const char *tool, const char *const *argv, size_t argc,
	     const struct pt_sandbox *sb, unsigned timeout_ms, uint64_t now_ms);
/* Drain a readable pipe. Over MOCK_MAX_OUTPUT_BYTES in total marks overflow and kills. */
void pt_read(struct pt_job *job, int fd);
/* The child exited: reap it; kill what is left of its process group so pipes reach EOF. */
void pt_reap(struct pt_job *job);
void pt_kill(struct pt_job *job);
bool pt_done(const struct pt_job *job);
/* Encode the result (exit code, output as UTF-8 with invalid bytes replaced) into `w`.
 * Returns true when the tool ran to completion (worth caching and recording); then the
 * sanitized stdout and stderr are moved to *ret_out and *ret_err when those are given. */
bool pt_result(struct pt_job *job, const char *tool, struct wire *w, struct buf *ret_out, struct buf *ret_err);
void pt_free(struct pt_job *job);

#endif
