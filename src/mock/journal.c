/* SPDX-License-Identifier: MIT */
/* journal.c: the call journal. A line is built in memory and appended with one write() on an
 * O_APPEND fd, so lines are whole even with several writers, and each call is in the kernel
 * before its response is sent: a client that crashes mid-response cannot lose its line. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"

int journal_open_mode(struct journal *j, const char *path, bool append)
{
	struct stat st;
	int fd, r = 0;

	j->fd = -1;
	j->size = 0;
	j->broken = false;
	buf_init(&j->line, 0);
	if (!path)
		return 0;
	/* O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0640);
	if (fd < 0)
		return errno == ENXIO ? -EINVAL : -errno; /* ENXIO: a FIFO without a reader */
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (st.st_nlink > 1)
		r = -EMLINK;
	else if (st.st_size > 0 && !append)
		r = -EEXIST;
	else
		r = fd_set_nonblock(fd, 0);
	if (r < 0) {
		close(fd);
		return r;
	}
	j->fd = fd;
	j->size = (unsigned long long)st.st_size;
	/* Best effort, beyond the end (the size stays): the first JOURNAL_PREALLOC_BYTES of lines
	 * still fit when a client has filled the filesystem. Past that a write fails, and the call
	 * is answered with an error, never served unrecorded (server.c). */
	(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, JOURNAL_PREALLOC_BYTES);
	return 0;
}

int journal_open(struct journal *j, const char *path)
{
	return journal_open_mode(j, path, false);
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
	if (j->broken)
		return -EIO;
	buf_reset(&j->line);
	r = journal_format(e, &j->line);
	if (r < 0)
		return r;
	if (j->size + j->line.len > (j->max_bytes ? j->max_bytes : JOURNAL_DEFAULT_MAX_BYTES))
		return -EFBIG;
	/* One write: a short write to a regular file means the disk is full (or the file size
	 * limit is reached). Cut the half line off again, so the next line does not run on from it. */
	ssize_t n = write(j->fd, j->line.data, j->line.len);

	if (n < 0)
		return -errno;
	if ((size_t)n != j->line.len) {
		if (ftruncate(j->fd, (off_t)j->size) < 0)
			j->broken = true; /* a half line stays: nothing more may be appended to it */
		return -ENOSPC;
	}
	j->size += (size_t)n;
	return 0;
}
