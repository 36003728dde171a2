/* SPDX-License-Identifier: MIT */
/* test_fixture.c: the fixture and config loaders: every bad input names file, index and field,
 * and every error is reported (not only the first). */
#include "helpers.h"

#include "../../src/lib/diag.h"
#include "../../src/mock/fixture.h"
#include "../../src/mock/protocol.h"

static void expect_fixture_error(const char *json, const char *needle)
{
	const char *p = scratch_file("fixture.json", json);
	struct fixture *f = NULL;
	struct diag d;
	int found = 0;

	diag_init(&d);
	assert_int_not_equal(fixture_load(p, &d, &f), 0);
	assert_null(f);
	assert_true(d.errors >= 1);
	for (size_t i = 0; i < d.n; i++) {
		assert_non_null(strstr(d.msgs[i].text, p)); /* every message names the file */
		if (strstr(d.msgs[i].text, needle))
			found = 1;
	}
	if (!found)
		fail_msg("no message contains \"%s\"; first is \"%s\"", needle, d.n ? d.msgs[0].text : "(none)");
	diag_free(&d);
}

static void test_fixture__loads_all_fields(void **state)
{
	const char *p = scratch_file("ok.json",
				     "{\"version\":1,\"expected_calls\":[],\"responses\":["
				     "{\"argv\":[\"a\"],\"exit_code\":3,\"stdout\":\"o\",\"stderr\":\"e\",\"x\":1},"
				     "{\"argv\":[\"b\"],\"match_mode\":\"subset\"}],"
				     "\"default\":{\"exit_code\":0,\"stdout\":\"[]\\n\"},\"noise_flags\":[\"--fmt\"]}");
	struct fixture *f = NULL;
	struct diag d;

	(void)state;
	diag_init(&d);
	assert_int_equal(fixture_load(p, &d, &f), 0);
	assert_int_equal(f->nrules, 2);
	assert_int_equal(f->rules[0].resp.exit_code, 3);
	assert_string_equal(f->rules[0].resp.out, "o");
	assert_string_equal(f->rules[0].resp.err, "e");
	assert_int_equal(f->rules[0].mode, MATCH_EXACT);
	assert_int_equal(f->rules[1].mode, MATCH_SUBSET);
	assert_int_equal(f->rules[1].resp.exit_code, 0);
	assert_string_equal(f->rules[1].resp.out, "");
	assert_true(f->has_default);
	assert_string_equal(f->dflt.out, "[]\n");
	assert_int_equal(f->noise_flags.n, 1);
	assert_string_equal(f->noise_flags.v[0], "--fmt");
	fixture_free(f);
	diag_free(&d);
}

static void test_fixture__wrong_version(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":2,\"responses\":[]}", "version: must be 1");
}

static void test_fixture__responses_not_list(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":{}}", "responses: must be a list, got an object");
}

static void test_fixture__argv_not_string_list(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":\"a b\"}]}",
			     "responses[0].argv: must be a list of strings, got a string");
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"]},{\"argv\":[\"a\",7]}]}",
			     "responses[1].argv[1]: must be a string, got an integer");
	expect_fixture_error("{\"version\":1,\"responses\":[{\"stdout\":\"x\"}]}",
			     "responses[0].argv: must be a list of strings, got nothing");
}

static void test_fixture__bad_match_mode(void **state)
{
	(void)state;
	expect_fixture_error(
		"{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"match_mode\":\"prefix\"}]}",
		"responses[0].match_mode: must be \"exact\", \"normalized\" or \"subset\", got \"prefix\"");
}

static void test_fixture__exit_code_out_of_range(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"exit_code\":256}]}",
			     "responses[0].exit_code: must be an integer from 0 to 255, got 256");
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"exit_code\":-1}]}",
			     "responses[0].exit_code: must be an integer from 0 to 255, got -1");
}

static void test_fixture__exit_code_not_integer(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"exit_code\":\"0\"}]}",
			     "responses[0].exit_code: must be an integer from 0 to 255, got a string");
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"exit_code\":1.5}]}",
			     "responses[0].exit_code: must be an integer from 0 to 255, got a number");
}

static void test_fixture__streams_not_strings(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"stdout\":[]}]}",
			     "responses[0].stdout: must be a string, got an array");
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"],\"stderr\":null}]}",
			     "responses[0].stderr: must be a string, got null");
	expect_fixture_error("{\"version\":1,\"responses\":[],\"default\":{\"stdout\":1}}",
			     "default.stdout: must be a string, got an integer");
}

static void test_fixture__output_over_limit(void **state)
{
	size_t n = MOCK_MAX_OUTPUT_BYTES / 2 + 1;
	char *json = malloc(2 * n + 200), *p;

	(void)state;
	p = json + sprintf(json, "{\"version\":1,\"responses\":[{\"argv\":[\"a\"]},{\"argv\":[\"b\"],\"stdout\":\"");
	memset(p, 'o', n);
	p += n;
	p += sprintf(p, "\",\"stderr\":\"");
	memset(p, 'e', n);
	p += n;
	sprintf(p, "\"}]}");
	expect_fixture_error(json,
			     "responses[1]: stdout and stderr together are 524290 bytes, over the 524288 byte limit");
	free(json);
}

static void test_fixture__empty_subset_argv(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[],\"match_mode\":\"subset\"}]}",
			     "responses[0].argv: must not be empty for subset matching");
}

static void test_fixture__truncated_json(void **state)
{
	(void)state;
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"]", ":1:");
	expect_fixture_error("{\"version\":1,\"responses\":[{\"argv\":[\"a\"]", "invalid JSON");
}

