/* SPDX-License-Identifier: MIT */
/* worker.h: the unprivileged side of `proctor run` (doc/WORKER.md). It runs as the agent's uid,
 * already dropped and under Landlock, usually as pid 1 of its own pid namespace; it checks its
 * identity before it answers `hello`, runs the agent in its own process group, and streams the
 * agent's output back as events. Methods are a table: anything outside it ends the worker. */
#ifndef PROCTOR_RUN_WORKER_H
#define PROCTOR_RUN_WORKER_H

#include <stddef.h>

#include "../lib/buf.h"
#include "frame.h"

#define WORKER_MAX_LINE_BYTES (1024 * 1024)
/* The deepest line (arrays and objects) carried as an object; a deeper one is kept as text.
 * Its frame, and its record in events.jsonl, nest it one level more: jansson's parser (the
 * orchestrator's) refuses JSON_PARSER_MAX_DEPTH levels, and Python's json, which recurses per
 * level, stops near 1000, so a harness reading events.jsonl could not take the record. */
#define WORKER_MAX_EVENT_DEPTH 256
_Static_assert(WORKER_MAX_EVENT_DEPTH + 2 <= JSON_PARSER_MAX_DEPTH, "a frame must stay parseable");
/* Queued event frames are sent once they pass this (else once per read of the agent). */
#define WORKER_SEND_BYTES (256 * 1024)
#define WORKER_DRAIN_MS 200       /* output still read after a turn's process exits */
#define WORKER_KILL_GRACE_MS 1000 /* TERM to KILL when a turn is stopped */
#define WORKER_END_GRACE_MS 5000  /* a process that stays after its end-of-turn event */
#define WORKER_MAX_PROBES 1024
#define WORKER_NONCE_ENV "PROCTOR_WORKER_NONCE"

/* Serve the orchestrator on `sock` until `stop` or end of file. 0 after a clean stop; -errno
 * otherwise, with the reason in `why`. */
int worker_serve(int sock, const unsigned char nonce[FRAME_NONCE_LEN], struct buf *why);
/* Hex nonce <-> bytes. */
int nonce_parse(const char *hex, unsigned char out[FRAME_NONCE_LEN]);
void nonce_format(const unsigned char nonce[FRAME_NONCE_LEN], char out[2 * FRAME_NONCE_LEN + 1]);

#endif
