#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Issue 10's acceptance with the real CLIs: Claude Code and Codex (scripts/agents.sh), each driven
# by a scripted model server on loopback (tests/agents/, via tests/e2e/real/model.py), through
# proctor run: resumed sessions, uip through the Bash tool, a staged plugin's skill (Claude Code's
# --plugin-dir, Codex's skills directory), the file-writing tools (Write, Edit, apply_patch), the
# guard's real hook and Landlock behind it, disarm attempts, a discarded turn, a dropped connection, and
# nothing left after any run. The fake agents' fast equivalents are in agents.bats.

load helpers
load real/lib

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (proctor run creates and drops identities)"
	why=$(real_cli_paths) || skip "$why"
	real_cli_paths
	T=$(mktemp -d /tmp/proctor-real-XXXXXX)
	chmod 0755 "$T"
	mkdir "$T/ws" "$T/open"
	# Writable by the agent's uid as far as file modes go: only the guard and Landlock stop it.
	chmod 1777 "$T/open"
	cp "$BATS_TEST_DIRNAME/../../examples/uip-fixture.json" "$T/fx.json"
	real_lock
	procs_mark
}

teardown() {
	local valid=0
	real_model_stop
	result_valid "${T:-}/run" || valid=1
	[ -n "${T:-}" ] && rm -rf "$T"
	exec 9>&- || true
	return $valid
}

# script: the model script on stdin, with @T@ replaced by the test's directory.
script() { sed "s|@T@|$T|g"; }

run_task() {
	run "$PROCTOR" run "$T/task.json" --out "$T/run" --quiet
	echo "$output"
	[ "$status" -eq 0 ]
}

# --- Claude Code --------------------------------------------------------------------------------

@test "real claude-code: two turns in one session; uip through Bash gets the fixture's answer; a write outside is denied by the hook" {
	real_model anthropic "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "uip or jobs list --output json"}]},
 {"text": "turn one done"},
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "turn two done", "expect": "turn one done"}]}
JSON
)"
	real_task claude-code "list the jobs" '["and again"]'
	run_task
	q "r['status'] == 'completed' and [t['status'] for t in r['agent']['turns']] == ['completed', 'completed']"
	# (1) the second turn resumed the first: same session id, and the model saw turn one's answer
	q "r['agent']['turns'][0]['session_id'] and r['agent']['turns'][1]['session_id'] == r['agent']['turns'][0]['session_id']"
	q "[e for e in evt(1) if e['type'] == 'result'][-1]['result'] == 'turn two done'"
	# (2) mockd journaled the call from the agent's uid; the fixture's answer came back to the CLI
	# and went on to the model
	q "[(c['tool'], c['argv'], c['uid']) for c in calls] == [('uip', ['or', 'jobs', 'list', '--output', 'json'], 2000)]"
	q "any(c['tool_use_id'] == 'toolu_000_00' and not c['is_error'] and 'Faulted' in str(c['content']) for c in results())"
	q "any(rec['turn'] == 1 and 'Faulted' in json.dumps(rec['body']) for rec in log)"
	# (4) the write outside the workspace: denied by the real hook, in the agent's own events
	q "any(c['tool_use_id'] == 'toolu_002_00' and c['is_error'] and 'proctor guard' in str(c['content']) for c in results(evt(1)))"
	q "any('$T/open/planted' in d['targets'] for d in denials)"
	[ ! -e "$T/open/planted" ]
	real_clean
}

@test "real claude-code: the skill of a staged plugin is listed at init and readable under PROCTOR_PLUGIN_DIRS" {
	mkdir -p "$T/plugin/.claude-plugin" "$T/plugin/skills/real-skill"
	echo '{"name": "proctor-real", "version": "0.1.0", "description": "real_agents.bats"}' \
		>"$T/plugin/.claude-plugin/plugin.json"
	printf -- '---\nname: real-skill\ndescription: the skill real_agents.bats stages\n---\n\nREAL-SKILL-MARKER-7f3c\n' \
		>"$T/plugin/skills/real-skill/SKILL.md"
	real_model anthropic "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "cat \"$PROCTOR_PLUGIN_DIRS/skills/real-skill/SKILL.md\""}]},
 {"text": "read it"}]}
