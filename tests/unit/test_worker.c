/* SPDX-License-Identifier: MIT */
/* test_worker.c: the worker's side of the protocol (src/run/worker.c), served in a child of the
 * test over a socketpair, as the orchestrator would: the dispatch table (unknown methods,
 * malformed requests and foreign nonces end the worker), hello's identity check, the session
 * and turn rules, how the agent's output becomes events (lines, stderr, cut lines, invalid
 * UTF-8, stdin), how a turn ends (exit status, end-of-turn event, timeout) and stop. */
#include "helpers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "../../src/lib/buf.h"
#include "../../src/run/frame.h"
#include "../../src/lib/json.h"
#include "../../src/run/worker.h"

static const unsigned char nonce[FRAME_NONCE_LEN] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };

struct peer {
	pid_t pid;
	int fd;     /* our end of the channel */
	int why_fd; /* the worker's reason for ending, written as it returns */
	struct buf in;
	int id;
};

/* Start worker_serve() in a child; it exits 0 after a clean stop, 1 otherwise. */
static void peer_start(struct peer *p)
{
	int sv[2], why[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(why, O_CLOEXEC), 0);
	fflush(NULL);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		struct buf reason;
		int r;

		close(sv[0]);
		close(why[0]);
		buf_init(&reason, 4096);
		r = worker_serve(sv[1], nonce, &reason);
		if (reason.data)
			(void)!write(why[1], reason.data, reason.len);
		buf_free(&reason);
		/* _exit: the parent's cmocka state is not ours to tear down (make coverage still
		 * writes the counts, see scripts/coverage_flush.c). */
		_exit(r == 0 ? 0 : 1);
	}
	close(sv[1]);
	close(why[1]);
	p->fd = sv[0];
	p->why_fd = why[0];
	p->id = 0;
	buf_init(&p->in, FRAME_HEADER_LEN + FRAME_MAX_BODY);
}

static void peer_send_raw(struct peer *p, const unsigned char *with_nonce, json_t *req)
{
	assert_int_equal(frame_send(p->fd, with_nonce, req), 0);
	json_decref(req);
}

/* Send `method` with `params` (owned); returns the request id. */
static int peer_call(struct peer *p, const char *method, json_t *params)
{
	int id = ++p->id;

	peer_send_raw(
		p, nonce,
		json_pack("{s:i,s:s,s:o}", "id", id, "method", method, "params", params ? params : json_object()));
	return id;
}

/* The next frame from the worker (owned), or NULL at end of file; fails after 10 s. */
static json_t *peer_recv(struct peer *p)
{
	for (;;) {
		struct pollfd pf = { .fd = p->fd, .events = POLLIN };
		const char *why = NULL;
		size_t used = 0;
		json_t *j = NULL;
		ssize_t n;
		int d = frame_decode(nonce, p->in.data ? p->in.data : "", p->in.len, &used, &j, &why);

		assert_true(d >= 0);
		if (d == 1) {
			buf_consume(&p->in, used);
			return j;
		}
		assert_int_equal(poll(&pf, 1, 10000), 1);
		n = frame_fill(p->fd, &p->in);
		assert_true(n >= 0);
		if (n == 0)
			return NULL;
	}
}

/* The answer to request `id`; events before it are appended to `events` when given. */
static json_t *peer_answer(struct peer *p, int id, json_t *events)
{
	json_t *j;

	while ((j = peer_recv(p))) {
		if (json_integer_value(json_object_get(j, "id")) == id && json_object_get(j, "ok"))
			return j;
		assert_non_null(json_object_get(j, "stream"));
		if (events)
			json_array_append(events, j);
		json_decref(j);
	}
	fail_msg("the worker closed the channel before answering request %d", id);
	return NULL;
}

