/* SPDX-License-Identifier: MIT */
/* result.c: what a run records (doc/RESULT.md): the status and its precedence, the isolation
 * layers, and result.json itself, with the tallies read back from mockd's journal and the
 * guard's denial log. The journal is root's (mockd writes it); the denial log is the agent's,
 * so its count is reported as unverified. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../guard/guard.h"
#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"
#include "rundir.h"

static const char *const phase_names[PH_N] = { "validate", "stage",  "bundles", "mockd",
					       "guard",    "worker", "agent",   "teardown" };

void run_layer(struct run *r, const char *name, const char *state, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	json_object_set_new(r->isolation, name, json_pack("{s:s,s:s}", "state", state, "detail", detail));
}

void run_fail(struct run *r, const char *status, int exit_code, const char *fmt, ...)
{
	va_list ap;

	/* The first failure is the cause; only surviving processes override it. */
	if (r->status && strcmp(status, "teardown_failed") != 0)
		return;
	if (r->status && !strcmp(status, "teardown_failed")) {
		char prev[400];
		size_t n;

		snprintf(prev, sizeof(prev), "%.399s", r->reason);
		va_start(ap, fmt);
		n = (size_t)vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
		va_end(ap);
		if (n + 1 < sizeof(r->reason))
			snprintf(r->reason + n, sizeof(r->reason) - n, " (before that: %.20s: %.400s)", r->status,
				 prev);
	} else {
		va_start(ap, fmt);
		vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
		va_end(ap);
	}
	r->status = status;
	r->exit_code = exit_code;
}

/* Read a file of JSON lines owned by root or by the agent, bounded, never following a link.
 * Calls `each` per parsed line; counts the lines that do not parse. */
static long each_line(struct run *r, const char *rel, size_t limit, void (*each)(json_t *, void *), void *ctx,
		      long *ret_bad)
{
	int fd = openat(r->dfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct buf b;
	long lines = 0;
	char chunk[65536];
	ssize_t n;

	*ret_bad = 0;
	if (fd < 0)
		return -errno;
	buf_init(&b, limit);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 && buf_append(&b, chunk, (size_t)n) == 0)
		;
	close(fd);
	for (char *p = b.data, *nl; p && *p; p = nl + 1) {
		json_t *j;

		if (!(nl = strchr(p, '\n')))
			break; /* a partial last line is not a line */
		*nl = '\0';
		lines++;
		if ((j = json_loads(p, 0, NULL)) && json_is_object(j) && each)
			each(j, ctx);
		else if (!json_is_object(j))
			(*ret_bad)++;
		json_decref(j);
	}
	buf_free(&b);
	return lines;
}

static void tally_call(json_t *call, void *ctx)
{
	json_t *by_tool = ctx, *t;
	const char *tool = json_string_value(json_object_get(call, "tool"));
	const char *outcome = json_string_value(json_object_get(call, "outcome"));

	if (!tool)
		tool = "(none)";
	if (!outcome)
		outcome = "unknown";
	if (!(t = json_object_get(by_tool, tool))) {
		t = json_object();
		json_object_set_new(by_tool, tool, t);
	}
	json_object_set_new(t, outcome, json_integer(json_integer_value(json_object_get(t, outcome)) + 1));
}

static json_t *mocks_json(struct run *r)
{
	json_t *by_tool = json_object(), *j;
	char *journal = run_path(r, "logs/calls.jsonl");
	long bad = 0, calls;

	if (!r->t.nmocks || !r->slot_taken) {
		json_decref(by_tool);
		free(journal);
		return json_null();
	}
	calls = each_line(r, "logs/calls.jsonl", RUN_MAX_JOURNAL_BYTES, tally_call, by_tool, &bad);
	j = json_pack("{s:s?,s:I,s:o,s:I}", "journal", journal, "calls", (json_int_t)(calls < 0 ? 0 : calls), "by_tool",
		      by_tool, "unparsed_lines", (json_int_t)bad);
	free(journal);
	return j;
}

