/* SPDX-License-Identifier: MIT */
/* load.c: mockd throughput: C threads, each a protocol v1 client in a loop, one connection per
 * request as the shim does. usage: load SOCKET THREADS SECONDS TOOL ARG...
 * prints "requests errors req_per_s". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../src/lib/buf.h"
#include "../src/mock/protocol.h"

static struct sockaddr_un sa;
static struct buf req;
static atomic_long done_ok, done_err;
static volatile int stop;

static int one_call(void)
{
	char resp[65536];
	size_t got = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = 0;

	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    send(fd, req.data, req.len, MSG_NOSIGNAL) == (ssize_t)req.len) {
		for (;;) {
			ssize_t n = recv(fd, resp + got, sizeof(resp) - got - 1, 0);

			if (n <= 0)
				break;
			got += (size_t)n;
			if (memchr(resp, '\n', got) || got == sizeof(resp) - 1)
				break;
		}
		resp[got] = '\0';
		ok = strstr(resp, "\"exit_code\":0,") != NULL;
	}
	close(fd);
	return ok;
}

static void *worker(void *arg)
{
	(void)arg;
	while (!stop) {
		if (one_call())
			atomic_fetch_add(&done_ok, 1);
		else
			atomic_fetch_add(&done_err, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads, seconds;
	pthread_t tid[256];
	struct timespec a, b;
	long bad;
	double el;

	if (argc < 5) {
		fprintf(stderr, "usage: load SOCKET THREADS SECONDS TOOL ARG...\n");
		return 2;
	}
	threads = (int)strtol(argv[2], NULL, 10);
	seconds = (int)strtol(argv[3], NULL, 10);
	if (threads < 1 || threads > 256 || seconds < 1)
		return 2;
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	buf_init(&req, 0);
	if (mock_request_encode(&req, argv[4], argv + 5, (size_t)(argc - 5), &bad) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, NULL);
	sleep((unsigned)seconds);
	stop = 1;
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%ld %ld %.0f\n", (long)done_ok + (long)done_err, (long)done_err, (double)(done_ok + done_err) / el);
	buf_free(&req);
	return 0;
}