/* Wait for the worker to end; returns its exit status and copies its reason into `why`. */
static int peer_end(struct peer *p, char *why, size_t why_len)
{
	int st = 0;
	ssize_t n;

	close(p->fd);
	assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
	n = read(p->why_fd, why, why_len - 1);
	why[n > 0 ? n : 0] = '\0';
	close(p->why_fd);
	buf_free(&p->in);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static const char *error_type(json_t *answer)
{
	return json_string_value(json_object_get(json_object_get(answer, "error"), "type"));
}

static const char *error_message(json_t *answer)
{
	return json_string_value(json_object_get(json_object_get(answer, "error"), "message"));
}

static void start_session(struct peer *p, const char *events)
{
	json_t *ev = json_loads(events, 0, NULL), *a;
	int id;

	assert_non_null(ev);
	id = peer_call(p, "start", json_pack("{s:s,s:o}", "cwd", "/", "events", ev));
	a = peer_answer(p, id, NULL);
	assert_true(json_is_true(json_object_get(a, "ok")));
	json_decref(a);
}

/* One turn of `sh -c script`; returns the answer, events appended to `events`. */
static json_t *run_turn(struct peer *p, int turn, const char *script, const char *in, int timeout_ms, json_t *events)
{
	int id = peer_call(p, "communicate",
			   json_pack("{s:i,s:[s,s,s],s:[s],s:i,s:s?}", "turn", turn, "argv", "sh", "-c", script, "env",
				     "PATH=/usr/bin:/bin", "timeout_ms", timeout_ms, "stdin", in));

	return peer_answer(p, id, events);
}

static void stop_clean(struct peer *p)
{
	char why[256];
	json_t *a = peer_answer(p, peer_call(p, "stop", json_pack("{s:i}", "grace_ms", 100)), NULL);

	assert_true(json_is_true(json_object_get(json_object_get(a, "result"), "stopped")));
	json_decref(a);
	assert_int_equal(peer_end(p, why, sizeof(why)), 0);
}

static void test_worker__unknown_method_ends_the_worker(void **state)
{
	struct peer p;
	char why[256];

	(void)state;
	peer_start(&p);
	peer_call(&p, "exec_as_root", NULL);
	assert_null(peer_recv(&p)); /* no answer: the channel closes */
	assert_int_equal(peer_end(&p, why, sizeof(why)), 1);
	assert_string_equal(why, "unknown method 'exec_as_root'");
}

static void test_worker__malformed_request_ends_the_worker(void **state)
{
	struct peer p;
	char why[256];

	(void)state;
	peer_start(&p);
	peer_send_raw(&p, nonce, json_pack("{s:s,s:s}", "id", "1", "method", "start"));
	assert_null(peer_recv(&p));
	assert_int_equal(peer_end(&p, why, sizeof(why)), 1);
	assert_string_equal(why, "malformed request");

	peer_start(&p);
	peer_send_raw(&p, nonce, json_pack("{s:i,s:s,s:[]}", "id", 1, "method", "start", "params"));
	assert_null(peer_recv(&p));
	assert_int_equal(peer_end(&p, why, sizeof(why)), 1);
	assert_string_equal(why, "malformed request");
}

static void test_worker__foreign_nonce_ends_the_worker(void **state)
{
	static const unsigned char other[FRAME_NONCE_LEN] = { 0 };
	struct peer p;
	char why[256];

	(void)state;
	peer_start(&p);
	peer_send_raw(&p, other, json_pack("{s:i,s:s}", "id", 1, "method", "stop"));
	assert_null(peer_recv(&p));
	assert_int_equal(peer_end(&p, why, sizeof(why)), 1);
	assert_string_equal(why, "frame with a foreign nonce");
}

static void test_worker__closed_channel_ends_the_worker(void **state)
{
	struct peer p;
	char why[256];

	(void)state;
	peer_start(&p);
	assert_int_equal(peer_end(&p, why, sizeof(why)), 1);
	assert_string_equal(why, "the orchestrator closed the channel");
}

/* hello answers only when the identity read back from the kernel is the one asked for. */
static void test_worker__hello_refuses_a_wrong_identity(void **state)
{
	struct peer p;
	json_t *a;
	char want[64];

	(void)state;
	peer_start(&p);
	a = peer_answer(&p, peer_call(&p, "hello", json_pack("{s:{s:i}}", "expect", "uid", 2000)), NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_type(a), "config_error");
	assert_string_equal(error_message(a), "hello: params.expect needs uid, gid and groups");
	json_decref(a);

	/* We are not uid 4242 with no capabilities under Landlock: the check must say so. */
	a = peer_answer(
		&p,
		peer_call(&p, "hello", json_pack("{s:{s:i,s:i,s:[]}}", "expect", "uid", 4242, "gid", 4242, "groups")),
		NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_type(a), "identity");
	snprintf(want, sizeof(want), "%d", 4242);
	assert_non_null(strstr(error_message(a), want));
	assert_null(json_object_get(a, "result"));
	json_decref(a);
	stop_clean(&p);
}

static void test_worker__session_rules(void **state)
{
	struct peer p;
	json_t *a;

	(void)state;
	peer_start(&p);
	a = run_turn(&p, 1, "true", NULL, 5000, NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_message(a), "communicate: no session");
	json_decref(a);

	a = peer_answer(&p, peer_call(&p, "start", json_pack("{s:s,s:{s:s}}", "cwd", "/", "events", "framing", "xml")),
			NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_message(a), "start: params need cwd and valid events rules");
	json_decref(a);

	start_session(&p, "{\"framing\": \"lines\"}");
	a = peer_answer(
		&p, peer_call(&p, "start", json_pack("{s:s,s:{s:s}}", "cwd", "/", "events", "framing", "lines")), NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_message(a), "start: the session was already started");
	json_decref(a);

	a = peer_answer(&p,
			peer_call(&p, "communicate",
				  json_pack("{s:i,s:[s],s:[s],s:i}", "turn", 1, "argv", "no-such-agent-cli", "env",
					    "PATH=/nonexistent", "timeout_ms", 1000)),
			NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_message(a), "no-such-agent-cli: not found on the agent's PATH");
	json_decref(a);

	a = peer_answer(&p, peer_call(&p, "communicate", json_pack("{s:i,s:[s]}", "turn", 1, "argv", "true")), NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_message(a), "communicate: params need turn, argv, env, timeout_ms, stdin");
	json_decref(a);
	stop_clean(&p);
}

/* Plain lines: each stdout line is one event, stderr is passed on, the exit status decides. */
static void test_worker__turn_streams_output_and_exit_status(void **state)
{
	struct peer p;
	json_t *events = json_array(), *a, *res, *e;
	size_t i, nout = 0, nerr = 0;

	(void)state;
	peer_start(&p);
	start_session(&p, "{\"framing\": \"lines\"}");
	a = run_turn(&p, 1, "echo one; echo two; printf 'bad \\377 byte\\n'; echo oops >&2; printf tail; exit 3", NULL,
		     5000, events);
	assert_true(json_is_true(json_object_get(a, "ok")));
	res = json_object_get(a, "result");
	assert_int_equal(json_integer_value(json_object_get(res, "turn")), 1);
	assert_int_equal(json_integer_value(json_object_get(res, "exit_code")), 3);
	assert_string_equal(json_string_value(json_object_get(res, "status")), "failed");
	assert_int_equal(json_integer_value(json_object_get(res, "lines")), 4);
	json_array_foreach(events, i, e) {
		const char *kind = json_string_value(json_object_get(e, "stream"));
		const char *text = json_string_value(json_object_get(e, "text"));
		static const char *const want[] = { "one", "two", "bad \xef\xbf\xbd byte", "tail" };

		assert_int_equal(json_integer_value(json_object_get(e, "turn")), 1);
		if (!strcmp(kind, "stdout")) {
			assert_true(nout < 4);
			assert_string_equal(text, want[nout++]);
			assert_true(json_is_false(json_object_get(e, "truncated")));
		} else {
			assert_string_equal(kind, "stderr");
			assert_string_equal(text, "oops\n");
			nerr++;
		}
	}
	assert_int_equal(nout, 4);
	assert_int_equal(nerr, 1);
	json_decref(a);

	/* stdin is written to the agent and closed; a second turn runs after the first. */
	json_array_clear(events);
	a = run_turn(&p, 2, "cat; exit 0", "from the prompt\n", 5000, events);
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "result"), "status")), "completed");
	assert_int_equal(json_array_size(events), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(events, 0), "text")), "from the prompt");
	json_decref(a);
	json_decref(events);
	stop_clean(&p);
}

