/* SPDX-License-Identifier: MIT */
/* test_match.c: the tokenizer and the three match modes, and the subset index against a linear
 * scan in file order (the reference semantics) on generated fixtures. */
#include "helpers.h"

#include "../../src/lib/diag.h"
#include "../../src/mock/fixture.h"
#include "../../src/mock/match.h"

static const char *const dflt_noise[] = { "--output" };

/* Tokenize and join with '|' for compact assertions. */
static char *tok_join(const char *const *argv, size_t argc, const char *const *noise, size_t nnoise)
{
	static char out[512];
	struct tokens t = { 0 };
	size_t off = 0;

	assert_int_equal(mock_tokenize(argv, argc, noise, nnoise, &t), 0);
	out[0] = '\0';
	for (size_t i = 0; i < t.n; i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%.*s", i ? "|" : "", (int)t.v[i].n, t.v[i].p);
	tokens_free(&t);
	return out;
}

#define TOK(noise, n, ...)                                                                                            \
	tok_join((const char *const[]){ __VA_ARGS__ }, sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *), \
		 noise, n)

static void test_tokenize__flag_equals_value_splits(void **state)
{
	(void)state;
	assert_string_equal(TOK(NULL, 0, "jobs", "--limit=50"), "jobs|--limit|50");
	assert_string_equal(TOK(NULL, 0, "-n=5"), "-n|5");
	assert_string_equal(TOK(NULL, 0, "--a=b=c"), "--a|b=c");
}

static void test_tokenize__empty_value_dropped(void **state)
{
	(void)state;
	assert_string_equal(TOK(NULL, 0, "--filter=", "x"), "--filter|x");
}

static void test_tokenize__non_flag_verbatim(void **state)
{
	(void)state;
	assert_string_equal(TOK(NULL, 0, "a=b", "x y"), "a=b|x y");
}

static void test_tokenize__noise_flag_swallows_value(void **state)
{
	(void)state;
	assert_string_equal(TOK(dflt_noise, 1, "or", "jobs", "--output", "json"), "or|jobs");
	assert_string_equal(TOK(dflt_noise, 1, "or", "--output=json", "jobs"), "or|jobs");
}

/* A documented difference from the reference (doc/PROTOCOL.md): a noise flag is a whole
 * argument only, never a value split off another --flag=value. The reference splits first, so
 * it would drop "json" here. */
static void test_tokenize__noise_flag_only_as_whole_argument(void **state)
{
	(void)state;
	assert_string_equal(TOK(dflt_noise, 1, "--fmt=--output", "json"), "--fmt|--output|json");
}

static void test_tokenize__noise_flag_keeps_following_flag(void **state)
{
	(void)state;
	assert_string_equal(TOK(dflt_noise, 1, "or", "--output", "--limit", "5"), "or|--limit|5");
	assert_string_equal(TOK(dflt_noise, 1, "or", "--output"), "or");
	/* `--output=` carried its (empty) value: the next token is not swallowed. */
	assert_string_equal(TOK(dflt_noise, 1, "--output=", "jobs"), "jobs");
}

struct fx {
	struct fixture *f;
	struct matcher *m;
	struct diag d;
};

static void fx_load(struct fx *x, const char *json, const char *const *noise, size_t nnoise)
{
	const char *p = scratch_file("f.json", json);

	diag_init(&x->d);
	assert_int_equal(fixture_load(p, &x->d, &x->f), 0);
	assert_int_equal(matcher_build(x->f, noise, nnoise, &x->d, &x->m), 0);
}

static void fx_free(struct fx *x)
{
	matcher_free(x->m);
	fixture_free(x->f);
	diag_free(&x->d);
}

#define MATCH(x, mode, ...)                                         \
	matcher_match((x)->m, (const char *const[]){ __VA_ARGS__ }, \
		      sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *), (mode))

static const char modes_fixture[] =
	"{\"version\":1,\"responses\":["
	"{\"argv\":[\"a\",\"b\"],\"stdout\":\"exact\"},"
	"{\"argv\":[\"b\",\"--x\",\"1\"],\"match_mode\":\"normalized\",\"stdout\":\"norm\"},"
	"{\"argv\":[\"jobs\",\"get\"],\"match_mode\":\"subset\",\"stdout\":\"s1\"},"
	"{\"argv\":[\"jobs\"],\"match_mode\":\"subset\",\"stdout\":\"s2\"}]}";

