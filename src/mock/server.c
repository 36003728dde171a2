/* SPDX-License-Identifier: MIT */
/* server.c: mockd's event loop.
 *
 * Why one thread with epoll, not a thread per client: a fixture hit is a few microseconds of
 * CPU, so one thread saturates long before clients do, and 1,000 idle clients cost 1,000 small
 * structs instead of 1,000 stacks. The only slow thing, the real tool of a passthrough, runs
 * as a child process whose pipes and pidfd sit in the same epoll set, so it never blocks fixture
 * hits. Every client has a deadline (a connection that sends nothing is answered 64 and closed);
 * the number of clients is bounded (past it, new ones wait in the listen backlog). */
#include "server.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/util.h"
#include "passthrough.h"

enum ev_kind { EV_LISTENER, EV_SIGNAL, EV_CONN, EV_PT_OUT, EV_PT_ERR, EV_PT_PID };

struct conn;

struct ev_tag {
	enum ev_kind kind;
	struct conn *c;
};

/* DRAIN: answered before its request was consumed (77, bad request): we have half-closed and
 * discard its input until it closes, so a client still sending gets to read the answer instead
 * of EPIPE. */
enum conn_state { CONN_READ, CONN_QUEUED, CONN_RUNNING, CONN_WRITE, CONN_DRAIN };

#define CONN_MAX_DRAIN_BYTES (1024 * 1024)

struct conn {
	struct ev_tag tag, t_out, t_err, t_pid;
	int fd;
	pid_t pid;
	uid_t uid;
	enum conn_state state;
	struct buf in;
	const char *out; /* the response line: a stable fixture wire, or `owned` */
	size_t out_len, out_off;
	char *owned;
	struct mock_request req;
	struct mock_tool *tool;
	struct pt_job job;
	bool has_job;
	bool drain; /* after the response: half-close and drain (see CONN_DRAIN) */
	size_t drained;
	bool dead;   /* closed; freed after the current epoll batch, whose events may still name it */
	size_t held; /* bytes this client holds (request, argv, tool output, response), in s->held */
	uint64_t deadline_ms;
	struct conn *prev, *next; /* in the timer list (READ/WRITE) or the passthrough queue */
};

struct conn_list {
	struct conn *head, *tail;
};

struct mock_server {
	struct mock_server_opts opts;
	int listen_fd, epoll_fd, signal_fd;
	struct ev_tag t_listen, t_signal;
	dev_t sock_dev;
	ino_t sock_ino;
	bool listening;
	size_t nconns;
	struct conn_list timers; /* sorted by deadline: every deadline is now + the same timeout */
	struct conn_list queue;  /* passthroughs waiting for a slot (at most MOCK_MAX_PASSTHROUGH_QUEUE) */
	size_t nqueued;
	size_t held;               /* bytes held by all clients, at most MOCK_MAX_HELD_BYTES */
	bool accept_paused;        /* out of fds: the listener waits until a client leaves */
	uint64_t accept_resume_ms; /* ... or until then, if none does */
	struct conn_list running;
	struct conn_list dead;
	size_t nrunning;
	struct mock_service *svc;
	struct journal *journal;
	struct diag *d;
	int fatal;
};

