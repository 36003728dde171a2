/* SPDX-License-Identifier: MIT */
/* client.c: the agent-side client. It never fabricates a result: any failure is exit 125 with
 * one line on stderr. It journals nothing (mockd does, where the agent cannot forge it). */
#include "client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/fd.h"
#include "../lib/util.h"
#include "protocol.h"

void mock_reply_free(struct mock_reply *r)
{
	if (r->root)
		json_decref(r->root);
	memset(r, 0, sizeof(*r));
}

static int reply_parse(const char *line, size_t len, struct mock_reply *ret)
{
	json_error_t err;
	json_t *root = json_loadb(line, len, 0, &err), *v, *o, *e;

	if (!root)
		return -EBADMSG;
	v = json_object_get(root, "version");
	o = json_object_get(root, "stdout");
	e = json_object_get(root, "stderr");
	if (!json_is_object(root) || !json_is_integer(v) || json_integer_value(v) != MOCK_PROTOCOL_VERSION ||
	    !json_is_integer(json_object_get(root, "exit_code")) || !json_is_string(o) || !json_is_string(e) ||
	    json_integer_value(json_object_get(root, "exit_code")) < 0 ||
	    json_integer_value(json_object_get(root, "exit_code")) > 255) {
		json_decref(root);
		return -EBADMSG;
	}
	ret->root = root;
	ret->exit_code = (int)json_integer_value(json_object_get(root, "exit_code"));
	ret->out = json_string_value(o);
	ret->out_len = json_string_length(o);
	ret->err = json_string_value(e);
	ret->err_len = json_string_length(e);
	return 0;
}

static int wait_fd(int fd, short events, uint64_t deadline)
{
	uint64_t now = now_mono_ms();
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	if (now >= deadline)
		return -ETIMEDOUT;
	r = poll(&p, 1, (int)(deadline - now));
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

static int send_all(int fd, const char *p, size_t n, uint64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		int r;

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if ((r = wait_fd(fd, POLLOUT, deadline)) < 0)
				return r;
			continue;
		}
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read up to and including the first newline (or EOF), at most MOCK_MAX_RESPONSE_BYTES. */
static int recv_line(int fd, struct buf *b, uint64_t deadline, size_t *ret_len)
{
	for (;;) {
		ssize_t n;
		char *nl;
		int r;

		if (buf_reserve(b, 65536) < 0 && buf_reserve(b, 1) < 0)
			return -EMSGSIZE;
		n = recv(fd, b->data + b->len, b->cap - b->len - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if ((r = wait_fd(fd, POLLIN, deadline)) < 0)
				return r;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0) {
			*ret_len = b->len;
			return b->len ? 0 : -ECONNRESET;
		}
		nl = memchr(b->data + b->len, '\n', (size_t)n);
		b->len += (size_t)n;
		if (nl) {
			*ret_len = (size_t)(nl - b->data);
			return 0;
		}
		if (b->len > MOCK_MAX_RESPONSE_BYTES)
			return -EMSGSIZE;
	}
}

static int connect_socket(const char *path, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A local connect completes or fails at once (or blocks only while the backlog is full). */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int mock_client_call(const char *socket_path, unsigned timeout_ms, const char *tool, char *const *argv, size_t argc,
		     struct mock_reply *ret, char *why, size_t why_len)
{
	uint64_t deadline = now_mono_ms() + timeout_ms;
	struct buf req, resp;
	long bad = -1;
	size_t len = 0;
	int fd = -1, r;

	buf_init(&req, MOCK_MAX_REQUEST_BYTES + 1);
	buf_init(&resp, MOCK_MAX_RESPONSE_BYTES + 1);
	r = mock_request_encode(&req, tool, argv, argc, &bad);
	if (r == -E2BIG) {
		snprintf(why, why_len, "request exceeds the %d byte limit", MOCK_MAX_REQUEST_BYTES);
		goto out;
	}
	if (r == -EILSEQ) {
		snprintf(why, why_len, "argument %ld is not valid UTF-8", bad + 1);
		goto out;
	}
	if (r < 0) {
		snprintf(why, why_len, "cannot encode request: %s", strerror(-r));
		goto out;
	}
	r = connect_socket(socket_path, &fd);
	if (r < 0) {
		snprintf(why, why_len, "service unavailable: %s: %s", socket_path, strerror(-r));
		goto out;
	}
	r = send_all(fd, req.data, req.len, deadline);
	/* A server may answer before reading (77 for a caller it rejects) and stop reading: a
	 * failed send still leaves its answer to be read. */
	if (r == 0 || r == -EPIPE || r == -ECONNRESET)
		r = recv_line(fd, &resp, deadline, &len);
	if (r < 0) {
		snprintf(why, why_len, "service unavailable or invalid response: %s",
			 r == -EMSGSIZE ? "response exceeds size limit" : strerror(-r));
		goto out;
	}
	r = reply_parse(resp.data, len, ret);
	if (r < 0)
		snprintf(why, why_len, "service unavailable or invalid response: malformed response");
out:
	if (fd >= 0)
		close(fd);
	buf_free(&req);
	buf_free(&resp);
	return r;
}
