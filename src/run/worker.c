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
#include "../agent/events.h"
#include "../priv/identity.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* One turn: one agent process (the CLIs run one turn per process and resume by session id). */
struct turn {
	int n;
	json_t *req_id; /* the communicate request we answer at the end of the turn */
	pid_t pid;      /* 0: no process */
	int out_fd, err_fd, in_fd;
	char *stdin_data;
	size_t stdin_len, stdin_off;
	bool exited, timed_out, killed;
	int status;
	uint64_t exit_at, deadline, kill_at, end_seen_at;
	struct events_turn ev;
};

struct worker {
	int sock, sigfd;
	const unsigned char *nonce;
	struct buf in;  /* frames from the orchestrator */
	struct buf out; /* event frames not yet sent: one read of the agent's stdout is one send */
	bool started, stopped;
	char *cwd;
	struct events_rules rules;
	struct turn turn; /* the current or last turn */
	bool turn_live;   /* a communicate is pending */
	struct buf line;  /* the agent's current stdout line */
	bool line_cut;    /* the current line passed the limit: the rest is dropped */
	struct buf *why;
};

struct werr {
	const char *type; /* config_error, agent_crashed, turn_timeout, identity */
	char msg[512];
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly 2 * FRAME_NONCE_LEN hex digits. Not sscanf("%2x"): it also takes " 1", "+1" and "-1". */
int nonce_parse(const char *hex, unsigned char out[FRAME_NONCE_LEN])
{
	if (!hex || strlen(hex) != 2 * FRAME_NONCE_LEN)
		return -EINVAL;
	for (size_t i = 0; i < FRAME_NONCE_LEN; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (unsigned char)(hi << 4 | lo);
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

/* Queue a frame (owned); sent at once when the queue passes WORKER_SEND_BYTES. */
static int queue_json(struct worker *w, json_t *j)
{
	int r = j ? frame_encode(w->nonce, j, &w->out) : -ENOMEM;

	json_decref(j);
	if (r == 0 && w->out.len >= WORKER_SEND_BYTES)
		r = frame_flush(w->sock, &w->out);
	return r;
}

/* Send what is queued, then this frame (owned): the orchestrator sees frames in order. */
static int send_json(struct worker *w, json_t *j)
{
	int r = queue_json(w, j);

	return r < 0 ? r : frame_flush(w->sock, &w->out);
}

/* A JSON string of arbitrary bytes: invalid UTF-8 becomes U+FFFD. */
static json_t *text_json(const char *s, size_t n)
{
	struct buf b;
	json_t *j = NULL;

	/* the common case, valid and without NUL, costs one pass; the rest is mended (NUL too) */
	if (!memchr(s, '\0', n) && (j = json_stringn(s, n)) != NULL)
		return j;
	buf_init(&b, 0);
	if (utf8_sanitize(&b, s, n) == 0)
		j = json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	return j;
}

/* Whether a parsed line nests too deep to be carried as an object (WORKER_MAX_EVENT_DEPTH).
 * Its brackets are counted first: no line with fewer can be, so most lines cost one pass. */
static bool too_deep(const char *s, size_t n, const json_t *ev)
{
	size_t open = 0;

	for (size_t i = 0; i < n; i++)
		open += s[i] == '{' || s[i] == '[';
	return open >= WORKER_MAX_EVENT_DEPTH && json_depth(ev, WORKER_MAX_EVENT_DEPTH) > WORKER_MAX_EVENT_DEPTH;
}

/* One stdout line: its JSON object when the agent speaks JSON lines and the line is one,
 * else its text (never both: the orchestrator keeps one, and the other would cost twice). */
static int emit_line(struct worker *w, const char *s, size_t n, bool truncated)
{
	json_t *ev = NULL, *frame;

	if (!truncated)
		ev = events_feed(&w->rules, &w->turn.ev, s, n);
	else
		w->turn.ev.lines++;
	if (ev && too_deep(s, n, ev)) {
		json_decref(ev);
		ev = NULL;
	}
	if (w->turn.ev.ended && !w->turn.end_seen_at)
		w->turn.end_seen_at = now_mono_ms();
	if (ev) {
		frame = json_pack("{s:s,s:i,s:b,s:o}", "stream", "stdout", "turn", w->turn.n, "truncated", false,
				  "event", ev);
	} else {
		json_t *text = text_json(s, n);

		frame = text ? json_pack("{s:s,s:i,s:b,s:o}", "stream", "stdout", "turn", w->turn.n, "truncated",
					 truncated, "text", text) :
			       NULL;
	}
	return queue_json(w, frame);
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
	json_t *text;
	int r = 0;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		if (is_stdout && w->line.len && !w->line_cut) {
			r = emit_line(w, w->line.data, w->line.len, false);
			buf_reset(&w->line);
		}
	} else if (is_stdout) {
		r = stdout_feed(w, chunk, (size_t)n);
	} else {
		text = text_json(chunk, (size_t)n);
		r = queue_json(w,
			       text ? json_pack("{s:s,s:i,s:o}", "stream", "stderr", "turn", w->turn.n, "text", text) :
				      NULL);
	}
	if (r < 0) {
		(void)frame_flush(w->sock, &w->out); /* what came before the failure still goes */
		return r;
	}
	return frame_flush(w->sock, &w->out);
}

static void write_stdin(struct turn *t)
{
	ssize_t n = write(t->in_fd, t->stdin_data + t->stdin_off, t->stdin_len - t->stdin_off);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0)
		t->stdin_off += (size_t)n;
	if (n < 0 || t->stdin_off == t->stdin_len) {
		close(t->in_fd);
		t->in_fd = -1;
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
		if (p == w->turn.pid && !w->turn.exited) {
			w->turn.exited = true;
			w->turn.status = st;
			w->turn.exit_at = now_mono_ms();
		}
}

static void turn_close_fds(struct turn *t)
{
	if (t->out_fd >= 0)
		close(t->out_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	if (t->in_fd >= 0)
		close(t->in_fd);
	t->out_fd = t->err_fd = t->in_fd = -1;
	free(t->stdin_data);
	t->stdin_data = NULL;
}

/* TERM the turn's process group now, KILL it WORKER_KILL_GRACE_MS later (turn_check). */
static void turn_terminate(struct turn *t)
{
	if (t->pid && !t->exited && !t->kill_at) {
		kill(-t->pid, SIGTERM);
		t->kill_at = now_mono_ms() + WORKER_KILL_GRACE_MS;
	}
}

/* The answer to the turn's communicate: completed or failed (a result), or a typed error. */
static json_t *turn_answer(struct worker *w)
{
	struct turn *t = &w->turn;
	const struct events_turn *ev = &t->ev;
	json_t *code = WIFEXITED(t->status) ? json_integer(WEXITSTATUS(t->status)) : json_null();
	json_t *sig = WIFSIGNALED(t->status) ? json_integer(WTERMSIG(t->status)) : json_null();
	json_t *res = json_pack("{s:i,s:o,s:o,s:s?,s:O?,s:s?,s:I,s:I}", "turn", t->n, "exit_code", code, "signal", sig,
				"session_id", ev->session_id, "usage", ev->usage, "error", ev->error, "lines",
				(json_int_t)ev->lines, "recognised", (json_int_t)ev->recognised);
	const char *type = NULL;
	char msg[512];
	bool ok_exit = WIFEXITED(t->status) && WEXITSTATUS(t->status) == 0;

	if (t->timed_out) {
		type = "turn_timeout";
		snprintf(msg, sizeof(msg), "turn %d ran past its time limit and was stopped", t->n);
	} else if (w->rules.framing == EVENTS_JSON_LINES && !ev->ended) {
		type = "agent_crashed";
		if (!ev->recognised)
			snprintf(msg, sizeof(msg),
				 "turn %d: no recognisable event in %llu lines (the event format may have "
				 "changed)",
				 t->n, ev->lines);
		else
			snprintf(msg, sizeof(msg), "turn %d: the agent exited (%s %d) without the end-of-turn event",
				 t->n, WIFEXITED(t->status) ? "status" : "signal",
				 WIFEXITED(t->status) ? WEXITSTATUS(t->status) : WTERMSIG(t->status));
	}
	if (type) {
		json_object_set_new(res, "type", json_string(type));
		json_object_set_new(res, "message", json_string(msg));
		return json_pack("{s:O,s:b,s:o}", "id", t->req_id, "ok", false, "error", res);
	}
	if (w->rules.framing == EVENTS_JSON_LINES)
		json_object_set_new(res, "status", json_string(ev->failed ? "failed" : "completed"));
	else
		json_object_set_new(res, "status", json_string(ok_exit ? "completed" : "failed"));
	return json_pack("{s:O,s:b,s:o}", "id", t->req_id, "ok", true, "result", res);
}

/* Deadlines and the end of the turn. A turn ends when its process has exited and its output is
 * drained (or WORKER_DRAIN_MS passed); a process that stays after its end-of-turn event is
 * stopped after WORKER_END_GRACE_MS. */
static int turn_check(struct worker *w)
{
	struct turn *t = &w->turn;
	uint64_t now = now_mono_ms();
	int r;

	if (!w->turn_live)
		return 0;
	if (!t->exited && now >= t->deadline && !t->timed_out) {
		t->timed_out = true;
		turn_terminate(t);
	}
	if (!t->exited && t->end_seen_at && now >= t->end_seen_at + WORKER_END_GRACE_MS)
		turn_terminate(t);
	if (!t->exited && t->kill_at && now >= t->kill_at && !t->killed) {
		kill(-t->pid, SIGKILL);
		t->killed = true;
	}
	if (!t->exited || ((t->out_fd >= 0 || t->err_fd >= 0) && now < t->exit_at + WORKER_DRAIN_MS))
		return 0;
	/* Whatever it left behind in its group goes with the turn. */
	kill(-t->pid, SIGKILL);
	r = send_json(w, turn_answer(w));
	json_decref(t->req_id);
	t->req_id = NULL;
	turn_close_fds(t);
	w->turn_live = false;
	return r;
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
	/* NOLINTNEXTLINE(cert-err34-c): numbers the kernel formats, after the last ')' */
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
	struct identity_expect want = {
		.uid = true, .gid = true, .groups = true, .no_caps = true, .nnp = true, .landlock = true
	};
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
	want.landlock = !json_is_false(json_object_get(x, "landlock")); /* only an explicit false */
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
	size_t n = json_array_size(a);
	char **v;

	if (!json_is_array(a) || n == 0 || n > max || !(v = calloc(n + 1, sizeof(char *))))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(a, i);

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
static noreturn void agent_exec(const char *prog, char **argv, char **env, const char *cwd, int pipes[3][2], int errfd)
{
	int msg[2] = { 0, 0 }; /* step (0 set up, 1 chdir, 2 exec), errno */

	signals_reset();
	if (setpgid(0, 0) < 0 || dup2(pipes[0][0], 0) < 0 || dup2(pipes[1][1], 1) < 0 || dup2(pipes[2][1], 2) < 0 ||
	    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		goto fail;
	msg[0] = 1;
	if (chdir(cwd) < 0)
		goto fail;
	msg[0] = 2;
	execve(prog, argv, env);
fail:
	msg[1] = errno;
	(void)!write(errfd, msg, sizeof(msg));
	_exit(127);
}

static int spawn_agent(struct turn *t, const char *prog, char **argv, char **env, const char *cwd, struct werr *e)
{
	static const char *const steps[] = { "cannot set up the agent's process", "cannot enter the workspace",
					     "cannot run" };
	int pipes[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } }, errp[2] = { -1, -1 }, msg[2] = { 0, 0 }, r = 0;
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

		while ((n = read(errp[0], msg, sizeof(msg))) < 0 && errno == EINTR)
			;
		if (n == sizeof(msg)) {
			waitpid(pid, NULL, 0);
			r = -msg[1];
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
		snprintf(e->msg, sizeof(e->msg), "%s %s: %s", steps[msg[0] >= 0 && msg[0] <= 2 ? msg[0] : 0],
			 msg[0] == 1 ? cwd : prog, strerror(-r));
		return r;
	}
	t->pid = pid;
	t->in_fd = pipes[0][1];
	t->out_fd = pipes[1][0];
	t->err_fd = pipes[2][0];
	fd_set_nonblock(t->in_fd, 1);
	fd_set_nonblock(t->out_fd, 1);
	fd_set_nonblock(t->err_fd, 1);
	return 0;
}

/* The session: where the agent runs and how its events are read. */
static int m_start(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	json_t *cwd = json_object_get(params, "cwd");
	const char *key, *why;

	e->type = "config_error";
	if (w->started) {
		snprintf(e->msg, sizeof(e->msg), "start: the session was already started");
		return -EINVAL;
	}
	if (!json_is_string(cwd) || events_rules_parse(json_object_get(params, "events"), &w->rules, &key, &why) < 0) {
		snprintf(e->msg, sizeof(e->msg), "start: params need cwd and valid events rules");
		return -EINVAL;
	}
	if (!(w->cwd = strdup(json_string_value(cwd))))
		return -ENOMEM;
	w->started = true;
	*ret = json_object();
	return 0;
}

/* One user turn: run the agent process; the answer comes when the turn ends (turn_check). */
static int m_communicate(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	char **argv = strv_from_json(json_object_get(params, "argv"), 4096);
	char **env = strv_from_json(json_object_get(params, "env"), 4096);
	json_t *in = json_object_get(params, "stdin"), *turn = json_object_get(params, "turn");
	json_t *tmo = json_object_get(params, "timeout_ms");
	struct turn *t = &w->turn;
	char *prog = NULL;
	int r = -EINVAL;

	e->type = "config_error";
	if (!w->started || w->turn_live)
		snprintf(e->msg, sizeof(e->msg), "communicate: %s", w->turn_live ? "a turn is running" : "no session");
	else if (!argv || !env || !json_is_integer(turn) || !json_is_integer(tmo) ||
		 (in && !json_is_string(in) && !json_is_null(in)))
		snprintf(e->msg, sizeof(e->msg), "communicate: params need turn, argv, env, timeout_ms, stdin");
	else if (!(prog = find_program(argv[0], env)))
		snprintf(e->msg, sizeof(e->msg), "%s: not found on the agent's PATH", argv[0]);
	else {
		events_turn_free(&t->ev);
		*t = (struct turn){ .n = (int)json_integer_value(turn),
				    .out_fd = -1,
				    .err_fd = -1,
				    .in_fd = -1,
				    .deadline = now_mono_ms() + (uint64_t)json_integer_value(tmo) };
		buf_reset(&w->line);
		w->line_cut = false;
		r = spawn_agent(t, prog, argv, env, w->cwd, e);
	}
	if (r == 0 && json_is_string(in) && json_string_length(in) &&
	    (t->stdin_data = malloc(json_string_length(in)))) {
		t->stdin_len = json_string_length(in);
		memcpy(t->stdin_data, json_string_value(in), t->stdin_len);
	}
	if (r == 0 && !t->stdin_data) {
		close(t->in_fd); /* end of file at once: a CLI must not wait on stdin */
		t->in_fd = -1;
	}
	if (r == 0) {
		w->turn_live = true;
		*ret = NULL; /* answered at the end of the turn */
	}
	free(prog);
	strv_release(argv);
	strv_release(env);
	return r;
}

/* After a turn timed out the orchestrator discards it: whatever of it still runs is killed and
 * nothing of it (its session id) carries over. */
static int m_discard_pending_turn(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	(void)params;
	(void)e;
	if (w->turn.pid)
		kill(-w->turn.pid, SIGKILL);
	turn_close_fds(&w->turn);
	events_turn_free(&w->turn.ev);
	json_decref(w->turn.req_id);
	w->turn.req_id = NULL;
	w->turn_live = false;
	*ret = json_pack("{s:i}", "discarded", w->turn.n);
	return 0;
}

/* Cooperative stop: TERM the running turn's group, `grace_ms` to end it, then KILL; as pid 1
 * of a namespace, KILL everything else there too. A pending communicate is not answered. The
 * orchestrator still kills the worker and sweeps the uid from outside. */
static int m_stop(struct worker *w, json_t *params, json_t **ret, struct werr *e)
{
	json_t *g = json_object_get(params, "grace_ms");
	uint64_t end = now_mono_ms() + (json_is_integer(g) ? (uint64_t)json_integer_value(g) : 500);
	struct turn *t = &w->turn;

	(void)e;
	if (w->turn_live && t->pid && !t->exited) {
		kill(-t->pid, SIGTERM);
		while (!t->exited && now_mono_ms() < end) {
			struct pollfd p = { .fd = w->sigfd, .events = POLLIN };

			poll(&p, 1, 10);
			reap_children(w);
		}
	}
	if (t->pid)
		kill(-t->pid, SIGKILL);
	if (getpid() == 1)
		kill(-1, SIGKILL);
	w->stopped = true;
	*ret = json_pack("{s:b,s:b}", "stopped", true, "turn_ended_in_grace", !w->turn_live || t->exited);
	json_decref(t->req_id);
	t->req_id = NULL;
	w->turn_live = false;
	return 0;
}

static const struct worker_method {
	const char *name;
	int (*fn)(struct worker *w, json_t *params, json_t **ret, struct werr *e);
} methods[] = {
	{ "hello", m_hello },
	{ "start", m_start },
	{ "communicate", m_communicate },
	{ "discard_pending_turn", m_discard_pending_turn },
	{ "stop", m_stop },
};

/* One request. An unknown method or a malformed request is fatal: the orchestrator never sends
 * one, so something is wrong. A method may leave its answer for later (*ret NULL). */
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
		if (r == 0 && !result && methods[i].fn == m_communicate) {
			w->turn.req_id = json_incref(id);
			return 0;
		}
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
	struct turn *t = &w->turn;
	struct pollfd p[5] = { { .fd = w->sock, .events = POLLIN },
			       { .fd = w->sigfd, .events = POLLIN },
			       { .fd = t->out_fd, .events = POLLIN },
			       { .fd = t->err_fd, .events = POLLIN },
			       { .fd = t->in_fd, .events = POLLOUT } };
	int timeout = w->turn_live ? 20 : -1, r = 0;

	if (poll(p, 5, timeout) < 0 && errno != EINTR)
		return -errno;
	if (p[1].revents)
		reap_children(w);
	if (t->out_fd >= 0 && p[2].revents)
		r = read_agent(w, &t->out_fd, true);
	if (r == 0 && t->err_fd >= 0 && p[3].revents)
		r = read_agent(w, &t->err_fd, false);
	if (r == 0 && t->in_fd >= 0 && p[4].revents)
		write_stdin(t);
	if (r == 0)
		r = turn_check(w);
	if (r == 0 && p[0].revents)
		r = read_requests(w);
	return r;
}

int worker_serve(int sock, const unsigned char nonce[FRAME_NONCE_LEN], struct buf *why)
{
	struct worker w = {
		.sock = sock, .nonce = nonce, .why = why, .turn = { .out_fd = -1, .err_fd = -1, .in_fd = -1 }
	};
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
	buf_init(&w.out, WORKER_SEND_BYTES + FRAME_HEADER_LEN + FRAME_MAX_BODY);
	while (r == 0 && !w.stopped)
		r = loop_once(&w);
	if (r < 0 && w.turn.pid) {
		kill(-w.turn.pid, SIGKILL);
		if (getpid() == 1)
			kill(-1, SIGKILL);
	}
	turn_close_fds(&w.turn);
	events_turn_free(&w.turn.ev);
	json_decref(w.turn.req_id);
	events_rules_free(&w.rules);
	free(w.cwd);
	buf_free(&w.in);
	buf_free(&w.line);
	buf_free(&w.out);
	close(w.sigfd);
	return r;
}