static void list_push(struct conn_list *l, struct conn *c)
{
	c->next = NULL;
	c->prev = l->tail;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

static void list_remove(struct conn_list *l, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (l->head == c)
		l->head = c->next;
	else
		return; /* not on this list */
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
}

static struct conn_list *conn_list_of(struct mock_server *s, struct conn *c)
{
	switch (c->state) {
	case CONN_QUEUED:
		return &s->queue;
	case CONN_RUNNING:
		return &s->running;
	case CONN_READ:
	case CONN_WRITE:
	case CONN_DRAIN:
		return c->dead ? &s->dead : &s->timers;
	default:
		return NULL;
	}
}

static void conn_set_state(struct mock_server *s, struct conn *c, enum conn_state st, uint64_t now)
{
	list_remove(conn_list_of(s, c), c);
	if (c->state == CONN_QUEUED)
		s->nqueued--;
	if (st == CONN_QUEUED)
		s->nqueued++;
	c->state = st;
	c->deadline_ms = now + s->opts.client_timeout_ms;
	list_push(conn_list_of(s, c), c);
}

static void epoll_del(struct mock_server *s, int fd)
{
	if (fd >= 0)
		epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

static int epoll_add(struct mock_server *s, int fd, uint32_t events, struct ev_tag *tag)
{
	struct epoll_event ev = { .events = events, .data.ptr = tag };

	return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void listener_toggle(struct mock_server *s)
{
	bool want = s->nconns < s->opts.max_clients && !s->accept_paused;
	struct epoll_event ev = { .events = want ? EPOLLIN : 0, .data.ptr = &s->t_listen };

	if (want != s->listening && epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, s->listen_fd, &ev) == 0)
		s->listening = want;
}

static size_t conn_held(const struct conn *c)
{
	size_t n = c->in.cap + c->req.bytes + (c->owned ? c->out_len : 0);

	if (c->has_job)
		n += c->job.out.cap + c->job.err.cap;
	return n;
}

/* Bring the server's memory account up to date with what `c` holds now. */
static void conn_account(struct mock_server *s, struct conn *c)
{
	size_t now = c->dead ? 0 : conn_held(c);

	s->held = s->held - c->held + now;
	c->held = now;
}

/* Close a client and everything it holds; the struct itself is freed by conns_reap(). */
static void conn_free(struct mock_server *s, struct conn *c)
{
	if (c->dead)
		return;
	list_remove(conn_list_of(s, c), c);
	if (c->state == CONN_QUEUED)
		s->nqueued--;
	if (c->has_job) {
		epoll_del(s, c->job.out_fd);
		epoll_del(s, c->job.err_fd);
		epoll_del(s, c->job.pidfd);
		pt_free(&c->job);
		if (c->state == CONN_RUNNING)
			s->nrunning--;
	}
	epoll_del(s, c->fd);
	close(c->fd);
	c->fd = -1;
	buf_free(&c->in);
	free(c->owned);
	c->owned = NULL;
	mock_request_free(&c->req);
	c->dead = true;
	conn_account(s, c);
	c->state = CONN_READ;
	list_push(&s->dead, c);
	s->nconns--;
	s->accept_paused = false;
	listener_toggle(s);
}

static void conns_reap(struct mock_server *s)
{
	struct conn *c = s->dead.head, *next;

	s->dead.head = s->dead.tail = NULL;
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

/* Journal the call, then send `w`. When the journal cannot be written the call fails closed
 * (exit 70): a response the graders cannot see must not be served. */
static void conn_write(struct mock_server *s, struct conn *c);

static void srv_error(struct mock_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void srv_error(struct mock_server *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->opts.on_error)
		s->opts.on_error(msg);
	else
		diag_error(s->d, "%s", msg);
}

/* Returns 0, or -1 when `c` was freed (out of memory). The caller then sends with conn_write(). */
static int conn_respond(struct mock_server *s, struct conn *c, const struct wire *w, bool stable,
			enum mock_outcome outcome, ssize_t rule, uint64_t now)
{
	struct journal_entry e = {
		.ts = now_real(),
		.tool = c->req.tool,
		.argv = c->req.argv,
		.argc = c->req.argc,
		.exit_code = w ? w->exit_code : MOCK_EXIT_PASSTHROUGH_FAILED,
		.outcome = outcome,
		.rule = rule,
		.pid = c->pid,
		.uid = c->uid,
	};
	int r = journal_write(s->journal, &e);

	if (r < 0 || !w) {
		if (r < 0)
			srv_error(s, "journal write failed: %s", strerror(-r));
		w = mock_service_error(s->svc, c->req.tool, MOCK_EXIT_PASSTHROUGH_FAILED, "internal error");
		stable = false;
		if (!w) {
			conn_free(s, c);
			return -1;
		}
	}
	if (stable) {
		c->out = w->data;
	} else {
		c->owned = malloc(w->len);
		if (!c->owned) {
			conn_free(s, c);
			return -1;
		}
		memcpy(c->owned, w->data, w->len);
		c->out = c->owned;
	}
	c->out_len = w->len;
	c->out_off = 0;
	conn_account(s, c);
	conn_set_state(s, c, CONN_WRITE, now);
	/* Nothing more is read from a client once it is answered; EPOLLOUT is armed on demand. */
	struct epoll_event ev = { .events = 0, .data.ptr = &c->tag };

	epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
	return 0;
}

static void conn_error(struct mock_server *s, struct conn *c, int code, const char *msg, enum mock_outcome o,
		       uint64_t now)
{
	const struct wire *w = mock_service_error(s->svc, c->req.tool, code, msg);

	c->drain = o == OUTCOME_REJECTED || o == OUTCOME_BAD_REQUEST;
	if (conn_respond(s, c, w, false, o, -1, now) == 0)
		conn_write(s, c);
}

/* Send what the socket takes now; wait for EPOLLOUT for the rest (most responses fit at once). */
static void conn_write(struct mock_server *s, struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = &c->tag };

			epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		if (n <= 0)
			break; /* the client went away: its call is already journaled */
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len && c->drain && shutdown(c->fd, SHUT_WR) == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &c->tag };

		conn_set_state(s, c, CONN_DRAIN, now_mono_ms());
		if (epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
			return;
	}
	conn_free(s, c);
}

static void conn_drain(struct mock_server *s, struct conn *c)
{
	char sink[16384];

	for (;;) {
		ssize_t n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && c->drained < CONN_MAX_DRAIN_BYTES)
			return;
		if (n <= 0 || (c->drained += (size_t)n) >= CONN_MAX_DRAIN_BYTES)
			break;
	}
	conn_free(s, c);
}

