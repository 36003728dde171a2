/* SPDX-License-Identifier: MIT */
/* test_guard.c: the Bash write-target analyzer over a table of commands (verdict and reason),
 * path resolution through symlinks, apply_patch targets, and the verdict bytes (a contract with
 * Claude Code and Codex). @R in a command is the allowed root. */
#include "helpers.h"

#include <sys/stat.h>

#include "../../src/guard/decide.h"
#include "../../src/guard/guard.h"
#include "../../src/lib/fd.h"
#include "../../src/lib/util.h"

struct row {
	const char *cmd;
	char expect; /* 'A' allow, 'D' deny */
	const char *why; /* substring of the reason (deny) */
};

static const struct row rows[] = {
	/* redirections */
	{ "echo hi > out.txt", 'A', NULL },
	{ "echo hi > @R/out.txt", 'A', NULL },
	{ "echo hi >> sub/log.txt", 'A', NULL },
	{ "echo hi > /etc/passwd", 'D', "redirection: /etc/passwd: outside" },
	{ "echo hi >> /tmp/x", 'D', "outside the allowed roots" },
	{ "echo hi >| /tmp/x", 'D', "outside" },
	{ "echo hi &> /tmp/x", 'D', "outside" },
	{ "echo hi &>> /tmp/x", 'D', "outside" },
	{ "echo hi 2> /tmp/err", 'D', "outside" },
	{ "echo hi 1>/tmp/out", 'D', "outside" },
	{ "echo hi >/tmp/nospace", 'D', "outside" },
	{ "echo hi 2>&1", 'A', NULL },
	{ "echo hi >&2", 'A', NULL },
	{ "echo hi 2>&-", 'A', NULL },
	{ "echo hi > /dev/null", 'A', NULL },
	{ "echo hi 2>/dev/null", 'A', NULL },
	{ "echo hi > /dev/stderr", 'A', NULL },
	{ "echo hi > /dev/stdout", 'A', NULL },
	{ "echo hi > /dev/fd/3", 'A', NULL },
	{ "ls >& /tmp/both", 'D', "outside" },
	{ "cat < /etc/passwd", 'A', NULL },
	{ "cat /etc/passwd", 'A', NULL },
	{ "wc -l <<< \"x > /etc/y\"", 'A', NULL },
	{ "exec 3> /tmp/fd3", 'D', "outside" },
	{ "echo a > ./../../../etc/x", 'D', "outside" },
	{ "echo a > sub/../../escape", 'D', "outside" },
	{ "echo a > sub/../inside", 'A', NULL },
	{ "echo > \"$HOME/x\"", 'D', "computed at run time" },
	{ "echo > $OUT", 'D', "computed at run time" },
	{ "echo > $(mktemp)", 'D', "computed at run time" },
	{ "echo > `date`.log", 'D', "computed at run time" },
	{ "echo > ~/x", 'D', "home-relative" },
	/* quoting tricks */
	{ "echo '> /etc/x'", 'A', NULL },
	{ "echo \"> /etc/x\"", 'A', NULL },
	{ "echo \\> /etc/x", 'A', NULL },
	{ "echo x > '/etc/quoted'", 'D', "/etc/quoted" },
	{ "echo x > \"/etc/dq\"", 'D', "/etc/dq" },
	{ "echo x > /et'c'/mixed", 'D', "/etc/mixed" },
	{ "echo x > /e\"t\"c/mix2", 'D', "/etc/mix2" },
	{ "echo x > /e\\tc/esc", 'D', "/etc/esc" },
	{ "printf '%s\\n' a b > list.txt", 'A', NULL },
	{ "grep -r 'a>b' src", 'A', NULL },
	{ "echo 'it''s' > ok.txt", 'A', NULL },
	/* line continuations */
	{ "echo x > /et\\\nc/cont", 'D', "/etc/cont" },
	{ "touch \\\n /etc/c2", 'D', "/etc/c2" },
	{ "ls \\\n -la", 'A', NULL },
	/* heredocs whose bodies look like redirects */
	{ "cat <<EOF > notes.txt\necho x > /etc/passwd\nEOF", 'A', NULL },
	{ "cat <<'EOF'\nrm -rf /\n> /etc/x\nEOF", 'A', NULL },
	{ "cat <<-EOF > @R/n.txt\n\t> /etc/x\n\tEOF", 'A', NULL },
	{ "cat <<EOF > /etc/motd\nhi\nEOF", 'D', "/etc/motd" },
	{ "cat <<EOF\nhello\nEOF\necho x > /tmp/after", 'D', "/tmp/after" },
	/* arithmetic is not redirection */
	{ "echo $((1<<2))", 'A', NULL },
	{ "x=$((1 << 3 >> 1)); echo $x", 'A', NULL },
	{ "echo $(( 4 > 3 ))", 'A', NULL },
	/* command substitution is analysed too */
	{ "echo $(touch /etc/sub)", 'D', "/etc/sub" },
	{ "echo `rm /etc/bq`", 'D', "/etc/bq" },
	{ "echo \"$(echo > /tmp/inner)\"", 'D', "/tmp/inner" },
	{ "diff <(sort a) <(sort b)", 'A', NULL },
	{ "tee >(cat > /tmp/ps) < in", 'D', "/tmp/ps" },
	/* nested shells */
	{ "sh -c 'echo x > /etc/y'", 'D', "/etc/y" },
	{ "bash -c \"touch /tmp/z\"", 'D', "/tmp/z" },
	{ "bash -lc 'rm -rf /var/tmp'", 'D', "/var/tmp" },
	{ "sh -c 'sh -c \"echo > /etc/deep\"'", 'D', "/etc/deep" },
	{ "bash -c 'echo ok > ok.txt'", 'A', NULL },
	{ "sh -c \"$CMD\"", 'D', "computed at run time" },
	{ "eval 'echo > /etc/ev'", 'D', "/etc/ev" },
	{ "eval \"$X\"", 'D', "computed at run time" },
	/* cd tracking */
	{ "cd /tmp && touch x", 'D', "x: outside" },
	{ "cd /tmp; echo x > y", 'D', "outside" },
	{ "cd sub && touch x", 'A', NULL },
	{ "cd @R/sub && echo x > y", 'A', NULL },
	{ "cd .. && touch up", 'D', "outside" },
	{ "cd && touch home", 'D', "unknown directory" },
	{ "cd \"$DIR\" && touch q", 'D', "unknown directory" },
	{ "cd /tmp && ls", 'A', NULL },
	{ "pushd /etc && touch p", 'D', "outside" },
	/* links the agent creates, and ones that already exist */
	{ "ln -s /etc l && echo x > l/p", 'D', "ln: /etc: outside" },
	{ "ln -s target inside-link", 'A', NULL },
	{ "ln /etc/passwd hard", 'D', "outside" },
	{ "echo x > outlink/passwd", 'D', "outside" },
	{ "touch outlink/new", 'D', "outside" },
	{ "echo x > inlink/ok", 'A', NULL },
	/* write verbs */
	{ "cp a.txt b.txt", 'A', NULL },
	{ "cp a.txt /tmp/", 'D', "cp: /tmp/: outside" },
	{ "cp -r src /opt/dst", 'D', "outside" },
	{ "cp -t /tmp a b", 'D', "outside" },
	{ "cp --target-directory=/tmp a", 'D', "outside" },
	{ "cp /etc/hosts hosts.copy", 'A', NULL },
	{ "mv a b", 'A', NULL },
	{ "mv a /tmp/b", 'D', "outside" },
	{ "mv /tmp/x inside", 'D', "outside" },
	{ "install -m 755 tool /usr/local/bin/tool", 'D', "outside" },
	{ "install -d /opt/newdir", 'D', "outside" },
	{ "rsync -a src/ backup/", 'A', NULL },
	{ "rsync -a src/ /srv/backup/", 'D', "outside" },
	{ "rsync -a src/ host:/srv/", 'D', "remote" },
	{ "touch new.txt", 'A', NULL },
	{ "touch /tmp/a /tmp/b", 'D', "outside" },
	{ "mkdir -p build/out", 'A', NULL },
	{ "mkdir -p /opt/x", 'D', "outside" },
	{ "rm -rf build", 'A', NULL },
	{ "rm -rf /", 'D', "outside" },
	{ "rm -f -- -weird", 'A', NULL },
	{ "rm /tmp/*.log", 'D', "outside" },
	{ "rmdir /tmp/d", 'D', "outside" },
	{ "truncate -s 0 big.log", 'A', NULL },
	{ "truncate -s 0 /var/log/syslog", 'D', "outside" },
	{ "dd if=/dev/zero of=disk.img bs=1M count=1", 'A', NULL },
	{ "dd if=/dev/zero of=/dev/sda", 'D', "dd of=: /dev/sda" },
	{ "curl -o page.html https://example.com", 'A', NULL },
	{ "curl -o /tmp/page https://example.com", 'D', "outside" },
	{ "curl --output=/tmp/p2 https://example.com", 'D', "outside" },
	{ "curl -sSL https://example.com", 'A', NULL },
	{ "wget -O /tmp/w https://example.com", 'D', "outside" },
	{ "wget -O out.bin https://example.com", 'A', NULL },
	{ "cd /tmp && wget https://example.com/f", 'D', "outside" },
	{ "sed -i 's/a/b/' file.txt", 'A', NULL },
	{ "sed -i 's/a/b/' /etc/hosts", 'D', "sed: /etc/hosts" },
	{ "sed -i.bak -e 's/x/y/' /etc/fstab", 'D', "/etc/fstab" },
	{ "sed 's/a/b/' /etc/hosts", 'A', NULL },
	{ "perl -pi -e 's/a/b/' /etc/hosts", 'D', "/etc/hosts" },
	{ "perl -i -pe 's/a/b/' local.txt", 'A', NULL },
	{ "perl -ne 'print' /etc/hosts", 'A', NULL },
	{ "chmod +x run.sh", 'A', NULL },
	{ "chmod 777 /etc/shadow", 'D', "chmod: /etc/shadow" },
	{ "chown root:root /usr/bin/x", 'D', "outside" },
	{ "chown me file", 'A', NULL },
	{ "tee -a log.txt < in", 'A', NULL },
	{ "echo x | tee /etc/x", 'D', "tee: /etc/x" },
	{ "echo x | sudo tee /etc/x", 'D', "tee: /etc/x" },
	/* wrappers */
	{ "env FOO=1 touch /tmp/e", 'D', "outside" },
	{ "env -u X FOO=1 make", 'A', NULL },
	{ "sudo rm -rf /var", 'D', "outside" },
	{ "sudo -u nobody touch /tmp/s", 'D', "outside" },
	{ "nohup rm /tmp/n &", 'D', "outside" },
	{ "timeout 5 touch /tmp/t", 'D', "outside" },
	{ "time make", 'A', NULL },
	{ "nice -n 10 rm /tmp/nn", 'D', "outside" },
	{ "find . -name '*.o' | xargs rm", 'D', "xargs rm" },
	{ "ls | xargs -n1 echo", 'A', NULL },
	{ "find / -name '*.tmp' -delete", 'D', "find" },
	{ "find . -name '*.tmp' -delete", 'A', NULL },
	{ "find /tmp -exec rm {} \\;", 'D', "outside" },
	{ "find src -exec grep -l x {} +", 'A', NULL },
	{ "find . -type f", 'A', NULL },
	/* git */
	{ "git status", 'A', NULL },
	{ "git commit -am msg", 'A', NULL },
	{ "git -C /tmp/other status", 'D', "git routing" },
	{ "git --git-dir=/tmp/g/.git log", 'D', "git routing" },
	{ "git --work-tree /srv log", 'D', "git routing" },
	{ "GIT_DIR=/tmp/g git log", 'D', "git routing" },
	{ "GIT_WORK_TREE=/tmp/w git status", 'D', "git routing" },
	{ "git -C sub status", 'A', NULL },
	{ "git clone https://github.com/x/y", 'D', "git clone" },
	{ "git fetch origin", 'D', "git fetch" },
	{ "git pull", 'D', "git pull" },
	{ "git push origin main", 'D', "git push" },
	{ "git ls-remote origin", 'D', "git ls-remote" },
	{ "git submodule update --init", 'D', "submodule update" },
	{ "git remote add evil https://x", 'D', "remote add" },
	{ "git remote set-url origin https://x", 'D', "remote set-url" },
	{ "git config remote.origin.url https://x", 'D', "remote" },
	{ "git config url.https://x.insteadOf y", 'D', "url." },
	{ "git -c remote.origin.url=x log", 'D', "remote" },
	{ "git remote -v", 'A', NULL },
	{ "git log --oneline | head", 'A', NULL },
	/* package installs */
	{ "npm install left-pad", 'D', "npm" },
	{ "npm i", 'D', "npm" },
	{ "npm ci", 'D', "npm" },
	{ "pnpm add react", 'D', "pnpm" },
	{ "yarn", 'D', "yarn" },
	{ "yarn add x", 'D', "yarn" },
	{ "bun install", 'D', "bun" },
	{ "pip install requests", 'D', "pip install" },
	{ "pip3 install -r req.txt", 'D', "pip install" },
	{ "python3 -m pip install x", 'D', "pip install" },
	{ "uv pip install x", 'D', "pip install" },
	{ "npm test", 'A', NULL },
	{ "npm run build", 'A', NULL },
	{ "pip list", 'A', NULL },
	/* the guard's own files */
	{ "echo '{}' > .claude/settings.local.json", 'D', "guard's own files" },
	{ "rm .claude/skills/.proctor-guard.json", 'D', "guard's own files" },
	{ "echo x > @R/.codex/hooks.json", 'D', "guard's own files" },
	{ "cp x .claude/skills/.proctor-guard.manifest.json", 'D', "guard's own files" },
	{ "cat .claude/settings.local.json", 'A', NULL },
	/* cannot be parsed */
	{ "echo 'unterminated", 'A', NULL },
	{ "echo 'unterminated > /etc/x", 'D', "cannot parse" },
	{ "touch \"half", 'D', "cannot parse" },
	{ "echo $(unclosed", 'A', NULL },
	/* lists and pipes keep checking every part */
	{ "make && make install DESTDIR=out", 'A', NULL },
	{ "true || touch /tmp/alt", 'D', "outside" },
	{ "ls; echo x > /tmp/semi", 'D', "outside" },
	{ "ls | grep x > hits.txt", 'A', NULL },
	{ "(cd /tmp; touch sub)", 'D', "outside" },
	{ "(cd /tmp); touch here.txt", 'A', NULL },
	{ "(cd /tmp && ls); echo x > out.txt", 'A', NULL },
	{ "(cd sub; (cd /tmp); touch in-sub)", 'A', NULL },
	{ "{ cd /tmp; }; touch braces", 'D', "outside" },
	{ "{ echo a; echo b; } > grouped.txt", 'A', NULL },
	{ "for f in *.c; do echo $f > /tmp/loop; done", 'D', "outside" },
	{ "if true; then touch /tmp/if; fi", 'D', "outside" },
	{ "python3 script.py", 'A', NULL },
	{ "make -j2", 'A', NULL },
};

