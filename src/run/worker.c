/* SPDX-License-Identifier: MIT */
/* worker.c: the worker's dispatch table and event loop. It trusts nothing it has not checked:
 * its identity is read back from the kernel before `hello` is answered. It does not own
 * teardown: the orchestrator (root) kills it and sweeps the uid whatever the worker does. */
#include "worker.h"

#include <errno.h>
#include <stdnoreturn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"
#include "../priv/identity.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct worker {
	int sock, sigfd;
	const unsigned char *nonce;
	struct buf in;      /* frames from the orchestrator */
	pid_t agent;        /* 0: none started */
	int out_fd, err_fd, in_fd;
	struct buf line;    /* the agent's current stdout line */
	bool line_cut;      /* the current line passed the limit: the rest is dropped */
	char *stdin_data;
	size_t stdin_len, stdin_off;
	bool exited, exit_sent, stopped;
	int status;
	uint64_t exit_at;
	unsigned long long lines;
	struct buf *why;
};

struct werr {
	const char *type; /* config_error, agent_crashed, identity */
	char msg[512];
};

int nonce_parse(const char *hex, unsigned char out[FRAME_NONCE_LEN])
{
	if (!hex || strlen(hex) != 2 * FRAME_NONCE_LEN)
		return -EINVAL;
	for (size_t i = 0; i < FRAME_NONCE_LEN; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (unsigned char)v;
	}
	return 0;
}

void nonce_format(const unsigned char nonce[FRAME_NONCE_LEN], char out[2 * FRAME_NONCE_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < FRAME_NONCE_LEN; i++) {
		out[2 * i] = hex[nonce[i] >> 4];
		out[2 * i + 1] = hex[nonce[i] & 15];
	}
	out[2 * FRAME_NONCE_LEN] = '\0';
}

static int send_json(struct worker *w, json_t *j)
{
	int r = j ? frame_send(w->sock, w->nonce, j) : -ENOMEM;

	json_decref(j);
	return r;
}

/* A JSON string of arbitrary bytes: invalid UTF-8 becomes U+FFFD. */
static json_t *text_json(const char *s, size_t n)
{
	struct buf b;
	json_t *j = NULL;

	buf_init(&b, 0);
	if (utf8_sanitize(&b, s, n) == 0)
		j = json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	return j;
}

static int emit_line(struct worker *w, const char *s, size_t n, bool truncated)
{
	json_t *text = text_json(s, n);

	if (!text)
		return -ENOMEM;
	w->lines++;
	return send_json(w, json_pack("{s:s,s:i,s:o,s:b}", "event", "stdout", "turn", 0, "text", text, "truncated",
				      truncated));
}

/* Split the agent's stdout into lines; a line over the limit is sent cut, once, marked. */
static int stdout_feed(struct worker *w, const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		int r;

		if (!w->line_cut) {
			size_t room = WORKER_MAX_LINE_BYTES - w->line.len;

			if (take > room) {
				if ((r = buf_append(&w->line, p, room)) < 0 ||
				    (r = emit_line(w, w->line.data, w->line.len, true)) < 0)
					return r;
				buf_reset(&w->line);
				w->line_cut = true;
			} else if ((r = buf_append(&w->line, p, take)) < 0)
				return r;
		}
		if (!nl)
			return 0;
		if (!w->line_cut && (r = emit_line(w, w->line.data ? w->line.data : "", w->line.len, false)) < 0)
			return r;
		buf_reset(&w->line);
		w->line_cut = false;
		p = nl + 1;
		n -= take + 1;
	}
	return 0;
}

static int read_agent(struct worker *w, int *fd, bool is_stdout)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		if (is_stdout && w->line.len && !w->line_cut)
			return emit_line(w, w->line.data, w->line.len, false);
		return 0;
	}
	if (is_stdout)
		return stdout_feed(w, chunk, (size_t)n);
	{
		json_t *text = text_json(chunk, (size_t)n);

		return text ? send_json(w, json_pack("{s:s,s:i,s:o}", "event", "stderr", "turn", 0, "text", text))
			    : -ENOMEM;
	}
}

static void write_stdin(struct worker *w)
{
	ssize_t n = write(w->in_fd, w->stdin_data + w->stdin_off, w->stdin_len - w->stdin_off);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0)
		w->stdin_off += (size_t)n;
	if (n < 0 || w->stdin_off == w->stdin_len) {
		close(w->in_fd);
		w->in_fd = -1;
	}
}

static void reap_children(struct worker *w)
{
	struct signalfd_siginfo si;
	pid_t p;
	int st;

	while (read(w->sigfd, &si, sizeof(si)) > 0)
		;
	/* As pid 1 of a namespace every orphan is ours to reap. */
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == w->agent && !w->exited) {
			w->exited = true;
			w->status = st;
			w->exit_at = now_mono_ms();
		}
}