static void pt_start(struct mock_server *s, struct conn *c, uint64_t now)
{
	struct mock_tool *t = c->tool;
	int r;

	/* Fail closed: without its sandbox the real tool never runs (only recording mode opts out). */
	if (!t->unconfined && t->sandbox.ruleset_fd < 0)
		r = -EPERM;
	else
		r = pt_spawn(&c->job, t->exe, t->cfg->tool, c->req.argv, c->req.argc,
			     t->unconfined ? NULL : &t->sandbox, t->cfg->passthrough_timeout_ms, now);
	if (r < 0) {
		srv_error(s, "passthrough %s: spawn failed: %s", t->exe, strerror(-r));
		conn_error(s, c, MOCK_EXIT_PASSTHROUGH_UNAVAILABLE, "service unavailable", OUTCOME_PASSTHROUGH, now);
		return;
	}
	c->has_job = true;
	c->t_out = (struct ev_tag){ EV_PT_OUT, c };
	c->t_err = (struct ev_tag){ EV_PT_ERR, c };
	c->t_pid = (struct ev_tag){ EV_PT_PID, c };
	if (epoll_add(s, c->job.out_fd, EPOLLIN, &c->t_out) < 0 ||
	    epoll_add(s, c->job.err_fd, EPOLLIN, &c->t_err) < 0 || epoll_add(s, c->job.pidfd, EPOLLIN, &c->t_pid) < 0) {
		pt_kill(&c->job);
		c->job.timed_out = true; /* reported as a failure once it is reaped */
	}
	list_remove(conn_list_of(s, c), c);
	if (c->state == CONN_QUEUED)
		s->nqueued--;
	c->state = CONN_RUNNING;
	list_push(&s->running, c);
	s->nrunning++;
}

static void pt_queue_drain(struct mock_server *s, uint64_t now)
{
	while (s->queue.head && s->nrunning < MOCK_MAX_PASSTHROUGH_JOBS)
		pt_start(s, s->queue.head, now);
}

static void pt_finish(struct mock_server *s, struct conn *c, uint64_t now)
{
	struct wire w = { 0 };
	struct buf out, err;
	bool cacheable;
	int r;

	buf_init(&out, 0);
	buf_init(&err, 0);
	cacheable = pt_result(&c->job, c->tool->cfg->tool, &w, s->opts.on_passthrough ? &out : NULL,
			      s->opts.on_passthrough ? &err : NULL);
	if (cacheable && s->opts.on_passthrough)
		s->opts.on_passthrough(s->opts.ctx, c->tool, c->req.argv, c->req.argc, w.exit_code, &out, &err);
	buf_free(&out);
	buf_free(&err);

	pt_free(&c->job);
	c->has_job = false;
	list_remove(&s->running, c);
	s->nrunning--;
	c->state = CONN_READ; /* transient: conn_respond moves it to WRITE */
	list_push(&s->timers, c);
	r = conn_respond(s, c, &w, false, OUTCOME_PASSTHROUGH, -1, now);
	if (r == 0 && cacheable && w.data)
		mock_service_cache_put(s->svc, c->tool, c->req.argv, c->req.argc, &w);
	free(w.data);
	if (r == 0)
		conn_write(s, c);
	pt_queue_drain(s, now);
}

