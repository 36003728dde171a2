/* SPDX-License-Identifier: MIT */
/* test_agent.c: agent descriptors (every key and template checked, errors name file and key),
 * template expansion, and the event rules: end of turn, failure, session id, usage, error. */
#include "helpers.h"

#include "../../src/agent/descriptor.h"
#include "../../src/agent/events.h"

#define STREAM_EVENTS                                                                                          \
	"\"events\":{\"framing\":\"json_lines\",\"end\":{\"type\":\"result\"},\"failed\":{\"is_error\":true}," \
	"\"session_id\":{\"when\":{\"type\":\"system\",\"subtype\":\"init\"},\"field\":\"session_id\"},"       \
	"\"usage\":{\"when\":{\"type\":\"result\"},\"field\":\"usage\"},"                                      \
	"\"error\":{\"when\":{\"type\":\"result\",\"is_error\":true},\"field\":\"result\"}}"

static const char good[] =
	"{\"version\":1,\"name\":\"cc\",\"description\":\"d\",\"argv\":[\"claude\",\"-p\",\"{prompt}\",\"{guard_args}\","
	"\"{plugin_args}\",\"{task_args}\"],\"argv_resume\":[\"claude\",\"-p\",\"{prompt}\",\"--resume\",\"{session_id}\"],"
	"\"plugin_arg\":[\"--plugin-dir\",\"{plugin_dir}\"],\"guard_arg\":[\"--settings\",\"{guard_settings}\"],"
	"\"prompt\":\"argument\",\"env\":{\"CLAUDE_CODE_TMPDIR\":\"{tmp}\",\"X\":\"{{literal}}\"},\"env_pass\":[\"K\"],"
	"\"dirs\":[\"{home}/.claude\"],\"guard\":\"claude-code\","
	"\"plugin_links\":[{\"at\":\"{home}/.x/skills/{plugin_bundle}\",\"to\":\"{plugin_dir}/skills\"}]," STREAM_EVENTS
	"}";

static const char *first_error(const char *text, struct agent_descriptor *a)
{
	static char msg[512];
	struct diag d;
	int r;

	diag_init(&d);
	r = agent_descriptor_parse("/a/x.json", text, strlen(text), &d, a);
	snprintf(msg, sizeof(msg), "%s", d.n ? d.msgs[0].text : "");
	diag_free(&d);
	return r == 0 ? NULL : msg;
}

static void test_descriptor__loads_and_expands(void **state)
{
	struct agent_descriptor a;
	struct strv plugins = { 0 }, args = { 0 }, argv = { 0 };
	struct agent_vars v = { .prompt = "fix it",
				.tmp = "/r/tmp",
				.home = "/r/home",
				.guard_settings = "/r/guard/s.json",
				.plugin_dirs = &plugins,
				.task_args = &args };
	const char *why = NULL;
	char *s = NULL;

	(void)state;
	assert_null(first_error(good, &a));
	assert_int_equal(strv_push(&plugins, "/r/bundles/plugin-0"), 0);
	assert_int_equal(strv_push(&plugins, "/r/bundles/plugin-1"), 0);
	assert_int_equal(strv_push(&args, "--model"), 0);
	assert_int_equal(strv_push(&args, "m"), 0);
	assert_int_equal(agent_argv(&a, &v, &argv, &why), 0);
	assert_int_equal(argv.n, 11);
	assert_string_equal(argv.v[2], "fix it");
	assert_string_equal(argv.v[3], "--settings");
	assert_string_equal(argv.v[4], "/r/guard/s.json");
	assert_string_equal(argv.v[6], "/r/bundles/plugin-0");
	assert_string_equal(argv.v[8], "/r/bundles/plugin-1");
	assert_string_equal(argv.v[10], "m");
	strv_free(&argv);
	/* no guard armed: {guard_args} is nothing */
	v.guard_settings = NULL;
	assert_int_equal(agent_argv(&a, &v, &argv, &why), 0);
	assert_int_equal(argv.n, 9);
	strv_free(&argv);
	/* a later turn needs the session id */
	v.turn = 1;
	assert_int_equal(agent_argv(&a, &v, &argv, &why), -EINVAL);
	assert_non_null(strstr(why, "session id"));
	v.session_id = "s-1";
	assert_int_equal(agent_argv(&a, &v, &argv, &why), 0);
	assert_string_equal(argv.v[4], "s-1");
	strv_free(&argv);
	assert_int_equal(agent_expand("{{x}} {tmp}/a }", &v, &s, &why), 0);
	assert_string_equal(s, "{x} /r/tmp/a }");
	free(s);
	/* plugin_links: one link per plugin, named by its bundle */
	assert_int_equal(a.link_at.n, 1);
	v.plugin_dir = "/r/bundles/plugin-1";
	v.plugin_bundle = "plugin-1";
	assert_int_equal(agent_expand(a.link_at.v[0], &v, &s, &why), 0);
	assert_string_equal(s, "/r/home/.x/skills/plugin-1");
	free(s);
	assert_int_equal(agent_expand(a.link_to.v[0], &v, &s, &why), 0);
	assert_string_equal(s, "/r/bundles/plugin-1/skills");
	free(s);
	strv_free(&plugins);
	strv_free(&args);
	agent_descriptor_free(&a);
}