static json_t *guard_json(struct run *r)
{
	char *marker, *settings;
	long bad = 0, lines;
	json_t *j;

	if (r->t.guard_harness < 0 || !r->slot_taken)
		return json_null();
	marker = run_path(r, "guard/marker.json");
	settings = run_path(r, "guard/settings.json");
	lines = each_line(r, "logs/guard-denials.jsonl", RUN_MAX_DENIAL_LOG_BYTES, NULL, NULL, &bad);
	j = json_pack("{s:s,s:s?,s:s?,s:I,s:b,s:b}", "harness", harness_name((enum harness)r->t.guard_harness),
		      "marker", marker, "settings", settings, "denials", (json_int_t)(lines < 0 ? 0 : lines),
		      "denials_verified", 0, "disarmed", r->guard_disarmed);
	free(marker);
	free(settings);
	return j;
}

static json_t *private_json(struct run *r)
{
	struct private_file *pf = calloc(r->t.private_paths.n + 1, sizeof(*pf));
	json_t *out = json_array();
	int ws = r->dfd >= 0 && r->slot_taken ?
			 openat(r->dfd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
			 -1;
	int truncated = 0;

	if (!pf)
		return out;
	for (size_t i = 0; i < r->t.private_paths.n; i++)
		if (rundir_hash_file(AT_FDCWD, r->t.private_paths.v[i], pf[i].sha256, &pf[i].size) < 0)
			pf[i].size = -1;
	/* After teardown: nothing of the agent is left to change the tree under us. */
	if (ws >= 0)
		rundir_find_private(ws, pf, r->t.private_paths.n, &truncated);
	for (size_t i = 0; i < r->t.private_paths.n; i++) {
		json_t *leaks = json_array();

		for (size_t k = 0; k < pf[i].leaked_into.n; k++)
			json_array_append_new(leaks, json_string(pf[i].leaked_into.v[k]));
		json_array_append_new(out, json_pack("{s:s,s:s?,s:o,s:b}", "path", r->t.private_paths.v[i], "sha256",
						     pf[i].size >= 0 ? pf[i].sha256 : NULL, "leaked_into", leaks,
						     "scan_complete", !truncated && pf[i].size >= 0));
		strv_free(&pf[i].leaked_into);
	}
	if (ws >= 0)
		close(ws);
	free(pf);
	return out;
}

static json_t *teardown_json(struct run *r)
{
	json_t *surv = json_array(), *mockd_exit = json_null();

	for (size_t i = 0; i < r->reap.nsurvivors; i++)
		json_array_append_new(surv, json_integer(r->reap.survivors[i]));
	if (r->mockd_status >= 0)
		mockd_exit = WIFEXITED(r->mockd_status) ? json_integer(WEXITSTATUS(r->mockd_status)) :
							  json_sprintf("signal %d", WTERMSIG(r->mockd_status));
	return json_pack("{s:s,s:o,s:o,s:o,s:b,s:O}", "method", r->pidns ? "pid_namespace+uid_sweep" : "uid_sweep",
			 "left_behind", r->left_behind >= 0 ? json_integer(r->left_behind) : json_null(), "survivors",
			 surv, "mockd_exit", mockd_exit, "socket_removed", r->socket_removed || !r->t.nmocks, "errors",
			 r->teardown_errors);
}

static json_t *identity_record(struct run *r)
{
	if (!r->slot_taken)
		return json_null();
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:O?}", "slot", (int)r->slot, "agent_uid", (int)r->uid, "agent_gid",
			 (int)r->gid, "mockd_uid", (int)r->muid, "rpc_gid", (int)r->rgid, "verified",
			 json_object_get(r->hello, "identity"));
}

static json_t *agent_record(struct run *r)
{
	return json_pack("{s:s?,s:s?,s:O?,s:s?,s:O?,s:O?,s:I,s:I,s:I,s:b,s:O}", "kind", r->t.agent_kind, "descriptor",
			 r->desc_ok ? r->desc.file : NULL, "argv", r->agent_argv, "session_id", r->session_id,
			 "exit_code", r->agent_exit_code, "signal", r->agent_signal, "events", (json_int_t)r->events,
			 "events_lost", (json_int_t)r->events_lost, "stderr_bytes", (json_int_t)r->stderr_bytes,
			 "timed_out", r->timed_out, "turns", r->turns);
}