static char root[256];

static const char *expand(const char *cmd)
{
	static char out[4096];
	const char *at;
	size_t o = 0;

	while ((at = strstr(cmd, "@R"))) {
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s%s", (int)(at - cmd), cmd, root);
		cmd = at + 2;
	}
	snprintf(out + o, sizeof(out) - o, "%s", cmd);
	return out;
}

static struct guard_marker marker(void)
{
	struct guard_marker m = { .active = true, .expires_ms = INT64_MAX };

	strv_push(&m.roots, root);
	return m;
}

static void test_guard__bash_table(void **state)
{
	struct guard_marker m = marker();
	size_t bad = 0, n = sizeof(rows) / sizeof(rows[0]);

	(void)state;
	assert_true(n >= 150);
	for (size_t i = 0; i < n; i++) {
		const char *cmd = expand(rows[i].cmd);
		json_t *p = json_pack("{s:s,s:s,s:{s:s}}", "tool_name", "Bash", "cwd", root, "tool_input", "command", cmd);
		struct guard_verdict v;

		guard_decide(&m, p, &v);
		if ((rows[i].expect == 'D') != v.deny || (v.deny && rows[i].why && !strstr(v.reason, rows[i].why))) {
			print_message("row %zu: [%s] expected %c%s%s, got %s%s\n", i, rows[i].cmd, rows[i].expect,
				      rows[i].why ? " / " : "", rows[i].why ? rows[i].why : "", v.deny ? "deny: " : "allow",
				      v.deny ? v.reason : "");
			bad++;
		}
		guard_verdict_free(&v);
		json_decref(p);
	}
	guard_marker_free(&m);
	assert_int_equal(bad, 0);
}

