/* SPDX-License-Identifier: MIT */
/* test_guard.c: the Bash write-target analyzer over a table of commands (verdict and reason),
 * path resolution through symlinks, apply_patch targets, and the verdict bytes (a contract with
 * Claude Code and Codex). @R in a command is the allowed root. */
#include "helpers.h"

#include <limits.h>
#include <sys/stat.h>

#include "../../src/guard/decide.h"
#include "../../src/guard/guard.h"
#include "../../src/lib/fd.h"
#include "../../src/lib/util.h"

static char root[256];

static char outside[256];

/* @R -> the workspace, @O -> a directory outside it. */
static const char *expand(const char *cmd)
{
	static char out[65536];
	size_t o = 0;

	for (const char *p = cmd; *p && o + PATH_MAX < sizeof(out); p++) {
		if (p[0] == '@' && (p[1] == 'R' || p[1] == 'O')) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", p[1] == 'R' ? root : outside);
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return out;
}

static struct guard_marker marker(void)
{
	struct guard_marker m = { .active = true, .expires_ms = INT64_MAX };

	assert_int_equal(strv_push(&m.roots, root), 0);
	return m;
}

/* "\n" "\t" "\\" in a table cell. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == 't' || s[1] == '\\')) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : '\\';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

struct tally {
	char cat[32];
	unsigned attacks, attacks_allowed, ordinary, ordinary_denied, odd;
};

/* The verdict table (tests/unit/guard_table.tsv): every row's verdict and reason, and per
 * category the attacks allowed and the ordinary commands denied. */
static void test_guard__verdict_table(void **state)
{
	struct guard_marker m = marker();
	struct tally t[32] = { 0 };
	size_t nt = 0, bad = 0, rows = 0, attacks = 0, allowed = 0, ordinary = 0, denied = 0;
	char line[65536];
	FILE *f = fopen("tests/unit/guard_table.tsv", "re");

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *cols[6], *save = NULL;
		int nc = 0;
		struct tally *ty = NULL;
		json_t *p;
		struct guard_verdict v;
		const char *cmd;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (char *c = strtok_r(line, "\t", &save); c && nc < 6; c = strtok_r(NULL, "\t", &save))
			cols[nc++] = c;
		assert_int_equal(nc, 6);
		/* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): assert_int_equal ended the test unless nc == 6 */
		unescape(cols[5]);
		cmd = expand(cols[5]);
		p = json_pack("{s:s,s:s,s:{s:s}}", "tool_name", "Bash", "cwd", root, "tool_input", "command", cmd);
		guard_decide(&m, p, &v);
		rows++;
		if ((cols[2][0] == 'D') != v.deny ||
		    (v.deny && strcmp(cols[3], "-") && !strstr(v.reason, expand(cols[3])))) {
			print_message("row %zu [%s] %s: expected %s / %s, got %s%s\n", rows, cols[0], cols[5], cols[2],
				      cols[3], v.deny ? "deny: " : "allow", v.deny ? v.reason : "");
			bad++;
		}
		for (size_t i = 0; i < nt; i++)
			if (!strcmp(t[i].cat, cols[0]))
				ty = &t[i];
		if (!ty && nt < 32) {
			ty = &t[nt++];
			snprintf(ty->cat, sizeof(ty->cat), "%s", cols[0]);
		}
		if (ty && !strcmp(cols[1], "attack")) {
			ty->attacks++, attacks++;
			ty->attacks_allowed += !v.deny, allowed += !v.deny;
		} else if (ty && !strcmp(cols[1], "ordinary")) {
			ty->ordinary++, ordinary++;
			ty->ordinary_denied += v.deny, denied += v.deny;
		} else if (ty) {
			ty->odd++;
		}
		guard_verdict_free(&v);
		json_decref(p);
	}
	(void)fclose(f);
	print_message("%-14s %8s %8s %9s %8s\n", "category", "attacks", "allowed", "ordinary", "denied");
	for (size_t i = 0; i < nt; i++)
		print_message("%-14s %8u %8u %9u %8u\n", t[i].cat, t[i].attacks, t[i].attacks_allowed, t[i].ordinary,
			      t[i].ordinary_denied);
	print_message("%-14s %8zu %8zu %9zu %8zu  (%zu rows)\n", "total", attacks, allowed, ordinary, denied, rows);
	guard_marker_free(&m);
	assert_true(rows >= 600);
	assert_int_equal(bad, 0);
	/* the goals: under 10% of attacks allowed, under 2% of ordinary commands denied */
	assert_true(allowed * 10 < attacks);
	assert_true(denied * 50 < ordinary);
}