static void test_descriptor__prompt_file(void **state)
{
	static const char text[] = "{\"version\":1,\"name\":\"f\",\"argv\":[\"x\",\"--prompt-file={prompt_file}\"],"
				   "\"prompt\":\"file\",\"events\":{\"framing\":\"lines\"}}";
	struct agent_descriptor a;
	struct agent_vars v = { .prompt = "fix it", .prompt_file = "/r/agent/prompt-0.txt" };
	struct strv argv = { 0 };
	const char *why = NULL;

	(void)state;
	assert_null(first_error(text, &a));
	assert_int_equal(a.prompt, AGENT_PROMPT_FILE);
	assert_int_equal(agent_argv(&a, &v, &argv, &why), 0);
	assert_int_equal(argv.n, 2);
	assert_string_equal(argv.v[1], "--prompt-file=/r/agent/prompt-0.txt");
	strv_free(&argv);
	/* no file written: the argv cannot be built */
	v.prompt_file = NULL;
	assert_int_equal(agent_argv(&a, &v, &argv, &why), -EINVAL);
	agent_descriptor_free(&a);
}

#define LINKS(v)                                                                                                  \
	"{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}," \
	"\"plugin_links\":" v "}"

static void test_descriptor__errors_name_file_and_key(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "[]", "/a/x.json: must be a JSON object" },
		{ "{\"version\":1", "/a/x.json:1:12: invalid JSON" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"colour\":1}",
		  "colour: unknown key" },
		{ "{\"version\":2,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "version: must be 1" },
		{ "{\"version\":1,\"name\":\"A B\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "name: must be" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "argv: must be a list of 1 to" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"{promt}\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "argv[0]: an unknown placeholder" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x{\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "argv[0]: an unclosed" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\",\"{session_id}\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "argv[1]: a placeholder that is not allowed here" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"--x={task_args}\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "argv[0]: a list placeholder that is not a whole element" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"argument\",\"events\":{\"framing\":\"lines\"}}",
		  "argv: \"prompt\" is \"argument\" but no element has {prompt}" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"argv_resume\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"}}",
		  "argv_resume: resuming needs {session_id}" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"xml\"}}",
		  "events.framing: must be" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"json_lines\"}}",
		  "events.end: JSON-lines agents must say" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\",\"end\":{\"a\":{}}}}",
		  "events.end: must be an object of scalars" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\",\"usage\":{\"when\":{\"t\":1}}}}",
		  "events.usage: \"field\" must be" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"env\":{\"PATH\":\"/x\"}}",
		  "env.PATH: not a name" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\",\"{prompt}\"],\"prompt\":\"file\",\"events\":{\"framing\":\"lines\"}}",
		  "argv: \"prompt\" is \"file\" but no element has {prompt_file}" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\",\"{prompt}\"],\"argv_resume\":[\"x\",\"{session_id}\"],\"prompt\":\"argument\",\"events\":{\"framing\":\"lines\",\"session_id\":{\"when\":{\"t\":1},\"field\":\"s\"}}}",
		  "argv_resume: no element has {prompt}" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"pipe\",\"events\":{\"framing\":\"lines\"}}",
		  "prompt: must be" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"env\":{\"TMPDIR\":\"/x\"}}",
		  "env.TMPDIR: not a name" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"env_pass\":[\"K\",\"HOME\"]}",
		  "env_pass[1]: not a name an agent descriptor may pass through" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"env_pass\":[\"PROCTOR_PROMPT\"]}",
		  "env_pass[0]: not a name" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"guard\":\"vim\"}",
		  "guard: must be" },
		{ "{\"version\":1,\"name\":\"a\",\"argv\":[\"x\"],\"prompt\":\"stdin\",\"events\":{\"framing\":\"lines\"},\"guard\":\"codex\"}",
		  "guard_arg: a guard harness needs" },
		{ LINKS("{}"), "plugin_links: must be a list" },
		{ LINKS("[{\"at\":\"{home}/s/{plugin_bundle}\"}]"), "plugin_links[0]: must be an object with exactly" },
		{ LINKS("[{\"at\":\"/etc/{plugin_bundle}\",\"to\":\"{plugin_dir}\"}]"),
		  "plugin_links[0]: \"at\" must start with {home}/" },
		{ LINKS("[{\"at\":\"{home}/skills\",\"to\":\"{plugin_dir}\"}]"),
		  "plugin_links[0]: \"at\" must name each plugin's link with {plugin_bundle}" },
		{ LINKS("[{\"at\":\"{home}/../{plugin_bundle}\",\"to\":\"{plugin_dir}\"}]"),
		  "plugin_links[0]: \"at\" must be a plain path" },
		{ LINKS("[{\"at\":\"{home}/{plugin_bundle}/{tmp}\",\"to\":\"{plugin_dir}\"}]"),
		  "plugin_links[0]: \"at\" must be a plain path" },
		{ LINKS("[{\"at\":\"{home}/{plugin_bundle}\",\"to\":\"{home}/x\"}]"),
		  "plugin_links[0]: \"to\" must be {plugin_dir}" },
		{ LINKS("[{\"at\":\"{home}/{plugin_bundle}\",\"to\":\"{plugin_dir}/../x\"}]"),
		  "plugin_links[0]: \"to\" must be {plugin_dir}" },
		{ LINKS("[{\"at\":\"{home}/{plugin_bundle}\",\"to\":\"{plugin_dir}/s/\"}]"),
		  "plugin_links[0]: \"to\" must be {plugin_dir}" },
		{ LINKS("[{\"at\":\"{home}/{prompt}/{plugin_bundle}\",\"to\":\"{plugin_dir}\"}]"),
		  "plugin_links[0]: a placeholder that is not allowed here" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct agent_descriptor a;
		const char *err = first_error(cases[i].text, &a);

		if (!err || !strstr(err, cases[i].want) || strncmp(err, "/a/x.json", 9))
			fail_msg("case %zu: want '%s', got '%s'", i, cases[i].want, err ? err : "(accepted)");
	}
}

