/* SPDX-License-Identifier: MIT */
/* journal.h: calls.jsonl, one line per call, written by mockd (never by the agent-side client).
 * Format (a contract, pinned by tests): {"ts","tool","argv","exit","outcome","rule","pid","uid"}. */
#ifndef PROCTOR_MOCK_JOURNAL_H
#define PROCTOR_MOCK_JOURNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "../lib/buf.h"
#include "service.h"

struct journal {
	int fd; /* -1: journaling off */
	struct buf line;
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

/* Open (create, append) the journal; path NULL turns journaling off. O_NOFOLLOW, mode 0640. */
int journal_open(struct journal *j, const char *path);
void journal_close(struct journal *j);
/* Format one entry as a line (with '\n') into `out`. */
int journal_format(const struct journal_entry *e, struct buf *out);
/* Append one whole line with a single write(2): lines never interleave. 0 or -errno. */
int journal_write(struct journal *j, const struct journal_entry *e);

#endif
