#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Agents are data: descriptors (proctor agents), multi-turn sessions, typed turn errors, all
# through proctor run with fake agents that print Claude Code's stream-json and Codex's
# exec --json shapes (tests/e2e/fake-agents/). The real CLIs are in real_agents.bats.

load helpers

FAKE=$BATS_TEST_DIRNAME/fake-agents

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (proctor run creates and drops identities)"
	"$PROCTOR" doctor --json | tr -d '\n ' | grep -q '"check":"landlock","ok":true' ||
		skip "no Landlock on this kernel: proctor run refuses to run without it"
	T=$(mktemp -d /tmp/proctor-agents-XXXXXX)
	chmod 0755 "$T"
	mkdir "$T/agents" "$T/ws"
	cp "$FAKE"/*.json "$T/agents/"
	cp "$BATS_TEST_DIRNAME/../../examples/uip-fixture.json" "$T/fx.json"
	procs_mark
}

teardown() {
	local valid=0
	result_valid "${T:-}/run" || valid=1
	[ -n "${T:-}" ] && rm -rf "$T"
	return $valid
}

# task KIND PROMPT TURNS-JSON [LIMITS-JSON]: a task for a fake agent
task() {
	local limits=${4:-'{"timeout_s":30}'}

	cat >"$T/task.json" <<JSON
{"version":1,"id":"agents","workspace":{"from":"ws"},
 "agent":{"kind":"$1","args":["$FAKE/fake_stream.py"],"prompt":"$2","turns":$3,"ro_paths":["$FAKE"]},
 "mocks":[{"tool":"uip","fixture":"fx.json","max_requests":10,"passthrough_argv_prefixes":[]}],
 "limits":$limits}
JSON
}

result() { python3 -c "import json,sys; r=json.load(open('$T/run/result.json')); print(eval(sys.argv[1]))" "$1"; }

@test "agents: list and show the built-in and a temp directory's descriptors" {
	run "$PROCTOR" agents list
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^command '
	run "$PROCTOR" agents list --agents "$T/agents"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^fake-claude '
	echo "$output" | grep -q '^fake-codex '
	run "$PROCTOR" agents show fake-codex --agents "$T/agents"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q 'framing      JSON lines'
	run "$PROCTOR" agents show nope --agents "$T/agents"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "no agent descriptor named 'nope'"
}

@test "agents: a bad descriptor is an error naming the file and the key" {
	printf '%s\n' '{"version":1,"name":"bad","argv":["x","{promt}"],"prompt":"argument","events":{"framing":"lines"},"colour":1}' \
		>"$T/agents/bad.json"
	run "$PROCTOR" agents show bad --agents "$T/agents"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "$T/agents/bad.json: colour: unknown key"
	echo "$output" | grep -qF "$T/agents/bad.json: argv[1]: an unknown placeholder"
	run "$PROCTOR" agents list --agents "$T/agents"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q 'INVALID'
}

@test "agents: a stream-json agent runs two turns, the second resuming the first's session, and calls uip" {
	task fake-claude "call uip or jobs list" '["and now?"]'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = completed ]
	[ "$(result "len(r['agent']['turns'])")" = 2 ]
	sid=$(result "r['agent']['turns'][0]['session_id']")
	[ -n "$sid" ] && [ "$sid" != None ]
	[ "$(result "r['agent']['turns'][1]['session_id']")" = "$sid" ]
	[ "$(result "r['agent']['session_id']")" = "$sid" ]
	[ "$(result "r['agent']['turns'][1]['usage']['output_tokens']")" = 5 ]
	# turn 1 was started with --resume <the id turn 0 reported>
	grep -q "resumed $sid" "$T/run/logs/events.jsonl"
	# the agent's tool call reached mockd, which journaled it; its answer is in the agent's events
	[ "$(wc -l <"$T/run/logs/calls.jsonl")" -eq 1 ]
	grep -q '"argv":\["or","jobs","list"\]' "$T/run/logs/calls.jsonl"
	grep -q 'Faulted' "$T/run/logs/events.jsonl"
	# JSON events are kept as JSON
	head -1 "$T/run/logs/events.jsonl" | grep -q '"event":{'
}

@test "agents: an exec --json agent's turn.failed is agent_failed with the agent's error" {
	task fake-codex "first" '["fail please"]'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = agent_failed ]
	[ "$(result "r['agent']['turns'][1]['status']")" = failed ]
	[ "$(result "r['agent']['turns'][1]['error']")" = "it failed" ]
	result "r['reason']" | grep -q 'it failed'
}

@test "agents: exiting without the end-of-turn event, or with no recognisable event, is agent_crashed" {
	task fake-claude "crash" '[]'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = agent_failed ]
	[ "$(result "r['agent']['turns'][0]['status']")" = agent_crashed ]
	result "r['reason']" | grep -q 'without the end-of-turn event'
	rm -rf "$T/run"
	task fake-codex "garbage" '[]'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['agent']['turns'][0]['status']")" = agent_crashed ]
	result "r['reason']" | grep -q 'no recognisable event'
}

@test "agents: a line nested too deep for JSON readers is kept as text, and cannot fail the run" {
	task fake-claude "deep" '[]'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = completed ]
	python3 - "$T/run/logs/events.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]  # Python's json, which recurses per level
deep = [r for r in recs if "deep" in r.get("event", {}) or '"deep"' in r.get("text", "")]
assert len(deep) == 2, deep
assert "event" in deep[0] and "text" not in deep[0]  # 256 deep: an object
assert "text" in deep[1] and "event" not in deep[1]  # 2,047 deep: text
PY
}

@test "agents: a turn past limits.turn_timeout_s is discarded and the session goes on" {
	task fake-claude "first" '["hang", "after the timeout"]' '{"timeout_s":60,"turn_timeout_s":2}'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	sid=$(result "r['agent']['turns'][0]['session_id']")
	[ "$(result "r['agent']['turns'][1]['status']")" = turn_timeout ]
	[ "$(result "r['agent']['turns'][1]['discarded']")" = True ]
	[ "$(result "r['agent']['turns'][2]['status']")" = completed ]
	[ "$(result "r['agent']['turns'][2]['session_id']")" = "$sid" ]
	[ "$(result "r['status']")" = completed ]
	[ "$(result "r['teardown']['survivors']")" = "[]" ]
	[ -z "$(procs_ours 2000)" ]
}

@test "agents: a task naming no known descriptor, or a command the descriptor does not take, is config_error" {
	task no-such-agent "x" '[]'
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 4 ]
	echo "$output" | grep -q "agent.kind: no agent descriptor 'no-such-agent'"
	rm -rf "$T/run"
	cat >"$T/task.json" <<JSON
{"version":1,"id":"x","agent":{"kind":"fake-claude","command":["/bin/true"],"args":["$FAKE/fake_stream.py"],"ro_paths":["$FAKE"]}}
JSON
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 4 ]
	echo "$output" | grep -q "agent.command: the 'fake-claude' agent runs its own program"
}

@test "agents: the agent's environment is proctor's, then the descriptor's, then the task's, each name once, nothing else of the caller's" {
	cat >"$T/agents/envdump.json" <<'JSON'
{"version":1,"name":"envdump","argv":["/usr/bin/env"],"prompt":"stdin","events":{"framing":"lines"},
 "env":{"D_ONLY":"desc","BOTH":"desc","D_TMPL":"{tmp}/x","PASS_AND_SET":"desc"},
 "env_pass":["D_PASS","OVERRIDDEN","PASS_AND_SET"]}
JSON
	cat >"$T/task.json" <<JSON
{"version":1,"id":"envdump","workspace":{"from":"ws"},
 "agent":{"kind":"envdump","prompt":"p","env":{"BOTH":"task","OVERRIDDEN":"task","PATH":"/opt/x:/usr/bin:/bin"},
          "env_pass":["T_PASS"]},
 "mocks":[{"tool":"uip","fixture":"fx.json","max_requests":10,"passthrough_argv_prefixes":[]}],
 "limits":{"timeout_s":30}}
JSON
	run env D_PASS=dp OVERRIDDEN=caller PASS_AND_SET=caller T_PASS=tp LEAK=secret \
		"$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = completed ]
	python3 - "$T/run" <<'PY'
import json, os, sys
run = sys.argv[1]
lines = [json.loads(l)["text"].rstrip("\n") for l in open(run + "/logs/events.jsonl")]
names = [l.split("=", 1)[0] for l in lines]
dup = sorted({n for n in names if names.count(n) > 1})
assert not dup, ("names twice", dup)
env = dict(l.split("=", 1) for l in lines)
want = {
    "HOME": run + "/home", "TMPDIR": run + "/tmp", "PWD": run + "/workspace",
    "PROCTOR_WORKSPACE": run + "/workspace", "PROCTOR_PROMPT": "p", "PROCTOR_TURN": "0",
    "PROCTOR_MOCK_SOCKET": run + "/sock/mock.sock",
    "PATH": run + "/bin:/opt/x:/usr/bin:/bin",
    "D_ONLY": "desc", "D_TMPL": run + "/tmp/x", "D_PASS": "dp", "T_PASS": "tp",
    "BOTH": "task",            # the task's env wins over the descriptor's env
    "OVERRIDDEN": "task",      # and over the descriptor's pass-through
    "PASS_AND_SET": "desc",    # the descriptor's env wins over its own pass-through
}
for k, v in want.items():
    assert env.get(k) == v, (k, env.get(k), v)
extra = sorted(set(env) - set(want))
assert not extra, ("not proctor's, the descriptor's or the task's", extra)
PY
}

@test "agents: the search order is built-in, then \$XDG_CONFIG_HOME/proctor/agents, then --agents; a later one overrides by name" {
	local xdg=$T/xdg d
	mkdir -p "$xdg/proctor/agents" "$T/cli"
	for d in "$xdg/proctor/agents" "$T/cli"; do
		printf '{"version":1,"name":"command","description":"from %s","argv":["{task_command}"],"prompt":"stdin","events":{"framing":"lines"}}\n' \
			"$d" >"$d/command.json"
	done
	printf '{"version":1,"name":"only-xdg","argv":["/bin/true"],"prompt":"stdin","events":{"framing":"lines"}}\n' \
		>"$xdg/proctor/agents/only-xdg.json"
	run env XDG_CONFIG_HOME="$xdg" "$PROCTOR" agents show command
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "^file *$xdg/proctor/agents/command.json$"
	run env XDG_CONFIG_HOME="$xdg" "$PROCTOR" agents show command --agents "$T/cli"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "^file *$T/cli/command.json$"
	run env XDG_CONFIG_HOME="$xdg" "$PROCTOR" agents list --agents "$T/cli"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^only-xdg '
	echo "$output" | grep -q '^claude-code ' # the built-in ones stay
	# without XDG_CONFIG_HOME, $HOME/.config stands in for it
	mkdir -p "$T/home/.config/proctor/agents"
	cp "$xdg/proctor/agents/only-xdg.json" "$T/home/.config/proctor/agents/"
	run env -u XDG_CONFIG_HOME HOME="$T/home" "$PROCTOR" agents show only-xdg
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "^file *$T/home/.config/proctor/agents/only-xdg.json$"
}

@test "agents: prompt \"file\": each turn's prompt in a root-owned, read-only file named by {prompt_file}, hidden until its turn" {
	cat >"$T/agents/promptfile.json" <<'JSON'
{"version":1,"name":"promptfile","prompt":"file","events":{"framing":"lines"},
 "argv":["/bin/sh","-c","cat \"$1\"; echo; stat -c 'owner %u mode %a' \"$1\"; if (: >>\"$1\") 2>/dev/null; then echo writable; else echo read-only; fi; if cat \"$(dirname \"$1\")/prompt-1.txt\" >/dev/null 2>&1; then echo turn-1-readable; else echo turn-1-hidden; fi","sh","{prompt_file}"]}
JSON
	cat >"$T/task.json" <<JSON
{"version":1,"id":"promptfile","workspace":{"from":"ws"},
 "agent":{"kind":"promptfile","prompt":"first prompt","turns":["second prompt"]},"limits":{"timeout_s":30}}
JSON
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = completed ]
	[ "$(result "len(r['agent']['turns'])")" = 2 ]
	python3 - "$T/run" <<'PY'
import json, sys
lines = [json.loads(l)["text"].rstrip("\n") for l in open(sys.argv[1] + "/logs/events.jsonl")]
want = ["first prompt", "owner 0 mode 444", "read-only", "turn-1-hidden",  # the next turn's prompt is not readable yet
        "second prompt", "owner 0 mode 444", "read-only", "turn-1-readable"]
assert lines == want, lines
PY
	[ "$(result "r['agent']['argv'][-1]")" = "$T/run/agent/prompt-0.txt" ]
	[ "$(cat "$T/run/agent/prompt-1.txt")" = "second prompt" ]
}

@test "agents: plugin_links link each bundle's path in, never through a link the workspace holds" {
	python3 -c "import json; d=json.load(open('$FAKE/fake-codex.json')); d['name']='fake-links'; d['plugin_links']=[{'at':'{workspace}/sub/dir/{plugin_bundle}','to':'{plugin_dir}/skills'}]; json.dump(d, open('$T/agents/fake-links.json','w'))"
	mkdir -p "$T/p0/.claude-plugin" "$T/p0/skills/s" "$T/p1/.claude-plugin" "$T/elsewhere"
	echo '{"name": "p0", "version": "0.1.0"}' >"$T/p0/.claude-plugin/plugin.json"
	echo '{"name": "p1", "version": "0.1.0"}' >"$T/p1/.claude-plugin/plugin.json"
	printf -- '---\nname: s\ndescription: d\n---\n' >"$T/p0/skills/s/SKILL.md"
	task fake-links "first" '[]'
	sed -i 's|"turns":\[\],|"turns":[],"plugins":[{"path":"p0"},{"path":"p1"}],|' "$T/task.json"
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 0 ]
	[ "$(result "r['status']")" = completed ]
	# a link for the bundle that has skills/, none for the one that has not; the directories on
	# the way are the agent's, the link root's
	[ "$(readlink "$T/run/workspace/sub/dir/plugin-0")" = "$T/run/bundles/plugin-0/skills" ]
	[ ! -e "$T/run/workspace/sub/dir/plugin-1" ] && [ ! -L "$T/run/workspace/sub/dir/plugin-1" ]
	[ "$(stat -c %u "$T/run/workspace/sub/dir")" -eq 2000 ] && [ "$(stat -c %u "$T/run/workspace/sub")" -eq 2000 ]
	[ "$(stat -c %u "$T/run/workspace/sub/dir/plugin-0")" -eq 0 ]
	# the same with the workspace holding sub -> elsewhere: refused, nothing made there
	rm -rf "$T/run"
	ln -s "$T/elsewhere" "$T/ws/sub"
	run "$PROCTOR" run "$T/task.json" --agents "$T/agents" --out "$T/run" --quiet
	[ "$status" -eq 4 ]
	[ "$(result "r['status']")" = config_error ]
	result "r['reason']" | grep -q 'plugin_links\[0\]'
	[ -z "$(ls -A "$T/elsewhere")" ]
	[ "$(stat -c %u "$T/elsewhere")" -eq 0 ]
}
