/* SPDX-License-Identifier: MIT */
/* test_analyze.c: shadowing, sortedness and stable most-specific-first order, near-miss ranking,
 * and the shell word helpers that replay and coverage rely on. */
#include "helpers.h"

#include "../../src/lib/diag.h"
#include "../../src/lib/strv.h"
#include "../../src/mock/analyze.h"
#include "../../src/mock/record.h"

static struct mock_service *load(const char *json)
{
	struct mock_service *s = NULL;
	struct mock_config *c = NULL;
	struct diag d;

	diag_init(&d);
	assert_int_equal(mock_config_single("uip", scratch_file("f.json", json), &c), 0);
	if (mock_service_load(c, NULL, &d, &s) < 0)
		fail_msg("load: %s", d.n ? d.msgs[0].text : "?");
	diag_free(&d);
	return s;
}

static const char shadowed[] =
	"{\"version\":1,\"responses\":["
	"{\"argv\":[\"or\",\"jobs\"],\"match_mode\":\"subset\"},"                               /* 0: 2 tokens */
	"{\"argv\":[\"or\",\"jobs\",\"get\",\"--output\",\"json\"],\"match_mode\":\"subset\"}," /* 1: 3, shadowed by 0 */
	"{\"argv\":[\"x\"]},"                                                                   /* 2: exact */
	"{\"argv\":[\"or\",\"folders\",\"list\"],\"match_mode\":\"subset\"},"                   /* 3: 3 */
	"{\"argv\":[\"q\",\"r\",\"s\",\"t\"],\"match_mode\":\"subset\"}]}";                     /* 4: 4 */

static void test_analyze__shadowed_subset_rule_found(void **state)
{
	struct mock_service *s = load(shadowed);
	struct mock_tool *t = &s->tools[0];

	(void)state;
	assert_int_equal(analyze_subset_shadow(t, 0), 0);
	assert_int_equal(analyze_subset_shadow(t, 1), 0); /* "or jobs" covers it: it never matches */
	assert_int_equal(analyze_subset_shadow(t, 3), 3);
	assert_int_equal(analyze_subset_shadow(t, 4), 4);
	mock_service_free(s);
}

static void test_analyze__self_answers(void **state)
{
	struct mock_service *s = load(shadowed);
	ssize_t ans[5];

	(void)state;
	analyze_self_answers(&s->tools[0], ans);
	assert_int_equal(ans[0], 0);
	assert_int_equal(ans[1], 0);
	assert_int_equal(ans[2], 2);
	assert_int_equal(ans[3], 3);
	mock_service_free(s);
}

static void test_analyze__unsorted_pair_and_specificity(void **state)
{
	struct mock_service *s = load(shadowed);
	size_t a = 99, b = 99;

	(void)state;
	assert_int_equal(analyze_specificity(&s->tools[0], 1), 3); /* --output json is noise */
	assert_int_equal(analyze_specificity(&s->tools[0], 2), 0); /* not a subset rule */
	assert_int_equal(analyze_unsorted(&s->tools[0], &a, &b), 1);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	mock_service_free(s);
}

static void test_analyze__sort_order_is_stable_and_keeps_other_slots(void **state)
{
	struct mock_service *s = load(shadowed);
	size_t perm[5];

	(void)state;
	analyze_sort_order(&s->tools[0], perm);
	/* subset slots 0,1,3,4 take rules by tokens desc: 4 (4), 1 (3), 3 (3, after 1: stable), 0 (2) */
	assert_int_equal(perm[0], 4);
	assert_int_equal(perm[1], 1);
	assert_int_equal(perm[2], 2); /* the exact rule keeps its slot */
	assert_int_equal(perm[3], 3);
	assert_int_equal(perm[4], 0);
	mock_service_free(s);
}

static void test_analyze__sorted_fixture_is_not_unsorted(void **state)
{
	struct mock_service *s = load("{\"version\":1,\"responses\":["
				      "{\"argv\":[\"a\",\"b\",\"c\"],\"match_mode\":\"subset\"},"
				      "{\"argv\":[\"a\",\"b\"],\"match_mode\":\"subset\"},"
				      "{\"argv\":[\"z\",\"y\"],\"match_mode\":\"subset\"},"
				      "{\"argv\":[\"a\"],\"match_mode\":\"subset\"}]}");
	size_t a, b, perm[4];

	(void)state;
	assert_int_equal(analyze_unsorted(&s->tools[0], &a, &b), 0);
	analyze_sort_order(&s->tools[0], perm);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(perm[i], i);
	mock_service_free(s);
}