static void test_fixture__missing_file(void **state)
{
	struct fixture *f = NULL;
	struct diag d;
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/nope.json", scratch_dir);
	diag_init(&d);
	assert_int_equal(fixture_load(path, &d, &f), -ENOENT);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.msgs[0].text, path));
	assert_non_null(strstr(d.msgs[0].text, "No such file or directory"));
	diag_free(&d);
}

static void test_fixture__reports_every_error(void **state)
{
	const char *p = scratch_file("many.json", "{\"version\":1,\"responses\":["
						  "{\"argv\":[1]},{\"argv\":[\"a\"],\"exit_code\":900},"
						  "{\"argv\":[\"b\"],\"match_mode\":7}]}");
	struct fixture *f = NULL;
	struct diag d;

	(void)state;
	diag_init(&d);
	assert_int_equal(fixture_load(p, &d, &f), -EINVAL);
	assert_int_equal(d.errors, 3);
	assert_non_null(strstr(d.msgs[0].text, "responses[0].argv[0]"));
	assert_non_null(strstr(d.msgs[1].text, "responses[1].exit_code"));
	assert_non_null(strstr(d.msgs[2].text, "responses[2].match_mode"));
	diag_free(&d);
}

static void expect_config_error(const char *json, const char *needle)
{
	const char *p = scratch_file("config.json", json);
	struct mock_config *c = NULL;
	struct diag d;
	int found = 0;

	diag_init(&d);
	assert_int_not_equal(mock_config_load(p, &d, &c), 0);
	for (size_t i = 0; i < d.n; i++)
		if (strstr(d.msgs[i].text, needle) && strstr(d.msgs[i].text, p))
			found = 1;
	if (!found)
		fail_msg("no message contains \"%s\"; first is \"%s\"", needle, d.n ? d.msgs[0].text : "(none)");
	diag_free(&d);
}

static void test_config__loads_reference_format(void **state)
{
	const char *p = scratch_file("mock-config.json",
				     "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"fixture\":\"uip-fixture.json\","
				     "\"max_requests\":100,\"passthrough_argv_prefixes\":[[\"docsai\",\"ask\"]]}]}");
	struct mock_config *c = NULL;
	struct diag d;
	char want[128];

	(void)state;
	diag_init(&d);
	assert_int_equal(mock_config_load(p, &d, &c), 0);
	assert_int_equal(c->ntools, 1);
	assert_string_equal(c->tools[0].tool, "uip");
	snprintf(want, sizeof(want), "%s/uip-fixture.json", scratch_dir);
	assert_string_equal(c->tools[0].fixture, want); /* relative to the config file */
	assert_int_equal(c->tools[0].max_requests, 100);
	assert_int_equal(c->tools[0].nprefixes, 1);
	assert_string_equal(c->tools[0].prefixes[0].v[1], "ask");
	assert_int_equal(c->tools[0].passthrough_timeout_ms, 60000);
	mock_config_free(c);
	diag_free(&d);
}

static void test_config__bad_entries(void **state)
{
	(void)state;
	expect_config_error("{\"version\":1,\"tools\":[]}", "tools: must be a non-empty list");
	expect_config_error("{\"version\":1,\"tools\":[{\"tool\":\"a/b\",\"fixture\":\"f\"}]}",
			    "tools[0].tool: must be a bare executable name");
	expect_config_error(
		"{\"version\":1,\"tools\":[{\"tool\":\"u\",\"fixture\":\"f\"},{\"tool\":\"u\",\"fixture\":\"g\"}]}",
		"tools[1].tool: duplicate tool \"u\"");
	expect_config_error("{\"version\":1,\"tools\":[{\"tool\":\"u\",\"fixture\":\"f\",\"max_requests\":0}]}",
			    "tools[0].max_requests: must be an integer from 1");
	expect_config_error(
		"{\"version\":1,\"tools\":[{\"tool\":\"u\",\"fixture\":\"f\",\"passthrough_argv_prefixes\":[[]]}]}",
		"tools[0].passthrough_argv_prefixes[0]: must be a list of 1 to 8 non-empty strings");
	expect_config_error("{\"version\":1,\"tools\":[{\"tool\":\"u\",\"fixture\":\"f\","
			    "\"passthrough_argv_prefixes\":[[\"a\"],[\"a\"]]}]}",
			    "tools[0].passthrough_argv_prefixes[1]: duplicate prefix");
	expect_config_error("{\"version\":1,\"tools\":[{\"tool\":\"u\"}]}",
			    "tools[0].fixture: must be a non-empty path");
	expect_config_error("{\"version\":3,\"tools\":[{\"tool\":\"u\",\"fixture\":\"f\"}]}", "version: must be 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture__loads_all_fields),
		cmocka_unit_test(test_fixture__wrong_version),
		cmocka_unit_test(test_fixture__responses_not_list),
		cmocka_unit_test(test_fixture__argv_not_string_list),
		cmocka_unit_test(test_fixture__bad_match_mode),
		cmocka_unit_test(test_fixture__exit_code_out_of_range),
		cmocka_unit_test(test_fixture__exit_code_not_integer),
		cmocka_unit_test(test_fixture__streams_not_strings),
		cmocka_unit_test(test_fixture__output_over_limit),
		cmocka_unit_test(test_fixture__empty_subset_argv),
		cmocka_unit_test(test_fixture__truncated_json),
		cmocka_unit_test(test_fixture__missing_file),
		cmocka_unit_test(test_fixture__reports_every_error),
		cmocka_unit_test(test_config__loads_reference_format),
		cmocka_unit_test(test_config__bad_entries),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
