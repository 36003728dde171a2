/* SPDX-License-Identifier: MIT */
/* fixtures_report.c: `proctor fixtures replay` and `coverage`: argvs from journals (ours or the
 * reference's {argv} lines) or shell-quoted command lines, answered by mockd's own classifier. */
#include "fixtures.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/log.h"
#include "../mock/analyze.h"
#include "cli.h"

#define CALLS_MAX_FILE_BYTES (1024u * 1024 * 1024)
#define COVERAGE_MAX_NEAR 10

enum line_kind { LINE_CALL, LINE_SKIP, LINE_ERROR };

/* A file is read one way throughout: journal lines (JSON) or shell command lines. */
enum call_format { FORMAT_AUTO, FORMAT_JSON, FORMAT_SHELL };

struct call_reader {
	const char *path, *tool;
	enum call_format format; /* AUTO: decided by the first line that is not blank or a comment */
	struct buf data;
	size_t off, lineno, skipped, errors;
};

/* One journal line: {"argv":[...]} with an optional "tool" (other tools and calls never read,
 * with a null tool, are skipped). */
static enum line_kind parse_json_line(struct call_reader *cr, const char *line, size_t len, struct strv *argv,
				      const char **why)
{
	json_error_t e;
	json_t *o = json_loadb(line, len, 0, &e), *av, *tool;
	enum line_kind k = LINE_ERROR;

	*why = "not a JSON object with an \"argv\" list of strings";
	if (!json_is_object(o))
		goto out;
	tool = json_object_get(o, "tool");
	av = json_object_get(o, "argv");
	if (json_is_null(tool) || (json_is_string(tool) && strcmp(json_string_value(tool), cr->tool))) {
		k = LINE_SKIP;
		goto out;
	}
	if (!json_is_array(av))
		goto out;
	for (size_t i = 0; i < json_array_size(av); i++) {
		if (!json_is_string(json_array_get(av, i)))
			goto out;
		if (strv_push(argv, json_string_value(json_array_get(av, i))) < 0)
			die(EXIT_FAILURE_, "out of memory");
	}
	k = LINE_CALL;
out:
	json_decref(o);
	return k;
}

/* The next call: LINE_CALL with *argv filled, or LINE_SKIP at the end (returns 0 then). */
static int next_call(struct call_reader *cr, struct strv *argv)
{
	while (cr->off < cr->data.len) {
		const char *line = cr->data.data + cr->off, *nl = memchr(line, '\n', cr->data.len - cr->off);
		size_t len = nl ? (size_t)(nl - line) : cr->data.len - cr->off;
		const char *why = NULL;
		enum line_kind k;
		char *copy;

		cr->off += len + (nl ? 1 : 0);
		cr->lineno++;
		while (len && (line[0] == ' ' || line[0] == '\t'))
			line++, len--;
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		if (!len || line[0] == '#')
			continue;
		strv_free(argv);
		if (cr->format == FORMAT_AUTO)
			cr->format = line[0] == '{' ? FORMAT_JSON : FORMAT_SHELL;
		if (cr->format == FORMAT_JSON) {
			k = parse_json_line(cr, line, len, argv, &why);
		} else {
			copy = strndup(line, len);
			k = copy && shell_split(copy, argv, &why) == 0 ? LINE_CALL : LINE_ERROR;
			free(copy);
			if (k == LINE_CALL && argv->n && !strcmp(argv->v[0], cr->tool)) {
				free(argv->v[0]);
				memmove(argv->v, argv->v + 1, argv->n-- * sizeof(*argv->v));
			}
		}
		if (k == LINE_ERROR) {
			fprintf(stderr, "%s:%zu: %s\n", cr->path, cr->lineno, why ? why : "out of memory");
			cr->errors++;
		} else if (k == LINE_SKIP) {
			cr->skipped++;
		} else {
			return 1;
		}
	}
	return 0;
}

static int reader_open(struct call_reader *cr, const char *path, const char *tool, enum call_format format)
{
	struct diag d;
	int r;

	memset(cr, 0, sizeof(*cr));
	cr->path = path;
	cr->tool = tool;
	cr->format = format;
	buf_init(&cr->data, 0);
	diag_init(&d);
	r = json_read_path(path, CALLS_MAX_FILE_BYTES, &d, &cr->data);
	fx_print_diag(stderr, &d);
	diag_free(&d);
	return r;
}

