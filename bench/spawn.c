/* SPDX-License-Identifier: MIT */
/* spawn.c: median wall time of exec'ing a command N times (posix_spawn + wait), for the shim
 * round trip beside /bin/true. usage: spawn N CMD [ARGS...]; prints "median_us p90_us". */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? (int)strtol(argv[1], NULL, 10) : 0;
	double *t;
	posix_spawn_file_actions_t fa;

	if (n <= 0) {
		fprintf(stderr, "usage: spawn N CMD [ARGS...]\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return 1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (int i = 0; i < n; i++) {
		struct timespec a, b;
		pid_t pid;
		int st;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (posix_spawn(&pid, argv[2], &fa, NULL, argv + 2, environ) != 0 || waitpid(pid, &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "spawn: %s failed\n", argv[2]);
			free(t);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%.0f %.0f\n", t[n / 2], t[n * 9 / 10]);
	return 0;
}
