/* SPDX-License-Identifier: MIT */
/* journal.h: calls.jsonl, one line per call, written by mockd (never by the agent-side client).
 * Format (a contract, pinned by tests): {"ts","tool","argv","exit","outcome","rule","pid","uid"}. */
#ifndef PROCTOR_MOCK_JOURNAL_H
#define PROCTOR_MOCK_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../lib/buf.h"
#include "service.h"

/* Default size cap: past it calls fail closed (70) instead of the disk filling up. */
#define JOURNAL_DEFAULT_MAX_BYTES (1024ull * 1024 * 1024)
#define JOURNAL_PREALLOC_BYTES (1024 * 1024) /* allocated ahead when opened (journal.c) */

struct journal {
	int fd; /* -1: journaling off */
	struct buf line;
	unsigned long long size;      /* bytes in the file: every line in it is whole */
	unsigned long long max_bytes; /* 0: JOURNAL_DEFAULT_MAX_BYTES */
	bool broken;                  /* a half line could not be cut off: every write fails */
};

struct journal_entry {
	double ts;
	const char *tool;        /* NULL when the request was never read */
	const char *const *argv; /* may be NULL with argc 0 */
	size_t argc;
	int exit_code;
	enum mock_outcome outcome;
	ssize_t rule;
	pid_t pid;
	uid_t uid;
};

/* Open (create, append) the journal; path NULL turns journaling off. Mode 0640 when created.
 * Refused: a symlink (O_NOFOLLOW, -ELOOP), anything but a regular file (a FIFO, a device:
 * -EINVAL, opened without blocking), a file with other hard links (-EMLINK), and, unless
 * `append`, a non-empty file (-EEXIST): a fresh journal is absent or empty, so every line in it
 * is this run's. */
int journal_open_mode(struct journal *j, const char *path, bool append);
/* journal_open_mode(j, path, false). */
int journal_open(struct journal *j, const char *path);
void journal_close(struct journal *j);
/* Format one entry as a line (with '\n') into `out`. */
int journal_format(const struct journal_entry *e, struct buf *out);
/* Append one whole line with a single write(2): lines never interleave. A line is written whole
 * or not at all: after a short write (disk full, file size limit) the file is truncated back.
 * 0, or -errno (-EFBIG past max_bytes; -ENOSPC for a short write). */
int journal_write(struct journal *j, const struct journal_entry *e);

#endif