static json_t *argv_json(const struct strv *argv)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < argv->n; i++)
		json_array_append_new(a, json_string(argv->v[i]));
	return a;
}

static void print_argv(FILE *f, const char *const *argv, size_t argc)
{
	struct buf b;

	buf_init(&b, 0);
	if (shell_join(argv, argc, &b) == 0)
		fputs(b.data ? b.data : "", f);
	buf_free(&b);
}

/* ---- replay ------------------------------------------------------------------------------ */

#define OUTCOME_COUNT OUTCOME__COUNT

static void replay_summary_text(const size_t *count, size_t calls, const struct call_reader *cr)
{
	static const enum mock_outcome shown[] = { OUTCOME_EXACT,       OUTCOME_NORMALIZED, OUTCOME_SUBSET,
						   OUTCOME_PASSTHROUGH, OUTCOME_DEFAULT,    OUTCOME_UNMOCKED };

	printf("%zu calls:", calls);
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		printf("%s %s %zu", i ? "," : "", mock_outcome_name(shown[i]), count[shown[i]]);
	printf(" (%zu lines skipped, %zu errors)\n", cr->skipped, cr->errors);
}

static int replay_run(struct mock_tool *t, struct call_reader *cr, bool json)
{
	json_t *calls = json ? json_array() : NULL, *summary;
	size_t count[OUTCOME_COUNT] = { 0 }, n = 0;
	struct strv argv = { 0 };
	ssize_t rule;

	while (next_call(cr, &argv)) {
		enum mock_outcome o = mock_tool_classify(t, (const char *const *)argv.v, argv.n, &rule);

		count[o]++;
		n++;
		if (json) {
			json_array_append_new(calls,
					      json_pack("{s:I,s:o,s:s,s:o}", "line", (json_int_t)cr->lineno, "argv",
							argv_json(&argv), "outcome", mock_outcome_name(o), "rule",
							rule >= 0 ? json_integer(rule) : json_null()));
			continue;
		}
		printf("%zu: %s", cr->lineno, mock_outcome_name(o));
		if (rule >= 0)
			printf(" responses[%zd]", rule);
		printf(": ");
		print_argv(stdout, (const char *const *)argv.v, argv.n);
		putchar('\n');
	}
	strv_free(&argv);
	if (!json) {
		replay_summary_text(count, n, cr);
		return 0;
	}
	summary = json_pack("{s:I,s:I,s:I}", "calls", (json_int_t)n, "skipped", (json_int_t)cr->skipped, "errors",
			    (json_int_t)cr->errors);
	for (int o = 0; o < OUTCOME_COUNT; o++)
		if (o <= OUTCOME_PASSTHROUGH || o == OUTCOME_DEFAULT || o == OUTCOME_UNMOCKED)
			json_object_set_new(summary, mock_outcome_name((enum mock_outcome)o),
					    json_integer((json_int_t)count[o]));
	json_t *doc = json_pack("{s:o,s:o}", "calls", calls, "summary", summary);

	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	return 0;
}

int fixtures_replay(int argc, char **argv)
{
	static const struct option opts[] = { FX_SOURCE_OPTIONS,
					      { "json", no_argument, NULL, 'j' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct fx_source src = { 0 };
	struct mock_service *svc = NULL;
	struct mock_tool *t;
	struct call_reader cr;
	bool json = false;
	int c, status = EXIT_FAILURE_;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'h') {
			puts("usage: proctor fixtures replay FIXTURE ARGVS [--json] [--tool T] [--config F]\n"
			     "                [--noise-flag F]... [--passthrough 'WORDS']...\n"
			     "Say which rule and mode would answer each argv of ARGVS: a calls.jsonl (ours or the\n"
			     "reference's {argv} lines; other tools' lines are skipped) or shell-quoted command lines\n"
			     "(a leading tool name is dropped). Exit 1 when a line could not be read.");
			return EXIT_OK;
		} else if (!fx_source_option(&src, c, optarg))
			die(EXIT_USAGE, "see 'proctor fixtures replay --help'");
	}
	if (argc - optind != 2 - (src.config ? 1 : 0))
		die(EXIT_USAGE, "give FIXTURE (or --config FILE) and ARGVS (see --help)");
	if (fx_open(&src, src.config ? NULL : argv[optind], &svc, &t) < 0)
		goto out;
	if (reader_open(&cr, argv[argc - 1], t->cfg->tool, FORMAT_AUTO) < 0)
		goto out;
	replay_run(t, &cr, json);
	status = cr.errors ? EXIT_FAILURE_ : EXIT_OK;
	buf_free(&cr.data);
out:
	mock_service_free(svc);
	fx_source_free(&src);
	return status;
}

