/* SPDX-License-Identifier: MIT */
/* test_run.c: the task file parser (every error names file and field), its filesystem checks
 * (private material and fixtures outside the agent's view), worker frames (length, nonce, JSON),
 * the run directory's tree copy (links kept, never followed), the private-material scan and the
 * termination-message verdict (one line, 4 KB at most, naming result.json by its sha256), and
 * the orchestrator's side of the worker channel (run_pump: events recorded, anything else a
 * protocol violation that fails the run). */
#include "helpers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "../../src/lib/diag.h"
#include "../../src/lib/hash.h"
#include "../../src/run/frame.h"
#include "../../src/run/run.h"
#include "../../src/run/rundir.h"
#include "../../src/run/task.h"
#include "../../src/run/verdict.h"
#include "../../src/run/worker.h"

/* Parse `text`; on error return the first message (static), else NULL. */
static const char *parse_err(const char *text, struct task *t)
{
	static char first[512];
	struct diag d;
	int r;

	diag_init(&d);
	r = task_parse("/w/task.json", text, strlen(text), &d, t);
	first[0] = '\0';
	if (d.n)
		snprintf(first, sizeof(first), "%s", d.msgs[0].text);
	diag_free(&d);
	if (r == 0)
		return NULL;
	return first;
}

#define MIN_AGENT "\"agent\":{\"kind\":\"command\",\"command\":[\"./a.sh\",\"-v\"]}"

static void test_task__minimal_defaults(void **state)
{
	struct task t;

	(void)state;
	assert_null(parse_err("{\"version\":1,\"id\":\"t-1\"," MIN_AGENT "}", &t));
	assert_string_equal(t.id, "t-1");
	assert_string_equal(t.dir, "/w");
	assert_string_equal(t.agent_script, "/w/./a.sh");
	assert_int_equal(t.argv.n, 2);
	assert_string_equal(t.prompt, "");
	assert_int_equal(t.timeout_s, TASK_DEFAULT_TIMEOUT_S);
	assert_int_equal(t.agent_uid, 2000);
	assert_int_equal(t.agent_gid, 2000);
	assert_int_equal(t.mockd_uid, 2100);
	assert_int_equal(t.rpc_gid, 2200);
	assert_int_equal(t.slots, 1);
	assert_int_equal(t.guard_harness, TASK_GUARD_DEFAULT); /* absent: the descriptor decides */
	assert_null(t.workspace_from);
	task_free(&t);
}

static void test_task__full(void **state)
{
	struct task t;
	const char *text =
		"{\"version\":1,\"id\":\"demo\",\"workspace\":{\"from\":\"ws\"},"
		"\"agent\":{\"kind\":\"command\",\"command\":[\"python3\",\"x.py\"],\"prompt\":\"hi\","
		"\"env\":{\"LANG\":\"C.UTF-8\",\"PATH\":\"/opt/bin\"},\"env_pass\":[\"API_KEY\"],"
		"\"plugins\":[{\"path\":\"plug\"}],\"ro_paths\":[\"/opt\"]},"
		"\"mocks\":[{\"tool\":\"uip\",\"fixture\":\"f.json\",\"max_requests\":5,\"extra\":1}],"
		"\"guard\":{\"harness\":\"codex\"},\"private\":[\"R.md\",\"/abs/key\"],"
		"\"limits\":{\"timeout_s\":30},"
		"\"identity\":{\"agent_uid\":3000,\"agent_gid\":3000,\"mockd_uid\":3100,\"rpc_gid\":3200,\"slots\":4}}";

	(void)state;
	assert_null(parse_err(text, &t));
	assert_string_equal(t.workspace_from, "/w/ws");
	assert_null(t.agent_script); /* a bare name is looked up on the agent's PATH */
	assert_string_equal(t.env.v[0], "LANG=C.UTF-8");
	assert_string_equal(t.env_pass.v[0], "API_KEY");
	assert_string_equal(t.plugins.v[0], "/w/plug");
	assert_int_equal(t.nmocks, 1);
	assert_string_equal(t.mocks[0].fixture, "/w/f.json");
	assert_non_null(json_object_get(t.mocks[0].entry, "extra")); /* mockd's own keys pass through */
	assert_int_equal(t.guard_harness, 1);
	assert_string_equal(t.private_paths.v[0], "/w/R.md");
	assert_string_equal(t.private_paths.v[1], "/abs/key");
	assert_int_equal(t.timeout_s, 30);
	assert_int_equal(t.slots, 4);
	task_free(&t);
}

