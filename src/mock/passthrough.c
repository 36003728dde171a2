/* SPDX-License-Identifier: MIT */
/* passthrough.c: fork the real tool into its sandbox; pidfd + non-blocking pipes feed the event loop. */
#include "passthrough.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/util.h"
#include "protocol.h"

extern char **environ;

static int pidfd_open_compat(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int take_fd(int *fd)
{
	int v = *fd;

	*fd = -1;
	return v;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The child's side, between fork and exec: async-signal-safe calls only. Any failure is sent
 * back as an errno on `err_w` and the tool never runs. */
static noreturn void child_exec(const char *exe, char **args, char **envp, const struct pt_sandbox *sb, int in,
				int out_w, int err_w, int report)
{
	int e;

	setpgid(0, 0);
	signals_reset(); /* mockd blocks signals for its signalfd and ignores SIGPIPE and SIGXFSZ */
	if (dup2(in, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0 || chdir("/") < 0)
		goto fail;
	if (sb && (e = pt_sandbox_enter(sb)) < 0) {
		errno = -e;
		goto fail;
	}
	/* Nothing of mockd's (journal, socket, clients, ruleset) reaches the tool: only 0-2 and the
	 * close-on-exec report pipe survive until exec. */
	if (report > 3)
		close_range(3, (unsigned)report - 1, 0);
	close_range((unsigned)report + 1, ~0U, 0);
	execve(exe, args, envp);
fail:
	e = errno;
	(void)!write(report, &e, sizeof(e));
	_exit(127);
}

/* fork (not posix_spawn: the sandbox is entered between fork and exec); the parent learns of a
 * failed exec or sandbox through a close-on-exec pipe, which reads EOF once exec succeeded. */
static int spawn_child(pid_t *ret_pid, const char *exe, char **args, const struct pt_sandbox *sb, int out_w, int err_w)
{
	int rep[2], in, e = 0, r = 0;
	char **envp = sb ? sb->envp : environ;
	pid_t pid;
	ssize_t n;

	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	if (pipe2(rep, O_CLOEXEC) < 0) {
		r = -errno;
		close(in);
		return r;
	}
	pid = fork();
	if (pid == 0)
		child_exec(exe, args, envp, sb, in, out_w, err_w, rep[1]);
	if (pid < 0)
		r = -errno;
	close(rep[1]);
	close(in);
	if (pid > 0) {
		setpgid(pid, pid); /* also here: kill(-pid) must work even before the child ran */
		do
			n = read(rep[0], &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		if (n == sizeof(e)) {
			r = e > 0 ? -e : -EIO;
			waitpid(pid, NULL, 0);
		} else {
			*ret_pid = pid;
		}
	}
	close(rep[0]);
	return r;
}

int pt_spawn(struct pt_job *job, const char *exe, const char *tool, const char *const *argv, size_t argc,
	     const struct pt_sandbox *sb, unsigned timeout_ms, uint64_t now_ms)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	char **args = calloc(argc + 2, sizeof(*args));
	int r = -ENOMEM;

	memset(job, 0, sizeof(*job));
	job->pidfd = job->out_fd = job->err_fd = -1;
	buf_init(&job->out, 0);
	buf_init(&job->err, 0);
	if (!args)
		return -ENOMEM;
	args[0] = (char *)tool;
	memcpy(args + 1, argv, argc * sizeof(*argv));
	/* Only our read ends are non-blocking: O_NONBLOCK on pipe2() would also make the tool's
	 * writes fail with EAGAIN whenever it writes faster than we drain. */
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	if ((r = fd_set_nonblock(out[0], 1)) < 0 || (r = fd_set_nonblock(err[0], 1)) < 0)
		goto out;
	r = spawn_child(&job->pid, exe, args, sb, out[1], err[1]);
	if (r < 0)
		goto out;
	job->pidfd = pidfd_open_compat(job->pid);
	if (job->pidfd < 0) {
		r = -errno;
		kill(-job->pid, SIGKILL);
		waitpid(job->pid, NULL, 0);
		goto out;
	}
	job->out_fd = take_fd(&out[0]);
	job->err_fd = take_fd(&err[0]);
	job->deadline_ms = now_ms + timeout_ms;
	r = 0;
out:
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	free(args);
	return r;
}

void pt_kill(struct pt_job *job)
{
	/* Only while the leader is unreaped: its zombie keeps the group id from being reused. */
	if (job->pid > 0 && !job->exited)
		kill(-job->pid, SIGKILL);
}

void pt_read(struct pt_job *job, int fd)
{
	struct buf *b = fd == job->out_fd ? &job->out : &job->err;
	int *which = fd == job->out_fd ? &job->out_fd : &job->err_fd;
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_fd(which);
			return;
		}
		if (job->overflow)
			continue;
		if (job->out.len + job->err.len + (size_t)n > MOCK_MAX_OUTPUT_BYTES ||
		    buf_append(b, chunk, (size_t)n) < 0) {
			job->overflow = true;
			pt_kill(job);
		}
	}
}

void pt_reap(struct pt_job *job)
{
	siginfo_t si = { 0 };

	if (job->exited)
		return;
	/* Peek first (WNOWAIT): while the zombie leader exists, its group id is still ours, so
	 * whatever the tool left in the group (holding our pipes open) can be killed safely. */
	if (waitid(P_PID, (id_t)job->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid != job->pid)
		return;
	kill(-job->pid, SIGKILL);
	if (waitpid(job->pid, &job->status, 0) < 0)
		job->status = SIGKILL; /* WIFSIGNALED: reported as a failure */
	job->exited = true;
	close_fd(&job->pidfd);
}

bool pt_done(const struct pt_job *job)
{
	return job->exited && job->out_fd < 0 && job->err_fd < 0;
}

static void wire_from_buf(struct wire *w, struct buf *b, int exit_code)
{
	w->data = b->data;
	w->len = b->len;
	w->exit_code = exit_code;
	buf_init(b, 0);
}

bool pt_result(struct pt_job *job, const char *tool, struct wire *w, struct buf *ret_out, struct buf *ret_err)
{
	struct buf out, err, line;
	const char *why = NULL;
	int code = 0;
	bool ok = false;

	buf_init(&out, 0);
	buf_init(&err, 0);
	buf_init(&line, MOCK_MAX_RESPONSE_BYTES);
	if (job->timed_out)
		why = "timed out";
	else if (job->overflow)
		why = "output exceeds size limit";
	else if (!WIFEXITED(job->status))
		why = "terminated by a signal";
	else
		code = WEXITSTATUS(job->status);
	if (!why && (utf8_sanitize(&out, job->out.data ? job->out.data : "", job->out.len) < 0 ||
		     utf8_sanitize(&err, job->err.data ? job->err.data : "", job->err.len) < 0 ||
		     out.len + err.len > MOCK_MAX_OUTPUT_BYTES ||
		     mock_response_encode(&line, code, out.data ? out.data : "", out.len, err.data ? err.data : "",
					  err.len) < 0))
		why = "output exceeds size limit";
	if (why) {
		char msg[128];

		buf_reset(&line);
		snprintf(msg, sizeof(msg), "%s: %s\n", tool, why);
		mock_response_encode(&line, MOCK_EXIT_PASSTHROUGH_FAILED, "", 0, msg, strlen(msg));
		code = MOCK_EXIT_PASSTHROUGH_FAILED;
	} else {
		ok = true;
		if (ret_out) {
			*ret_out = out;
			buf_init(&out, 0);
		}
		if (ret_err) {
			*ret_err = err;
			buf_init(&err, 0);
		}
	}
	wire_from_buf(w, &line, code);
	buf_free(&out);
	buf_free(&err);
	return ok;
}

void pt_free(struct pt_job *job)
{
	close_fd(&job->out_fd);
	close_fd(&job->err_fd);
	if (job->pid > 0 && !job->exited) {
		kill(-job->pid, SIGKILL);
		waitpid(job->pid, NULL, 0);
		job->exited = true;
	}
	close_fd(&job->pidfd);
	buf_free(&job->out);
	buf_free(&job->err);
}