/* ---- coverage ---------------------------------------------------------------------------- */

struct fallthrough {
	char *file;
	size_t line;
	struct strv argv;
	enum mock_outcome outcome;
};

struct coverage {
	struct mock_tool *t;
	size_t *served, calls, passthrough, nfall, skipped, errors;
	struct fallthrough *fall;
	json_t *expected; /* the fixture's expected_calls, or NULL */
	size_t *seen;     /* per expected call */
};

static void coverage_expect(struct coverage *cv, const struct strv *argv)
{
	struct buf joined;

	if (!cv->expected)
		return;
	buf_init(&joined, 0);
	if (shell_join((const char *const *)argv->v, argv->n, &joined) == 0)
		for (size_t i = 0; i < json_array_size(cv->expected); i++) {
			const char *pat =
				json_string_value(json_object_get(json_array_get(cv->expected, i), "pattern"));

			if (pat && strstr(joined.data ? joined.data : "", pat))
				cv->seen[i]++;
		}
	buf_free(&joined);
}

static void coverage_add(struct coverage *cv, struct call_reader *cr, struct strv *argv)
{
	ssize_t rule;
	enum mock_outcome o = mock_tool_classify(cv->t, (const char *const *)argv->v, argv->n, &rule);
	struct fallthrough *f;

	cv->calls++;
	coverage_expect(cv, argv);
	if (rule >= 0) {
		cv->served[rule]++;
		return;
	}
	if (o == OUTCOME_PASSTHROUGH) {
		cv->passthrough++;
		return;
	}
	f = realloc(cv->fall, (cv->nfall + 1) * sizeof(*f));
	if (!f)
		die(EXIT_FAILURE_, "out of memory");
	cv->fall = f;
	f[cv->nfall] =
		(struct fallthrough){ .file = strdup(cr->path), .line = cr->lineno, .argv = *argv, .outcome = o };
	*argv = (struct strv){ 0 };
	cv->nfall++;
}

static json_t *tokens_json(const struct tokens *t)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < t->n; i++)
		json_array_append_new(a, json_stringn(t->v[i].p, t->v[i].n));
	return a;
}

static void print_tokens(const struct tokens *t)
{
	for (size_t i = 0; i < t->n; i++)
		printf("%s%.*s", i ? " " : "", (int)t->v[i].n, t->v[i].p);
	if (!t->n)
		printf("-");
}

/* Near misses of one fallen-through call: printed, or returned as JSON. */
static json_t *coverage_near(struct coverage *cv, const struct fallthrough *f, size_t max, bool json)
{
	struct near_miss near[COVERAGE_MAX_NEAR];
	ssize_t n = analyze_near_misses(cv->t, (const char *const *)f->argv.v, f->argv.n, near, max);
	json_t *arr = json ? json_array() : NULL;

	for (ssize_t k = 0; k < n; k++) {
		struct tokens missing = { 0 }, extra = { 0 };

		analyze_diff(cv->t, near[k].rule, (const char *const *)f->argv.v, f->argv.n, &missing, &extra);
		if (json) {
			json_array_append_new(arr,
					      json_pack("{s:I,s:o,s:o}", "rule", (json_int_t)near[k].rule, "missing",
							tokens_json(&missing), "extra", tokens_json(&extra)));
		} else {
			printf("      near responses[%zu]: missing ", near[k].rule);
			print_tokens(&missing);
			printf("; extra ");
			print_tokens(&extra);
			putchar('\n');
		}
		tokens_free(&missing);
		tokens_free(&extra);
	}
	return arr;
}