static void decide_tool(const char *json_text, bool expect_deny, const char *why)
{
	struct guard_marker m = marker();
	json_error_t e;
	json_t *p = json_loads(expand(json_text), 0, &e);
	struct guard_verdict v;

	assert_non_null(p);
	guard_decide(&m, p, &v);
	if (v.deny != expect_deny || (why && !strstr(v.reason, expand(why))))
		fail_msg("%s: got %s %s", json_text, v.deny ? "deny" : "allow", v.reason);
	guard_verdict_free(&v);
	json_decref(p);
	guard_marker_free(&m);
}

static void test_guard__write_tools(void **state)
{
	(void)state;
	decide_tool(
		"{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/a.txt\",\"content\":\"x\"}}",
		false, NULL);
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"rel/b.txt\"}}", false,
		    NULL);
	decide_tool("{\"tool_name\":\"Edit\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/etc/hosts\"}}", true,
		    "Edit /etc/hosts: outside the allowed roots");
	decide_tool("{\"tool_name\":\"MultiEdit\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/outlink/x\"}}",
		    true, "outside");
	decide_tool(
		"{\"tool_name\":\"NotebookEdit\",\"cwd\":\"@R\",\"tool_input\":{\"notebook_path\":\"/tmp/n.ipynb\"}}",
		true, "outside");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/sub/../../x\"}}", true,
		    "outside");
	decide_tool(
		"{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/.claude/settings.local.json\"}}",
		true, "guard's own files");
	/* a sibling whose name starts with the root's is outside: a root is a directory, not a prefix */
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R-evil/x\"}}", true,
		    "Write @R-evil/x: outside the allowed roots");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@Rx\"}}", true, "outside");
	decide_tool("{\"tool_name\":\"Bash\",\"cwd\":\"@R\",\"tool_input\":{\"command\":\"echo x > ../ws2/y\"}}", true,
		    "outside");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{}}", true, "no file_path");
	decide_tool("{\"tool_name\":\"Read\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/etc/shadow\"}}", false,
		    NULL);
	/* through a dangling link, a write creates its target outside */
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/danglink\"}}", true,
		    "outside");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/dev/null\"}}", false,
		    NULL);
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/dev/fd/../../@O/x\"}}",
		    true, "outside");
	/* only /dev/fd/N itself is a standard stream: below it is the directory an fd names */
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/dev/fd/3/x\"}}", true,
		    NULL);
	decide_tool(
		"{\"tool_name\":\"Bash\",\"cwd\":\"@R\",\"tool_input\":{\"command\":\"exec 3</etc; echo x > /dev/fd/3/passwd\"}}",
		true, NULL);
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/dev/fd/1x\"}}", true,
		    NULL);
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/dev/fd/2\"}}", false,
		    NULL);
	decide_tool(
		"{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/.claude/settings.json\"}}",
		true, "guard's own files");
	/* unknown (MCP) tools: judged by the paths in their input */
	decide_tool(
		"{\"tool_name\":\"mcp__fs__write_file\",\"cwd\":\"@R\",\"tool_input\":{\"path\":\"@O/m\",\"content\":\"x\"}}",
		true, "mcp__fs__write_file @O/m: outside");
	decide_tool(
		"{\"tool_name\":\"mcp__x__y\",\"cwd\":\"@R\",\"tool_input\":{\"opts\":{\"outputDir\":\"outlink\"}}}",
		true, "outside");
	decide_tool("{\"tool_name\":\"mcp__x__y\",\"cwd\":\"@R\",\"tool_input\":{\"files\":[\"a.txt\",\"@O/z\"]}}",
		    true, "outside");
	decide_tool(
		"{\"tool_name\":\"mcp__fs__write_file\",\"cwd\":\"@R\",\"tool_input\":{\"path\":\"sub/m\",\"text\":\"/etc/x\"}}",
		false, NULL);
	decide_tool(
		"{\"tool_name\":\"WebFetch\",\"cwd\":\"@R\",\"tool_input\":{\"url\":\"https://x\",\"path\":\"/etc\"}}",
		false, NULL);
	/* a Bash command holding patch markers is still a Bash command */
	decide_tool(
		"{\"tool_name\":\"Bash\",\"cwd\":\"@R\",\"tool_input\":{\"command\":\"echo '*** Begin Patch' > @O/p\"}}",
		true, "redirection: @O/p: outside");
}

