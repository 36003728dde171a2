/* SPDX-License-Identifier: MIT */
/* record.h: turn real-tool calls into a fixture (`proctor fixtures record`). Each distinct argv
 * becomes an exact rule with its stdout, stderr and exit code; redaction patterns are applied to
 * argv, stdout and stderr before anything is written. Does not serve or spawn (server.h does). */
#ifndef PROCTOR_MOCK_RECORD_H
#define PROCTOR_MOCK_RECORD_H

#include <jansson.h>
#include <regex.h>
#include <stddef.h>

#include "../lib/buf.h"

#define RECORD_PLACEHOLDER "[REDACTED]"
#define RECORD_MAX_PATTERNS 32

struct recorder {
	char *out_path;
	regex_t redact[RECORD_MAX_PATTERNS];
	size_t nredact;
	json_t *rules; /* the responses array, redacted */
	json_t *seen;  /* shell-joined redacted argv -> true */
	int last_error;
};

/* Compile the patterns (POSIX extended regular expressions). 0, or -EINVAL with the pattern's
 * index in *ret_bad, or -ENOMEM. */
int recorder_init(struct recorder *r, const char *out_path, char *const *patterns, size_t n, size_t *ret_bad);
void recorder_free(struct recorder *r);
/* Record one call; a repeated (redacted) argv keeps its first answer. Rewrites the fixture
 * atomically (temp file + rename) whenever a rule is added, so a crash never leaves half a file.
 * 1 when added, 0 when already known, -errno on failure. */
int recorder_add(struct recorder *r, const char *const *argv, size_t argc, int exit_code, const char *out,
		 size_t out_len, const char *err, size_t err_len);
/* Write the fixture now (also with no rules). 0 or -errno. */
int recorder_write(struct recorder *r);
/* Apply the redaction patterns to s (n bytes), appending the result to `out`. */
int recorder_redact(const struct recorder *r, const char *s, size_t n, struct buf *out);

#endif