static void coverage_text(struct coverage *cv, size_t nfiles, size_t near)
{
	const struct fixture *fx = cv->t->fixture;
	size_t used = 0, met = 0;

	for (size_t i = 0; i < fx->nrules; i++)
		used += cv->served[i] > 0;
	printf("%s: %zu rules, %zu calls from %zu files (%zu lines skipped, %zu errors)\n", fx->path, fx->nrules,
	       cv->calls, nfiles, cv->skipped, cv->errors);
	printf("served: %zu of %zu rules\n", used, fx->nrules);
	for (size_t i = 0; i < fx->nrules; i++)
		if (cv->served[i]) {
			printf("  responses[%zu] %-10s %5zu  ", i, match_mode_name(fx->rules[i].mode), cv->served[i]);
			print_argv(stdout, fx->rules[i].argv, fx->rules[i].argc);
			putchar('\n');
		}
	printf("never used: %zu rules\n", fx->nrules - used);
	for (size_t i = 0; i < fx->nrules; i++)
		if (!cv->served[i]) {
			printf("  responses[%zu] %-10s  ", i, match_mode_name(fx->rules[i].mode));
			print_argv(stdout, fx->rules[i].argv, fx->rules[i].argc);
			putchar('\n');
		}
	printf("passthrough: %zu calls\nfell through: %zu calls\n", cv->passthrough, cv->nfall);
	for (size_t i = 0; i < cv->nfall; i++) {
		printf("  %s:%zu %s: ", cv->fall[i].file, cv->fall[i].line, mock_outcome_name(cv->fall[i].outcome));
		print_argv(stdout, (const char *const *)cv->fall[i].argv.v, cv->fall[i].argv.n);
		putchar('\n');
		coverage_near(cv, &cv->fall[i], near, false);
	}
	for (size_t i = 0; i < json_array_size(cv->expected); i++)
		met += cv->seen[i] >=
		       (size_t)json_integer_value(json_object_get(json_array_get(cv->expected, i), "min"));
	if (cv->expected)
		printf("expected calls: %zu of %zu met\n", met, json_array_size(cv->expected));
	for (size_t i = 0; i < json_array_size(cv->expected); i++) {
		json_t *e = json_array_get(cv->expected, i);
		json_int_t min = json_integer_value(json_object_get(e, "min"));

		printf("  %-7s \"%s\" min %" JSON_INTEGER_FORMAT ", seen %zu\n",
		       cv->seen[i] >= (size_t)min ? "met" : "NOT MET", json_string_value(json_object_get(e, "pattern")),
		       min, cv->seen[i]);
	}
}

static void coverage_json(struct coverage *cv, size_t nfiles, size_t near)
{
	const struct fixture *fx = cv->t->fixture;
	json_t *rules = json_array(), *unused = json_array(), *fall = json_array(), *exp = json_array(), *doc;

	for (size_t i = 0; i < fx->nrules; i++) {
		struct strv a = { .v = (char **)fx->rules[i].argv, .n = fx->rules[i].argc };

		json_array_append_new(rules, json_pack("{s:I,s:s,s:o,s:I}", "rule", (json_int_t)i, "mode",
						       match_mode_name(fx->rules[i].mode), "argv", argv_json(&a),
						       "calls", (json_int_t)cv->served[i]));
		if (!cv->served[i])
			json_array_append_new(unused, json_integer((json_int_t)i));
	}
	for (size_t i = 0; i < cv->nfall; i++)
		json_array_append_new(fall,
				      json_pack("{s:s,s:I,s:o,s:s,s:o}", "file", cv->fall[i].file, "line",
						(json_int_t)cv->fall[i].line, "argv", argv_json(&cv->fall[i].argv),
						"outcome", mock_outcome_name(cv->fall[i].outcome), "near",
						coverage_near(cv, &cv->fall[i], near, true)));
	for (size_t i = 0; i < json_array_size(cv->expected); i++) {
		json_t *e = json_array_get(cv->expected, i);
		json_int_t min = json_integer_value(json_object_get(e, "min"));

		json_array_append_new(exp, json_pack("{s:O,s:I,s:I,s:b}", "pattern", json_object_get(e, "pattern"),
						     "min", min, "seen", (json_int_t)cv->seen[i], "met",
						     cv->seen[i] >= (size_t)min));
	}
	doc = json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:I,s:o,s:o}", "fixture", fx->path, "files", (json_int_t)nfiles,
			"calls", (json_int_t)cv->calls, "skipped", (json_int_t)cv->skipped, "errors",
			(json_int_t)cv->errors, "rules", rules, "unused", unused, "passthrough",
			(json_int_t)cv->passthrough, "fell_through", fall, "expected_calls", exp);
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

