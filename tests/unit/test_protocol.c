/* SPDX-License-Identifier: MIT */
/* test_protocol.c: protocol v1 frames and the journal line. These bytes are a contract with the
 * reference client and server and with graders reading calls.jsonl: change them only together
 * with doc/PROTOCOL.md. */
#include "helpers.h"

#include "../../src/lib/buf.h"
#include "../../src/lib/util.h"
#include "../../src/mock/journal.h"
#include "../../src/mock/protocol.h"

static int parse(const char *line, const char **why, struct mock_request *req)
{
	return mock_request_parse(line, strlen(line), req, why);
}

static void test_protocol__request_parses(void **state)
{
	struct mock_request req;
	const char *why;

	(void)state;
	assert_int_equal(
		parse("{\"version\":1,\"tool\":\"uip\",\"argv\":[\"or\",\"jobs\"],\"token\":\"x\"}", &why, &req), 0);
	assert_string_equal(req.tool, "uip");
	assert_int_equal(req.argc, 2);
	assert_string_equal(req.argv[1], "jobs");
	mock_request_free(&req);
}

static void test_protocol__bad_requests_rejected(void **state)
{
	static const char *bad[] = {
		"",
		"not json",
		"[1]",
		"{\"version\":2,\"tool\":\"uip\",\"argv\":[]}",
		"{\"version\":\"1\",\"tool\":\"uip\",\"argv\":[]}",
		"{\"version\":1,\"argv\":[]}",
		"{\"version\":1,\"tool\":\"uip\",\"argv\":\"or jobs\"}",
		"{\"version\":1,\"tool\":\"uip\",\"argv\":[1]}",
		"{\"version\":1,\"tool\":\"uip\",\"argv\":[\"a\\u0000b\"]}",
		"{\"version\":1,\"tool\":\"uip\",\"argv\":[\"\xff\"]}",
		"{\"version\":1,\"tool\":\"uip\",\"argv\":[]",
		"{\"version\":1,\"version\":1,\"tool\":\"uip\",\"argv\":[]}",
	};
	struct mock_request req;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &why, &req) != -EINVAL)
			fail_msg("accepted bad request %zu: %s", i, bad[i]);
		assert_non_null(why);
	}
}

/* A request of `argc` empty arguments (3 bytes each: well under the byte limit). */
static char *request_of_argc(size_t argc)
{
	struct buf b;

	buf_init(&b, 0);
	assert_int_equal(buf_printf(&b, "%s", "{\"version\":1,\"tool\":\"uip\",\"argv\":["), 0);
	for (size_t i = 0; i < argc; i++)
		assert_int_equal(buf_printf(&b, "%s", i ? ",\"\"" : "\"\""), 0);
	assert_int_equal(buf_printf(&b, "%s", "]}"), 0);
	return b.data;
}

/* The argc cap is exact: MOCK_MAX_ARGC arguments are served, one more is refused. */
static void test_protocol__argc_cap_exact(void **state)
{
	char *at = request_of_argc(MOCK_MAX_ARGC), *over = request_of_argc(MOCK_MAX_ARGC + 1);
	struct mock_request req;
	const char *why;

	(void)state;
	assert_true(strlen(over) < MOCK_MAX_REQUEST_BYTES);
	assert_int_equal(parse(at, &why, &req), 0);
	assert_int_equal(req.argc, MOCK_MAX_ARGC);
	mock_request_free(&req);
	assert_int_equal(parse(over, &why, &req), -EINVAL);
	free(at);
	free(over);
}

/* A tool name becomes a file name (RUN/bin/NAME -> proctor-shim): never "." or "..", nothing
 * but [A-Za-z0-9._+-], at most MOCK_MAX_TOOL_NAME bytes. */
static void test_protocol__tool_names(void **state)
{
	char longest[MOCK_MAX_TOOL_NAME + 2];

	(void)state;
	assert_true(mock_tool_name_valid("uip"));
	assert_true(mock_tool_name_valid("g++.x-1_2"));
	assert_true(mock_tool_name_valid("..."));
	assert_false(mock_tool_name_valid("."));
	assert_false(mock_tool_name_valid(".."));
	assert_false(mock_tool_name_valid(""));
	assert_false(mock_tool_name_valid("a/b"));
	assert_false(mock_tool_name_valid("a b"));
	memset(longest, 'a', sizeof(longest) - 1);
	longest[MOCK_MAX_TOOL_NAME] = '\0';
	assert_true(mock_tool_name_valid(longest));
	longest[MOCK_MAX_TOOL_NAME] = 'a';
	longest[MOCK_MAX_TOOL_NAME + 1] = '\0';
	assert_false(mock_tool_name_valid(longest));
}

static void test_protocol__request_at_limit(void **state)
{
	char *line = malloc(MOCK_MAX_REQUEST_BYTES + 1);
	struct mock_request req;
	const char *why;
	size_t head = (size_t)sprintf(line, "{\"version\":1,\"tool\":\"uip\",\"argv\":[\"");
	size_t fill = MOCK_MAX_REQUEST_BYTES - 1 - head - 3; /* line + '\n' == the limit */

	(void)state;
	memset(line + head, 'a', fill);
	strcpy(line + head + fill, "\"]}");
	assert_int_equal(strlen(line), MOCK_MAX_REQUEST_BYTES - 1);
	assert_int_equal(parse(line, &why, &req), 0);
	mock_request_free(&req);
	line[head] = 'b';
	memmove(line + head + 1, line + head, fill + 4); /* one byte over */
	assert_int_equal(mock_request_parse(line, MOCK_MAX_REQUEST_BYTES, &req, &why), -EINVAL);
	assert_string_equal(why, "invalid request size");
	free(line);
}