static void test_analyze__near_misses_rank_missing_then_extra(void **state)
{
	struct mock_service *s = load("{\"version\":1,\"responses\":["
				      "{\"argv\":[\"or\",\"jobs\",\"get\",\"42\"],\"match_mode\":\"subset\"},"
				      "{\"argv\":[\"or\",\"jobs\",\"list\"],\"match_mode\":\"subset\"},"
				      "{\"argv\":[\"or\",\"folders\",\"list\"],\"match_mode\":\"subset\"}]}");
	const char *argv[] = { "or", "jobz", "get", "42", "--output", "json" };
	struct near_miss near[3];
	struct tokens missing = { 0 }, extra = { 0 };

	(void)state;
	assert_int_equal(analyze_near_misses(&s->tools[0], argv, 6, near, 3), 3);
	assert_int_equal(near[0].rule, 0); /* 1 missing (jobs), 1 extra (jobz) */
	assert_int_equal(near[0].nmissing, 1);
	assert_int_equal(near[0].nextra, 1);
	assert_int_equal(near[1].rule, 1); /* 2 missing (jobs, list), 3 extra */
	assert_int_equal(near[1].nmissing, 2);
	assert_int_equal(near[2].rule, 2); /* 2 missing, 3 extra: ties broken by file order */
	assert_int_equal(analyze_diff(&s->tools[0], 0, argv, 6, &missing, &extra), 0);
	assert_int_equal(missing.n, 1);
	assert_memory_equal(missing.v[0].p, "jobs", 4);
	assert_int_equal(extra.n, 1);
	assert_memory_equal(extra.v[0].p, "jobz", 4);
	tokens_free(&missing);
	tokens_free(&extra);
	assert_int_equal(analyze_near_misses(&s->tools[0], argv, 6, near, 1), 1);
	assert_int_equal(near[0].rule, 0);
	mock_service_free(s);
}

static void test_strv__shell_split(void **state)
{
	struct strv w = { 0 };
	const char *why;

	(void)state;
	assert_int_equal(shell_split("uip or 'a b' \"c \\\"d\\\"\" e\\ f g#h # comment", &w, &why), 0);
	assert_int_equal(w.n, 6);
	assert_string_equal(w.v[2], "a b");
	assert_string_equal(w.v[3], "c \"d\"");
	assert_string_equal(w.v[4], "e f");
	assert_string_equal(w.v[5], "g#h");
	strv_free(&w);
	assert_int_equal(shell_split("''", &w, &why), 0);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.v[0], "");
	strv_free(&w);
	assert_int_equal(shell_split("a 'b", &w, &why), -EINVAL);
	assert_string_equal(why, "unbalanced single quote");
	assert_int_equal(shell_split("a \"b", &w, &why), -EINVAL);
	assert_string_equal(why, "unbalanced double quote");
	assert_int_equal(shell_split("a \\", &w, &why), -EINVAL);
}

static void test_strv__shell_join_round_trips(void **state)
{
	const char *argv[] = { "or", "a b", "it's", "", "x=1", "$HOME" };
	struct strv back = { 0 };
	struct buf b;
	const char *why;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(shell_join(argv, 6, &b), 0);
	assert_string_equal(b.data, "or 'a b' 'it'\"'\"'s' '' x=1 '$HOME'");
	assert_int_equal(shell_split(b.data, &back, &why), 0);
	assert_int_equal(back.n, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(back.v[i], argv[i]);
	strv_free(&back);
	buf_free(&b);
}

static void test_record__redaction(void **state)
{
	char *pats[] = { "token=[a-z0-9]+", "secret" };
	struct recorder r;
	struct buf b;
	size_t bad;

	(void)state;
	assert_int_equal(recorder_init(&r, "/dev/null", pats, 2, &bad), 0);
	buf_init(&b, 0);
	assert_int_equal(recorder_redact(&r, "a token=abc1 b secret c token=x", 31, &b), 0);
	assert_string_equal(b.data, "a [REDACTED] b [REDACTED] c [REDACTED]");
	buf_free(&b);
	recorder_free(&r);
	pats[0] = "(unclosed";
	assert_int_equal(recorder_init(&r, "/dev/null", pats, 2, &bad), -EINVAL);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_analyze__shadowed_subset_rule_found),
		cmocka_unit_test(test_analyze__self_answers),
		cmocka_unit_test(test_analyze__unsorted_pair_and_specificity),
		cmocka_unit_test(test_analyze__sort_order_is_stable_and_keeps_other_slots),
		cmocka_unit_test(test_analyze__sorted_fixture_is_not_unsorted),
		cmocka_unit_test(test_analyze__near_misses_rank_missing_then_extra),
		cmocka_unit_test(test_strv__shell_split),
		cmocka_unit_test(test_strv__shell_join_round_trips),
		cmocka_unit_test(test_record__redaction),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