/* A JSON line nested as deep as the orchestrator can take inside a frame is carried as an
 * object; one level deeper, as text (else its frame could not be parsed, and the agent could
 * end its own run as isolation_failed). Either way the turn goes on. */
static void test_worker__deepest_event_then_text(void **state)
{
	static const char rules[] = "{\"framing\": \"json_lines\", \"end\": {\"type\": \"result\"}}";
	struct peer p;
	json_t *events = json_array(), *a, *deep, *deeper;
	char script[512];

	(void)state;
	peer_start(&p);
	start_session(&p, rules);
	snprintf(script, sizeof(script),
		 "for k in %d %d; do printf '{\"type\":\"x\",\"a\":'; head -c $k /dev/zero | tr '\\0' '[';"
		 " printf 1; head -c $k /dev/zero | tr '\\0' ']'; echo '}'; done; echo '{\"type\":\"result\"}'",
		 WORKER_MAX_EVENT_DEPTH - 1, WORKER_MAX_EVENT_DEPTH);
	a = run_turn(&p, 1, script, NULL, 10000, events);
	assert_true(json_is_true(json_object_get(a, "ok")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "result"), "status")), "completed");
	assert_int_equal(json_array_size(events), 3);
	deep = json_array_get(events, 0);
	deeper = json_array_get(events, 1);
	assert_int_equal(json_depth(json_object_get(deep, "event"), 4096), WORKER_MAX_EVENT_DEPTH);
	assert_null(json_object_get(deep, "text"));
	assert_null(json_object_get(deeper, "event"));
	assert_int_equal(json_string_length(json_object_get(deeper, "text")), 17 + 2 * WORKER_MAX_EVENT_DEPTH + 1);
	json_decref(a);
	json_decref(events);
	stop_clean(&p);
}