static void test_protocol__response_bytes_pinned(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(mock_response_encode(&b, 3, "caf\xc3\xa9\n", 6, "\"e\"\t", 4), 0);
	assert_string_equal(
		b.data, "{\"version\":1,\"exit_code\":3,\"stdout\":\"caf\\u00E9\\n\",\"stderr\":\"\\\"e\\\"\\t\"}\n");
	buf_free(&b);
}

static void test_protocol__request_bytes_pinned(void **state)
{
	char *argv[] = { "or", "--x=\xe2\x82\xac", "" };
	struct buf b;
	long bad;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(mock_request_encode(&b, "uip", argv, 3, &bad), 0);
	assert_string_equal(b.data, "{\"version\":1,\"tool\":\"uip\",\"argv\":[\"or\",\"--x=\\u20AC\",\"\"]}\n");
	buf_free(&b);
}

static void test_protocol__request_encode_limits(void **state)
{
	char *big = malloc(MOCK_MAX_REQUEST_BYTES);
	char *argv[] = { big };
	char *bad_utf8[] = { "ok", "\xc3(" };
	struct buf b;
	long bad;

	(void)state;
	memset(big, 'x', MOCK_MAX_REQUEST_BYTES - 1);
	big[MOCK_MAX_REQUEST_BYTES - 1] = '\0';
	buf_init(&b, MOCK_MAX_REQUEST_BYTES + 1);
	assert_int_equal(mock_request_encode(&b, "uip", argv, 1, &bad), -E2BIG);
	assert_int_equal(mock_request_encode(&b, "uip", bad_utf8, 2, &bad), -EILSEQ);
	assert_int_equal(bad, 1);
	buf_free(&b);
	free(big);
}

static void test_protocol__response_over_limit(void **state)
{
	size_t n = MOCK_MAX_RESPONSE_BYTES / 6 + 1; /* each control byte escapes to 6 bytes */
	char *ctl = malloc(n);
	struct buf b;

	(void)state;
	memset(ctl, 1, n);
	buf_init(&b, 0);
	assert_int_equal(mock_response_encode(&b, 0, ctl, n, "", 0), -E2BIG);
	assert_int_equal(b.len, 0);
	buf_free(&b);
	free(ctl);
}

static void test_journal__line_bytes_pinned(void **state)
{
	const char *argv[] = { "or", "jobs" };
	struct journal_entry e = { .ts = 1764459580.1234,
				   .tool = "uip",
				   .argv = argv,
				   .argc = 2,
				   .exit_code = 0,
				   .outcome = OUTCOME_SUBSET,
				   .rule = 4,
				   .pid = 77,
				   .uid = 2000 };
	struct buf b;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(journal_format(&e, &b), 0);
	assert_string_equal(b.data, "{\"ts\":1764459580.123,\"tool\":\"uip\",\"argv\":[\"or\",\"jobs\"],\"exit\":0,"
				    "\"outcome\":\"subset\",\"rule\":4,\"pid\":77,\"uid\":2000}\n");
	buf_reset(&b);
	e = (struct journal_entry){
		.ts = 1764459580.5, .exit_code = 77, .outcome = OUTCOME_REJECTED, .rule = -1, .pid = 9, .uid = 65534
	};
	assert_int_equal(journal_format(&e, &b), 0);
	assert_string_equal(b.data, "{\"ts\":1764459580.5,\"tool\":null,\"argv\":[],\"exit\":77,"
				    "\"outcome\":\"rejected\",\"rule\":null,\"pid\":9,\"uid\":65534}\n");
	buf_free(&b);
}

static void test_util__utf8_sanitize_replaces_invalid(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(utf8_sanitize(&b,
				       "a\xff"
				       "b\xc3\xa9"
				       "\xed\xa0\x80"
				       "z\0",
				       10),
			 0);
	assert_string_equal(b.data, "a\xef\xbf\xbd"
				    "b\xc3\xa9"
				    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				    "z\xef\xbf\xbd");
	assert_true(utf8_valid(b.data, b.len));
	assert_false(utf8_valid("\xc0\x80", 2));         /* overlong NUL */
	assert_false(utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
	buf_free(&b);
}

static void test_util__parse_ulong_strict(void **state)
{
	unsigned long v;
	unsigned m;

	(void)state;
	assert_int_equal(parse_ulong("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_not_equal(parse_ulong("-1", 0, 100, &v), 0);
	assert_int_not_equal(parse_ulong(" 1", 0, 100, &v), 0);
	assert_int_not_equal(parse_ulong("1x", 0, 100, &v), 0);
	assert_int_not_equal(parse_ulong("101", 0, 100, &v), 0);
	assert_int_not_equal(parse_ulong("", 0, 100, &v), 0);
	assert_int_equal(parse_mode("0660", &m), 0);
	assert_int_equal(m, 0660);
	assert_int_not_equal(parse_mode("0689", &m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protocol__request_parses),
		cmocka_unit_test(test_protocol__bad_requests_rejected),
		cmocka_unit_test(test_protocol__argc_cap_exact),
		cmocka_unit_test(test_protocol__tool_names),
		cmocka_unit_test(test_protocol__request_at_limit),
		cmocka_unit_test(test_protocol__response_bytes_pinned),
		cmocka_unit_test(test_protocol__request_bytes_pinned),
		cmocka_unit_test(test_protocol__request_encode_limits),
		cmocka_unit_test(test_protocol__response_over_limit),
		cmocka_unit_test(test_journal__line_bytes_pinned),
		cmocka_unit_test(test_util__utf8_sanitize_replaces_invalid),
		cmocka_unit_test(test_util__parse_ulong_strict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