static void decide_tool(const char *json_text, bool expect_deny, const char *why)
{
	struct guard_marker m = marker();
	json_error_t e;
	json_t *p = json_loads(expand(json_text), 0, &e);
	struct guard_verdict v;

	assert_non_null(p);
	guard_decide(&m, p, &v);
	if (v.deny != expect_deny || (why && !strstr(v.reason, why)))
		fail_msg("%s: got %s %s", json_text, v.deny ? "deny" : "allow", v.reason);
	guard_verdict_free(&v);
	json_decref(p);
	guard_marker_free(&m);
}

static void test_guard__write_tools(void **state)
{
	(void)state;
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/a.txt\",\"content\":\"x\"}}", false, NULL);
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"rel/b.txt\"}}", false, NULL);
	decide_tool("{\"tool_name\":\"Edit\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/etc/hosts\"}}", true,
		    "Edit /etc/hosts: outside the allowed roots");
	decide_tool("{\"tool_name\":\"MultiEdit\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/outlink/x\"}}", true,
		    "outside");
	decide_tool("{\"tool_name\":\"NotebookEdit\",\"cwd\":\"@R\",\"tool_input\":{\"notebook_path\":\"/tmp/n.ipynb\"}}",
		    true, "outside");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/sub/../../x\"}}", true,
		    "outside");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"@R/.claude/settings.local.json\"}}",
		    true, "guard's own files");
	decide_tool("{\"tool_name\":\"Write\",\"cwd\":\"@R\",\"tool_input\":{}}", true, "no file_path");
	decide_tool("{\"tool_name\":\"Read\",\"cwd\":\"@R\",\"tool_input\":{\"file_path\":\"/etc/shadow\"}}", false, NULL);
}