static void pt_event(struct mock_server *s, struct ev_tag *tag, uint64_t now)
{
	struct conn *c = tag->c;

	/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): pipe and pidfd tags always have a conn */
	if (!c->has_job)
		return; /* finished by an earlier event of this batch */
	/* Each fd leaves the epoll set by being closed (pidfd once reaped, pipes at EOF). */
	if (tag->kind == EV_PT_PID)
		pt_reap(&c->job);
	else
		pt_read(&c->job, tag->kind == EV_PT_OUT ? c->job.out_fd : c->job.err_fd);
	conn_account(s, c);
	if (pt_done(&c->job))
		pt_finish(s, c, now);
}

/* A passthrough waits for one of MOCK_MAX_PASSTHROUGH_JOBS slots in a queue bounded in length
 * (MOCK_MAX_PASSTHROUGH_QUEUE) and in time (the client timeout); past either it gets 69. While
 * it waits or runs, only a hang-up of its client is watched (EPOLLHUP needs no event bit). */
static void pt_enqueue(struct mock_server *s, struct conn *c, uint64_t now)
{
	struct epoll_event ev = { .events = 0, .data.ptr = &c->tag };

	if (s->nrunning >= MOCK_MAX_PASSTHROUGH_JOBS && s->nqueued >= MOCK_MAX_PASSTHROUGH_QUEUE) {
		conn_error(s, c, MOCK_EXIT_PASSTHROUGH_UNAVAILABLE, "service unavailable", OUTCOME_BUSY, now);
		return;
	}
	epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
	conn_set_state(s, c, CONN_QUEUED, now);
	pt_queue_drain(s, now);
}

/* The client of a queued or running passthrough hung up: stop the tool, journal it, forget it. */
static void conn_gone(struct mock_server *s, struct conn *c, uint64_t now)
{
	struct journal_entry e = {
		.ts = now_real(),
		.tool = c->req.tool,
		.argv = c->req.argv,
		.argc = c->req.argc,
		.exit_code = MOCK_EXIT_PASSTHROUGH_FAILED,
		.outcome = OUTCOME_CLIENT_GONE,
		.rule = -1,
		.pid = c->pid,
		.uid = c->uid,
	};
	int r = journal_write(s->journal, &e);

	if (r < 0)
		srv_error(s, "journal write failed: %s", strerror(-r));
	conn_free(s, c);
	pt_queue_drain(s, now);
}

static void conn_dispatch(struct mock_server *s, struct conn *c, uint64_t now)
{
	struct mock_decision dec;
	const char *why;
	char *nl = memchr(c->in.data, '\n', c->in.len);
	int r;

	r = mock_request_parse(c->in.data, (size_t)(nl - c->in.data), &c->req, &why);
	/* Only the decoded argv is kept: the request line goes now. */
	buf_free(&c->in);
	conn_account(s, c);
	if (r == -ENOMEM) {
		conn_error(s, c, MOCK_EXIT_PASSTHROUGH_FAILED, "internal error", OUTCOME_ERROR, now);
		return;
	}
	if (r < 0) {
		conn_error(s, c, MOCK_EXIT_BAD_REQUEST, why, OUTCOME_BAD_REQUEST, now);
		return;
	}
	if (mock_service_decide(s->svc, &c->req, &dec) < 0) {
		conn_error(s, c, MOCK_EXIT_PASSTHROUGH_FAILED, "internal error", OUTCOME_ERROR, now);
		return;
	}
	if (dec.w) {
		/* Fixture rules and the default are encoded once and live as long as the service. */
		bool stable = dec.outcome == OUTCOME_EXACT || dec.outcome == OUTCOME_NORMALIZED ||
			      dec.outcome == OUTCOME_SUBSET || dec.outcome == OUTCOME_DEFAULT;

		if (conn_respond(s, c, dec.w, stable, dec.outcome, dec.rule, now) == 0)
			conn_write(s, c);
		return;
	}
	c->tool = dec.tool;
	pt_enqueue(s, c, now);
}