/* The longest line whose every byte escapes to six ("\u0001", and "\ufffd" for each invalid
 * byte) still fits one frame: the turn goes on, nothing is lost. */
static void test_worker__longest_line_of_escapes_fits_a_frame(void **state)
{
	struct peer p;
	json_t *events = json_array(), *a;
	char script[160];

	(void)state;
	peer_start(&p);
	start_session(&p, "{\"framing\": \"lines\"}");
	for (int k = 0; k < 2; k++) {
		snprintf(script, sizeof(script), "head -c %d /dev/zero | tr '\\0' '\\%s'; echo; echo next",
			 WORKER_MAX_LINE_BYTES, k ? "377" : "001");
		json_array_clear(events);
		a = run_turn(&p, 1 + k, script, NULL, 10000, events);
		assert_true(json_is_true(json_object_get(a, "ok")));
		assert_int_equal(json_array_size(events), 2);
		assert_true(json_is_false(json_object_get(json_array_get(events, 0), "truncated")));
		/* \377 becomes U+FFFD, three bytes of UTF-8 */
		assert_int_equal(json_string_length(json_object_get(json_array_get(events, 0), "text")),
				 (size_t)WORKER_MAX_LINE_BYTES * (k ? 3 : 1));
		assert_string_equal(json_string_value(json_object_get(json_array_get(events, 1), "text")), "next");
		json_decref(a);
	}
	json_decref(events);
	stop_clean(&p);
}

/* A line over WORKER_MAX_LINE_BYTES is sent once, cut to the limit and marked; the next line
 * is whole again. */
static void test_worker__long_line_is_cut_once(void **state)
{
	struct peer p;
	json_t *events = json_array(), *a, *first, *second;
	char script[128];

	(void)state;
	peer_start(&p);
	start_session(&p, "{\"framing\": \"lines\"}");
	snprintf(script, sizeof(script), "head -c %d /dev/zero | tr '\\0' x; echo; echo next",
		 WORKER_MAX_LINE_BYTES + 5000);
	a = run_turn(&p, 1, script, NULL, 10000, events);
	assert_true(json_is_true(json_object_get(a, "ok")));
	assert_int_equal(json_array_size(events), 2);
	first = json_array_get(events, 0);
	second = json_array_get(events, 1);
	assert_true(json_is_true(json_object_get(first, "truncated")));
	assert_int_equal(json_string_length(json_object_get(first, "text")), WORKER_MAX_LINE_BYTES);
	assert_true(json_is_false(json_object_get(second, "truncated")));
	assert_string_equal(json_string_value(json_object_get(second, "text")), "next");
	json_decref(a);
	json_decref(events);
	stop_clean(&p);
}

/* JSON lines: the end-of-turn event and its failure rule decide; an exit without one is a
 * crash; the session id is read from the events. */
static void test_worker__json_lines_turn_end(void **state)
{
	static const char rules[] = "{\"framing\": \"json_lines\", \"end\": {\"type\": \"result\"},"
				    " \"failed\": {\"type\": \"result\", \"is_error\": true},"
				    " \"session_id\": {\"when\": {\"type\": \"init\"}, \"field\": \"session_id\"}}";
	struct peer p;
	json_t *events = json_array(), *a, *res;

	(void)state;
	peer_start(&p);
	start_session(&p, rules);
	a = run_turn(
		&p, 1,
		"echo '{\"type\":\"init\",\"session_id\":\"s-1\"}'; echo '{\"type\":\"result\",\"is_error\":false}'",
		NULL, 5000, events);
	assert_true(json_is_true(json_object_get(a, "ok")));
	res = json_object_get(a, "result");
	assert_string_equal(json_string_value(json_object_get(res, "status")), "completed");
	assert_string_equal(json_string_value(json_object_get(res, "session_id")), "s-1");
	assert_int_equal(json_integer_value(json_object_get(res, "recognised")), 2);
	/* a JSON line is sent as the object it is, not as text too */
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_array_get(events, 1), "event"), "type")),
		"result");
	assert_null(json_object_get(json_array_get(events, 1), "text"));
	json_decref(a);

	a = run_turn(&p, 2, "echo '{\"type\":\"result\",\"is_error\":true}'", NULL, 5000, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "result"), "status")), "failed");
	json_decref(a);

	a = run_turn(&p, 3, "echo '{\"type\":\"init\"}'; exit 0", NULL, 5000, NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_type(a), "agent_crashed");
	assert_string_equal(error_message(a), "turn 3: the agent exited (status 0) without the end-of-turn event");
	json_decref(a);

	a = run_turn(&p, 4, "echo not json", NULL, 5000, NULL);
	assert_string_equal(error_type(a), "agent_crashed");
	assert_string_equal(error_message(a),
			    "turn 4: no recognisable event in 1 lines (the event format may have changed)");
	json_decref(a);
	json_decref(events);
	stop_clean(&p);
}