/* Each bad task names the file and the field at fault. */
static void test_task__errors_name_the_field(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "{\"version\":1", "/w/task.json:1:12: invalid JSON" },
		{ "[]", "must be a JSON object" },
		{ "{\"version\":2,\"id\":\"x\"," MIN_AGENT "}", "version: must be an integer from 1 to 1" },
		{ "{\"version\":1,\"id\":\"x\",\"privat\":[]," MIN_AGENT "}", "/w/task.json: privat: unknown key" },
		{ "{\"version\":1,\"id\":\"../x\"," MIN_AGENT "}", "id: '../x' must be" },
		{ "{\"version\":1,\"id\":\"x\"}", "agent: must be an object, not missing" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"../claude\",\"command\":[\"a\"]}}",
		  "agent.kind: '../claude' is not an agent descriptor's name" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"turns\":[1]}}",
		  "agent.turns[0]: must be a string" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"args\":\"-v\"}}",
		  "agent.args: must be a list" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[]}}",
		  "agent.command: must be a list of 1" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[1]}}",
		  "agent.command[0]: must be a string" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"colour\":1}}",
		  "agent.colour: unknown key" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env\":{\"HOME\":\"/\"}}}",
		  "agent.env.HOME: reserved" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env\":{\"PROCTOR_X\":\"1\"}}}",
		  "agent.env.PROCTOR_X: reserved" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env\":{\"A-B\":\"1\"}}}",
		  "agent.env.A-B: not an environment variable name" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env\":{\"A\":1}}}",
		  "agent.env.A: must be a string" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env_pass\":[\"TMPDIR\"]}}",
		  "agent.env_pass[0]: TMPDIR is reserved" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env_pass\":[\"PATH\"]}}",
		  "agent.env_pass[0]: PATH cannot be passed through" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"env\":{\"K\":\"v\"},\"env_pass\":[\"K\"]}}",
		  "agent.env_pass[0]: K is also set in agent.env" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"ro_paths\":[\"rel\"]}}",
		  "agent.ro_paths[0]: 'rel' must be an absolute path" },
		{ "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],\"plugins\":[{\"dir\":\"p\"}]}}",
		  "agent.plugins[0].dir: unknown key" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"mocks\":[{\"tool\":\"a/b\",\"fixture\":\"f\"}]}",
		  "mocks[0].tool: 'a/b' is not a bare executable name" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"mocks\":[{\"tool\":\"uip\"}]}",
		  "mocks[0].fixture: must be a string, not missing" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT
		  ",\"mocks\":[{\"tool\":\"u\",\"fixture\":\"f\"},{\"tool\":\"u\",\"fixture\":\"g\"}]}",
		  "mocks[1].tool: 'u' is mocked twice" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"guard\":{\"harness\":\"vim\"}}",
		  "guard.harness: 'vim' is not claude-code or codex" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"guard\":true}", "guard: must be" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"private\":\"R.md\"}", "private: must be a list" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"limits\":{\"timeout_s\":0}}",
		  "limits.timeout_s: must be an integer from 1 to 86400" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"limits\":{\"turns\":2}}", "limits.turns: unknown key" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"limits\":{\"turn_timeout_s\":0}}",
		  "limits.turn_timeout_s: must be an integer from 1" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"identity\":{\"agent_uid\":0}}",
		  "identity.agent_uid: must be an integer from 1" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"identity\":{\"agent_uid\":2100}}",
		  "agent_uid and mockd_uid ranges overlap" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"identity\":{\"slots\":200}}", "ranges overlap" },
		{ "{\"version\":1,\"id\":\"x\"," MIN_AGENT ",\"identity\":{\"rpc_gid\":2000}}", "must not overlap" },
		{ "{\"version\":1,\"id\":\"x\",\"id\":\"y\"," MIN_AGENT "}", "duplicate object key" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct task t;
		const char *err = parse_err(cases[i].text, &t);

		if (!err || !strstr(err, cases[i].want))
			fail_msg("case %zu: want '%s', got '%s'", i, cases[i].want, err ? err : "(accepted)");
		if (!strstr(err, "/w/task.json"))
			fail_msg("case %zu: '%s' does not name the file", i, err);
	}
}