static void conn_read(struct mock_server *s, struct conn *c, uint64_t now)
{
	for (;;) {
		ssize_t n;

		/* Every client's bytes count against one cap: past it, calls are turned away (69)
		 * instead of the daemon growing until the OOM killer ends every call. */
		if (c->in.len + 4096 >= c->in.cap && s->held + c->in.cap + 4096 > MOCK_MAX_HELD_BYTES) {
			conn_error(s, c, MOCK_EXIT_PASSTHROUGH_UNAVAILABLE, "service unavailable", OUTCOME_BUSY, now);
			return;
		}
		/* Room for the longest valid line plus one byte, to tell "too long" from "complete". */
		if (buf_reserve(&c->in, 4096) < 0) {
			conn_error(s, c, MOCK_EXIT_BAD_REQUEST, "invalid request size", OUTCOME_BAD_REQUEST, now);
			return;
		}
		conn_account(s, c);
		n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len - 1, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			conn_free(s, c);
			return;
		}
		if (n == 0) {
			conn_error(s, c, MOCK_EXIT_BAD_REQUEST, "invalid request: no newline", OUTCOME_BAD_REQUEST,
				   now);
			return;
		}
		c->in.len += (size_t)n;
		c->in.data[c->in.len] = '\0';
		if (memchr(c->in.data + c->in.len - n, '\n', (size_t)n)) {
			char *nl = memchr(c->in.data, '\n', c->in.len);

			if ((size_t)(nl - c->in.data) + 1 > MOCK_MAX_REQUEST_BYTES)
				conn_error(s, c, MOCK_EXIT_BAD_REQUEST, "invalid request size", OUTCOME_BAD_REQUEST,
					   now);
			else
				conn_dispatch(s, c, now);
			return;
		}
		if (c->in.len >= MOCK_MAX_REQUEST_BYTES) {
			conn_error(s, c, MOCK_EXIT_BAD_REQUEST, "invalid request size", OUTCOME_BAD_REQUEST, now);
			return;
		}
	}
}

static bool uid_allowed(const struct mock_server *s, uid_t uid)
{
	for (size_t i = 0; i < s->opts.nallowed; i++)
		if (s->opts.allowed_uids[i] == uid)
			return true;
	return false;
}

static void conn_accept_one(struct mock_server *s, int fd, uint64_t now)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->tag = (struct ev_tag){ EV_CONN, c };
	buf_init(&c->in, MOCK_MAX_REQUEST_BYTES + 4096);
	s->nconns++;
	c->state = CONN_READ;
	c->deadline_ms = now + s->opts.client_timeout_ms;
	list_push(&s->timers, c);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred)) {
		conn_free(s, c);
		return;
	}
	c->pid = cred.pid;
	c->uid = cred.uid;
	if (epoll_add(s, fd, EPOLLIN, &c->tag) < 0) {
		conn_free(s, c);
		return;
	}
	/* SO_PEERCRED is checked before a single byte of the request is read. */
	if (!uid_allowed(s, cred.uid)) {
		conn_error(s, c, MOCK_EXIT_REJECTED, "permission denied", OUTCOME_REJECTED, now);
		return;
	}
	conn_read(s, c, now);
}

static void conn_accept(struct mock_server *s, uint64_t now)
{
	while (s->nconns < s->opts.max_clients) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			int e = errno;

			if (e == EINTR || e == ECONNABORTED)
				continue;
			/* Out of fds anyway (ENFILE, or fds held elsewhere): stop listening until a
			 * client leaves, rather than wake up on the same pending connection forever. */
			if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
				s->accept_paused = true;
				s->accept_resume_ms = now + 100;
			}
			break;
		}
		conn_accept_one(s, fd, now);
		if (s->fatal)
			return;
	}
	listener_toggle(s);
}

static void conn_event(struct mock_server *s, struct conn *c, uint32_t events, uint64_t now)
{
	/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): EV_CONN tags always have a conn */
	if (c->state == CONN_READ && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		conn_read(s, c, now);
	else if (c->state == CONN_WRITE && (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)))
		conn_write(s, c);
	else if (c->state == CONN_DRAIN)
		conn_drain(s, c);
	else if ((c->state == CONN_QUEUED || c->state == CONN_RUNNING) && (events & (EPOLLHUP | EPOLLERR)))
		conn_gone(s, c, now);
}

