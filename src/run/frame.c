/* SPDX-License-Identifier: MIT */
/* frame.c: length + nonce + JSON frames between the orchestrator and the worker. */
#include "frame.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/json.h"

int frame_encode(const unsigned char nonce[FRAME_NONCE_LEN], const json_t *body, struct buf *out)
{
	size_t start = out->len, n;
	unsigned char hdr[FRAME_HEADER_LEN] = { 0 };
	int r;

	if ((r = buf_append(out, hdr, sizeof(hdr))) < 0)
		return r;
	if ((r = json_dump_buf(body, JSON_COMPACT, out)) < 0) {
		out->len = start;
		return r;
	}
	n = out->len - start - FRAME_HEADER_LEN;
	if (n > FRAME_MAX_BODY) {
		out->len = start;
		return -E2BIG;
	}
	hdr[0] = (unsigned char)(n >> 24);
	hdr[1] = (unsigned char)(n >> 16);
	hdr[2] = (unsigned char)(n >> 8);
	hdr[3] = (unsigned char)n;
	memcpy(hdr + 4, nonce, FRAME_NONCE_LEN);
	memcpy(out->data + start, hdr, sizeof(hdr));
	return 0;
}

int frame_decode(const unsigned char nonce[FRAME_NONCE_LEN], const char *data, size_t len, size_t *ret_used,
		 json_t **ret, const char **ret_why)
{
	const unsigned char *p = (const unsigned char *)data;
	uint32_t n;
	json_error_t e;
	json_t *j;

	if (len < FRAME_HEADER_LEN)
		return 0;
	n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (n > FRAME_MAX_BODY)
		return *ret_why = "frame length over the limit", -EPROTO;
	if (memcmp(p + 4, nonce, FRAME_NONCE_LEN) != 0)
		return *ret_why = "frame with a foreign nonce", -EPROTO;
	if (len - FRAME_HEADER_LEN < n)
		return 0;
	j = json_loadb(data + FRAME_HEADER_LEN, n, JSON_REJECT_DUPLICATES, &e);
	if (!json_is_object(j)) {
		json_decref(j);
		return *ret_why = "frame body is not a JSON object", -EPROTO;
	}
	*ret = j;
	*ret_used = FRAME_HEADER_LEN + n;
	return 1;
}

int frame_flush(int fd, struct buf *out)
{
	size_t off = 0;

	while (off < out->len) {
		ssize_t w = send(fd, out->data + off, out->len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			buf_consume(out, off);
			return -errno;
		}
		off += (size_t)w;
	}
	buf_reset(out);
	return 0;
}

int frame_send(int fd, const unsigned char nonce[FRAME_NONCE_LEN], const json_t *body)
{
	struct buf b;
	int r;

	buf_init(&b, 0);
	if ((r = frame_encode(nonce, body, &b)) == 0)
		r = frame_flush(fd, &b);
	buf_free(&b);
	return r;
}

ssize_t frame_fill(int fd, struct buf *in)
{
	size_t room = FRAME_HEADER_LEN + FRAME_MAX_BODY - in->len;
	ssize_t n;
	int r;

	if (room == 0)
		return -EPROTO;
	if (room > 65536)
		room = 65536;
	if ((r = buf_reserve(in, room)) < 0)
		return r;
	do
		n = read(fd, in->data + in->len, room);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	in->len += (size_t)n;
	in->data[in->len] = '\0';
	return n;
}