JSON
)"
	PLUGINS_JSON='[{"path":"plugin"}]' real_task claude-code "read your skill" '[]'
	run_task
	q "r['status'] == 'completed' and len(r['bundles']) == 1"
	q "any(p['name'] == 'proctor-real' for e in ev if e.get('subtype') == 'init' for p in e['plugins'])"
	q "any('real-skill' in s for e in ev if e.get('subtype') == 'init' for s in e['skills'])"
	q "any(c['tool_use_id'] == 'toolu_000_00' and not c['is_error'] and 'REAL-SKILL-MARKER-7f3c' in str(c['content']) for c in results())"
	real_clean
}

@test "real claude-code: Write and Edit outside the workspace are denied by the hook in the agent's events; inside they write" {
	# Readable by the agent (ro_paths) and writable as far as file modes go: only the hook (and
	# Landlock behind it) keeps Edit from changing it.
	mkdir "$T/ro"
	echo 'old line' >"$T/ro/edit-me.txt"
	chmod 0666 "$T/ro/edit-me.txt"
	real_model anthropic "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "write", "path": "@T@/open/planted", "content": "planted\n"}]},
 {"tool_calls": [{"tool": "write", "path": "inside.txt", "content": "hello inside\n"}]},
 {"tool_calls": [{"tool": "raw", "name": "Read", "input": {"file_path": "@T@/ro/edit-me.txt"}}]},
 {"tool_calls": [{"tool": "edit", "path": "@T@/ro/edit-me.txt", "old": "old line", "new": "new line"}]},
 {"tool_calls": [{"tool": "raw", "name": "Read", "input": {"file_path": "@T@/run/workspace/inside.txt"}}]},
 {"tool_calls": [{"tool": "edit", "path": "@T@/run/workspace/inside.txt", "old": "hello inside", "new": "hello edited"}]},
 {"text": "done"}]}
JSON
)"
	RO_PATHS_JSON="\"$T/ro\"," real_task claude-code "write files" '[]'
	run_task
	q "r['status'] == 'completed'"
	# outside: the Write and the Edit were denied by the real hook, and it said so in the events
	q "any(c['tool_use_id'] == 'toolu_000_00' and c['is_error'] and 'proctor guard' in str(c['content']) for c in results())"
	q "any(c['tool_use_id'] == 'toolu_003_00' and c['is_error'] and 'proctor guard' in str(c['content']) for c in results())"
	q "[(d['tool'], d['targets']) for d in denials] == [('Write', ['$T/open/planted']), ('Edit', ['$T/ro/edit-me.txt'])]"
	# the payloads (the denial log keeps their tool_input keys): Write {file_path, content}, Edit
	# {file_path, old_string, new_string, replace_all}; the reason reaches the model prefixed
	q "[(d['tool'], d['input_keys']) for d in denials] == [('Write', ['content', 'file_path']), ('Edit', ['file_path', 'new_string', 'old_string', 'replace_all'])]"
	q "[c['content'] for c in results() if c.get('is_error')] == ['PreToolUse:Write hook error: proctor guard: Write $T/open/planted: outside the allowed roots', 'PreToolUse:Edit hook error: proctor guard: Edit $T/ro/edit-me.txt: outside the allowed roots']"
	[ ! -e "$T/open/planted" ]
	[ "$(cat "$T/ro/edit-me.txt")" = "old line" ]
	# inside: the same tools wrote (Write's relative path made absolute by Claude Code)
	q "all(not c.get('is_error') for c in results() if c['tool_use_id'] in ('toolu_001_00', 'toolu_002_00', 'toolu_004_00', 'toolu_005_00'))"
	[ "$(cat "$T/run/workspace/inside.txt")" = "hello edited" ]
	real_clean
}