static json_t *suite_record(struct run *r)
{
	const struct run_suite_ref *s = r->o->suite;

	if (!s)
		return json_null();
	return json_pack("{s:s,s:I,s:s,s:I}", "path", s->path, "index", (json_int_t)s->index, "index_from",
			 s->index_from, "tasks", (json_int_t)s->tasks);
}

json_t *run_result_json(struct run *r)
{
	json_t *dur = json_object(), *j;
	char started[TIME_RFC3339_MS_SIZE], finished[TIME_RFC3339_MS_SIZE];
	int64_t now = now_epoch_ms();

	for (int i = 0; i < PH_N; i++)
		json_object_set_new(dur, phase_names[i], json_integer((json_int_t)r->ms[i]));
	json_object_set_new(dur, "total", json_integer((json_int_t)(now_mono_ms() - r->t0)));
	time_rfc3339_ms(r->started_ms, started);
	time_rfc3339_ms(now, finished);
	j = json_pack("{s:i,s:s?,s:s,s:s,s:s,s:s?,s:i,s:s,s:s,s:o,s:o,s:o,s:O,s:O,s:o,s:o,s:o,s:o,s:o}", "version", 1,
		      "task_id",
		      r->t.id     ? r->t.id :
		      r->o->suite ? r->o->suite->id :
				    NULL,
		      "task_file", r->o->task_file, "run_dir", r->dir, "status", r->status ? r->status : "completed",
		      "reason", r->reason[0] ? r->reason : NULL, "exit_code", r->exit_code, "started_at", started,
		      "finished_at", finished, "durations_ms", dur, "agent", agent_record(r), "identity",
		      identity_record(r), "isolation", r->isolation, "bundles", r->bundles, "mocks", mocks_json(r),
		      "guard", guard_json(r), "private", private_json(r), "teardown", teardown_json(r), "suite",
		      suite_record(r));
	return j;
}

/* The record written into RUN/.reserve's blocks, which then becomes result.json: the space set
 * aside is never given back before the record has it, so nothing else on the filesystem (a
 * concurrent run) can take it in between. -ENOENT when there is no reserve (the run failed
 * before it took one); another error leaves the reserve for run_task to remove. */
static int write_over_reserve(struct run *r, const struct buf *b)
{
	struct stat st;
	int fd, err = 0;

	if (r->dfd < 0)
		return -ENOENT;
	fd = openat(r->dfd, ".reserve", O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Root's own file in root's directory; checked all the same. A second link to it (which
	 * protected_hardlinks and Landlock both refuse the agent) would not stop the write: the
	 * blocks are still this file's, and every process of the agent is gone by now. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
		err = -EPERM;
	if (err == 0)
		err = fd_write_all(fd, b->data, b->len); /* at offset 0, over allocated blocks */
	if (err == 0 && (ftruncate(fd, (off_t)b->len) < 0 || fchmod(fd, 0644) < 0 || fsync(fd) < 0))
		err = -errno;
	close(fd);
	if (err == 0 && renameat(r->dfd, ".reserve", r->dfd, "result.json") < 0)
		err = -errno;
	return err;
}

int run_write_result(struct run *r)
{
	json_t *j = run_result_json(r);
	struct buf b;
	char *path = run_path(r, "result.json");
	int err;

	buf_init(&b, 0);
	err = j && path ? json_dump_buf(j, JSON_INDENT(2), &b) : -ENOMEM;
	if (err == 0)
		err = buf_putc(&b, '\n');
	if (err == 0 && write_over_reserve(r, &b) < 0) {
		if (r->dfd >= 0)
			unlinkat(r->dfd, ".reserve", 0); /* give it back: the plain write below needs it */
		err = fd_write_atomic(path, b.data, b.len, 0644);
	}
	buf_free(&b);
	json_decref(j);
	free(path);
	return err;
}