static void test_task__paths_private_outside_views(void **state)
{
	char text[2048];
	struct diag d;
	struct task t;

	(void)state;
	assert_int_equal(mkdir(strcat(strcpy(text, scratch_dir), "/ws"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(text, scratch_dir), "/plug"), 0755), 0);
	scratch_file("ws/inside.md", "x");
	scratch_file("R.md", "answer");
	scratch_file("f.json", "{}");
	scratch_file("ws/fx.json", "{}");
	snprintf(
		text, sizeof(text),
		"{\"version\":1,\"id\":\"x\",\"workspace\":{\"from\":\"ws\"},\"agent\":{\"kind\":\"command\",\"command\":[\"/usr/bin/true\"],"
		"\"plugins\":[{\"path\":\"plug\"}]},\"mocks\":[{\"tool\":\"a\",\"fixture\":\"f.json\"},{\"tool\":\"b\",\"fixture\":\"ws/fx.json\"}],"
		"\"private\":[\"R.md\",\"ws/inside.md\",\"missing.md\"]}");
	diag_init(&d);
	assert_int_equal(task_parse(scratch_file("task.json", text), text, strlen(text), &d, &t), 0);
	assert_int_equal(task_check_paths(&t, &d), -EINVAL);
	assert_int_equal(d.errors, 3);
	assert_non_null(strstr(d.msgs[0].text, "mocks[1].fixture"));
	assert_non_null(strstr(d.msgs[0].text, "which the agent can read"));
	assert_non_null(strstr(d.msgs[1].text, "private[1]"));
	assert_non_null(strstr(d.msgs[2].text, "private[2]"));
	assert_non_null(strstr(d.msgs[2].text, "No such file"));
	task_free(&t);
	diag_free(&d);
}

static void test_task__agent_outside_exec_paths(void **state)
{
	const char *text = "{\"version\":1,\"id\":\"x\",\"agent\":{\"kind\":\"command\",\"command\":[\"/tmp\"]}}";
	struct diag d;
	struct task t;

	(void)state;
	diag_init(&d);
	assert_int_equal(task_parse("/w/task.json", text, strlen(text), &d, &t), 0);
	assert_int_equal(task_check_paths(&t, &d), -EINVAL);
	assert_non_null(strstr(d.msgs[0].text, "outside the system directories"));
	task_free(&t);
	diag_free(&d);
}