static void test_match__exact_is_raw_argv(void **state)
{
	struct fx x;
	enum match_mode mode = MATCH_SUBSET;

	(void)state;
	fx_load(&x, modes_fixture, dflt_noise, 1);
	assert_int_equal(MATCH(&x, &mode, "a", "b"), 0);
	assert_int_equal(mode, MATCH_EXACT);
	assert_int_equal(MATCH(&x, &mode, "b", "a"), -1);
	assert_int_equal(MATCH(&x, &mode, "a", "b", "c"), -1);
	fx_free(&x);
}

static void test_match__normalized_ignores_order_and_flag_form(void **state)
{
	struct fx x;
	enum match_mode mode;

	(void)state;
	fx_load(&x, modes_fixture, dflt_noise, 1);
	assert_int_equal(MATCH(&x, &mode, "--x", "1", "b"), 1);
	assert_int_equal(mode, MATCH_NORMALIZED);
	assert_int_equal(MATCH(&x, &mode, "--x=1", "b", "--output", "json"), 1);
	assert_int_equal(MATCH(&x, &mode, "--x=1", "b", "extra"), -1);
	fx_free(&x);
}

static void test_match__subset_ignores_extra_flags(void **state)
{
	struct fx x;
	enum match_mode mode;

	(void)state;
	fx_load(&x, modes_fixture, dflt_noise, 1);
	assert_int_equal(MATCH(&x, &mode, "jobs", "get", "--limit", "50"), 2);
	assert_int_equal(mode, MATCH_SUBSET);
	assert_int_equal(MATCH(&x, &mode, "get", "--output=json", "jobs"), 2);
	/* file order: the more specific rule comes first and wins; the broad one catches the rest */
	assert_int_equal(MATCH(&x, &mode, "jobs", "list"), 3);
	assert_int_equal(MATCH(&x, &mode, "folders"), -1);
	fx_free(&x);
}

static void test_match__subset_first_rule_in_file_order_wins(void **state)
{
	struct fx x;
	enum match_mode mode;

	(void)state;
	fx_load(&x,
		"{\"version\":1,\"responses\":["
		"{\"argv\":[\"jobs\"],\"match_mode\":\"subset\"},"
		"{\"argv\":[\"jobs\",\"get\"],\"match_mode\":\"subset\"}]}",
		dflt_noise, 1);
	/* rule 1 is shadowed by rule 0: the reference picks rule 0, and so must the index */
	assert_int_equal(MATCH(&x, &mode, "jobs", "get"), 0);
	fx_free(&x);
}

static void test_match__exact_beats_normalized_beats_subset(void **state)
{
	struct fx x;
	enum match_mode mode;

	(void)state;
	fx_load(&x,
		"{\"version\":1,\"responses\":["
		"{\"argv\":[\"x\"],\"match_mode\":\"subset\"},"
		"{\"argv\":[\"y\",\"x\"],\"match_mode\":\"normalized\"},"
		"{\"argv\":[\"x\",\"y\"]}]}",
		dflt_noise, 1);
	assert_int_equal(MATCH(&x, &mode, "x", "y"), 2);
	assert_int_equal(mode, MATCH_EXACT);
	assert_int_equal(MATCH(&x, &mode, "y", "x"), 1);
	assert_int_equal(mode, MATCH_NORMALIZED);
	assert_int_equal(MATCH(&x, &mode, "x", "z"), 0);
	assert_int_equal(mode, MATCH_SUBSET);
	fx_free(&x);
}

static void test_match__custom_noise_flags_replace_default(void **state)
{
	static const char *const noise[] = { "--format" };
	struct fx x;
	enum match_mode mode;

	(void)state;
	fx_load(&x,
		"{\"version\":1,\"responses\":[{\"argv\":[\"a\",\"--output\",\"json\"],\"match_mode\":\"subset\"}]}",
		noise, 1);
	assert_int_equal(MATCH(&x, &mode, "a"), -1);
	assert_int_equal(MATCH(&x, &mode, "a", "--output", "json", "--format", "x"), 0);
	fx_free(&x);
}

static void test_match__empty_argv_exact(void **state)
{
	struct fx x;
	enum match_mode mode;

	(void)state;
	fx_load(&x, "{\"version\":1,\"responses\":[{\"argv\":[],\"stdout\":\"help\"}]}", dflt_noise, 1);
	assert_int_equal(matcher_match(x.m, NULL, 0, &mode), 0);
	fx_free(&x);
}

static void expect_build_error(const char *json, const char *needle)
{
	const char *p = scratch_file("bad.json", json);
	struct fixture *f = NULL;
	struct matcher *m = NULL;
	struct diag d;

	diag_init(&d);
	assert_int_equal(fixture_load(p, &d, &f), 0);
	assert_int_equal(matcher_build(f, dflt_noise, 1, &d, &m), -EINVAL);
	assert_null(m);
	assert_true(d.n >= 1);
	assert_non_null(strstr(d.msgs[0].text, needle));
	assert_non_null(strstr(d.msgs[0].text, p));
	fixture_free(f);
	diag_free(&d);
}

