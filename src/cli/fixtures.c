/* SPDX-License-Identifier: MIT */
/* fixtures.c: `proctor fixtures`: dispatch, loading a tool the way mockd does, `check`, `sort`. */
#include "fixtures.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/log.h"
#include "../lib/path.h"
#include "../mock/analyze.h"
#include "cli.h"

/* Out of memory in a command: say so and stop, never carry on with a list missing an entry. */
static void push_or_die(struct strv *s, const char *v)
{
	if (strv_push(s, v) < 0)
		die(EXIT_FAILURE_, "out of memory");
}

static const char fixtures_usage[] =
	"usage: proctor fixtures check FILE|DIR...\n"
	"       proctor fixtures sort FIXTURE [--in-place]\n"
	"       proctor fixtures replay FIXTURE ARGVS [--json]\n"
	"       proctor fixtures coverage FIXTURE CALLS.jsonl... [--json] [--near N]\n"
	"       proctor fixtures record --tool T --out FIXTURE [--redact REGEX]... -- REAL_TOOL\n"
	"\n"
	"Fixture tooling with mockd's own loader and matcher. replay, coverage and sort also take\n"
	"--tool NAME, --config FILE, --noise-flag FLAG and --passthrough 'WORDS' as mockd does.\n"
	"Exit: 0 ok, 1 problems found or input incomplete, 2 usage. See proctor-fixtures(1).\n";

int fx_source_option(struct fx_source *src, int opt, const char *arg)
{
	switch (opt) {
	case FX_OPT_CONFIG:
		src->config = arg;
		return 1;
	case FX_OPT_TOOL:
		src->tool = arg;
		return 1;
	case FX_OPT_NOISE:
		if (arg[0] != '-' || strchr(arg, '='))
			die(EXIT_USAGE, "--noise-flag: '%s' must start with '-' and contain no '='", arg);
		src->has_noise = true;
		if (strv_push(&src->noise, arg) < 0)
			die(EXIT_FAILURE_, "out of memory");
		return 1;
	case FX_OPT_PASSTHROUGH:
		if (strv_push(&src->prefixes, arg) < 0)
			die(EXIT_FAILURE_, "out of memory");
		return 1;
	default:
		return 0;
	}
}

void fx_source_free(struct fx_source *src)
{
	strv_free(&src->noise);
	strv_free(&src->prefixes);
}

void fx_print_diag(FILE *f, const struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(f, "%s%s\n", d->msgs[i].level == DIAG_WARNING ? "warning: " : "", d->msgs[i].text);
	if (d->errors + d->warnings > d->n)
		fprintf(f, "... and %zu more\n", d->errors + d->warnings - d->n);
}

static struct mock_config *fx_config(const struct fx_source *src, const char *fixture, struct diag *d)
{
	struct mock_config *c = NULL;
	struct mock_tool_config *t;

	if (src->config)
		return mock_config_load(src->config, d, &c) < 0 ? NULL : c;
	if (mock_config_single(src->tool ? src->tool : "uip", fixture, &c) < 0)
		return NULL;
	t = &c->tools[0];
	for (size_t i = 0; i < src->prefixes.n; i++)
		if (mock_tool_add_prefix(t, src->prefixes.v[i]) < 0)
			diag_error(d, "--passthrough: '%s' must be 1 to 8 words, given once", src->prefixes.v[i]);
	if (src->has_noise) {
		t->has_noise_flags = true;
		for (size_t i = 0; i < src->noise.n; i++)
			push_or_die(&t->noise_flags, src->noise.v[i]);
	}
	return c;
}

int fx_open(const struct fx_source *src, const char *fixture, struct mock_service **ret_svc,
	    struct mock_tool **ret_tool)
{
	struct mock_service *svc = NULL;
	struct mock_config *c;
	struct diag d;
	size_t k = 0;

	diag_init(&d);
	c = fx_config(src, fixture, &d);
	if (c && d.errors) {
		mock_config_free(c);
		c = NULL;
	}
	/* mock_service_load takes the config, and frees it when it fails. */
	if (!c || mock_service_load(c, NULL, &d, &svc) < 0) {
		fx_print_diag(stderr, &d);
		diag_free(&d);
		return -1;
	}
	diag_free(&d);
	if (src->config && src->tool)
		for (k = 0; k < svc->ntools && strcmp(svc->tools[k].cfg->tool, src->tool); k++)
			;
	if (k == svc->ntools) {
		log_error("%s: no tool named '%s'", src->config, src->tool);
		mock_service_free(svc);
		return -1;
	}
	*ret_svc = svc;
	*ret_tool = &svc->tools[k];
	return 0;
}