static const unsigned char nonce[FRAME_NONCE_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void test_frame__round_trip_and_partial(void **state)
{
	json_t *j = json_pack("{s:i,s:s}", "id", 7, "method", "hello"), *out = NULL;
	struct buf b;
	size_t used = 0;
	const char *why = NULL;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(frame_encode(nonce, j, &b), 0);
	assert_int_equal(frame_encode(nonce, j, &b), 0);
	/* a frame cut anywhere is "need more", never an error */
	for (size_t cut = 0; cut < b.len / 2; cut++)
		assert_int_equal(frame_decode(nonce, b.data, cut, &used, &out, &why), 0);
	assert_int_equal(frame_decode(nonce, b.data, b.len, &used, &out, &why), 1);
	assert_int_equal(used, b.len / 2);
	assert_int_equal(json_integer_value(json_object_get(out, "id")), 7);
	json_decref(out);
	json_decref(j);
	buf_free(&b);
}

/* The orchestrator's end of a worker channel: `peer` is the worker's end. Events go to /dev/null. */
static void pump_setup(struct run *r, int *peer, const unsigned char key[FRAME_NONCE_LEN])
{
	int sv[2];

	memset(r, 0, sizeof(*r));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
	r->sock = sv[0];
	*peer = sv[1];
	memcpy(r->nonce, key, FRAME_NONCE_LEN);
	buf_init(&r->in, FRAME_HEADER_LEN + FRAME_MAX_BODY);
	r->events_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	r->stderr_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
}

static void pump_free(struct run *r, int peer)
{
	close(r->sock);
	close(peer);
	close(r->events_fd);
	close(r->stderr_fd);
	buf_free(&r->in);
	buf_free(&r->events_out);
}

/* Send `text` (a JSON object) framed with `nonce`, then pump once for response `want`. */
static int pump_one(struct run *r, int peer, const unsigned char key[FRAME_NONCE_LEN], const char *text, int want,
		    json_t **ret)
{
	json_t *j = json_loads(text, 0, NULL);

	assert_non_null(j);
	assert_int_equal(frame_send(peer, key, j), 0);
	json_decref(j);
	return run_pump(r, want, ret);
}

/* Write a frame header claiming `len` body bytes to the channel. */
static void send_header(int peer, uint32_t len)
{
	unsigned char hdr[FRAME_HEADER_LEN];

	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	memcpy(hdr + 4, nonce, FRAME_NONCE_LEN);
	assert_int_equal(write(peer, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
}

/* Frame `body` exactly as given (no re-encoding) and write it to the channel. */
static void send_raw(int peer, const char *body)
{
	size_t n = strlen(body);

	send_header(peer, (uint32_t)n);
	assert_int_equal(write(peer, body, n), (ssize_t)n);
}

static void test_pump__events_and_responses_else_protocol_error(void **state)
{
	unsigned char other[FRAME_NONCE_LEN];
	static const char *const bad[] = {
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false}",     /* no text */
		"{\"stream\":\"stdout\",\"text\":\"x\",\"truncated\":false}", /* no turn */
		"{\"stream\":\"stdout\",\"turn\":0,\"text\":\"x\"}",          /* no truncated */
		"{\"stream\":\"exec\",\"turn\":0,\"text\":\"x\"}",            /* unknown stream */
		"{\"stream\":\"stdout\",\"turn\":0.5,\"text\":\"x\",\"truncated\":false}",
		"{\"stream\":\"stdout\",\"turn\":0,\"text\":1,\"truncated\":false}",
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"event\":[1]}",
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":true,\"event\":{}}", /* a cut line parsed */
		/* text and event both, or a member more: a record is exactly the frame's members */
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"text\":\"x\",\"event\":{}}",
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"text\":\"x\",\"seq\":9}",
		"{\"stream\":\"stderr\",\"turn\":0,\"text\":\"x\",\"truncated\":false}",
		"{\"stream\":\"stderr\",\"turn\":0}", "{\"id\":7,\"ok\":true,\"result\":{}}", /* not the awaited id */
		"{\"id\":3,\"result\":{}}",                                                   /* no ok */
		"{\"method\":\"hello\"}", /* a request, from the worker */
	};
	struct run r;
	json_t *resp = NULL;
	int peer;

	(void)state;
	memcpy(other, nonce, sizeof(other));
	other[0] ^= 1;
	/* an event is recorded; the awaited response is handed back */
	pump_setup(&r, &peer, nonce);
	assert_int_equal(pump_one(&r, peer, nonce,
				  "{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"text\":\"hi\"}", 3, &resp),
			 0);
	assert_int_equal(r.events, 1);
	assert_int_equal(pump_one(&r, peer, nonce, "{\"id\":3,\"ok\":true,\"result\":{}}", 3, &resp), 1);
	assert_true(json_is_true(json_object_get(resp, "ok")));
	json_decref(resp);
	pump_free(&r, peer);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pump_setup(&r, &peer, nonce);
		resp = NULL;
		if (pump_one(&r, peer, nonce, bad[i], 3, &resp) != -EPROTO)
			fail_msg("frame %zu accepted: %s", i, bad[i]);
		assert_null(resp);
		assert_non_null(strstr(r.proto_why, "unexpected frame"));
		pump_free(&r, peer);
	}
	/* a foreign nonce, and a length over the limit, are bad frames before any JSON is read */
	pump_setup(&r, &peer, nonce);
	assert_int_equal(pump_one(&r, peer, other, "{\"id\":3,\"ok\":true}", 3, &resp), -EPROTO);
	assert_non_null(strstr(r.proto_why, "foreign nonce"));
	pump_free(&r, peer);
	pump_setup(&r, &peer, nonce);
	send_header(peer, FRAME_MAX_BODY + 1);
	assert_int_equal(run_pump(&r, 3, &resp), -EPROTO);
	assert_non_null(strstr(r.proto_why, "over the limit"));
	/* the worker gone: end of file */
	close(peer);
	peer = open("/dev/null", O_RDONLY | O_CLOEXEC);
	buf_reset(&r.in);
	assert_int_equal(run_pump(&r, 3, &resp), -EPIPE);
	pump_free(&r, peer);
}

/* What events.jsonl holds now. */
static char *events_text(const struct run *r)
{
	static char text[4096];
	ssize_t n = pread(r->events_fd, text, sizeof(text) - 1, 0);

	assert_true(n >= 0);
	text[n] = '\0';
	return text;
}

/* The start of line k (from 0) of text. */
static const char *line_n(const char *text, int k)
{
	while (k-- > 0) {
		text = strchr(text, '\n');
		assert_non_null(text);
		text++;
	}
	return text;
}

/* The record after "ts": `want` must follow it, the time in between well formed. */
static void assert_record(const char *line, unsigned long long seq, const char *want)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "{\"seq\":%llu,\"ts\":\"", seq);
	const char *ts = line + n;

	assert_memory_equal(line, head, (size_t)n);
	assert_true(ts[4] == '-' && ts[10] == 'T' && ts[23] == 'Z' && ts[24] == '"' && ts[25] == ',');
	assert_memory_equal(ts + 26, want, strlen(want));
	assert_int_equal(ts[26 + strlen(want)], '\n');
}