static void test_guard__apply_patch_targets(void **state)
{
	(void)state;
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"command\":[\"apply_patch\","
		    "\"*** Begin Patch\\n*** Add File: new.txt\\n+hi\\n*** Update File: sub/a.c\\n@@\\n-x\\n+y\\n*** End Patch\"]}}",
		    false, NULL);
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n*** Update File: a.c\\n*** Move to: /tmp/moved.c\\n*** End Patch\"}}", true,
		    "apply_patch /tmp/moved.c: outside");
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":"
		    "\"*** Begin Patch\\n*** Delete File: /etc/passwd\\n*** End Patch\"}}", true, "/etc/passwd");
	decide_tool("{\"tool_name\":\"apply_patch\",\"cwd\":\"@R\",\"tool_input\":{\"input\":\"no patch here\"}}", true,
		    "no file targets");
}

static void test_guard__verdict_bytes_pinned(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(guard_verdict_json(HARNESS_CLAUDE, "Edit /etc/x: outside the allowed roots", &b), 0);
	assert_string_equal(b.data, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\","
				    "\"permissionDecisionReason\":\"proctor guard: Edit /etc/x: outside the allowed roots\"}}\n");
	buf_reset(&b);
	assert_int_equal(guard_verdict_json(HARNESS_CODEX, "git push: network operations are not allowed", &b), 0);
	assert_string_equal(b.data, "{\"decision\":\"block\",\"reason\":\"proctor guard: git push: network operations are not allowed\"}\n");
	buf_free(&b);
}