int cmd_fixtures(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} subs[] = {
		{ "check", fixtures_check },       { "sort", fixtures_sort },     { "replay", fixtures_replay },
		{ "coverage", fixtures_coverage }, { "record", fixtures_record },
	};

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(fixtures_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		if (!strcmp(argv[1], subs[i].name)) {
			static char prog[64];

			snprintf(prog, sizeof(prog), "proctor fixtures %s", subs[i].name);
			log_set_prog(prog);
			return subs[i].fn(argc - 1, argv + 1);
		}
	}
	log_error("unknown subcommand '%s' (see 'proctor fixtures --help')", argv[1]);
	return EXIT_USAGE;
}

/* ---- check ------------------------------------------------------------------------------- */

#define CHECK_MAX_FILES 100000
#define CHECK_MAX_DEPTH 32

struct check_run {
	struct strv configs, fixtures, done; /* done: real paths of fixtures checked via a config */
	size_t files, rules, errors, warnings;
};

static void check_tool(struct mock_tool *t, struct diag *d)
{
	const struct fixture *f = t->fixture;
	size_t a, b;

	for (size_t i = 0; i < f->nrules; i++) {
		ssize_t j;

		if (f->rules[i].mode == MATCH_SUBSET) {
			j = analyze_subset_shadow(t, i);
			if (j >= 0 && (size_t)j != i)
				diag_warn(d,
					  "%s: responses[%zu]: never matches: responses[%zd] comes first and its "
					  "tokens are all among this rule's",
					  f->path, i, j);
		} else if (f->rules[i].mode == MATCH_EXACT &&
			   (j = matcher_match_normalized(t->matcher, f->rules[i].argv, f->rules[i].argc)) >= 0) {
			diag_warn(d,
				  "%s: responses[%zd]: same normalized key as exact rule responses[%zu], which "
				  "answers that argv first",
				  f->path, j, i);
		}
	}
	if (analyze_unsorted(t, &a, &b))
		diag_warn(d,
			  "%s: subset rules are not sorted most-specific-first: responses[%zu] (%zu tokens) "
			  "comes before responses[%zu] (%zu tokens); 'proctor fixtures sort' fixes the order",
			  f->path, a, analyze_specificity(t, a), b, analyze_specificity(t, b));
}

/* Load one tool's fixture and check it; every problem lands in `d`. */
static void check_one(struct check_run *run, struct mock_tool_config *tc, struct diag *d)
{
	struct mock_tool t = { 0 };
	struct fixture *f = NULL;
	char real[PATH_MAX];

	if (realpath(tc->fixture, real))
		push_or_die(&run->done, real);
	run->files++;
	/* Kept even with field errors, so duplicate keys are reported in the same run. */
	if (fixture_load_keep(tc->fixture, d, &f) < 0 && !f)
		return;
	run->rules += f->nrules;
	if (mock_tool_init(&t, tc, f, NULL, d) == 0)
		check_tool(&t, d);
	mock_tool_fini(&t);
}

static void check_report(struct check_run *run, struct diag *d)
{
	fx_print_diag(stdout, d);
	run->errors += d->errors;
	run->warnings += d->warnings;
	diag_free(d);
}

static void check_config(struct check_run *run, const char *path)
{
	struct mock_config *c = NULL;
	struct diag d;

	diag_init(&d);
	run->files++;
	if (mock_config_load(path, &d, &c) == 0)
		for (size_t i = 0; i < c->ntools; i++)
			check_one(run, &c->tools[i], &d);
	mock_config_free(c);
	check_report(run, &d);
}

static void check_fixture(struct check_run *run, const char *path)
{
	struct mock_config *c = NULL;
	char real[PATH_MAX];
	struct diag d;

	if (realpath(path, real))
		for (size_t i = 0; i < run->done.n; i++)
			if (!strcmp(run->done.v[i], real))
				return; /* already checked with its config's options */
	diag_init(&d);
	if (mock_config_single("uip", path, &c) < 0)
		die(EXIT_FAILURE_, "out of memory");
	check_one(run, &c->tools[0], &d);
	mock_config_free(c);
	check_report(run, &d);
}

