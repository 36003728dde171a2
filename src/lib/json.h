/* SPDX-License-Identifier: MIT */
/* json.h: helpers over jansson: bounded file loads with located errors, compact dumps. */
#ifndef PROCTOR_JSON_H
#define PROCTOR_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "diag.h"

static inline void cleanup_json_decrefp(json_t **j)
{
	if (*j)
		json_decref(*j);
}
#define _cleanup_json_ __attribute__((cleanup(cleanup_json_decrefp)))

/* Read the file at `path` (at most `limit` bytes) into `out`; on failure add one message naming
 * the file to `d` and return -errno. */
int json_read_path(const char *path, size_t limit, struct diag *d, struct buf *out);
/* Load and parse the JSON file at `path` (at most `limit` bytes). On failure adds one message to
 * `d` naming the file (and line:column for syntax errors) and returns -errno (-EINVAL for bad
 * JSON). On success *ret owns a new reference. */
int json_load_path(const char *path, size_t limit, struct diag *d, json_t **ret);
/* Append the compact, ASCII-only encoding of `j` to `out` (no newline). 0 or -errno; on error
 * `out` is as it was. Unlike jansson's own dumps, never damaged text on a failed allocation. */
int json_dump_buf(const json_t *j, size_t flags, struct buf *out);
/* `j` encoded with exactly `flags` into a new string (*ret, free() it): json_dumps without its
 * damaged text on a failed allocation. 0 or -errno (-ENOMEM when `j` is NULL). */
int json_dump_str(const json_t *j, size_t flags, char **ret);
/* How many arrays and objects deep `j` nests, as jansson's parser counts (a scalar 0, [1] 1,
 * {"a":[1]} 2), counted no further than limit + 1. */
size_t json_depth(const json_t *j, size_t limit);
/* "string", "integer", ... for messages. */
const char *json_type_name(const json_t *j);

#endif