@test "real claude-code: with guard false the write outside the workspace is refused by Landlock" {
	real_model anthropic "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "done"}]}
JSON
)"
	real_task claude-code "write it" '[]' '"guard": false,'
	run_task
	q "r['status'] == 'completed' and r['guard'] is None"
	q "any(c['tool_use_id'] == 'toolu_000_00' and c['is_error'] and 'Permission denied' in str(c['content']) and 'hook' not in str(c['content']) for c in results())"
	[ ! -e "$T/open/planted" ]
	real_clean
}

@test "real claude-code: disarming the guard from inside fails and the next forbidden call, next turn too, is denied" {
	real_model anthropic "$(script <<'JSON'
{"turns": [
 {"tool_calls": [
  {"tool": "bash", "command": "mv \"$PROCTOR_WORKSPACE/../guard/settings.json\" \"$PROCTOR_WORKSPACE/../guard/off.json\""},
  {"tool": "bash", "command": "rm -f \"$PROCTOR_WORKSPACE/../guard/marker.json\""},
  {"tool": "bash", "command": "echo '{}' > \"$PROCTOR_WORKSPACE/../guard/settings.json\""},
  {"tool": "bash", "command": "mkdir -p .claude \"$HOME/.claude\" && printf '{\"disableAllHooks\": true}' | tee .claude/settings.json .claude/settings.local.json \"$HOME/.claude/settings.json\""}]},
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "one"},
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "two"}]}
JSON
)"
	real_task claude-code "disarm" '["again"]'
	run_task
	q "r['status'] == 'completed' and r['guard']['disarmed'] is False"
	# the disabling settings were refused by the hook, or written and ignored (checked below) ...
	grep -q disableAllHooks "$T/run/workspace/.claude/settings.json" ||
		q "any(c['tool_use_id'] == 'toolu_000_03' and c['is_error'] and 'proctor guard' in str(c['content']) for c in results())"
	# ... the guard's own files were not touched
	grep -q PreToolUse "$T/run/guard/settings.json"
	[ -s "$T/run/guard/marker.json" ]
	[ ! -e "$T/run/guard/off.json" ]
	q "all(c['is_error'] for c in results() if c['tool_use_id'] in ('toolu_000_00', 'toolu_000_01', 'toolu_000_02'))"
	# the forbidden write was denied by the hook in the same turn and in the resumed one
	q "any(c['tool_use_id'] == 'toolu_001_00' and c['is_error'] and 'proctor guard' in str(c['content']) for c in results(evt(0)))"
	q "any(c['tool_use_id'] == 'toolu_003_00' and c['is_error'] and 'proctor guard' in str(c['content']) for c in results(evt(1)))"
	q "sum('$T/open/planted' in d['targets'] for d in denials) == 2"
	[ ! -e "$T/open/planted" ]
	real_clean
}

@test "real claude-code: a turn past limits.turn_timeout_s is discarded and the next turn resumes the session" {
	real_model anthropic '{"turns": [{"text": "one"}, {"hang": true}, {"text": "three", "expect": "one"}]}'
	real_task claude-code "first" '["hang now", "after the timeout"]' '' '{"timeout_s":60,"turn_timeout_s":3}'
	run_task
	q "[t['status'] for t in r['agent']['turns']] == ['completed', 'turn_timeout', 'completed']"
	q "r['agent']['turns'][1]['discarded'] is True and r['status'] == 'completed'"
	q "r['agent']['turns'][2]['session_id'] == r['agent']['turns'][0]['session_id']"
	q "[e for e in evt(2) if e['type'] == 'result'][-1]['result'] == 'three'"
	real_clean
}

