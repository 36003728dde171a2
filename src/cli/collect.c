/* SPDX-License-Identifier: MIT */
/* collect.c: `proctor collect OUT [--format json|csv|table]`: the summary of a suite's results
 * (src/run/collect.c builds it) printed for a machine (JSON, CSV) or a person (a table).
 * Exit: 0 every task directory had a readable result or none yet; 1 some result.json was
 * unreadable (the summary is still printed, that task's row says why) or OUT could not be read;
 * 2 usage. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/buf.h"
#include "../lib/json.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../run/collect.h"

static const char collect_usage[] =
	"usage: proctor collect OUT [--format json|csv|table]\n"
	"Summarise every OUT/<task>/result.json that proctor run --suite left: how many tasks ended\n"
	"in each status, and per task its status, exit code, total and agent time, mock calls (fixture\n"
	"hits, passthroughs, misses), guard denials and teardown survivors and errors. A result.json\n"
	"that cannot be read is that task's row (status unreadable), never the end of the summary.\n"
	"  --format F  json (default), csv (one row per task) or table (for a person)\n"
	"Exit: 0 summary printed; 1 some result.json unreadable, or OUT unreadable; 2 usage.\n"
	"See proctor-collect(1).\n";

/* The per-task columns of the CSV and the table, in order. */
static const char *const columns[] = { "dir",
				       "task_id",
				       "status",
				       "exit_code",
				       "duration_ms",
				       "agent_ms",
				       "mock_calls",
				       "mock_hits",
				       "mock_passthrough",
				       "mock_misses",
				       "guard_denials",
				       "teardown_survivors",
				       "teardown_errors",
				       "error",
				       NULL };

/* A cell as text: "" for null. Strings are escaped (they can hold an agent's error text). */
static char *cell(json_t *v)
{
	char *s = NULL;

	if (json_is_string(v))
		return str_escape(json_string_value(v));
	if (json_is_integer(v) && asprintf(&s, "%lld", (long long)json_integer_value(v)) < 0)
		return NULL;
	return s ? s : strdup("");
}

static void csv_field(const char *s, FILE *f)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void print_csv(json_t *sum, FILE *f)
{
	json_t *row;
	size_t i;

	for (size_t c = 0; columns[c]; c++)
		fprintf(f, "%s%s", c ? "," : "", columns[c]);
	fputc('\n', f);
	json_array_foreach(json_object_get(sum, "tasks"), i, row) {
		for (size_t c = 0; columns[c]; c++) {
			char *s = cell(json_object_get(row, columns[c]));

			if (c)
				fputc(',', f);
			csv_field(s ? s : "", f);
			free(s);
		}
		fputc('\n', f);
	}
}

static void print_counts(json_t *sum, FILE *f)
{
	json_t *counts = json_object_get(sum, "counts");
	const char *sep = ": ";

	fprintf(f, "%lld tasks", (long long)json_integer_value(json_object_get(sum, "total")));
	for (size_t i = 0; collect_statuses[i]; i++) {
		json_int_t n = json_integer_value(json_object_get(counts, collect_statuses[i]));

		if (n) {
			fprintf(f, "%s%lld %s", sep, (long long)n, collect_statuses[i]);
			sep = ", ";
		}
	}
	fputc('\n', f);
}

static void print_table(json_t *sum, FILE *f)
{
	json_t *row;
	size_t i;

	print_counts(sum, f);
	fprintf(f, "%-24s %-16s %4s %9s %14s %7s %9s %6s\n", "TASK", "STATUS", "EXIT", "SECONDS", "MOCKS h/p/miss",
		"DENIALS", "SURVIVORS", "ERRORS");
	json_array_foreach(json_object_get(sum, "tasks"), i, row) {
		char *dir = cell(json_object_get(row, "dir")), *err = cell(json_object_get(row, "error"));
		static const char *const keys[] = { "status",           "exit_code",    "mock_hits",
						    "mock_passthrough", "mock_misses",  "teardown_survivors",
						    "teardown_errors",  "guard_denials" };
		char *c[8], mocks[64] = "-";

		for (size_t k = 0; k < 8; k++)
			c[k] = cell(json_object_get(row, keys[k]));
		if (json_is_integer(json_object_get(row, "mock_calls")))
			snprintf(mocks, sizeof(mocks), "%s/%s/%s", c[2], c[3], c[4]);
		fprintf(f, "%-24s %-16s %4s %9.3f %14s %7s %9s %6s\n", dir ? dir : "?", c[0] ? c[0] : "?",
			c[1] && *c[1] ? c[1] : "-",
			(double)json_integer_value(json_object_get(row, "duration_ms")) / 1000.0, mocks,
			c[7] && *c[7] ? c[7] : "-", c[5] && *c[5] ? c[5] : "-", c[6] && *c[6] ? c[6] : "-");
		if (err && *err)
			fprintf(f, "  %s\n", err);
		for (size_t k = 0; k < 8; k++)
			free(c[k]);
		free(dir);
		free(err);
	}
}

static int print_json(json_t *sum, FILE *f)
{
	struct buf b;
	int err;

	buf_init(&b, 0);
	err = json_dump_buf(sum, JSON_INDENT(2), &b);
	if (err == 0)
		fprintf(f, "%s\n", b.data);
	buf_free(&b);
	return err;
}

int cmd_collect(int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	const char *format = "json";
	json_t *sum = NULL;
	int c, err;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(collect_usage, stdout);
			return EXIT_OK;
		}
		if (c != 'f') {
			fputs(collect_usage, stderr);
			return EXIT_USAGE;
		}
		format = optarg;
	}
	if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0 && strcmp(format, "table") != 0)
		die(EXIT_USAGE, "--format: '%s' is not json, csv or table", format);
	if (optind + 1 != argc)
		die(EXIT_USAGE, "give one output directory (see --help)");
	if ((err = collect_summary(argv[optind], &sum)) < 0)
		die(EXIT_FAILURE_, "%s: %s", argv[optind], strerror(-err));
	if (!strcmp(format, "csv"))
		print_csv(sum, stdout);
	else if (!strcmp(format, "table"))
		print_table(sum, stdout);
	else
		err = print_json(sum, stdout);
	c = json_integer_value(json_object_get(json_object_get(sum, "counts"), "unreadable")) ? EXIT_FAILURE_ : EXIT_OK;
	if (c != EXIT_OK)
		log_error("%lld result.json unreadable (see their rows)",
			  (long long)json_integer_value(json_object_get(json_object_get(sum, "counts"), "unreadable")));
	json_decref(sum);
	return err < 0 ? EXIT_FAILURE_ : c;
}