static void test_match__duplicate_exact_key_is_error(void **state)
{
	(void)state;
	expect_build_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"]},{\"argv\":[\"b\"]},{\"argv\":[\"a\"]}]}",
			   "responses[2].argv: duplicate exact key (same as responses[0])");
}

static void test_match__duplicate_normalized_key_is_error(void **state)
{
	(void)state;
	expect_build_error("{\"version\":1,\"responses\":["
			   "{\"argv\":[\"a\",\"--f=1\"],\"match_mode\":\"normalized\"},"
			   "{\"argv\":[\"--f\",\"1\",\"a\",\"--output\",\"json\"],\"match_mode\":\"normalized\"}]}",
			   "responses[1].argv: duplicate normalized key (same as responses[0])");
}

static void test_match__subset_of_only_noise_is_error(void **state)
{
	(void)state;
	expect_build_error(
		"{\"version\":1,\"responses\":[{\"argv\":[\"--output\",\"json\"],\"match_mode\":\"subset\"}]}",
		"responses[0].argv: no tokens are left");
}

/* Generated fixtures from a small vocabulary (so rules overlap and shadow each other): the
 * index must pick exactly the rule a linear scan in file order picks, for every query. */
static void test_match__index_agrees_with_linear_scan(void **state)
{
	/* The last two only appear in queries: a rule of noise alone is (rightly) a load error. */
	static const char *vocab[] = { "or",       "jobs",    "get", "list", "logs", "--folder",
				       "Shared",   "--limit", "5",   "id1",  "id2",  "--state=Faulted",
				       "--output", "json" };
	const size_t nv = sizeof(vocab) / sizeof(vocab[0]);
	char json[65536];
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < 20; round++) {
		size_t off = (size_t)snprintf(json, sizeof(json), "{\"version\":1,\"responses\":[");
		struct fx x;

		for (int r = 0; r < 60; r++) {
			int n = 1 + (int)(rand_r(&seed) % 4);

			off += (size_t)snprintf(json + off, sizeof(json) - off, "%s{\"argv\":[", r ? "," : "");
			for (int k = 0; k < n; k++)
				off += (size_t)snprintf(json + off, sizeof(json) - off, "%s\"%s\"", k ? "," : "",
							vocab[(size_t)rand_r(&seed) % (nv - 2)]);
			off += (size_t)snprintf(json + off, sizeof(json) - off, "],\"match_mode\":\"subset\"}");
		}
		snprintf(json + off, sizeof(json) - off, "]}");
		fx_load(&x, json, dflt_noise, 1);
		for (int q = 0; q < 300; q++) {
			const char *argv[8];
			size_t argc = (size_t)(rand_r(&seed) % 8);
			enum match_mode mode;

			for (size_t k = 0; k < argc; k++)
				argv[k] = vocab[(size_t)rand_r(&seed) % nv];
			assert_int_equal(matcher_match(x.m, argv, argc, &mode),
					 matcher_match_subset_linear(x.m, argv, argc));
		}
		fx_free(&x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokenize__flag_equals_value_splits),
		cmocka_unit_test(test_tokenize__empty_value_dropped),
		cmocka_unit_test(test_tokenize__non_flag_verbatim),
		cmocka_unit_test(test_tokenize__noise_flag_swallows_value),
		cmocka_unit_test(test_tokenize__noise_flag_keeps_following_flag),
		cmocka_unit_test(test_tokenize__noise_flag_only_as_whole_argument),
		cmocka_unit_test(test_match__exact_is_raw_argv),
		cmocka_unit_test(test_match__normalized_ignores_order_and_flag_form),
		cmocka_unit_test(test_match__subset_ignores_extra_flags),
		cmocka_unit_test(test_match__subset_first_rule_in_file_order_wins),
		cmocka_unit_test(test_match__exact_beats_normalized_beats_subset),
		cmocka_unit_test(test_match__custom_noise_flags_replace_default),
		cmocka_unit_test(test_match__empty_argv_exact),
		cmocka_unit_test(test_match__duplicate_exact_key_is_error),
		cmocka_unit_test(test_match__duplicate_normalized_key_is_error),
		cmocka_unit_test(test_match__subset_of_only_noise_is_error),
		cmocka_unit_test(test_match__index_agrees_with_linear_scan),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