static void check_walk(struct check_run *run, const char *dir, int depth)
{
	struct strv names = { 0 };
	struct dirent *e;
	DIR *dp = opendir(dir);

	if (!dp) {
		printf("%s: %s\n", dir, strerror(errno));
		run->errors++;
		return;
	}
	while ((e = readdir(dp)) && names.n < CHECK_MAX_FILES)
		if (e->d_name[0] != '.')
			push_or_die(&names, e->d_name);
	closedir(dp);
	strv_sort(&names);
	for (size_t i = 0; i < names.n; i++) {
		char *p = NULL;
		struct stat st;

		if (asprintf(&p, "%s/%s", dir, names.v[i]) < 0)
			die(EXIT_FAILURE_, "out of memory");
		if (lstat(p, &st) < 0)
			st.st_mode = 0;
		if (S_ISDIR(st.st_mode) && depth < CHECK_MAX_DEPTH)
			check_walk(run, p, depth + 1);
		else if (S_ISREG(st.st_mode) && !strcmp(names.v[i], "mock-config.json"))
			push_or_die(&run->configs, p);
		else if (S_ISREG(st.st_mode) && strstr(names.v[i], "fixture") && strlen(names.v[i]) > 5 &&
			 !strcmp(names.v[i] + strlen(names.v[i]) - 5, ".json"))
			push_or_die(&run->fixtures, p);
		free(p);
	}
	strv_free(&names);
}