static void feed(const struct events_rules *r, struct events_turn *t, const char *line)
{
	json_decref(events_feed(r, t, line, strlen(line)));
}

static void test_events__stream_json_turn(void **state)
{
	struct agent_descriptor a;
	struct events_turn t = { 0 };

	(void)state;
	assert_null(first_error(good, &a));
	feed(&a.events, &t, "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"abc\"}");
	feed(&a.events, &t, "not json");
	feed(&a.events, &t, "{\"type\":\"assistant\",\"message\":{}}");
	assert_false(t.ended);
	assert_string_equal(t.session_id, "abc");
	feed(&a.events, &t,
	     "{\"type\":\"result\",\"is_error\":true,\"result\":\"boom\",\"usage\":{\"output_tokens\":3}}");
	assert_true(t.ended);
	assert_true(t.failed);
	assert_string_equal(t.error, "boom");
	assert_int_equal(json_integer_value(json_object_get(t.usage, "output_tokens")), 3);
	assert_int_equal(t.lines, 4);
	assert_int_equal(t.recognised, 3);
	events_turn_free(&t);
	agent_descriptor_free(&a);
}

static void test_events__match_lists_and_paths(void **state)
{
	json_t *ev = json_pack("{s:s,s:{s:s}}", "type", "turn.failed", "error", "message", "gone");
	json_t *when = json_pack("[{s:s},{s:s}]", "type", "turn.completed", "type", "turn.failed");
	json_t *nested = json_pack("{s:s}", "error.message", "gone");

	(void)state;
	assert_true(events_match(ev, when));
	assert_true(events_match(ev, nested));
	assert_string_equal(json_string_value(events_path(ev, "error.message")), "gone");
	assert_null(events_path(ev, "error.message.deeper"));
	assert_null(events_path(ev, "nope"));
	json_object_set_new(nested, "error.message", json_string("other"));
	assert_false(events_match(ev, nested));
	json_decref(ev);
	json_decref(when);
	json_decref(nested);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptor__loads_and_expands),
		cmocka_unit_test(test_descriptor__prompt_file),
		cmocka_unit_test(test_descriptor__errors_name_file_and_key),
		cmocka_unit_test(test_events__stream_json_turn),
		cmocka_unit_test(test_events__match_lists_and_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
