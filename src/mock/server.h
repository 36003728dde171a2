/* SPDX-License-Identifier: MIT */
/* server.h: mockd's socket, peer authorization and event loop. It owns I/O and time; what to
 * answer is service.h's job, how to run the real tool passthrough.h's. */
#ifndef PROCTOR_MOCK_SERVER_H
#define PROCTOR_MOCK_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "../lib/diag.h"
#include "journal.h"
#include "service.h"

#define MOCK_DEFAULT_CLIENT_TIMEOUT_MS 10000u
#define MOCK_DEFAULT_MAX_CLIENTS 4096u
#define MOCK_MAX_PASSTHROUGH_JOBS 16u
/* Passthroughs waiting for a slot; more are answered 69 at once. */
#define MOCK_MAX_PASSTHROUGH_QUEUE 64u
/* Bytes all clients may hold at once (request buffers, decoded argvs, tool output, responses);
 * a call that would go past it is answered 69. */
#define MOCK_MAX_HELD_BYTES (64u * 1024 * 1024)

struct mock_server_opts {
	const char *socket_path;
	int ready_fd; /* -1: none */
	const uid_t *allowed_uids;
	size_t nallowed;
	gid_t socket_gid; /* (gid_t)-1: leave as is */
	mode_t socket_mode;
	unsigned client_timeout_ms; /* a client must send its request, and take its response, within this */
	unsigned max_clients;
	/* Runtime problems (journal write failed, real tool could not start), reported as they
	 * happen; the command decides where they go. NULL: collected in the run's diag. */
	void (*on_error)(const char *msg);
	/* Each real-tool call that ran to completion (recording mode builds fixtures from these). */
	void (*on_passthrough)(void *ctx, const struct mock_tool *t, const char *const *argv, size_t argc,
			       int exit_code, const struct buf *out, const struct buf *err);
	void *ctx;
};

struct mock_server;

/* Bind and listen; set the socket's group and mode. The socket is created 0600 (umask) and only
 * then opened up, so it is never visible with wider permissions than asked. A stale socket file
 * (nobody listening) is replaced; a live one is -EADDRINUSE. Messages go to `d`. */
int mock_server_bind(const struct mock_server_opts *opts, struct diag *d, struct mock_server **ret);
/* Signal readiness, then serve until SIGTERM/SIGINT/SIGHUP. Unlinks the socket on return.
 * 0 on a clean stop, -errno on a fatal error (message in `d`). */
int mock_server_run(struct mock_server *srv, struct mock_service *svc, struct journal *j, struct diag *d);
void mock_server_free(struct mock_server *srv);

#endif