/* A stdout record is {"seq","ts"} and then exactly the checked frame's members, in one line;
 * a frame that is not one line of ASCII is refused before anything is written; the events that came
 * before a bad frame are kept; a batch the disk takes in part keeps its whole lines. */
static void test_pump__records(void **state)
{
	static const char *const loose[] = {
		"{\"stream\":\"stdout\",\n\"turn\":0,\"truncated\":false,\"text\":\"x\"}",
		"{\"stream\":\"stdout\",\r\"turn\":0,\"truncated\":false,\"text\":\"x\"}",
		" {\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"text\":\"x\"}",
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"text\":\"x\"}\n",
		"{\"stream\":\"stdout\",\"turn\":0,\"truncated\":false,\"text\":\"a\xe2\x80\xa8\"}", /* U+2028, raw */
	};
	struct run r;
	struct rlimit old, small;
	json_t *resp = NULL;
	const char *t;
	int peer;

	(void)state;
	pump_setup(&r, &peer, nonce);
	close(r.events_fd);
	r.events_fd = open("/tmp", O_RDWR | O_APPEND | O_TMPFILE | O_CLOEXEC, 0600); /* as run_open_log */
	assert_true(r.events_fd >= 0);
	send_raw(peer, "{\"stream\":\"stdout\",\"turn\":1,\"truncated\":false,\"text\":\"hi \\\"there\\\"\"}");
	send_raw(peer, "{\"stream\":\"stderr\",\"turn\":1,\"text\":\"noise\"}");
	send_raw(peer, "{\"stream\":\"stdout\",\"turn\":1,\"truncated\":false,\"event\":{\"type\":\"a\",\"n\":[1]}}");
	assert_int_equal(run_pump(&r, 3, &resp), 0);
	assert_int_equal(r.events, 2);
	assert_int_equal(r.stderr_bytes, 5);
	t = events_text(&r);
	assert_record(t, 1, "\"stream\":\"stdout\",\"turn\":1,\"truncated\":false,\"text\":\"hi \\\"there\\\"\"}");
	assert_record(line_n(t, 1), 2,
		      "\"stream\":\"stdout\",\"turn\":1,\"truncated\":false,\"event\":{\"type\":\"a\",\"n\":[1]}}");
	assert_int_equal(r.events_bytes, strlen(t));
	for (size_t i = 0; i < sizeof(loose) / sizeof(loose[0]); i++) {
		send_raw(peer, loose[i]);
		if (run_pump(&r, 3, &resp) != -EPROTO)
			fail_msg("frame %zu accepted: %s", i, loose[i]);
		assert_int_equal(r.events, 2);
		buf_reset(&r.in);
	}
	/* a good event, then a bad frame, in one read: the good one is kept */
	send_raw(peer, "{\"stream\":\"stdout\",\"turn\":2,\"truncated\":true,\"text\":\"cut\"}");
	send_raw(peer, "{\"stream\":\"stdout\",\"turn\":2}");
	assert_int_equal(run_pump(&r, 3, &resp), -EPROTO);
	buf_reset(&r.in);
	t = events_text(&r);
	assert_record(line_n(t, 2), 3, "\"stream\":\"stdout\",\"turn\":2,\"truncated\":true,\"text\":\"cut\"}");
	/* the file may grow by one line and a half: the half is cut off again, two lines lost */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = r.events_bytes + strlen(line_n(t, 2)) * 3 / 2; /* line 3's length, and a half */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	for (int i = 0; i < 3; i++)
		send_raw(peer, "{\"stream\":\"stdout\",\"turn\":3,\"truncated\":false,\"text\":\"x\"}");
	assert_int_equal(run_pump(&r, 3, &resp), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(r.events, 6);
	assert_int_equal(r.events_lost, 2);
	assert_false(r.events_broken);
	t = events_text(&r);
	assert_int_equal(strlen(t), r.events_bytes);
	assert_int_equal(*line_n(t, 4), '\0');
	assert_record(line_n(t, 3), 4, "\"stream\":\"stdout\",\"turn\":3,\"truncated\":false,\"text\":\"x\"}");
	/* and the next event runs on cleanly */
	send_raw(peer, "{\"stream\":\"stdout\",\"turn\":3,\"truncated\":false,\"text\":\"y\"}");
	assert_int_equal(run_pump(&r, 3, &resp), 0);
	t = events_text(&r);
	assert_record(line_n(t, 4), 7, "\"stream\":\"stdout\",\"turn\":3,\"truncated\":false,\"text\":\"y\"}");
	assert_null(resp);
	/* two answers to one request: a violation, and neither is handed back */
	send_raw(peer, "{\"id\":3,\"ok\":true,\"result\":{}}");
	send_raw(peer, "{\"id\":3,\"ok\":false,\"result\":{}}");
	assert_int_equal(run_pump(&r, 3, &resp), -EPROTO);
	assert_null(resp);
	pump_free(&r, peer);
}

static void test_frame__rejects_bad_frames(void **state)
{
	unsigned char other[FRAME_NONCE_LEN] = { 0 };
	json_t *j = json_pack("{s:i}", "id", 1), *out = NULL;
	struct buf b;
	size_t used;
	const char *why = NULL;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(frame_encode(other, j, &b), 0);
	assert_int_equal(frame_decode(nonce, b.data, b.len, &used, &out, &why), -EPROTO);
	assert_string_equal(why, "frame with a foreign nonce");
	/* a length over the limit is refused from the header alone */
	b.data[0] = 0x7f;
	assert_int_equal(frame_decode(other, b.data, FRAME_HEADER_LEN, &used, &out, &why), -EPROTO);
	assert_string_equal(why, "frame length over the limit");
	/* exactly: FRAME_MAX_BODY is a frame still to come, one byte more is refused */
	for (uint32_t n = FRAME_MAX_BODY; n <= FRAME_MAX_BODY + 1; n++) {
		b.data[0] = (char)(n >> 24);
		b.data[1] = (char)(n >> 16);
		b.data[2] = (char)(n >> 8);
		b.data[3] = (char)n;
		why = NULL;
		assert_int_equal(frame_decode(other, b.data, FRAME_HEADER_LEN, &used, &out, &why),
				 n == FRAME_MAX_BODY ? 0 : -EPROTO);
		if (n > FRAME_MAX_BODY)
			assert_string_equal(why, "frame length over the limit");
	}
	buf_reset(&b);
	json_decref(j);
	j = json_pack("[i]", 1);
	assert_int_equal(frame_encode(nonce, j, &b), 0);
	assert_int_equal(frame_decode(nonce, b.data, b.len, &used, &out, &why), -EPROTO);
	assert_string_equal(why, "frame body is not a JSON object");
	json_decref(j);
	buf_free(&b);
}

static void test_frame__nonce_hex(void **state)
{
	char hex[2 * FRAME_NONCE_LEN + 1];
	unsigned char back[FRAME_NONCE_LEN];

	(void)state;
	nonce_format(nonce, hex);
	assert_string_equal(hex, "0102030405060708090a0b0c0d0e0f10");
	assert_int_equal(nonce_parse(hex, back), 0);
	assert_memory_equal(back, nonce, sizeof(back));
	assert_int_equal(nonce_parse("0102", back), -EINVAL);
	assert_int_equal(nonce_parse("zz02030405060708090a0b0c0d0e0f10", back), -EINVAL);
	/* hex digits only: sscanf's %x would take a sign, a blank or an 0x prefix */
	assert_int_equal(nonce_parse("-102030405060708090a0b0c0d0e0f10", back), -EINVAL);
	assert_int_equal(nonce_parse(" 102030405060708090a0b0c0d0e0f10", back), -EINVAL);
	assert_int_equal(nonce_parse("0x02030405060708090a0b0c0d0e0f10", back), -EINVAL);
	assert_int_equal(nonce_parse(NULL, back), -EINVAL);
}

static void test_rundir__copy_keeps_links_and_finds_private(void **state)
{
	char src[256], dst[256], link[256];
	struct private_file pf = { .size = 6 };
	struct diag d;
	struct stat st;
	int fd, truncated = 0;

	(void)state;
	snprintf(src, sizeof(src), "%s/src", scratch_dir);
	snprintf(dst, sizeof(dst), "%s/dst", scratch_dir);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkdir(dst, 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(link, src), "/sub"), 0750), 0);
	scratch_file("src/sub/copy.txt", "answer");
	scratch_file("src/plain.txt", "hello");
	assert_int_equal(symlink("/etc/passwd", strcat(strcpy(link, src), "/to-passwd")), 0);
	diag_init(&d);
	fd = open(dst, O_RDONLY | O_DIRECTORY);
	assert_int_equal(rundir_copy_tree(src, fd, getuid(), getgid(), &d), 0);
	assert_int_equal(lstat(strcat(strcpy(link, dst), "/to-passwd"), &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* a link stays a link: never followed */
	assert_int_equal(stat(strcat(strcpy(link, dst), "/sub"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_int_equal(sha256_hex("answer", 6, pf.sha256), 0);
	assert_int_equal(rundir_find_private(fd, &pf, 1, &truncated), 0);
	assert_int_equal(pf.leaked_into.n, 1);
	assert_string_equal(pf.leaked_into.v[0], "sub/copy.txt");
	strv_free(&pf.leaked_into);
	close(fd);
	diag_free(&d);
}

static void test_rundir__copy_refuses_fifo(void **state)
{
	char src[256], p[256];
	struct diag d;
	int fd;

	(void)state;
	snprintf(src, sizeof(src), "%s/src2", scratch_dir);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkfifo(strcat(strcpy(p, src), "/pipe"), 0644), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, scratch_dir), "/dst2"), 0755), 0);
	diag_init(&d);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	assert_int_equal(rundir_copy_tree(src, fd, getuid(), getgid(), &d), -EINVAL);
	assert_non_null(strstr(d.msgs[0].text, "pipe: not a regular file, directory or symbolic link"));
	close(fd);
	diag_free(&d);
}

