/* SPDX-License-Identifier: MIT */
/* test_service.c: mockd's decision table without sockets: order, budget, default, passthrough
 * allowlist and cache, noise-flag precedence. */
#include "helpers.h"

#include "../../src/lib/diag.h"
#include "../../src/mock/service.h"

static struct mock_service *load(const char *fixture_json, const char *config_json)
{
	struct mock_service *s = NULL;
	struct mock_config *c = NULL;
	struct diag d;

	scratch_file("uip.json", fixture_json);
	diag_init(&d);
	assert_int_equal(mock_config_load(scratch_file("config.json", config_json), &d, &c), 0);
	if (mock_service_load(c, NULL, &d, &s) < 0)
		fail_msg("load failed: %s", d.n ? d.msgs[0].text : "?");
	diag_free(&d);
	return s;
}

static struct mock_decision decide(struct mock_service *s, const char *tool, const char *const *argv, size_t argc)
{
	struct mock_request req = { .tool = tool, .argv = (const char **)argv, .argc = argc };
	struct mock_decision dec;

	assert_int_equal(mock_service_decide(s, &req, &dec), 0);
	return dec;
}

#define DECIDE(s, tool, ...)                                      \
	decide((s), (tool), (const char *const[]){ __VA_ARGS__ }, \
	       sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

static const char fixture[] = "{\"version\":1,\"responses\":["
			      "{\"argv\":[\"a\"],\"stdout\":\"A\"},"
			      "{\"argv\":[\"jobs\",\"--output\",\"json\"],\"match_mode\":\"subset\",\"stdout\":\"J\"}],"
			      "\"default\":{\"exit_code\":0,\"stdout\":\"[]\\n\"}}";

static void test_service__decision_order(void **state)
{
	struct mock_service *s =
		load(fixture,
		     "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\"}]}");
	struct mock_decision d;

	(void)state;
	d = DECIDE(s, "uip", "a");
	assert_int_equal(d.outcome, OUTCOME_EXACT);
	assert_int_equal(d.rule, 0);
	assert_string_equal(d.w->data, "{\"version\":1,\"exit_code\":0,\"stdout\":\"A\",\"stderr\":\"\"}\n");
	d = DECIDE(s, "uip", "jobs", "--limit", "5");
	assert_int_equal(d.outcome, OUTCOME_SUBSET);
	assert_int_equal(d.rule, 1);
	d = DECIDE(s, "uip", "other");
	assert_int_equal(d.outcome, OUTCOME_DEFAULT);
	assert_int_equal(d.w->exit_code, 0);
	d = DECIDE(s, "git", "status");
	assert_int_equal(d.outcome, OUTCOME_UNKNOWN_TOOL);
	assert_int_equal(d.w->exit_code, 127);
	assert_null(strstr(d.w->data, "mock")); /* nothing tells the agent it is talking to a mock */
	mock_service_free(s);
}

static void test_service__no_default_is_exit_2(void **state)
{
	struct mock_service *s =
		load("{\"version\":1,\"responses\":[]}",
		     "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\"}]}");
	struct mock_decision d;

	(void)state;
	d = DECIDE(s, "uip", "x");
	assert_int_equal(d.outcome, OUTCOME_UNMOCKED);
	assert_int_equal(d.w->exit_code, 2);
	mock_service_free(s);
}

static void test_service__budget_exhausted_is_75(void **state)
{
	struct mock_service *s = load(
		fixture, "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"fixture\":\"uip.json\",\"max_requests\":2}]}");
	struct mock_decision d;

	(void)state;
	assert_int_equal(DECIDE(s, "uip", "a").outcome, OUTCOME_EXACT);
	assert_int_equal(DECIDE(s, "uip", "zzz").outcome, OUTCOME_DEFAULT); /* every call counts */
	d = DECIDE(s, "uip", "a");
	assert_int_equal(d.outcome, OUTCOME_BUDGET);
	assert_int_equal(d.w->exit_code, 75);
	assert_int_equal(DECIDE(s, "nope", "a").outcome, OUTCOME_UNKNOWN_TOOL);
	mock_service_free(s);
}

static void test_service__passthrough_only_for_allowlisted_prefix(void **state)
{
	struct mock_service *s = load(
		fixture, "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\","
			 "\"passthrough_argv_prefixes\":[[\"docsai\",\"ask\"]],"
			 "\"passthrough_executable\":\"/bin/echo\"}]}");
	struct mock_decision d;

	(void)state;
	d = DECIDE(s, "uip", "docsai", "ask", "q");
	assert_int_equal(d.outcome, OUTCOME_PASSTHROUGH);
	assert_null(d.w);
	assert_int_equal(DECIDE(s, "uip", "docsai", "other").outcome, OUTCOME_DEFAULT);
	assert_int_equal(DECIDE(s, "uip", "x", "docsai", "ask").outcome, OUTCOME_DEFAULT); /* a prefix, not a subset */
	/* a fixture rule wins over the passthrough */
	assert_int_equal(DECIDE(s, "uip", "docsai", "ask", "jobs").outcome, OUTCOME_SUBSET);
	mock_service_free(s);
}

static void test_service__passthrough_unavailable_is_69(void **state)
{
	struct mock_service *s = load(
		fixture, "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\","
			 "\"passthrough_argv_prefixes\":[[\"docsai\"]],"
			 "\"passthrough_executable\":\"/nonexistent/uip\"}]}");
	struct mock_decision d;

	(void)state;
	d = DECIDE(s, "uip", "docsai", "q");
	assert_int_equal(d.outcome, OUTCOME_PASSTHROUGH);
	assert_int_equal(d.w->exit_code, 69);
	mock_service_free(s);
}

static void cache_put(struct mock_service *s, const char *arg, const char *line)
{
	const char *argv[] = { "docsai", arg };
	struct wire w = { .data = strdup(line), .len = strlen(line), .exit_code = 0 };

	mock_service_cache_put(s, &s->tools[0], argv, 2, &w);
}

static void test_service__cache_is_lru_and_bounded(void **state)
{
	struct mock_service *s = load(
		fixture, "{\"version\":1,\"passthrough_cache_entries\":2,\"tools\":[{\"tool\":\"uip\","
			 "\"max_requests\":100,\"fixture\":\"uip.json\",\"passthrough_argv_prefixes\":[[\"docsai\"]],"
			 "\"passthrough_executable\":\"/bin/echo\"}]}");
	struct mock_decision d;

	(void)state;
	cache_put(s, "one", "L1\n");
	cache_put(s, "two", "L2\n");
	d = DECIDE(s, "uip", "docsai", "one"); /* now "two" is the least recently used */
	assert_int_equal(d.outcome, OUTCOME_CACHED);
	assert_string_equal(d.w->data, "L1\n");
	cache_put(s, "three", "L3\n");
	assert_int_equal(DECIDE(s, "uip", "docsai", "two").outcome, OUTCOME_PASSTHROUGH);
	assert_int_equal(DECIDE(s, "uip", "docsai", "one").outcome, OUTCOME_CACHED);
	assert_int_equal(DECIDE(s, "uip", "docsai", "three").outcome, OUTCOME_CACHED);
	assert_int_equal(s->tools[0].ncache, 2);
	mock_service_free(s);
}

/* Issue 15: a tool entry without max_requests is refused, never served without a budget. */
static void test_service__config_without_max_requests_is_refused(void **state)
{
	struct mock_config *c = NULL;
	struct diag d;

	(void)state;
	scratch_file("uip.json", fixture);
	diag_init(&d);
	assert_int_equal(mock_config_load(scratch_file("config.json", "{\"version\":1,\"tools\":[{\"tool\":\"uip\","
								      "\"fixture\":\"uip.json\"}]}"),
					  &d, &c),
			 -EINVAL);
	assert_null(c);
	assert_int_equal(d.errors, 1);
	assert_non_null(strstr(d.msgs[0].text, "config.json: tools[0].max_requests: required"));
	diag_free(&d);
}

/* The --tool shorthand's default budget is finite, and a 0 left in a config built in code
 * serves nothing rather than everything. */
static void test_service__default_budget_is_finite(void **state)
{
	struct mock_config *c = NULL;

	(void)state;
	assert_int_equal(mock_config_single("uip", "f.json", &c), 0);
	assert_int_equal(c->tools[0].max_requests, MOCK_DEFAULT_MAX_REQUESTS);
	assert_int_equal(c->unknown_tool_max_requests, MOCK_DEFAULT_UNKNOWN_TOOL_BUDGET);
	mock_config_free(c);

	struct mock_service *s = load(fixture, "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":1,"
					       "\"fixture\":\"uip.json\"}]}");
	s->cfg->tools[0].max_requests = 0;
	assert_int_equal(DECIDE(s, "uip", "a").outcome, OUTCOME_BUDGET);
	mock_service_free(s);
}

/* Issue 12 finding 4: calls to tools that are not served have a budget too. */
static void test_service__unknown_tools_are_budgeted(void **state)
{
	struct mock_service *s = load(fixture, "{\"version\":1,\"unknown_tool_max_requests\":3,\"tools\":[{\"tool\":"
					       "\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\"}]}");
	struct mock_decision d;

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(DECIDE(s, "gh", "pr", "list").outcome, OUTCOME_UNKNOWN_TOOL);
	d = DECIDE(s, "gh", "pr", "list");
	assert_int_equal(d.outcome, OUTCOME_BUDGET);
	assert_int_equal(d.w->exit_code, 75);
	assert_int_equal(DECIDE(s, "other", "x").outcome, OUTCOME_BUDGET); /* one budget for all unknown tools */
	assert_int_equal(DECIDE(s, "uip", "a").outcome, OUTCOME_EXACT);    /* served tools keep their own */
	mock_service_free(s);
}

/* Code review (issue 12): the matcher turned out-of-memory into "no match", which can fall
 * through to the real tool. Its scratch space cannot be had for this argc (the size overflows,
 * as an allocation would fail): the answer must be an error (70), never passthrough. */
static void test_service__matcher_oom_fails_closed(void **state)
{
	struct mock_service *s = load(fixture, "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,"
					       "\"fixture\":\"uip.json\",\"passthrough_argv_prefixes\":[[\"docsai\"]],"
					       "\"passthrough_executable\":\"/bin/echo\"}]}");
	const char *argv[] = { "docsai", "ask", NULL };
	size_t huge = SIZE_MAX / 2; /* only argv[0] and argv[1] are ever looked at */
	enum match_mode mode;
	ssize_t rule;

	(void)state;
	assert_int_equal(matcher_match(s->tools[0].matcher, argv, huge, &mode), -ENOMEM);
	assert_int_equal(mock_tool_classify(&s->tools[0], argv, huge, &rule), OUTCOME_ERROR);
	assert_int_equal(rule, -1);
	struct mock_request req = { .tool = "uip", .argv = argv, .argc = huge };
	struct mock_decision d;

	assert_int_equal(mock_service_decide(s, &req, &d), 0);
	assert_int_equal(d.outcome, OUTCOME_ERROR);
	assert_int_equal(d.w->exit_code, 70);
	assert_string_equal(mock_outcome_name(d.outcome), "error");
	mock_service_free(s);
}

static void test_service__tool_noise_flags_override_fixture(void **state)
{
	static const char fx[] = "{\"version\":1,\"noise_flags\":[\"--fmt\"],\"responses\":["
				 "{\"argv\":[\"a\",\"--fmt\",\"x\"],\"match_mode\":\"subset\",\"stdout\":\"A\"}]}";
	struct mock_service *s = load(
		fx, "{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\"}]}");

	(void)state;
	assert_int_equal(DECIDE(s, "uip", "a").outcome, OUTCOME_SUBSET); /* the fixture's --fmt is noise */
	mock_service_free(s);
	s = load(
		fx,
		"{\"version\":1,\"tools\":[{\"tool\":\"uip\",\"max_requests\":100,\"fixture\":\"uip.json\",\"noise_flags\":[]}]}");
	assert_int_equal(DECIDE(s, "uip", "a").outcome, OUTCOME_UNMOCKED); /* [] turns noise off */
	assert_int_equal(DECIDE(s, "uip", "a", "--fmt", "x").outcome, OUTCOME_SUBSET);
	mock_service_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_service__decision_order),
		cmocka_unit_test(test_service__no_default_is_exit_2),
		cmocka_unit_test(test_service__budget_exhausted_is_75),
		cmocka_unit_test(test_service__passthrough_only_for_allowlisted_prefix),
		cmocka_unit_test(test_service__passthrough_unavailable_is_69),
		cmocka_unit_test(test_service__cache_is_lru_and_bounded),
		cmocka_unit_test(test_service__tool_noise_flags_override_fixture),
		cmocka_unit_test(test_service__config_without_max_requests_is_refused),
		cmocka_unit_test(test_service__default_budget_is_finite),
		cmocka_unit_test(test_service__unknown_tools_are_budgeted),
		cmocka_unit_test(test_service__matcher_oom_fails_closed),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