@test "real claude-code: a model server that drops the connection is agent_failed with the agent's error, in seconds" {
	real_model anthropic '{"turns": [{"drop": "before"}]}'
	real_task claude-code "go" '[]'
	run_task
	q "r['status'] == 'agent_failed' and r['agent']['turns'][0]['status'] == 'failed'"
	q "'ECONNRESET' in r['agent']['turns'][0]['error'] and r['agent']['turns'][0]['error'] in r['reason']"
	q "r['durations_ms']['agent'] < 20000"
	real_clean
}

# --- Codex --------------------------------------------------------------------------------------

@test "real codex: two turns in one thread; uip through Bash gets the fixture's answer; a write outside is denied by the hook" {
	real_model openai "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "uip or jobs list --output json"}]},
 {"text": "turn one done"},
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "turn two done", "expect": "turn one done"}]}
JSON
)"
	real_task codex "list the jobs" '["and again"]'
	run_task
	q "r['status'] == 'completed' and [t['status'] for t in r['agent']['turns']] == ['completed', 'completed']"
	q "r['agent']['turns'][0]['session_id'] and r['agent']['turns'][1]['session_id'] == r['agent']['turns'][0]['session_id']"
	q "any(e['type'] == 'item.completed' and e['item'].get('text') == 'turn two done' for e in evt(1))"
	q "[(c['tool'], c['argv'], c['uid']) for c in calls] == [('uip', ['or', 'jobs', 'list', '--output', 'json'], 2000)]"
	q "any(e['type'] == 'item.completed' and e['item']['type'] == 'command_execution' and e['item']['exit_code'] == 0 and 'Faulted' in e['item']['aggregated_output'] for e in evt(0))"
	q "any('Faulted' in o for o in outputs())"
	# Codex prints no event for a denied call: the denial is in what it sent the model
	q "any(o.startswith('Command blocked by PreToolUse hook: proctor guard') and 'planted' in o for o in outputs())"
	q "any('$T/open/planted' in d['targets'] for d in denials)"
	[ ! -e "$T/open/planted" ]
	real_clean
}

@test "real codex: the skill of a staged plugin is in the skills list Codex sends the model, readable and not writable" {
	mkdir -p "$T/plugin/.claude-plugin" "$T/plugin/skills/real-skill"
	echo '{"name": "proctor-real", "version": "0.1.0", "description": "real_agents.bats"}' \
		>"$T/plugin/.claude-plugin/plugin.json"
	printf -- '---\nname: real-skill\ndescription: the skill real_agents.bats stages\n---\n\nREAL-SKILL-MARKER-7f3c\n' \
		>"$T/plugin/skills/real-skill/SKILL.md"
	real_model openai "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "cat \"$CODEX_HOME/skills/plugin-0/real-skill/SKILL.md\""}]},
 {"tool_calls": [{"tool": "bash", "command": "echo tampered >> \"$CODEX_HOME/skills/plugin-0/real-skill/SKILL.md\""}]},
 {"tool_calls": [{"tool": "bash", "command": "unlink \"$CODEX_HOME/skills/plugin-0/real-skill/SKILL.md\""}]},
 {"tool_calls": [{"tool": "bash", "command": "chmod u+w \"$CODEX_HOME/skills/plugin-0/real-skill/SKILL.md\""}]},
 {"text": "read it", "expect": "REAL-SKILL-MARKER-7f3c"}]}