/* The verdict of scratch_dir as a run directory; *ret parsed, the raw line checked. */
static json_t *verdict_of(const char *dir, int code, const char *why)
{
	char *line = NULL;
	json_t *v;

	assert_int_equal(verdict_line(dir, code, why, &line), 0);
	assert_true(strlen(line) <= VERDICT_MAX_BYTES);
	assert_non_null(strchr(line, '\n'));
	assert_int_equal(strchr(line, '\n')[1], '\0');
	v = json_loads(line, 0, NULL);
	assert_non_null(v);
	free(line);
	return v;
}

static void test_verdict__names_result_by_hash(void **state)
{
	const char *text = "{\"status\":\"agent_failed\",\"task_id\":\"t1\",\"reason\":\"turn 0 failed\"}";
	char hex[65], want[300];
	json_t *v;

	(void)state;
	scratch_file("result.json", text);
	assert_int_equal(sha256_hex(text, strlen(text), hex), 0);
	v = verdict_of(scratch_dir, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(v, "status")), "agent_failed");
	assert_int_equal(json_integer_value(json_object_get(v, "exit_code")), 0);
	assert_string_equal(json_string_value(json_object_get(v, "task_id")), "t1");
	assert_string_equal(json_string_value(json_object_get(v, "reason")), "turn 0 failed");
	assert_string_equal(json_string_value(json_object_get(v, "result_sha256")), hex);
	snprintf(want, sizeof(want), "%s/result.json", scratch_dir);
	assert_string_equal(json_string_value(json_object_get(v, "result")), want);
	json_decref(v);
	/* no run: only the reason */
	v = verdict_of(NULL, 4, "suite.jsonl:3: not a string");
	assert_true(json_is_null(json_object_get(v, "status")));
	assert_true(json_is_null(json_object_get(v, "result_sha256")));
	assert_int_equal(json_integer_value(json_object_get(v, "exit_code")), 4);
	assert_string_equal(json_string_value(json_object_get(v, "reason")), "suite.jsonl:3: not a string");
	json_decref(v);
}