/* Fail closed on limits: a command over the size limit, and one over the time budget. */
static void test_guard__limits_fail_closed(void **state)
{
	struct guard_marker m = marker();
	struct guard_verdict v;
	char *big = malloc(300 * 1024);
	json_t *p;
	const char *boom =
		"f1() { :; }; f2() { f1;f1;f1;f1;f1;f1;f1;f1; }; f3() { f2;f2;f2;f2;f2;f2;f2;f2; }; "
		"f4() { f3;f3;f3;f3;f3;f3;f3;f3; }; f5() { f4;f4;f4;f4;f4;f4;f4;f4; }; f6() { f5;f5;f5;f5;f5;f5;f5;f5; }; "
		"f7() { f6;f6;f6;f6;f6;f6;f6;f6; }; f7";

	(void)state;
	assert_non_null(big);
	memset(big, 'a', 300 * 1024 - 1);
	memcpy(big, "echo ", 5);
	big[300 * 1024 - 1] = '\0';
	p = json_pack("{s:s,s:s,s:{s:s}}", "tool_name", "Bash", "cwd", root, "tool_input", "command", big);
	guard_decide(&m, p, &v);
	assert_true(v.deny);
	assert_non_null(strstr(v.reason, "longer than"));
	guard_verdict_free(&v);
	json_decref(p);
	p = json_pack("{s:s,s:s,s:{s:s}}", "tool_name", "Bash", "cwd", root, "tool_input", "command", boom);
	guard_decide(&m, p, &v);
	assert_true(v.deny);
	assert_non_null(strstr(v.reason, "took longer than"));
	guard_verdict_free(&v);
	json_decref(p);
	/* Nesting past each limit is refused, not followed (a crashed hook allows). The counts stay
	 * small enough that the analysis finishes far inside its CPU budget even under ASan on a slow
	 * machine, so the reason is the limit's: without the limit, 200 wrappers would be allowed and
	 * 300 nested braces would yield too many words. $(( )) is refused by the lexer, cheaply. */
	for (int k = 0; k < 3; k++) {
		size_t o = 0;
		int count = k == 0 ? 200 : k == 1 ? 20000 : 300;

		for (int i = 0; i < count; i++)
			o += (size_t)snprintf(big + o, 300 * 1024 - o, "%s",
					      k == 0 ? "nice " :
					      k == 1 ? "$(( " :
						       "{a,");
		o += (size_t)snprintf(big + o, 300 * 1024 - o, "%s", k == 0 ? "touch x" : k == 1 ? "1" : "b");
		for (int i = 0; k == 2 && i < count; i++)
			big[o++] = '}';
		big[o] = '\0';
		p = json_pack("{s:s,s:s,s:{s:s}}", "tool_name", "Bash", "cwd", root, "tool_input", "command", big);
		guard_decide(&m, p, &v);
		assert_true(v.deny);
		if (!strstr(v.reason, k == 0 ? "wrapped more than" : "nested too deeply"))
			fail_msg("case %d: %s", k, v.reason);
		guard_verdict_free(&v);
		json_decref(p);
	}
	free(big);
	guard_marker_free(&m);
}

