/* SPDX-License-Identifier: MIT */
/* journal.c: the call journal. A line is built in memory and appended with one write() on an
 * O_APPEND fd, so lines are whole even with several writers, and each call is in the kernel
 * before its response is sent: a client that crashes mid-response cannot lose its line. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"

int journal_open(struct journal *j, const char *path)
{
	j->fd = -1;
	buf_init(&j->line, 0);
	if (!path)
		return 0;
	j->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0640);
	return j->fd < 0 ? -errno : 0;
}

void journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	buf_free(&j->line);
}

int journal_format(const struct journal_entry *e, struct buf *out)
{
	json_t *o = json_object(), *argv = json_array();
	int r = -ENOMEM;

	if (!o || !argv)
		goto out;
	for (size_t i = 0; i < e->argc; i++)
		if (json_array_append_new(argv, json_string(e->argv[i])))
			goto out;
	/* ts: epoch seconds rounded to milliseconds, as the reference journal writes it. */
	if (json_object_set_new(o, "ts", json_real(round(e->ts * 1000.0) / 1000.0)) ||
	    json_object_set_new(o, "tool", e->tool ? json_string(e->tool) : json_null()) ||
	    json_object_set(o, "argv", argv) || json_object_set_new(o, "exit", json_integer(e->exit_code)) ||
	    json_object_set_new(o, "outcome", json_string(mock_outcome_name(e->outcome))) ||
	    json_object_set_new(o, "rule", e->rule >= 0 ? json_integer(e->rule) : json_null()) ||
	    json_object_set_new(o, "pid", json_integer(e->pid)) ||
	    json_object_set_new(o, "uid", json_integer((json_int_t)e->uid)))
		goto out;
	r = json_dump_buf(o, JSON_REAL_PRECISION(13), out);
	if (r == 0)
		r = buf_putc(out, '\n');
out:
	json_decref(argv);
	json_decref(o);
	return r;
}

int journal_write(struct journal *j, const struct journal_entry *e)
{
	int r;

	if (j->fd < 0)
		return 0;
	buf_reset(&j->line);
	r = journal_format(e, &j->line);
	if (r < 0)
		return r;
	/* One write: a short write to a regular file means the disk is full; report it. */
	ssize_t n = write(j->fd, j->line.data, j->line.len);

	if (n < 0)
		return -errno;
	return (size_t)n == j->line.len ? 0 : -ENOSPC;
}