static int maybe_send_exit(struct worker *w)
{
	json_t *code, *sig;

	if (!w->exited || w->exit_sent)
		return 0;
	if ((w->out_fd >= 0 || w->err_fd >= 0) && now_mono_ms() < w->exit_at + WORKER_DRAIN_MS)
		return 0;
	w->exit_sent = true;
	code = WIFEXITED(w->status) ? json_integer(WEXITSTATUS(w->status)) : json_null();
	sig = WIFSIGNALED(w->status) ? json_integer(WTERMSIG(w->status)) : json_null();
	return send_json(w, json_pack("{s:s,s:i,s:o,s:o,s:I}", "event", "exit", "turn", 0, "exit_code", code, "signal",
				      sig, "lines", (json_int_t)w->lines));
}

/* ---- methods ---- */

static int tty_nr(void)
{
	char buf[1024], *p;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), tty = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* after "(comm)": state ppid pgrp session tty_nr */
	if ((p = strrchr(buf, ')')) && sscanf(p + 1, " %*c %*d %*d %*d %d", &tty) != 1)
		tty = -1;
	return tty;
}

static bool expect_groups(json_t *groups, struct identity_expect *e)
{
	size_t i;
	json_t *g;

	if (!json_is_array(groups) || json_array_size(groups) > IDENTITY_MAX_GROUPS)
		return false;
	json_array_foreach(groups, i, g) {
		if (!json_is_integer(g))
			return false;
		e->want_groups[e->nwant_groups++] = (gid_t)json_integer_value(g);
	}
	return true;
}

/* Paths the agent must not be able to open (the fixtures): each must fail. */
static json_t *probe(json_t *paths)
{
	json_t *out = json_array();
	size_t i;
	json_t *p;

	json_array_foreach(paths, i, p) {
		int fd;

		if (i == WORKER_MAX_PROBES || !json_is_string(p))
			break;
		fd = open(json_string_value(p), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		json_array_append_new(out, json_pack("{s:s,s:s?}", "path", json_string_value(p), "error",
						     fd < 0 ? strerror(errno) : NULL));
		if (fd >= 0)
			close(fd);
	}
	return out;
}

static int m_hello(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	json_t *x = json_object_get(params, "expect");
	struct identity_expect want = { .uid = true, .gid = true, .groups = true, .no_caps = true, .nnp = true,
					.landlock = true };
	struct identity id;
	const char *field;
	char *report = NULL;
	size_t bad;

	(void)w;
	if (!json_is_integer(json_object_get(x, "uid")) || !json_is_integer(json_object_get(x, "gid")) ||
	    !expect_groups(json_object_get(x, "groups"), &want)) {
		e->type = "config_error";
		snprintf(e->msg, sizeof(e->msg), "hello: params.expect needs uid, gid and groups");
		return -EINVAL;
	}
	want.want_uid = (uid_t)json_integer_value(json_object_get(x, "uid"));
	want.want_gid = (gid_t)json_integer_value(json_object_get(x, "gid"));
	if (identity_read(&id, &field) < 0) {
		e->type = "identity";
		snprintf(e->msg, sizeof(e->msg), "cannot read %s", field);
		return -EIO;
	}
	bad = identity_check(&id, &want, &report);
	if (bad) {
		e->type = "identity";
		snprintf(e->msg, sizeof(e->msg), "%s", report ? report : "identity mismatch");
		free(report);
		return -EPERM;
	}
	free(report);
	*ret = json_pack("{s:o,s:i,s:i,s:i,s:i,s:i,s:o}", "identity", identity_json(&id), "pid", (int)getpid(), "sid",
			 (int)getsid(0), "pgid", (int)getpgrp(), "dumpable", prctl(PR_GET_DUMPABLE), "tty_nr", tty_nr(),
			 "probes", probe(json_object_get(params, "probe_unreadable")));
	return *ret ? 0 : -ENOMEM;
}

static char **strv_from_json(json_t *a, size_t max)
{
	size_t i, n = json_array_size(a);
	char **v;
	json_t *s;

	if (!json_is_array(a) || n == 0 || n > max || !(v = calloc(n + 1, sizeof(char *))))
		return NULL;
	json_array_foreach(a, i, s) {
		if (!json_is_string(s) || !(v[i] = strdup(json_string_value(s)))) {
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return NULL;
		}
	}
	return v;
}

static void strv_release(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* argv[0] as execvp would find it, but on the agent's PATH, not ours. */
static char *find_program(const char *name, char **env)
{
	const char *path = "/usr/bin:/bin";
	char *out;

	if (strchr(name, '/'))
		return strdup(name);
	for (size_t i = 0; env[i]; i++)
		if (!strncmp(env[i], "PATH=", 5))
			path = env[i] + 5;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');

		if (end > p && asprintf(&out, "%.*s/%s", (int)(end - p), p, name) >= 0) {
			if (access(out, X_OK) == 0)
				return out;
			free(out);
		}
		if (!*end)
			return NULL;
		p = end;
	}
}

/* In the agent's process: its own group, pipes on 0-1-2, nothing else inherited, then exec. A
 * failure is reported as an errno on `errfd`. */
static noreturn void agent_exec(const char *prog, char **argv, char **env, const char *cwd, int pipes[3][2],
				int errfd)
{
	sigset_t none;
	int err;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (setpgid(0, 0) < 0 || dup2(pipes[0][0], 0) < 0 || dup2(pipes[1][1], 1) < 0 || dup2(pipes[2][1], 2) < 0 ||
	    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0 || chdir(cwd) < 0)
		goto fail;
	execve(prog, argv, env);
fail:
	err = errno;
	(void)!write(errfd, &err, sizeof(err));
	_exit(127);
}

static int spawn_agent(struct worker *w, const char *prog, char **argv, char **env, const char *cwd, struct werr *e)
{
	int pipes[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } }, errp[2] = { -1, -1 }, err = 0, r = 0;
	pid_t pid = -1;

	for (int i = 0; i < 3; i++)
		if (pipe2(pipes[i], O_CLOEXEC) < 0)
			r = -errno;
	if (r == 0 && pipe2(errp, O_CLOEXEC) < 0)
		r = -errno;
	if (r == 0 && (pid = fork()) < 0)
		r = -errno;
	if (r == 0 && pid == 0)
		agent_exec(prog, argv, env, cwd, pipes, errp[1]);
	close(errp[1]);
	if (r == 0) {
		ssize_t n;

		while ((n = read(errp[0], &err, sizeof(err))) < 0 && errno == EINTR)
			;
		if (n == sizeof(err)) {
			waitpid(pid, NULL, 0);
			r = -err;
		}
	}
	close(errp[0]);
	close(pipes[0][0]);
	close(pipes[1][1]);
	close(pipes[2][1]);
	if (r < 0) {
		close(pipes[0][1]);
		close(pipes[1][0]);
		close(pipes[2][0]);
		e->type = "config_error";
		snprintf(e->msg, sizeof(e->msg), "cannot run %s: %s", prog, strerror(-r));
		return r;
	}
	w->agent = pid;
	w->in_fd = pipes[0][1];
	w->out_fd = pipes[1][0];
	w->err_fd = pipes[2][0];
	fd_set_nonblock(w->in_fd, 1);
	fd_set_nonblock(w->out_fd, 1);
	fd_set_nonblock(w->err_fd, 1);
	return 0;
}