JSON
)"
	# no hook: what keeps the skill as staged is the file system (a root-owned bundle, read-only
	# under Landlock), not the guard, which would deny these writes first
	PLUGINS_JSON='[{"path":"plugin"}]' real_task codex "read your skill" '[]' '"guard": false,'
	run_task
	q "r['status'] == 'completed' and len(r['bundles']) == 1 and r['guard'] is None"
	# root made the link in the run's CODEX_HOME; it points into the read-only bundle
	[ -L "$T/run/home/.codex/skills/plugin-0" ]
	[ "$(readlink "$T/run/home/.codex/skills/plugin-0")" = "$T/run/bundles/plugin-0/skills" ]
	[ "$(stat -c %u "$T/run/home/.codex/skills/plugin-0")" -eq 0 ]
	# every request listed the skill, named PLUGIN:SKILL from the bundle's .claude-plugin/plugin.json
	# beside skills/ (Codex reads it through the link), under the skill root Codex found it in
	q "all('- proctor-real:real-skill: the skill real_agents.bats stages (file: r0/plugin-0/real-skill/SKILL.md)' in json.dumps(rec['body']) for rec in log)"
	q "all('\`r0\` = \`$T/run/home/.codex/skills\`' in json.dumps(rec['body']) for rec in log)"
	# the agent read it through the link ...
	q "any(e['type'] == 'item.completed' and e['item']['type'] == 'command_execution' and 'cat ' in e['item']['command'] and e['item']['exit_code'] == 0 and 'REAL-SKILL-MARKER-7f3c' in e['item']['aggregated_output'] for e in ev)"
	# ... and could neither append to it, remove it nor make it writable (not "rm -f": Codex
	# refuses to run that itself)
	q "sum(e['type'] == 'item.completed' and e['item']['type'] == 'command_execution' and e['item']['exit_code'] != 0 and ('Permission denied' in e['item']['aggregated_output'] or 'Operation not permitted' in e['item']['aggregated_output']) for e in ev) == 3"
	[ "$(cat "$T/run/bundles/plugin-0/skills/real-skill/SKILL.md")" = "$(cat "$T/plugin/skills/real-skill/SKILL.md")" ]
	q "r['bundles'][0]['verified_after'] is True"
	real_clean
}

@test "real codex: apply_patch outside the workspace is denied by the hook (tool and shell forms); inside it writes" {
	# gpt-5.5 is a slug Codex knows: it offers its freeform apply_patch tool for it
	real_model openai "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "write", "path": "@T@/open/planted", "content": "planted\n"}]},
 {"tool_calls": [{"tool": "bash", "command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: @T@/open/planted-sh\n+planted\n*** End Patch\nEOF"}]},
 {"tool_calls": [{"tool": "write", "path": "inside.txt", "content": "hello inside\n"}]},
 {"tool_calls": [{"tool": "edit", "path": "inside.txt", "old": "hello inside", "new": "hello edited"}]},
 {"text": "done"}]}
JSON
)"
	CODEX_MODEL=gpt-5.5 real_task codex "write files" '[]'
	run_task
	q "r['status'] == 'completed'"
	q "all('apply_patch' in rec['body']['tools'] for rec in log)"
	# outside: Codex reports no event for a denied call; the denial is in what it sent the model
	# (a custom_tool_call_output for the tool, a function_call_output for the shell) and on stderr
	q "[o.split('. Command:')[0] for o in outputs(log[-1:]) if 'blocked' in o] == ['Command blocked by PreToolUse hook: proctor guard: apply_patch $T/open/planted: outside the allowed roots', 'Command blocked by PreToolUse hook: proctor guard: Bash: apply_patch $T/open/planted-sh: outside the allowed roots']"
	[ "$(grep -c 'ERROR codex_core::tools::router: error=Command blocked by PreToolUse hook: proctor guard' "$T/run/logs/agent-stderr.log")" -eq 2 ]
	# the payloads: tool_name apply_patch with the patch as tool_input.command (its paths as the
	# model wrote them), and Bash with the heredoc as the command
	q "[(d['tool'], d['input_keys'], d['targets']) for d in denials] == [('apply_patch', ['command'], ['$T/open/planted']), ('Bash', ['command'], ['$T/open/planted-sh'])]"
	[ ! -e "$T/open/planted" ] && [ ! -e "$T/open/planted-sh" ]
	q "not any(e['type'] == 'item.completed' and e['item']['type'] == 'file_change' and '$T/open' in json.dumps(e['item']) for e in ev)"
	# inside: the same tool added then updated the file, and said so in its events
	q "sum(e['type'] == 'item.completed' and e['item']['type'] == 'file_change' and e['item']['status'] == 'completed' for e in ev) == 2"
	[ "$(cat "$T/run/workspace/inside.txt")" = "hello edited" ]
	real_clean
}

