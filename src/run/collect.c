/* SPDX-License-Identifier: MIT */
/* collect.c: the summary of a suite's output directory (collect.h). Reads each result.json
 * bounded and without following links, takes only the fields doc/RESULT.md pins, and turns any
 * departure from them into that task's "unreadable" row with the field named. */
#include "collect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/strv.h"

const char *const collect_statuses[] = { "completed",        "timeout",         "agent_failed",
					 "isolation_failed", "teardown_failed", "config_error",
					 "unreadable",       "no_result",       NULL };

/* Mock outcomes (journal "outcome") answered from the fixture, and by the real tool. */
static const char *const hit_outcomes[] = { "exact", "normalized", "subset", NULL };
static const char *const passthrough_outcomes[] = { "passthrough", "cached", NULL };

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static json_int_t int_at(json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

/* Calls per kind: fixture hits, passthroughs, and the rest (default, budget, rejected, ...). */
static void mock_counts(json_t *mocks, json_t *row)
{
	json_int_t hits = 0, pass = 0, calls = int_at(mocks, "calls");
	const char *tool, *outcome;
	json_t *by, *n;

	json_object_foreach(json_object_get(mocks, "by_tool"), tool, by) {
		json_object_foreach(by, outcome, n) {
			if (in_list(outcome, hit_outcomes))
				hits += json_integer_value(n);
			else if (in_list(outcome, passthrough_outcomes))
				pass += json_integer_value(n);
		}
	}
	json_object_set_new(row, "mock_calls", json_is_object(mocks) ? json_integer(calls) : json_null());
	json_object_set_new(row, "mock_hits", json_is_object(mocks) ? json_integer(hits) : json_null());
	json_object_set_new(row, "mock_passthrough", json_is_object(mocks) ? json_integer(pass) : json_null());
	json_object_set_new(row, "mock_misses",
			    json_is_object(mocks) ? json_integer(calls - hits - pass) : json_null());
}

/* NULL when `r` has the fields a row needs, else which one is wrong. */
static const char *result_bad(json_t *r)
{
	const char *st = json_string_value(json_object_get(r, "status"));

	if (!json_is_object(r))
		return "not a JSON object";
	if (!st || !in_list(st, collect_statuses) || !strcmp(st, "unreadable") || !strcmp(st, "no_result"))
		return "status: missing or not a status of doc/RESULT.md";
	if (!json_is_integer(json_object_get(r, "exit_code")))
		return "exit_code: missing or not an integer";
	if (!json_is_object(json_object_get(r, "durations_ms")))
		return "durations_ms: missing or not an object";
	if (!json_is_object(json_object_get(r, "teardown")))
		return "teardown: missing or not an object";
	return NULL;
}

static void fill_row(json_t *r, json_t *row)
{
	json_t *dur = json_object_get(r, "durations_ms"), *td = json_object_get(r, "teardown");
	json_t *guard = json_object_get(r, "guard");

	json_object_set(row, "task_id", json_object_get(r, "task_id"));
	json_object_set(row, "status", json_object_get(r, "status"));
	json_object_set(row, "exit_code", json_object_get(r, "exit_code"));
	json_object_set(row, "reason", json_object_get(r, "reason"));
	json_object_set_new(row, "duration_ms", json_integer(int_at(dur, "total")));
	json_object_set_new(row, "agent_ms", json_integer(int_at(dur, "agent")));
	mock_counts(json_object_get(r, "mocks"), row);
	json_object_set_new(row, "guard_denials",
			    json_is_object(guard) ? json_integer(int_at(guard, "denials")) : json_null());
	json_object_set_new(row, "teardown_survivors",
			    json_integer((json_int_t)json_array_size(json_object_get(td, "survivors"))));
	json_object_set_new(row, "teardown_errors",
			    json_integer((json_int_t)json_array_size(json_object_get(td, "errors"))));
}

static void unreadable_row(json_t *row, const char *status, const char *error)
{
	static const char *const keys[] = { "task_id",
					    "exit_code",
					    "reason",
					    "duration_ms",
					    "agent_ms",
					    "mock_calls",
					    "mock_hits",
					    "mock_passthrough",
					    "mock_misses",
					    "guard_denials",
					    "teardown_survivors",
					    "teardown_errors",
					    NULL };

	json_object_set_new(row, "status", json_string(status));
	for (size_t i = 0; keys[i]; i++)
		json_object_set_new(row, keys[i], json_null());
	json_object_set_new(row, "error", error ? json_string(error) : json_null());
}

/* Read DIR/result.json (bounded, no links): the parsed JSON, or NULL with *ret_why. */
static json_t *read_result(int outfd, const char *dir, const char **ret_why, bool *ret_absent)
{
	char rel[PATH_MAX];
	struct buf b;
	json_t *j = NULL;
	ssize_t n = 1;
	int fd;

	*ret_absent = false;
	snprintf(rel, sizeof(rel), "%s/result.json", dir);
	if ((fd = openat(outfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
		*ret_absent = errno == ENOENT;
		*ret_why = errno == ELOOP ? "result.json is a symbolic link" : strerror(errno);
		return NULL;
	}
	buf_init(&b, COLLECT_MAX_RESULT_BYTES);
	while (n > 0) {
		char chunk[65536];

		if ((n = read(fd, chunk, sizeof(chunk))) > 0 && buf_append(&b, chunk, (size_t)n) < 0)
			n = -2;
	}
	close(fd);
	if (n == -2)
		*ret_why = "larger than 16 MiB";
	else if (n < 0)
		*ret_why = strerror(errno);
	else if (!(j = json_loadb(b.data, b.len, 0, NULL)))
		*ret_why = "not JSON";
	buf_free(&b);
	return j;
}

static json_t *task_row(int outfd, const char *dir)
{
	json_t *row = json_pack("{s:s}", "dir", dir), *r;
	const char *why = NULL;
	bool absent;
	char msg[512];

	if (!(r = read_result(outfd, dir, &why, &absent))) {
		snprintf(msg, sizeof(msg), "%s/result.json: %s", dir, why);
		unreadable_row(row, absent ? "no_result" : "unreadable", absent ? NULL : msg);
	} else if ((why = result_bad(r))) {
		snprintf(msg, sizeof(msg), "%s/result.json: %s", dir, why);
		unreadable_row(row, "unreadable", msg);
	} else {
		fill_row(r, row);
		json_object_set_new(row, "error", json_null());
	}
	json_decref(r);
	return row;
}

static int list_dirs(int outfd, struct strv *ret)
{
	int fd = dup(outfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int err = 0;

	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.' || fstatat(outfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		err = ret->n >= COLLECT_MAX_TASKS ? -E2BIG : strv_push(ret, e->d_name);
	}
	closedir(d);
	strv_sort(ret);
	return err;
}

int collect_summary(const char *out, json_t **ret)
{
	int outfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strv dirs = { 0 };
	json_t *counts = json_object(), *rows = json_array();
	int err;

	if (outfd < 0) {
		err = -errno;
		goto out;
	}
	if ((err = list_dirs(outfd, &dirs)) < 0)
		goto out;
	for (size_t i = 0; collect_statuses[i]; i++)
		json_object_set_new(counts, collect_statuses[i], json_integer(0));
	for (size_t i = 0; i < dirs.n; i++) {
		json_t *row = task_row(outfd, dirs.v[i]);
		const char *st = json_string_value(json_object_get(row, "status"));

		json_object_set_new(counts, st, json_integer(int_at(counts, st) + 1));
		json_array_append_new(rows, row);
	}
	*ret = json_pack("{s:i,s:s,s:I,s:O,s:O}", "version", 1, "out", out, "total", (json_int_t)dirs.n, "counts",
			 counts, "tasks", rows);
	err = *ret ? 0 : -ENOMEM;
out:
	if (outfd >= 0)
		close(outfd);
	strv_free(&dirs);
	json_decref(counts);
	json_decref(rows);
	return err;
}