static void test_guard__apply_patch_targets(void **state)
{
	(void)state;
	decide_tool(
		"{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"command\":[\"apply_patch\","
		"\"*** Begin Patch\\n*** Add File: new.txt\\n+hi\\n*** Update File: sub/a.c\\n@@\\n-x\\n+y\\n*** End Patch\"]}}",
		false, NULL);
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n*** Update File: a.c\\n*** Move to: /tmp/moved.c\\n*** End Patch\"}}",
		    true, "apply_patch /tmp/moved.c: outside");
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n*** Delete File: /etc/passwd\\n*** End Patch\"}}",
		    true, "/etc/passwd");
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":\"no patch here\"}}", true,
		    "no file targets");
	/* Codex trims each line before it matches a header */
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n   *** Add File: @O/indented   \\n+x\\n*** End Patch\"}}",
		    true, "apply_patch @O/indented: outside");
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n*** Update File: a.txt\\n\\t*** Move to: @O/moved\\n*** End Patch\"}}",
		    true, "@O/moved: outside");
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n*** Add file: @O/case\\n*** End Patch\"}}",
		    true, "not a patch header");
	/* through the shell tool: argv form and a heredoc */
	decide_tool("{\"tool_name\":\"Bash\",\"cwd\":\"@R\",\"tool_input\":{\"command\":[\"apply_patch\","
		    "\"*** Begin Patch\\n*** Delete File: @O/f\\n*** End Patch\"]}}",
		    true, "apply_patch @O/f: outside");
	decide_tool("{\"tool_name\":\"Bash\",\"cwd\":\"@R\",\"tool_input\":{\"command\":\"apply_patch <<'EOF'\\n"
		    "*** Begin Patch\\n*** Add File: @O/hd\\n+x\\n*** End Patch\\nEOF\"}}",
		    true, "apply_patch @O/hd: outside");
	decide_tool("{\"tool_name\":\"Bash\",\"cwd\":\"@R\",\"tool_input\":{\"command\":\"apply_patch <<'EOF'\\n"
		    "*** Begin Patch\\n*** Add File: sub/ok.txt\\n+x\\n*** End Patch\\nEOF\"}}",
		    false, NULL);
}

/* The header parser on its own (it is fuzzed as fuzz_apply_patch): targets as written, in order;
 * lines trimmed as Codex trims them; a bare or unknown "***" header refused. */
static void test_guard__patch_targets_parsed(void **state)
{
	struct strv t = { 0 };
	const char *bad;

	(void)state;
	assert_int_equal(guard_patch_targets("*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b/c.py\n"
					     "*** Move to: d.py\n@@\n-x\n+y\n*** End of File\n"
					     " \t*** Delete File: /etc/e \r\n*** End Patch\n",
					     &t, &bad),
			 0);
	assert_int_equal(t.n, 4);
	assert_string_equal(t.v[0], "a.txt");
	assert_string_equal(t.v[1], "b/c.py");
	assert_string_equal(t.v[2], "d.py");
	assert_string_equal(t.v[3], "/etc/e");
	strv_free(&t);
	assert_int_equal(guard_patch_targets("*** Begin Patch\n*** Add File: \n*** End Patch", &t, &bad), -EINVAL);
	assert_non_null(strstr(bad, "not a patch header"));
	strv_free(&t);
	assert_int_equal(guard_patch_targets("*** Begin Patch\n*** add file: x\n", &t, &bad), -EINVAL);
	strv_free(&t);
	assert_int_equal(guard_patch_targets("no patch\n+*** body line\n", &t, &bad), 0);
	assert_int_equal(t.n, 0);
	strv_free(&t);
}