static int m_start(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	char **argv = strv_from_json(json_object_get(params, "argv"), 4096);
	char **env = strv_from_json(json_object_get(params, "env"), 4096);
	json_t *cwd = json_object_get(params, "cwd"), *in = json_object_get(params, "stdin");
	char *prog = NULL;
	int r = -EINVAL;

	e->type = "config_error";
	if (w->agent)
		snprintf(e->msg, sizeof(e->msg), "start: an agent was already started");
	else if (!argv || !env || !json_is_string(cwd) || (in && !json_is_string(in)))
		snprintf(e->msg, sizeof(e->msg), "start: params need argv, env, cwd and an optional stdin string");
	else if (!(prog = find_program(argv[0], env)))
		snprintf(e->msg, sizeof(e->msg), "%s: not found on the agent's PATH", argv[0]);
	else if ((r = spawn_agent(w, prog, argv, env, json_string_value(cwd), e)) == 0) {
		if (in && json_string_length(in)) {
			w->stdin_len = json_string_length(in);
			w->stdin_data = malloc(w->stdin_len);
			if (w->stdin_data)
				memcpy(w->stdin_data, json_string_value(in), w->stdin_len);
		}
		if (!w->stdin_data) {
			close(w->in_fd);
			w->in_fd = -1;
		}
		*ret = json_pack("{s:i}", "pid", (int)w->agent);
	}
	free(prog);
	strv_release(argv);
	strv_release(env);
	return r;
}

/* TERM the agent's group, give it `grace_ms`, then KILL it; as pid 1 of a namespace, KILL
 * everything else there too. The orchestrator still sweeps the uid from outside. */
