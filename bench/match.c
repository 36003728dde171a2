/* SPDX-License-Identifier: MIT */
/* match.c: generate a fixture of N subset rules (realistic argv shapes: resource, verb, unique id,
 * folder, noise flag; "compact" for a short id and a one-line stdout), then time fixture_load +
 * matcher_build and the median match of the rules' own argvs with extra flags.
 * usage: match N FIXTURE_OUT [compact]; prints "file_bytes load_ms median_ns p99_ns". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../src/lib/diag.h"
#include "../src/mock/fixture.h"
#include "../src/mock/match.h"

static const char *res[] = { "jobs", "processes", "queues", "assets", "folders", "machines", "robots", "logs" };
static const char *verb[] = { "get", "list", "logs", "history", "traces", "start", "stop", "describe" };

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int generate(const char *path, int n, int compact)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "{\"version\":1,\"responses\":[\n");
	for (int i = 0; i < n && compact; i++)
		fprintf(f,
			"%s{\"argv\":[\"or\",\"%s\",\"%s\",\"%08x\",\"--output\",\"json\"],\"match_mode\":"
			"\"subset\",\"stdout\":\"{\\\"Key\\\": \\\"%08x\\\"}\\n\"}\n",
			i ? "," : "", res[i % 8], verb[(i / 8) % 8], (unsigned)i * 2654435761u, (unsigned)i);
	for (int i = 0; i < n && !compact; i++)
		fprintf(f,
			"%s{\"argv\":[\"or\",\"%s\",\"%s\",\"%08x-1111-4abc-9def-%012d\",\"--folder\",\"F%d\","
			"\"--output\",\"json\"],\"match_mode\":\"subset\",\"exit_code\":0,\"stdout\":\"{\\r\\n  "
			"\\\"Result\\\": \\\"Success\\\",\\r\\n  \\\"Code\\\": \\\"Get\\\",\\r\\n  \\\"Data\\\": "
			"{\\\"Key\\\": \\\"%08x\\\", \\\"State\\\": \\\"Faulted\\\", \\\"Info\\\": \\\"Sequence "
			"contains no matching element\\\"}\\r\\n}\\r\\n\"}\n",
			i ? "," : "", res[i % 8], verb[(i / 8) % 8], (unsigned)i * 2654435761u, i, i % 50,
			(unsigned)i * 2654435761u);
	fprintf(f, "],\"default\":{\"exit_code\":0,\"stdout\":\"[]\\n\"}}\n");
	return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const char *const noise[] = { "--output" };
	int n = argc >= 3 ? (int)strtol(argv[1], NULL, 10) : 0, q = 20000;
	int compact = argc > 3 && !strcmp(argv[3], "compact");
	struct fixture *fx = NULL;
	struct matcher *m = NULL;
	struct diag d;
	struct stat st;
	double t0, t1, *lat;

	if (n <= 0) {
		fprintf(stderr, "usage: match N FIXTURE_OUT [compact]\n");
		return 2;
	}
	if (generate(argv[2], n, compact) < 0) {
		fprintf(stderr, "%s: cannot write the fixture\n", argv[2]);
		return 1;
	}
	stat(argv[2], &st);
	diag_init(&d);
	t0 = now_ns();
	if (fixture_load(argv[2], &d, &fx) < 0 || matcher_build(fx, noise, 1, &d, &m) < 0) {
		fprintf(stderr, "load failed: %s\n", d.n ? d.msgs[0].text : "?");
		return 1;
	}
	t1 = now_ns();
	lat = calloc((size_t)q, sizeof(*lat));
	if (!lat)
		return 1;
	/* NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): the same queries on every run, so runs compare */
	srand(7);
	for (int i = 0; i < q; i++) {
		/* NOLINTNEXTLINE(cert-msc30-c,cert-msc50-cpp): a spread of rules, not a secret */
		size_t r = (size_t)rand() % fx->nrules;
		const char *qv[12];
		size_t qc = 0;
		enum match_mode mode;
		ssize_t hit;
		double a;

		for (size_t k = 0; k < fx->rules[r].argc; k++)
			qv[qc++] = fx->rules[r].argv[k];
		qv[qc++] = "--limit";
		qv[qc++] = "50";
		a = now_ns();
		hit = matcher_match(m, qv, qc, &mode);
		lat[i] = now_ns() - a;
		if (hit != (ssize_t)r) {
			fprintf(stderr, "wrong rule for query %zu: %zd\n", r, hit);
			free(lat);
			return 1;
		}
	}
	qsort(lat, (size_t)q, sizeof(*lat), cmp);
	printf("%lld %.0f %.0f %.0f\n", (long long)st.st_size, (t1 - t0) / 1e6, lat[q / 2], lat[q * 99 / 100]);
	matcher_free(m);
	fixture_free(fx);
	diag_free(&d);
	free(lat);
	return 0;
}