static void test_guard__verdict_bytes_pinned(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(guard_verdict_json(HARNESS_CLAUDE, "Edit /etc/x: outside the allowed roots", &b), 0);
	assert_string_equal(
		b.data, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\","
			"\"permissionDecisionReason\":\"proctor guard: Edit /etc/x: outside the allowed roots\"}}\n");
	buf_reset(&b);
	assert_int_equal(guard_verdict_json(HARNESS_CODEX, "git push: network operations are not allowed", &b), 0);
	assert_string_equal(
		b.data,
		"{\"decision\":\"block\",\"reason\":\"proctor guard: git push: network operations are not allowed\"}\n");
	buf_free(&b);
}

static void test_guard__marker_armed_and_expiry(void **state)
{
	struct guard_marker m;
	const char *path = scratch_file(
		"m.json", "{\n  \"active\": true,\n  \"allowedRoots\": [\n    \"/w\"\n  ],\n"
			  "  \"expiresAt\": \"2030-01-02T03:04:05.678Z\",\n  \"denialLogPath\": null\n}\n");

	(void)state;
	assert_int_equal(guard_marker_load(path, &m), 0);
	assert_true(m.expires_ms == 1893553445678LL);
	assert_true(guard_marker_armed(&m, 1893553445677LL));
	assert_false(guard_marker_armed(&m, 1893553445678LL));
	guard_marker_free(&m);
	path = scratch_file("bad.json",
			    "{\"active\":true,\"allowedRoots\":[\"rel\"],\"expiresAt\":\"2030-01-02T03:04:05.678Z\"}");
	assert_int_equal(guard_marker_load(path, &m), -EINVAL);
	path = scratch_file("bad2.json", "{\"active\":true,\"allowedRoots\":[\"/w\"],\"expiresAt\":\"tomorrow\"}");
	assert_int_equal(guard_marker_load(path, &m), -EINVAL);
}

/* The hook configuration `proctor run` hands the harness, and the marker it writes in the run
 * directory: byte-pinned, a contract with Claude Code / Codex and with the hook. */
static void test_guard__hook_config_bytes_pinned(void **state)
{
	json_t *j;
	char *s;

	(void)state;
	j = guard_hook_config(HARNESS_CLAUDE, "/usr/bin/proctor", "/runs/r1/guard.json");
	assert_non_null(j);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s, "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"*\","
			       "\"hooks\":[{\"type\":\"command\",\"command\":\"\\\"/usr/bin/proctor\\\" guard hook "
			       "--harness claude-code \\\"/runs/r1/guard.json\\\"\"}]}]}}");
	free(s);
	json_decref(j);
	j = guard_hook_config(HARNESS_CODEX, "/usr/bin/proctor", "/runs/r1/guard.json");
	assert_non_null(j);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s, "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"^Bash$|^apply_patch$|^Edit$|^Write$\","
			       "\"hooks\":[{\"type\":\"command\",\"command\":\"\\\"/usr/bin/proctor\\\" guard hook "
			       "--harness codex \\\"/runs/r1/guard.json\\\"\",\"timeout\":30,"
			       "\"statusMessage\":\"proctor guard: checking write targets\"}]}]}}");
	free(s);
	json_decref(j);
}