static void test_verdict__unreadable_and_bounded(void **state)
{
	char *big = malloc(128 * 1024), *p;
	json_t *v;

	(void)state;
	assert_non_null(big);
	v = verdict_of(scratch_dir, 3, NULL); /* no result.json */
	assert_string_equal(json_string_value(json_object_get(v, "status")), "unreadable");
	assert_non_null(strstr(json_string_value(json_object_get(v, "reason")), "No such file"));
	assert_true(json_is_null(json_object_get(v, "result_sha256")));
	json_decref(v);
	scratch_file("result.json", "{\"status\":");
	v = verdict_of(scratch_dir, 3, NULL);
	assert_string_equal(json_string_value(json_object_get(v, "status")), "unreadable");
	assert_non_null(json_string_value(json_object_get(v, "result_sha256"))); /* of what is there */
	json_decref(v);
	/* A reason of 9,000 control characters (six bytes each escaped) and one of 6,000
	 * multi-byte characters: the line stays within 4 KB, cut on a character boundary. */
	for (int k = 0; k < 2; k++) {
		p = big + sprintf(big, "{\"status\":\"timeout\",\"task_id\":\"t\",\"reason\":\"");
		for (int i = 0; i < 3000; i++)
			p += sprintf(p, k == 0 ? "\\u0001\\u0002\\u0003" : "\xc3\xa9\xe2\x82\xac");
		sprintf(p, "\"}");
		scratch_file("result.json", big);
		v = verdict_of(scratch_dir, 0, NULL);
		assert_string_equal(json_string_value(json_object_get(v, "status")), "timeout");
		if (k == 0)
			assert_true(json_is_null(json_object_get(v, "reason")));
		else
			assert_in_range(json_string_length(json_object_get(v, "reason")), VERDICT_MAX_REASON - 2,
					VERDICT_MAX_REASON);
		json_decref(v);
	}
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task__minimal_defaults),
		cmocka_unit_test(test_task__full),
		cmocka_unit_test(test_task__errors_name_the_field),
		cmocka_unit_test_setup_teardown(test_task__paths_private_outside_views, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_task__agent_outside_exec_paths),
		cmocka_unit_test(test_frame__round_trip_and_partial),
		cmocka_unit_test(test_frame__rejects_bad_frames),
		cmocka_unit_test(test_frame__nonce_hex),
		cmocka_unit_test_setup_teardown(test_rundir__copy_keeps_links_and_finds_private, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_rundir__copy_refuses_fifo, scratch_setup, scratch_teardown),
		cmocka_unit_test(test_pump__events_and_responses_else_protocol_error),
		cmocka_unit_test(test_pump__records),
		cmocka_unit_test_setup_teardown(test_verdict__names_result_by_hash, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_verdict__unreadable_and_bounded, scratch_setup, scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