int fixtures_check(int argc, char **argv)
{
	struct check_run run = { 0 };
	struct stat st;

	if (argc < 2 || !strcmp(argv[1], "--help")) {
		fputs("usage: proctor fixtures check FILE|DIR...\n"
		      "Validate fixtures and mock-config.json files with mockd's loader; warn about rules that\n"
		      "never match and subset rules not sorted most-specific-first. Directories are searched for\n"
		      "*fixture*.json and mock-config.json. Exit 0 clean (warnings allowed), 1 errors.\n",
		      argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	for (int i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			check_walk(&run, argv[i], 0);
		else if (!strcmp(path_basename(argv[i]), "mock-config.json"))
			push_or_die(&run.configs, argv[i]);
		else
			push_or_die(&run.fixtures, argv[i]);
	}
	/* Configs first: their fixtures are checked with the config's noise flags, once. */
	for (size_t i = 0; i < run.configs.n; i++)
		check_config(&run, run.configs.v[i]);
	for (size_t i = 0; i < run.fixtures.n; i++)
		check_fixture(&run, run.fixtures.v[i]);
	printf("checked %zu files (%zu rules): %zu errors, %zu warnings\n", run.files, run.rules, run.errors,
	       run.warnings);
	strv_free(&run.configs);
	strv_free(&run.fixtures);
	strv_free(&run.done);
	return run.errors || run.files == 0 ? EXIT_FAILURE_ : EXIT_OK;
}

/* ---- sort -------------------------------------------------------------------------------- */

/* The file's bytes with the rules in `perm` order: each slot gets its rule's original text, and
 * everything between rules (commas, indentation) stays where it was. */
static int sort_text(const struct fixture *f, const struct buf *in, const size_t *perm, struct buf *out)
{
	const struct fixture_rule *r = f->rules;
	size_t n = f->nrules;
	int ret = buf_append(out, in->data, r[0].span_off);

	for (size_t k = 0; ret == 0 && k < n; k++) {
		ret = buf_append(out, in->data + r[perm[k]].span_off, r[perm[k]].span_len);
		if (ret == 0 && k + 1 < n)
			ret = buf_append(out, in->data + r[k].span_off + r[k].span_len,
					 r[k + 1].span_off - r[k].span_off - r[k].span_len);
	}
	if (ret == 0)
		ret = buf_append(out, in->data + r[n - 1].span_off + r[n - 1].span_len,
				 in->len - r[n - 1].span_off - r[n - 1].span_len);
	return ret;
}

/* Which (original) rule answers each rule's own argv after sorting must be the one that did
 * before, unless before it was another rule (a shadowing bug) and now it is the rule itself.
 * Prints what changed; returns the number of changes that are not such fixes. */
static size_t sort_prove(struct mock_tool *before, struct mock_tool *after, const size_t *perm, FILE *report)
{
	size_t n = before->fixture->nrules, *newpos = calloc(n, sizeof(*newpos)), bad = 0;
	ssize_t *ab = calloc(n, sizeof(*ab)), *aa = calloc(n, sizeof(*aa));

	if (!newpos || !ab || !aa)
		die(EXIT_FAILURE_, "out of memory");
	for (size_t k = 0; k < n; k++)
		newpos[perm[k]] = k;
	analyze_self_answers(before, ab);
	analyze_self_answers(after, aa);
	for (size_t i = 0; i < n; i++) {
		ssize_t was = ab[i], now = aa[newpos[i]] < 0 ? -1 : (ssize_t)perm[aa[newpos[i]]];

		if (newpos[i] != i)
			fprintf(report, "responses[%zu] -> responses[%zu] (%zu tokens)\n", i, newpos[i],
				analyze_specificity(before, i));
		if (was == now)
			continue;
		if (was != (ssize_t)i && now == (ssize_t)i) {
			fprintf(report,
				"responses[%zu]: its own argv was answered by responses[%zd] (shadowed); "
				"now it answers itself\n",
				i, was);
			continue;
		}
		fprintf(report,
			"responses[%zu]: its own argv was answered by responses[%zd], after sorting by "
			"responses[%zd]\n",
			i, was, now);
		bad++;
	}
	free(newpos);
	free(ab);
	free(aa);
	return bad;
}

static int write_in_place(const char *path, const struct buf *b)
{
	struct stat st;

	return stat(path, &st) < 0 ? -errno : fd_write_atomic(path, b->data, b->len, st.st_mode & 07777);
}

/* Build a tool over bytes in memory, with the source's options. */
static int sort_tool(const struct fx_source *src, const char *path, const struct buf *b, struct mock_config **ret_cfg,
		     struct mock_tool *t)
{
	struct fixture *f = NULL;
	struct diag d;
	int r;

	diag_init(&d);
	*ret_cfg = fx_config(src, path, &d);
	r = *ret_cfg && !d.errors ? fixture_load_buf(path, b->data, b->len, &d, &f) : -EINVAL;
	if (r == 0)
		r = mock_tool_init(t, &(*ret_cfg)->tools[0], f, NULL, &d);
	fx_print_diag(stderr, &d);
	diag_free(&d);
	return r;
}

int fixtures_sort(int argc, char **argv)
{
	static const struct option opts[] = { FX_SOURCE_OPTIONS,
					      { "in-place", no_argument, NULL, 'i' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct fx_source src = { 0 };
	struct mock_tool before = { 0 }, after = { 0 };
	struct mock_config *cb = NULL, *ca = NULL;
	struct buf in, out;
	bool in_place = false;
	size_t *perm = NULL, bad = 0, moved = 0;
	int c, status = EXIT_FAILURE_;
	struct diag d;

	while ((c = getopt_long(argc, argv, "ih", opts, NULL)) != -1) {
		if (c == 'i')
			in_place = true;
		else if (c == 'h') {
			puts("usage: proctor fixtures sort FIXTURE [--in-place] [--noise-flag F]...\n"
			     "Order subset rules most-specific-first (distinct tokens, descending; stable), proving\n"
			     "that every rule's own argv is answered as before (or, if it was shadowed, by itself).\n"
			     "The JSON is written with its key order and formatting kept: to stdout, or back\n"
			     "into FIXTURE with --in-place. Changes are listed on stderr (stdout with --in-place).");
			return EXIT_OK;
		} else if (!fx_source_option(&src, c, optarg))
			die(EXIT_USAGE, "see 'proctor fixtures sort --help'");
	}
	if (optind + 1 != argc || src.config)
		die(EXIT_USAGE, "give exactly one FIXTURE file (see --help)");
	buf_init(&in, 0);
	buf_init(&out, 0);
	diag_init(&d);
	if (json_read_path(argv[optind], FIXTURE_MAX_FILE_BYTES, &d, &in) < 0) {
		fx_print_diag(stderr, &d);
		goto out;
	}
	if (sort_tool(&src, argv[optind], &in, &cb, &before) != 0)
		goto out;
	perm = calloc(before.fixture->nrules + 1, sizeof(*perm));
	if (!perm)
		die(EXIT_FAILURE_, "out of memory");
	analyze_sort_order(&before, perm);
	for (size_t k = 0; k < before.fixture->nrules; k++)
		moved += perm[k] != k;
	if (moved == 0 ? buf_append(&out, in.data, in.len) < 0 : sort_text(before.fixture, &in, perm, &out) < 0)
		die(EXIT_FAILURE_, "out of memory");
	if (moved && sort_tool(&src, argv[optind], &out, &ca, &after) < 0) {
		log_error("%s: the sorted text does not load (a bug): nothing written", argv[optind]);
		goto out;
	}
	bad = moved ? sort_prove(&before, &after, perm, in_place ? stdout : stderr) : 0;
	if (bad) {
		log_error("%s: sorting would change which rule answers %zu rules' own argv: nothing written",
			  argv[optind], bad);
		goto out;
	}
	fprintf(in_place ? stdout : stderr, "%s: %zu subset rules moved\n", argv[optind], moved);
	if (in_place ? (moved ? write_in_place(argv[optind], &out) : 0) : fd_write_all(1, out.data, out.len)) {
		log_error("%s: cannot write: %s", argv[optind], strerror(errno));
		goto out;
	}
	status = EXIT_OK;
out:
	free(perm);
	mock_tool_fini(&before);
	mock_tool_fini(&after);
	mock_config_free(cb);
	mock_config_free(ca);
	buf_free(&in);
	buf_free(&out);
	diag_free(&d);
	fx_source_free(&src);
	return status;
}