/* expected_calls must be a list of {pattern: string, min: integer >= 0}; anything else is reported. */
static json_t *coverage_expected(const struct fixture *fx)
{
	json_t *e = json_object_get(fx->meta, "expected_calls");

	if (!e)
		return NULL;
	for (size_t i = 0; i < json_array_size(e); i++) {
		json_t *x = json_array_get(e, i), *min = json_object_get(x, "min");

		if (!json_is_string(json_object_get(x, "pattern")) || !json_is_integer(min) ||
		    json_integer_value(min) < 0) {
			fprintf(stderr,
				"%s: expected_calls[%zu]: must be {\"pattern\": string, \"min\": integer >= 0}\n",
				fx->path, i);
			return NULL;
		}
	}
	return json_is_array(e) ? e : NULL;
}

int fixtures_coverage(int argc, char **argv)
{
	static const struct option opts[] = { FX_SOURCE_OPTIONS,
					      { "json", no_argument, NULL, 'j' },
					      { "near", required_argument, NULL, 'n' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct fx_source src = { 0 };
	struct mock_service *svc = NULL;
	struct coverage cv = { 0 };
	struct strv av = { 0 };
	bool json = false;
	long near = 3;
	int c, first, status = EXIT_FAILURE_;

	while ((c = getopt_long(argc, argv, "jn:h", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'n' && ((near = strtol(optarg, NULL, 10)) < 0 || near > COVERAGE_MAX_NEAR))
			die(EXIT_USAGE, "--near: a number from 0 to %d", COVERAGE_MAX_NEAR);
		else if (c == 'h') {
			puts("usage: proctor fixtures coverage FIXTURE CALLS.jsonl... [--json] [--near N]\n"
			     "Rules served and how often, rules never used, calls that fell through to the default\n"
			     "with their N nearest rules (missing and extra tokens; default 3), and the fixture's\n"
			     "expected_calls met or not. Exit 1 when a line could not be read.");
			return EXIT_OK;
		} else if (c != 'n' && !fx_source_option(&src, c, optarg))
			die(EXIT_USAGE, "see 'proctor fixtures coverage --help'");
	}
	first = optind + (src.config ? 0 : 1);
	if (first >= argc)
		die(EXIT_USAGE, "give FIXTURE (or --config FILE) and at least one CALLS.jsonl (see --help)");
	if (fx_open(&src, src.config ? NULL : argv[optind], &svc, &cv.t) < 0)
		goto out;
	cv.served = calloc(cv.t->fixture->nrules + 1, sizeof(*cv.served));
	cv.expected = coverage_expected(cv.t->fixture);
	cv.seen = calloc(json_array_size(cv.expected) + 1, sizeof(*cv.seen));
	if (!cv.served || !cv.seen)
		die(EXIT_FAILURE_, "out of memory");
	for (int i = first; i < argc; i++) {
		struct call_reader cr;

		if (reader_open(&cr, argv[i], cv.t->cfg->tool, FORMAT_JSON) < 0) {
			cv.errors++;
			continue;
		}
		while (next_call(&cr, &av))
			coverage_add(&cv, &cr, &av);
		cv.skipped += cr.skipped;
		cv.errors += cr.errors;
		buf_free(&cr.data);
	}
	if (json)
		coverage_json(&cv, (size_t)(argc - first), (size_t)near);
	else
		coverage_text(&cv, (size_t)(argc - first), (size_t)near);
	status = cv.errors ? EXIT_FAILURE_ : EXIT_OK;
out:
	for (size_t i = 0; i < cv.nfall; i++) {
		free(cv.fall[i].file);
		strv_free(&cv.fall[i].argv);
	}
	free(cv.fall);
	free(cv.served);
	free(cv.seen);
	strv_free(&av);
	mock_service_free(svc);
	fx_source_free(&src);
	return status;
}