static int m_stop(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	json_t *g = json_object_get(params, "grace_ms");
	uint64_t end = now_mono_ms() + (json_is_integer(g) ? (uint64_t)json_integer_value(g) : 500);

	(void)e;
	if (w->agent && !w->exited) {
		kill(-w->agent, SIGTERM);
		while (!w->exited && now_mono_ms() < end) {
			struct pollfd p = { .fd = w->sigfd, .events = POLLIN };

			poll(&p, 1, 10);
			reap_children(w);
		}
	}
	if (w->agent)
		kill(-w->agent, SIGKILL);
	if (getpid() == 1)
		kill(-1, SIGKILL);
	w->stopped = true;
	*ret = json_pack("{s:b,s:b}", "stopped", true, "agent_exited_in_grace", w->agent && w->exited);
	return 0;
}

static const struct worker_method {
	const char *name;
	int (*fn)(struct worker *w, json_t *params, json_t **ret, struct werr *e);
} methods[] = {
	{ "hello", m_hello },
	{ "start", m_start },
	{ "stop", m_stop },
};

/* One request. An unknown method or a malformed request is fatal: the orchestrator never sends
 * one, so something is wrong. */
static int dispatch(struct worker *w, json_t *req)
{
	json_t *id = json_object_get(req, "id"), *method = json_object_get(req, "method");
	json_t *params = json_object_get(req, "params"), *result = NULL;
	struct werr e = { 0 };
	int r;

	if (!json_is_integer(id) || !json_is_string(method) || (params && !json_is_object(params)))
		return buf_printf(w->why, "malformed request"), -EPROTO;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(methods[i].name, json_string_value(method)) != 0)
			continue;
		r = methods[i].fn(w, params, &result, &e);
		if (r == 0)
			return send_json(w, json_pack("{s:O,s:b,s:o}", "id", id, "ok", true, "result",
						      result ? result : json_object()));
		json_decref(result);
		return send_json(w, json_pack("{s:O,s:b,s:{s:s,s:s}}", "id", id, "ok", false, "error", "type",
					      e.type ? e.type : "config_error", "message", e.msg));
	}
	buf_printf(w->why, "unknown method '%s'", json_string_value(method));
	return -EPROTO;
}

static int read_requests(struct worker *w)
{
	ssize_t n = frame_fill(w->sock, &w->in);
	size_t off = 0;
	int r = 0;

	if (n == 0)
		return buf_printf(w->why, "the orchestrator closed the channel"), -EPIPE;
	if (n < 0)
		return n == -EAGAIN ? 0 : (int)n;
	while (r == 0 && !w->stopped) {
		const char *why = NULL;
		size_t used = 0;
		json_t *req = NULL;
		int d = frame_decode(w->nonce, w->in.data + off, w->in.len - off, &used, &req, &why);

		if (d == 0)
			break;
		if (d < 0)
			return buf_printf(w->why, "%s", why), d;
		off += used;
		r = dispatch(w, req);
		json_decref(req);
	}
	buf_consume(&w->in, off);
	return r;
}

static int loop_once(struct worker *w)
{
	struct pollfd p[5] = { { .fd = w->sock, .events = POLLIN }, { .fd = w->sigfd, .events = POLLIN },
			       { .fd = w->out_fd, .events = POLLIN }, { .fd = w->err_fd, .events = POLLIN },
			       { .fd = w->in_fd, .events = POLLOUT } };
	int timeout = w->exited && !w->exit_sent ? 20 : -1, r = 0;

	if (poll(p, 5, timeout) < 0 && errno != EINTR)
		return -errno;
	if (p[1].revents)
		reap_children(w);
	if (w->out_fd >= 0 && p[2].revents)
		r = read_agent(w, &w->out_fd, true);
	if (r == 0 && w->err_fd >= 0 && p[3].revents)
		r = read_agent(w, &w->err_fd, false);
	if (r == 0 && w->in_fd >= 0 && p[4].revents)
		write_stdin(w);
	if (r == 0)
		r = maybe_send_exit(w);
	if (r == 0 && p[0].revents)
		r = read_requests(w);
	return r;
}

int worker_serve(int sock, const unsigned char nonce[FRAME_NONCE_LEN], struct buf *why)
{
	struct worker w = { .sock = sock, .nonce = nonce, .out_fd = -1, .err_fd = -1, .in_fd = -1, .why = why };
	sigset_t chld;
	int r = 0;

	prctl(PR_SET_DUMPABLE, 0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 || (w.sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return buf_printf(why, "signalfd: %s", strerror(errno)), -errno;
	buf_init(&w.in, FRAME_HEADER_LEN + FRAME_MAX_BODY);
	buf_init(&w.line, WORKER_MAX_LINE_BYTES);
	while (r == 0 && !w.stopped)
		r = loop_once(&w);
	if (r < 0 && w.agent) {
		kill(-w.agent, SIGKILL);
		if (getpid() == 1)
			kill(-1, SIGKILL);
	}
	buf_free(&w.in);
	buf_free(&w.line);
	free(w.stdin_data);
	close(w.sigfd);
	return r;
}