@test "real codex: with guard false the write outside the workspace is refused by Landlock" {
	real_model openai "$(script <<'JSON'
{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "done"}]}
JSON
)"
	real_task codex "write it" '[]' '"guard": false,'
	run_task
	q "r['status'] == 'completed' and r['guard'] is None"
	q "any(e['type'] == 'item.completed' and e['item']['type'] == 'command_execution' and e['item']['exit_code'] != 0 and 'Permission denied' in e['item']['aggregated_output'] for e in ev)"
	q "not any('blocked by PreToolUse' in o for o in outputs())"
	[ ! -e "$T/open/planted" ]
	real_clean
}

@test "real codex: disarming the guard from inside fails and the next forbidden call, next turn too, is denied" {
	real_model openai "$(script <<'JSON'
{"turns": [
 {"tool_calls": [
  {"tool": "bash", "command": "rm -f \"$PROCTOR_WORKSPACE/../guard/marker.json\""},
  {"tool": "bash", "command": "printf '\\n[features]\\nhooks = false\\n' >> @T@/run/home/.codex/config.toml"}]},
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "one"},
 {"tool_calls": [{"tool": "bash", "command": "echo planted > @T@/open/planted"}]},
 {"text": "two"}]}
JSON
)"
	# CODEX_HOME by its literal path: the hook denies a write to a path it cannot know
	real_task codex "disarm" '["again"]'
	run_task
	q "r['status'] == 'completed' and r['guard']['disarmed'] is False"
	# the config that turns hooks off was refused by the hook, or written and ignored
	grep -q 'hooks = false' "$T/run/home/.codex/config.toml" 2>/dev/null ||
		q "any(o.startswith('Command blocked by PreToolUse hook') and 'hooks = false' in o for o in outputs(log[-1:]))"
	[ -s "$T/run/guard/marker.json" ]
	# the last request holds the whole thread: the rm and both forbidden writes were blocked
	q "any(o.startswith('Command blocked by PreToolUse hook') and 'marker.json' in o for o in outputs(log[-1:]))"
	q "sum(o.startswith('Command blocked by PreToolUse hook') and 'planted' in o for o in outputs(log[-1:])) == 2"
	q "sum('$T/open/planted' in d['targets'] for d in denials) == 2"
	[ ! -e "$T/open/planted" ]
	real_clean
}

@test "real codex: a turn past limits.turn_timeout_s is discarded and the next turn resumes the thread" {
	real_model openai '{"turns": [{"text": "one"}, {"hang": true}, {"text": "three", "expect": "one"}]}'
	real_task codex "first" '["hang now", "after the timeout"]' '' '{"timeout_s":60,"turn_timeout_s":3}'
	run_task
	q "[t['status'] for t in r['agent']['turns']] == ['completed', 'turn_timeout', 'completed']"
	q "r['agent']['turns'][1]['discarded'] is True and r['status'] == 'completed'"
	q "r['agent']['turns'][2]['session_id'] == r['agent']['turns'][0]['session_id']"
	q "any(e['type'] == 'item.completed' and e['item'].get('text') == 'three' for e in evt(2))"
	real_clean
}

@test "real codex: a model server that drops the connection is agent_failed with the agent's error, in seconds" {
	real_model openai '{"turns": [{"drop": "before"}]}'
	real_task codex "go" '[]'
	run_task
	q "r['status'] == 'agent_failed' and r['agent']['turns'][0]['status'] == 'failed'"
	q "'stream disconnected' in r['agent']['turns'][0]['error'] and r['agent']['turns'][0]['error'] in r['reason']"
	q "r['durations_ms']['agent'] < 20000"
	real_clean
}