static void test_guard__marker_armed_and_expiry(void **state)
{
	struct guard_marker m;
	const char *path = scratch_file("m.json", "{\n  \"active\": true,\n  \"allowedRoots\": [\n    \"/w\"\n  ],\n"
						   "  \"expiresAt\": \"2030-01-02T03:04:05.678Z\",\n  \"denialLogPath\": null\n}\n");

	(void)state;
	assert_int_equal(guard_marker_load(path, &m), 0);
	assert_true(m.expires_ms == 1893553445678LL);
	assert_true(guard_marker_armed(&m, 1893553445677LL));
	assert_false(guard_marker_armed(&m, 1893553445678LL));
	guard_marker_free(&m);
	path = scratch_file("bad.json", "{\"active\":true,\"allowedRoots\":[\"rel\"],\"expiresAt\":\"2030-01-02T03:04:05.678Z\"}");
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
	assert_string_equal(s, "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Write|Edit|MultiEdit|NotebookEdit|Bash\","
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
	assert_string_equal(text + strlen(prefix) + 24, "\",\n  \"denialLogPath\": \"/runs/r1/logs/guard-denials.jsonl\"\n}\n");
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

static int guard_setup(void **state)
{
	char p[512];

	if (scratch_setup(state) < 0)
		return -1;
	snprintf(root, sizeof(root), "%s/ws", scratch_dir);
	mkdir(root, 0755);
	snprintf(p, sizeof(p), "%s/sub", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/outlink", root); /* a link the agent made, pointing outside */
	if (symlink("/etc", p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/inlink", root);
	if (symlink("sub", p) < 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard__bash_table),
		cmocka_unit_test(test_guard__write_tools),
		cmocka_unit_test(test_guard__apply_patch_targets),
		cmocka_unit_test(test_guard__verdict_bytes_pinned),
		cmocka_unit_test(test_guard__marker_armed_and_expiry),
		cmocka_unit_test(test_guard__hook_config_bytes_pinned),
		cmocka_unit_test(test_guard__marker_write_bytes_pinned),
	};

	return cmocka_run_group_tests(tests, guard_setup, scratch_teardown);
}
