/* SPDX-License-Identifier: MIT */
/* worker.c: `proctor worker --fd N`: internal. `proctor run` execs it already dropped, in its
 * own session, under the agent's Landlock ruleset; it serves the run's channel on fd N. The
 * nonce comes in the environment (not argv: /proc/PID/cmdline is readable by the agent's uid)
 * and is removed from it at once. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fd.h"
#include "../lib/log.h"
#include "../run/worker.h"

int cmd_worker(int argc, char **argv)
{
	unsigned char nonce[FRAME_NONCE_LEN];
	struct buf why;
	int fd, r;

	if (argc != 3 || strcmp(argv[1], "--fd") != 0 || fd_parse(argv[2], &fd) < 0 || fd <= 2)
		die(EXIT_USAGE, "internal command: proctor run starts it (usage: proctor worker --fd N)");
	if (nonce_parse(getenv(WORKER_NONCE_ENV), nonce) < 0)
		die(EXIT_USAGE, "%s is not set to a %d-byte hex nonce", WORKER_NONCE_ENV, FRAME_NONCE_LEN);
	unsetenv(WORKER_NONCE_ENV);
	fd_set_cloexec(fd, 1);
	buf_init(&why, 4096);
	r = worker_serve(fd, nonce, &why);
	if (r < 0)
		log_error("%s", why.data ? why.data : strerror(-r));
	buf_free(&why);
	return r < 0 ? EXIT_FAILURE_ : EXIT_OK;
}
