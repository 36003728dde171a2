/* SPDX-License-Identifier: MIT */
/* frame.h: the worker protocol's framing (doc/WORKER.md): a 4-byte big-endian body length
 * (checked against FRAME_MAX_BODY), the run's 16-byte nonce (checked), then a JSON object.
 * Decoding is a pure function over bytes, so it is unit-tested and fuzzed on its own. */
#ifndef PROCTOR_RUN_FRAME_H
#define PROCTOR_RUN_FRAME_H

#include <jansson.h>
#include <stddef.h>

#include "../lib/buf.h"

#define FRAME_NONCE_LEN 16
#define FRAME_HEADER_LEN (4 + FRAME_NONCE_LEN)
/* Room for the largest event: a stdout line of WORKER_MAX_LINE_BYTES (1 MiB) whose every byte
 * is escaped to six ("\u0001", "\ufffd"), and the members around it. */
#define FRAME_MAX_BODY (8u * 1024 * 1024)

/* Append one frame carrying `body` to `out`. 0, -E2BIG (body over the limit) or -ENOMEM. */
int frame_encode(const unsigned char nonce[FRAME_NONCE_LEN], const json_t *body, struct buf *out);
/* Decode the first frame of data[0..len). 1 with *ret (a JSON object, owned) and *ret_used
 * bytes consumed; 0 when more bytes are needed; -EPROTO when the frame is bad (length over the
 * limit, foreign nonce, not a JSON object), with the reason in *ret_why. */
int frame_decode(const unsigned char nonce[FRAME_NONCE_LEN], const char *data, size_t len, size_t *ret_used,
		 json_t **ret, const char **ret_why);
/* Write all of `out` (encoded frames) to a blocking fd (EINTR retried, SIGPIPE not raised);
 * `out` is emptied on success and keeps what was not sent on error. 0 or -errno. */
int frame_flush(int fd, struct buf *out);
/* Encode and write the whole frame to a blocking fd, as frame_flush. */
int frame_send(int fd, const unsigned char nonce[FRAME_NONCE_LEN], const json_t *body);
/* Read what `fd` has (once) into `in`: >0 bytes read, 0 at end of file, -errno. `in` is capped
 * at one header plus FRAME_MAX_BODY, which a valid peer never needs to exceed. */
ssize_t frame_fill(int fd, struct buf *in);

#endif