static void test_guard__marker_write_bytes_pinned(void **state)
{
	static const char prefix[] = "{\n  \"active\": true,\n  \"allowedRoots\": [\n    \"/runs/r1/workspace\"\n  ],\n"
				     "  \"expiresAt\": \"";
	char path[256], *text;
	struct guard_marker m;
	struct buf b;
	int64_t before = now_epoch_ms();

	(void)state;
	snprintf(path, sizeof(path), "%s/run-marker.json", scratch_dir);
	assert_int_equal(guard_marker_write(path, "/runs/r1/workspace", 600, "/runs/r1/logs/guard-denials.jsonl"), 0);
	buf_init(&b, 0);
	assert_int_equal(fd_read_file(path, 65536, &b), 0);
	text = b.data;
	/* Everything but the timestamp is fixed. */
	assert_true(b.len > strlen(prefix) + 24);
	assert_memory_equal(text, prefix, strlen(prefix));
	assert_string_equal(text + strlen(prefix) + 24,
			    "\",\n  \"denialLogPath\": \"/runs/r1/logs/guard-denials.jsonl\"\n}\n");
	assert_int_equal(guard_marker_load(path, &m), 0);
	assert_true(guard_marker_armed(&m, now_epoch_ms()));
	assert_true(m.expires_ms >= before + 600000 - 1000 && m.expires_ms <= now_epoch_ms() + 600000);
	assert_string_equal(m.roots.v[0], "/runs/r1/workspace");
	assert_string_equal(m.denial_log, "/runs/r1/logs/guard-denials.jsonl");
	guard_marker_free(&m);
	buf_free(&b);
	assert_int_equal(guard_marker_write(path, "/w", 60, NULL), 0);
	assert_int_equal(guard_marker_load(path, &m), 0);
	assert_null(m.denial_log);
	guard_marker_free(&m);
	assert_int_equal(guard_marker_write("rel/marker.json", "/w", 60, NULL), -EINVAL);
	assert_int_equal(guard_marker_write(path, "rel", 60, NULL), -EINVAL);
	assert_int_equal(guard_marker_write(path, "/w", 0, NULL), -EINVAL);
}

static int put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "we");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The workspace every row runs in (tests/e2e/guard_attacks.py builds the same one). */
static int guard_setup(void **state)
{
	static const char *const dirs[] = { "", "/sub", "/.claude", "/.claude/skills", "/d" };
	char p[512], evil[512];

	if (scratch_setup(state) < 0)
		return -1;
	snprintf(root, sizeof(root), "%s/ws", scratch_dir);
	snprintf(outside, sizeof(outside), "%s/out", scratch_dir);
	mkdir(outside, 0755);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", root, dirs[i]);
		mkdir(p, 0755);
	}
	snprintf(p, sizeof(p), "%s/outlink", root); /* a link the agent made, pointing outside */
	if (symlink(outside, p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/inlink", root);
	if (symlink("sub", p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/danglink", root); /* dangling: a write creates its target outside */
	snprintf(evil, sizeof(evil), "%s/newfile", outside);
	if (symlink(evil, p) < 0)
		return -1;
	snprintf(evil, sizeof(evil), "#!/bin/sh\ntouch %s/evil\n", outside);
	if (put("evil.sh", evil) < 0 || put("good.sh", "#!/bin/sh\necho hi > out.txt\n") < 0 ||
	    put("a.txt", "a\n") < 0 || put("b.txt", "b\n") < 0 || put(".claude/settings.local.json", "{}\n") < 0 ||
	    put(".claude/skills/.proctor-guard.json", "{}\n") < 0 ||
	    put(".claude/skills/.proctor-guard.manifest.json", "{}\n") < 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard__verdict_table),
		cmocka_unit_test(test_guard__write_tools),
		cmocka_unit_test(test_guard__limits_fail_closed),
		cmocka_unit_test(test_guard__apply_patch_targets),
		cmocka_unit_test(test_guard__patch_targets_parsed),
		cmocka_unit_test(test_guard__verdict_bytes_pinned),
		cmocka_unit_test(test_guard__marker_armed_and_expiry),
		cmocka_unit_test(test_guard__hook_config_bytes_pinned),
		cmocka_unit_test(test_guard__marker_write_bytes_pinned),
	};

	return cmocka_run_group_tests(tests, guard_setup, scratch_teardown);
}