/* Expire clients and passthroughs past their deadlines; return ms until the next one (-1: none). */
static int timers_run(struct mock_server *s, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	while (s->timers.head && s->timers.head->deadline_ms <= now) {
		struct conn *c = s->timers.head;

		if (c->state == CONN_READ)
			conn_error(s, c, MOCK_EXIT_BAD_REQUEST, "invalid request: timed out", OUTCOME_BAD_REQUEST, now);
		else
			conn_free(s, c);
	}
	if (s->timers.head)
		next = s->timers.head->deadline_ms;
	if (s->accept_paused && s->accept_resume_ms <= now) {
		s->accept_paused = false;
		listener_toggle(s);
	}
	if (s->accept_paused && s->accept_resume_ms < next)
		next = s->accept_resume_ms;
	/* The queue is FIFO with one timeout, so sorted by deadline too. */
	while (s->queue.head && s->queue.head->deadline_ms <= now)
		conn_error(s, s->queue.head, MOCK_EXIT_PASSTHROUGH_UNAVAILABLE, "service unavailable", OUTCOME_BUSY,
			   now);
	if (s->queue.head && s->queue.head->deadline_ms < next)
		next = s->queue.head->deadline_ms;
	for (struct conn *c = s->running.head, *n; c; c = n) {
		n = c->next;
		if (c->job.deadline_ms <= now && !c->job.timed_out) {
			c->job.timed_out = true;
			pt_kill(&c->job);
		}
		if (c->job.timed_out && c->job.exited && c->job.deadline_ms + 2000 <= now) {
			/* Reaped, but something outside its group still holds the pipes. */
			pt_free(&c->job);
			c->job.out_fd = c->job.err_fd = -1;
			pt_finish(s, c, now);
			continue;
		}
		if (c->job.deadline_ms + (c->job.timed_out ? 2000 : 0) < next)
			next = c->job.deadline_ms + (c->job.timed_out ? 2000 : 0);
	}
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

static int socket_prepare_path(const char *path, struct sockaddr_un *sa, struct diag *d)
{
	struct stat st;
	int probe, r;

	if (strlen(path) >= sizeof(sa->sun_path)) {
		diag_error(d, "%s: socket path is longer than %zu bytes", path, sizeof(sa->sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	strcpy(sa->sun_path, path);
	if (lstat(path, &st) < 0) {
		r = -errno; /* saved first: diag_error allocates, and may change errno */
		if (r == -ENOENT)
			return 0;
		diag_error(d, "%s: %s", path, strerror(-r));
		return r;
	}
	if (!S_ISSOCK(st.st_mode)) {
		diag_error(d, "%s: exists and is not a socket; refusing to replace it", path);
		return -EEXIST;
	}
	/* A socket file nobody listens on is left over from a crash: replace it. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		r = -errno;
		diag_error(d, "%s: socket: %s", path, strerror(-r));
		return r;
	}
	r = connect(probe, (struct sockaddr *)sa, sizeof(*sa));
	close(probe);
	if (r == 0) {
		diag_error(d, "%s: another server is listening on this socket", path);
		return -EADDRINUSE;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		r = -errno;
		diag_error(d, "%s: cannot remove stale socket: %s", path, strerror(-r));
		return r;
	}
	return 0;
}

static int socket_bind(struct mock_server *s, struct diag *d)
{
	const char *path = s->opts.socket_path;
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int r;

	r = socket_prepare_path(path, &sa, d);
	if (r < 0)
		return r;
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0)
		return -errno;
	old = umask(0177); /* created 0600: nobody else can connect before chmod below */
	r = bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0) {
		r = -errno;
		diag_error(d, "%s: bind: %s", path, strerror(-r));
		return r;
	}
	if (lstat(path, &st) < 0) {
		r = -errno;
		diag_error(d, "%s: %s", path, strerror(-r));
		return r;
	}
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	if ((s->opts.socket_gid != (gid_t)-1 && chown(path, (uid_t)-1, s->opts.socket_gid) < 0) ||
	    chmod(path, s->opts.socket_mode) < 0) {
		r = -errno;
		diag_error(d, "%s: setting group/mode: %s", path, strerror(-r));
		unlink(path);
		return r;
	}
	if (listen(s->listen_fd, SOMAXCONN) < 0) {
		r = -errno;
		diag_error(d, "%s: listen: %s", path, strerror(-r));
		unlink(path);
		return r;
	}
	return 0;
}

/* fds mockd needs besides its clients: listener, epoll, signalfd, journal, stdio, and three
 * per running passthrough (two pipes and a pidfd), with room for a spawn's transient ones. */
#define SERVER_RESERVED_FDS (16u + 4u * MOCK_MAX_PASSTHROUGH_JOBS)

/* Raise the soft fd limit to the hard one, then serve no more clients than fds allow: a client
 * past the limit would make accept() fail with EMFILE on every wake-up, a busy loop. */
static unsigned fit_clients_to_fd_limit(unsigned max_clients, struct diag *d)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return max_clients;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max_clients + SERVER_RESERVED_FDS) {
		unsigned fit =
			rl.rlim_cur > SERVER_RESERVED_FDS + 1 ? (unsigned)(rl.rlim_cur - SERVER_RESERVED_FDS) : 1;

		diag_warn(d, "the fd limit (%llu) allows %u clients at once, not %u", (unsigned long long)rl.rlim_cur,
			  fit, max_clients);
		return fit;
	}
	return max_clients;
}

int mock_server_bind(const struct mock_server_opts *opts, struct diag *d, struct mock_server **ret)
{
	struct mock_server *s = calloc(1, sizeof(*s));
	sigset_t mask;
	int r;

	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->listen_fd = s->epoll_fd = s->signal_fd = -1;
	s->opts.max_clients = fit_clients_to_fd_limit(opts->max_clients, d);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked before the socket exists, so a stop request is never lost to a default handler.
	 * An inherited SIG_IGN (a background job of a non-interactive shell ignores SIGINT) would
	 * discard the signal before signalfd sees it: reset the dispositions first. */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	/* A journal at the file size limit must fail the call (70), not kill the daemon. */
	signal(SIGXFSZ, SIG_IGN);
	s->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->signal_fd < 0 || s->epoll_fd < 0) {
		r = -errno;
		diag_error(d, "signalfd/epoll: %s", strerror(-r));
		goto fail;
	}
	r = socket_bind(s, d);
	if (r < 0)
		goto fail;
	s->t_listen = (struct ev_tag){ EV_LISTENER, NULL };
	s->t_signal = (struct ev_tag){ EV_SIGNAL, NULL };
	if ((r = epoll_add(s, s->listen_fd, EPOLLIN, &s->t_listen)) < 0 ||
	    (r = epoll_add(s, s->signal_fd, EPOLLIN, &s->t_signal)) < 0)
		goto fail;
	s->listening = true;
	*ret = s;
	return 0;
fail:
	mock_server_free(s);
	return r;
}

