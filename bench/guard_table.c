/* SPDX-License-Identifier: MIT */
/* guard_table.c: the guard's decision time over every row of its verdict table, in a scratch
 * workspace laid out as the unit test's. usage: guard_table TABLE; prints
 * "rows median_us p99_us max_us" and the slowest command on stderr. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../src/guard/decide.h"
#include "../src/guard/guard.h"

#define MAX_ROWS 4096

static char root[256], outside[256];

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void expand(const char *in, char *out, size_t n)
{
	size_t o = 0;

	for (const char *p = in; *p && o + PATH_MAX < n; p++) {
		if (p[0] == '@' && (p[1] == 'R' || p[1] == 'O')) {
			o += (size_t)snprintf(out + o, n - o, "%s", p[1] == 'R' ? root : outside);
			p++;
		} else if (p[0] == '\\' && (p[1] == 'n' || p[1] == 't' || p[1] == '\\')) {
			out[o++] = p[1] == 'n' ? '\n' : p[1] == 't' ? '\t' : '\\';
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

int main(int argc, char **argv)
{
	static char line[65536], cmd[65536], slowest[65536];
	char tmpl[] = "/tmp/proctor-bench-guard-XXXXXX", p[512];
	double *t = calloc(MAX_ROWS, sizeof(*t));
	struct guard_marker m = { .active = true, .expires_ms = INT64_MAX };
	size_t n = 0;
	double worst = -1;
	FILE *f;

	if (argc != 2 || !t || !mkdtemp(tmpl) || !(f = fopen(argv[1], "re"))) {
		fprintf(stderr, "usage: guard_table TABLE\n");
		free(t);
		return 2;
	}
	snprintf(root, sizeof(root), "%s/ws", tmpl);
	snprintf(outside, sizeof(outside), "%s/out", tmpl);
	mkdir(root, 0755);
	mkdir(outside, 0755);
	snprintf(p, sizeof(p), "%s/sub", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/outlink", root);
	if (symlink(outside, p) < 0 || strv_push(&m.roots, root) < 0) {
		(void)fclose(f);
		free(t);
		return 1;
	}
	while (fgets(line, sizeof(line), f) && n < MAX_ROWS) {
		char *cols[6], *save = NULL;
		int nc = 0;
		struct timespec a, b;
		struct guard_verdict v;
		json_t *payload;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (char *c = strtok_r(line, "\t", &save); c && nc < 6; c = strtok_r(NULL, "\t", &save))
			cols[nc++] = c;
		if (nc != 6)
			continue;
		expand(cols[5], cmd, sizeof(cmd));
		payload =
			json_pack("{s:s,s:s,s:{s:s}}", "tool_name", "Bash", "cwd", root, "tool_input", "command", cmd);
		clock_gettime(CLOCK_MONOTONIC, &a);
		guard_decide(&m, payload, &v);
		clock_gettime(CLOCK_MONOTONIC, &b);
		t[n] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
		if (t[n] > worst) {
			worst = t[n];
			snprintf(slowest, sizeof(slowest), "%s", cmd);
		}
		n++;
		guard_verdict_free(&v);
		json_decref(payload);
	}
	(void)fclose(f);
	qsort(t, n, sizeof(*t), cmp);
	printf("%zu %.0f %.0f %.0f\n", n, t[n / 2], t[n * 99 / 100], t[n - 1]);
	fprintf(stderr, "slowest: %s\n", slowest);
	snprintf(line, sizeof(line), "rm -rf '%s'", tmpl);
	/* NOLINTNEXTLINE(cert-env33-c): removes the bench's own mkdtemp directory */
	if (system(line) != 0)
		return 1;
	guard_marker_free(&m);
	free(t);
	return 0;
}