/* A turn past its time limit is stopped and answered as turn_timeout; a turn cannot start
 * while one runs, and a discarded turn is killed. */
static void test_worker__turn_timeout_and_discard(void **state)
{
	struct peer p;
	json_t *a;
	int id;

	(void)state;
	peer_start(&p);
	start_session(&p, "{\"framing\": \"lines\"}");
	a = run_turn(&p, 1, "exec sleep 30", NULL, 200, NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_type(a), "turn_timeout");
	assert_string_equal(error_message(a), "turn 1 ran past its time limit and was stopped");
	json_decref(a);

	/* turn 2 never ends by itself; turn 3 is refused while it runs */
	id = peer_call(&p, "communicate",
		       json_pack("{s:i,s:[s,s,s],s:[s],s:i}", "turn", 2, "argv", "sh", "-c", "exec sleep 30", "env",
				 "PATH=/usr/bin:/bin", "timeout_ms", 30000));
	a = run_turn(&p, 3, "true", NULL, 5000, NULL);
	assert_true(json_is_false(json_object_get(a, "ok")));
	assert_string_equal(error_message(a), "communicate: a turn is running");
	json_decref(a);
	a = peer_answer(&p, peer_call(&p, "discard_pending_turn", NULL), NULL);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "result"), "discarded")), 2);
	json_decref(a);
	(void)id;
	/* a new turn runs after the discard */
	a = run_turn(&p, 3, "exit 0", NULL, 5000, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "result"), "status")), "completed");
	json_decref(a);
	stop_clean(&p);
}

/* stop ends a running turn within its grace and the worker with it (exit 0). */
static void test_worker__stop_ends_a_running_turn(void **state)
{
	struct peer p;
	json_t *a;
	char why[256];

	(void)state;
	peer_start(&p);
	start_session(&p, "{\"framing\": \"lines\"}");
	peer_call(&p, "communicate",
		  json_pack("{s:i,s:[s,s,s],s:[s],s:i}", "turn", 1, "argv", "sh", "-c", "exec sleep 30", "env",
			    "PATH=/usr/bin:/bin", "timeout_ms", 30000));
	a = peer_answer(&p, peer_call(&p, "stop", json_pack("{s:i}", "grace_ms", 2000)), NULL);
	assert_true(json_is_true(json_object_get(json_object_get(a, "result"), "stopped")));
	assert_true(json_is_true(json_object_get(json_object_get(a, "result"), "turn_ended_in_grace")));
	json_decref(a);
	assert_int_equal(peer_end(&p, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker__unknown_method_ends_the_worker),
		cmocka_unit_test(test_worker__malformed_request_ends_the_worker),
		cmocka_unit_test(test_worker__foreign_nonce_ends_the_worker),
		cmocka_unit_test(test_worker__closed_channel_ends_the_worker),
		cmocka_unit_test(test_worker__hello_refuses_a_wrong_identity),
		cmocka_unit_test(test_worker__session_rules),
		cmocka_unit_test(test_worker__turn_streams_output_and_exit_status),
		cmocka_unit_test(test_worker__deepest_event_then_text),
		cmocka_unit_test(test_worker__longest_line_of_escapes_fits_a_frame),
		cmocka_unit_test(test_worker__long_line_is_cut_once),
		cmocka_unit_test(test_worker__json_lines_turn_end),
		cmocka_unit_test(test_worker__turn_timeout_and_discard),
		cmocka_unit_test(test_worker__stop_ends_a_running_turn),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