static void socket_unlink_if_ours(struct mock_server *s)
{
	struct stat st;

	if (s->sock_ino && lstat(s->opts.socket_path, &st) == 0 && st.st_dev == s->sock_dev && st.st_ino == s->sock_ino)
		unlink(s->opts.socket_path);
	s->sock_ino = 0;
}

void mock_server_free(struct mock_server *s)
{
	if (!s)
		return;
	while (s->timers.head)
		conn_free(s, s->timers.head);
	while (s->queue.head)
		conn_free(s, s->queue.head);
	while (s->running.head)
		conn_free(s, s->running.head);
	conns_reap(s);
	socket_unlink_if_ours(s);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->signal_fd >= 0)
		close(s->signal_fd);
	free(s);
}

static int notify_ready(struct mock_server *s)
{
	int r;

	if (s->opts.ready_fd < 0)
		return 0;
	r = fd_write_all(s->opts.ready_fd, "\n", 1);
	close(s->opts.ready_fd);
	s->opts.ready_fd = -1;
	return r;
}

int mock_server_run(struct mock_server *s, struct mock_service *svc, struct journal *j, struct diag *d)
{
	struct epoll_event evs[64];
	bool stop = false;
	int r, timeout = -1;

	s->svc = svc;
	s->journal = j;
	s->d = d;
	r = notify_ready(s);
	if (r < 0) {
		diag_error(d, "readiness fd: %s", strerror(-r));
		return r;
	}
	while (!stop && !s->fatal) {
		int n = epoll_wait(s->epoll_fd, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout);
		uint64_t now = now_mono_ms();

		if (n < 0 && errno != EINTR) {
			r = -errno;
			diag_error(d, "epoll_wait: %s", strerror(-r));
			return r;
		}
		for (int i = 0; i < n; i++) {
			struct ev_tag *tag = evs[i].data.ptr;

			if (tag->c && tag->c->dead)
				continue;
			switch (tag->kind) {
			case EV_LISTENER:
				conn_accept(s, now);
				break;
			case EV_SIGNAL:
				stop = true;
				break;
			case EV_CONN:
				conn_event(s, tag->c, evs[i].events, now);
				break;
			case EV_PT_OUT:
			case EV_PT_ERR:
			case EV_PT_PID:
				pt_event(s, tag, now);
				break;
			default:
				break;
			}
		}
		timeout = timers_run(s, now_mono_ms());
		conns_reap(s);
	}
	socket_unlink_if_ours(s);
	return 0;
}
