# SPDX-License-Identifier: MIT
# The cases of tests/agents/smoke.sh (sourced there, inside a loopback-only network namespace).
# Each case_AGENT_NAME prints "PASS AGENT NAME" or "FAIL AGENT NAME: why" and returns 0 or 1.
# Uses HERE, AGENT_UID, TURN_TIMEOUT, PROCTOR_CLAUDE, PROCTOR_CODEX from smoke.sh.

SCR=""
SERVER_PID=""
CASE=""

fail() {
	echo "FAIL $CASE: $*"
	if [ -n "$SCR" ]; then
		for f in "$SCR"/out*.jsonl "$SCR"/err*.txt; do
			[ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 5 "$f" | cut -c1-400; }
		done
	fi
	cleanup
	return 1
}

cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=""
	# Nothing of the agent may outlive its turn (a leftover is a finding, not noise).
	# Only processes working in this scratch dir count: the machine is shared.
	if [ -n "$SCR" ]; then
		for p in $(pgrep -u "$AGENT_UID"); do
			case "$(readlink "/proc/$p/cwd" 2>/dev/null)" in
			"$SCR"*) echo "note $CASE: left behind: $(tr '\0' ' ' <"/proc/$p/cmdline")" ;;
			esac
		done
	fi
	[ -n "$SCR" ] && [ -z "${PROCTOR_SMOKE_KEEP:-}" ] && rm -rf "$SCR"
	SCR=""
}

# setup CASE VENDOR SCRIPT_JSON: scratch dir with home, tmp, ws owned by the agent; model server.
setup() {
	CASE=$1
	SCR=$(mktemp -d /tmp/proctor-smoke.XXXXXX) || return 1
	chmod 755 "$SCR"
	mkdir "$SCR/home" "$SCR/tmp" "$SCR/ws"
	chown "$AGENT_UID:$AGENT_UID" "$SCR/home" "$SCR/tmp" "$SCR/ws"
	printf '%s\n' "$3" >"$SCR/script.json"
	python3 "$HERE/model_$2.py" "$SCR/script.json" --log "$SCR/model.jsonl" \
		--port-file "$SCR/port" 2>"$SCR/server.err" &
	SERVER_PID=$!
	n=0
	while [ ! -s "$SCR/port" ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && { cat "$SCR/server.err"; return 1; }
		sleep 0.05
	done
	PORT=$(cat "$SCR/port")
}

# as_agent OUT ERR CMD...: run CMD as the agent uid in ws, stdin /dev/null, a clean environment
# (plus the variables named in AGENT_ENV), with a timeout; returns the command's status.
as_agent() {
	out=$1 err=$2
	shift 2
	# shellcheck disable=SC2086
	(cd "$SCR/ws" && timeout -k 5 "$TURN_TIMEOUT" setpriv --reuid "$AGENT_UID" \
		--regid "$AGENT_UID" --clear-groups env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$SCR/home" TMPDIR="$SCR/tmp" LANG=C.UTF-8 $AGENT_ENV "$@" \
		</dev/null >"$out" 2>"$err")
}

# ev FILE PYTHON_EXPR: evaluate EXPR with `ev` = the list of JSON events in FILE (non-JSON lines
# are a failure: the event format changed) and `log` = the model server's request log; prints
# the result (True/False or a value).
ev() {
	python3 - "$1" "$SCR/model.jsonl" "$2" <<'PY'
import json, sys
def load(p):
    try:
        return [json.loads(l) for l in open(p) if l.strip()]
    except FileNotFoundError:
        return []
ev, log = load(sys.argv[1]), load(sys.argv[2])
def first(t, **kw):
    return next((e for e in ev if e.get("type") == t
                 and all(e.get(k) == v for k, v in kw.items())), None)
print(eval("(" + sys.argv[3] + ")"))
PY
}

check() { [ "$(ev "$1" "$2")" = True ] || fail "$3"; }

TWO_TURNS='{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "echo hi > x.txt"}]},
 {"text": "turn one done"},
 {"text": "turn two done", "expect": "turn one done"}]}'

claude_env() {
	AGENT_ENV="ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=sk-proctor-dummy
	CLAUDE_CODE_TMPDIR=$SCR/tmp CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1
	DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1"
}

CLAUDE_FLAGS="--output-format stream-json --verbose --permission-mode bypassPermissions"

case_claude_two_turns() {
	setup "claude two_turns" anthropic "$TWO_TURNS" || { fail "model server did not start"; return 1; }
	claude_env
	# shellcheck disable=SC2086
	as_agent "$SCR/out1.jsonl" "$SCR/err1.txt" "$PROCTOR_CLAUDE" -p "make x.txt" $CLAUDE_FLAGS ||
		{ fail "turn 1 exited $?"; return 1; }
	[ "$(cat "$SCR/ws/x.txt" 2>/dev/null)" = hi ] || { fail "x.txt is not 'hi'"; return 1; }
	sid=$(ev "$SCR/out1.jsonl" "first('system', subtype='init')['session_id']")
	check "$SCR/out1.jsonl" "any(c.get('type') == 'tool_result' and c['tool_use_id'] == 'toolu_000_00'
		and not c['is_error'] for e in ev if e['type'] == 'user' for c in e['message']['content'])" \
		"no successful tool_result for the Bash call" || return 1
	check "$SCR/out1.jsonl" "ev[-1]['type'] == 'result' and ev[-1]['subtype'] == 'success'
		and ev[-1]['result'] == 'turn one done' and ev[-1]['session_id'] == '$sid'
		and ev[-1]['usage']['output_tokens'] > 0" "turn 1 does not end with a success result" ||
		return 1
	# shellcheck disable=SC2086
	as_agent "$SCR/out2.jsonl" "$SCR/err2.txt" "$PROCTOR_CLAUDE" -p "again" $CLAUDE_FLAGS \
		--resume "$sid" || { fail "turn 2 exited $?"; return 1; }
	check "$SCR/out2.jsonl" "first('system', subtype='init')['session_id'] == '$sid'
		and ev[-1]['type'] == 'result' and ev[-1]['result'] == 'turn two done'" \
		"turn 2 did not resume session $sid" || return 1
	check "$SCR/out2.jsonl" "[r['action'] for r in log if r['turn'] is not None]
		== ['answer', 'answer', 'answer']" "the model saw no turn-1 history in turn 2" || return 1
	echo "PASS $CASE (session $sid)"
	cleanup
}

codex_config() {
	mkdir -p "$SCR/home/.codex"
	cat >"$SCR/home/.codex/config.toml" <<EOF
model = "gpt-scripted"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"
allow_login_shell = false

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "PROCTOR_MODEL_KEY"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0
EOF
	chown -R "$AGENT_UID:$AGENT_UID" "$SCR/home/.codex"
	AGENT_ENV="CODEX_HOME=$SCR/home/.codex PROCTOR_MODEL_KEY=dummy"
}

case_codex_two_turns() {
	setup "codex two_turns" openai "$TWO_TURNS" || { fail "model server did not start"; return 1; }
	codex_config
	as_agent "$SCR/out1.jsonl" "$SCR/err1.txt" "$PROCTOR_CODEX" exec --json \
		--skip-git-repo-check "make x.txt" || { fail "turn 1 exited $?"; return 1; }
	[ "$(cat "$SCR/ws/x.txt" 2>/dev/null)" = hi ] || { fail "x.txt is not 'hi'"; return 1; }
	tid=$(ev "$SCR/out1.jsonl" "first('thread.started')['thread_id']")
	check "$SCR/out1.jsonl" "any(e['type'] == 'item.completed' and e['item']['type'] ==
		'command_execution' and e['item']['exit_code'] == 0 for e in ev)" \
		"no successful command_execution item" || return 1
	check "$SCR/out1.jsonl" "ev[-1]['type'] == 'turn.completed' and ev[-1]['usage']['output_tokens']
		> 0 and any(e['type'] == 'item.completed' and e['item'].get('text') == 'turn one done'
		for e in ev)" "turn 1 does not end with turn.completed after the answer" || return 1
	as_agent "$SCR/out2.jsonl" "$SCR/err2.txt" "$PROCTOR_CODEX" exec --json \
		--skip-git-repo-check resume "$tid" "again" || { fail "turn 2 exited $?"; return 1; }
	check "$SCR/out2.jsonl" "first('thread.started')['thread_id'] == '$tid'
		and ev[-1]['type'] == 'turn.completed' and any(e['type'] == 'item.completed'
		and e['item'].get('text') == 'turn two done' for e in ev)" \
		"turn 2 did not resume thread $tid" || return 1
	check "$SCR/out2.jsonl" "[r['action'] for r in log if r['turn'] is not None]
		== ['answer', 'answer', 'answer']" "the model saw no turn-1 history in turn 2" || return 1
	echo "PASS $CASE (thread $tid)"
	cleanup
}

# The model server drops the connection before answering (and on every retry): the CLI must exit
# non-zero, quickly, with the error in its own events.
DROP='{"turns": [{"drop": "before"}]}'
DROP_LIMIT_S=30

case_claude_drop() {
	setup "claude drop" anthropic "$DROP" || { fail "model server did not start"; return 1; }
	claude_env
	AGENT_ENV="$AGENT_ENV CLAUDE_CODE_MAX_RETRIES=0"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	as_agent "$SCR/out1.jsonl" "$SCR/err1.txt" "$PROCTOR_CLAUDE" -p "go" $CLAUDE_FLAGS
	rc=$? secs=$(($(date +%s) - t0))
	[ $rc -eq 1 ] || { fail "exit status $rc, not 1"; return 1; }
	[ $secs -le $DROP_LIMIT_S ] || { fail "took ${secs}s"; return 1; }
	check "$SCR/out1.jsonl" "ev[-1]['type'] == 'result' and ev[-1]['is_error'] is True
		and ev[-1]['terminal_reason'] == 'api_error' and 'ECONNRESET' in ev[-1]['result']" \
		"the last event is not an api_error result" || return 1
	echo "PASS $CASE (exit 1 after ${secs}s)"
	cleanup
}

case_codex_drop() {
	setup "codex drop" openai "$DROP" || { fail "model server did not start"; return 1; }
	codex_config
	t0=$(date +%s)
	as_agent "$SCR/out1.jsonl" "$SCR/err1.txt" "$PROCTOR_CODEX" exec --json \
		--skip-git-repo-check "go"
	rc=$? secs=$(($(date +%s) - t0))
	[ $rc -eq 1 ] || { fail "exit status $rc, not 1"; return 1; }
	[ $secs -le $DROP_LIMIT_S ] || { fail "took ${secs}s"; return 1; }
	check "$SCR/out1.jsonl" "ev[-1]['type'] == 'turn.failed' and ev[-2]['type'] == 'error'
		and 'stream disconnected' in ev[-1]['error']['message']" \
		"the last events are not error, turn.failed" || return 1
	echo "PASS $CASE (exit 1 after ${secs}s)"
	cleanup
}

# A real PreToolUse hook denies a Bash write even after the agent tried to switch hooks off from
# inside (turn 1 writes the settings an agent can write), on the resumed turn 2. The hook and its
# config are root-owned; the hook records each payload where the test can read it.
guard_setup() {
	mkdir -p "$SCR/guard/payloads"
	chown "$AGENT_UID:$AGENT_UID" "$SCR/guard/payloads"
	cat >"$SCR/guard/hook.sh" <<HOOK
#!/bin/sh
f=\$(mktemp "$SCR/guard/payloads/p.XXXXXX") || exit 2
cat >"\$f"
if grep -q 'x\.txt' "\$f"; then
	echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"proctor-guard: denied x.txt"}}'
fi
exit 0
HOOK
	chmod 755 "$SCR/guard/hook.sh"
	echo "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash|Write|Edit\",\"hooks\":[{\"type\":\"command\",\"command\":\"$SCR/guard/hook.sh\"}]}]}}" \
		>"$SCR/guard/settings.json"
}

payload_seen() {
	grep -l '"tool_name":"Bash"' "$SCR"/guard/payloads/p.* 2>/dev/null | xargs -r grep -l 'x\.txt' |
		grep -q .
}

CLAUDE_DISARM='{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "mkdir -p .claude $HOME/.claude && printf %s \"{\\\"disableAllHooks\\\": true}\" | tee .claude/settings.json .claude/settings.local.json $HOME/.claude/settings.json"}]},
 {"text": "one"},
 {"tool_calls": [{"tool": "bash", "command": "echo hi > x.txt"}]},
 {"text": "two"}]}'

case_claude_hook() {
	setup "claude hook" anthropic "$CLAUDE_DISARM" || { fail "model server did not start"; return 1; }
	claude_env
	guard_setup
	g="--settings $SCR/guard/settings.json --setting-sources="
	# shellcheck disable=SC2086
	as_agent "$SCR/out1.jsonl" "$SCR/err1.txt" "$PROCTOR_CLAUDE" -p "go" $CLAUDE_FLAGS $g ||
		{ fail "turn 1 exited $?"; return 1; }
	grep -q disableAllHooks "$SCR/ws/.claude/settings.local.json" ||
		{ fail "turn 1 did not write the disarming settings"; return 1; }
	sid=$(ev "$SCR/out1.jsonl" "first('system', subtype='init')['session_id']")
	# shellcheck disable=SC2086
	as_agent "$SCR/out2.jsonl" "$SCR/err2.txt" "$PROCTOR_CLAUDE" -p "again" $CLAUDE_FLAGS $g \
		--resume "$sid" || { fail "turn 2 exited $?"; return 1; }
	[ ! -e "$SCR/ws/x.txt" ] || { fail "x.txt was written: the hook was switched off"; return 1; }
	payload_seen || { fail "the hook saw no Bash payload for x.txt"; return 1; }
	check "$SCR/out2.jsonl" "any(c.get('type') == 'tool_result' and c['is_error'] and
		'proctor-guard: denied x.txt' in str(c['content']) for e in ev if e['type'] == 'user'
		for c in e['message']['content'])" "no denied tool_result in the events" || return 1
	echo "PASS $CASE"
	cleanup
}

CODEX_DISARM='{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "printf \"\\n[features]\\nhooks = false\\n\" >> $CODEX_HOME/config.toml"}]},
 {"text": "one"},
 {"tool_calls": [{"tool": "bash", "command": "echo hi > x.txt"}]},
 {"text": "two"}]}'

case_codex_hook() {
	setup "codex hook" openai "$CODEX_DISARM" || { fail "model server did not start"; return 1; }
	codex_config
	guard_setup
	hk="hooks.PreToolUse=[{hooks=[{type=\"command\",command=\"$SCR/guard/hook.sh\"}]}]"
	as_agent "$SCR/out1.jsonl" "$SCR/err1.txt" "$PROCTOR_CODEX" exec --json --skip-git-repo-check \
		-c "$hk" -c features.hooks=true --dangerously-bypass-hook-trust "go" ||
		{ fail "turn 1 exited $?"; return 1; }
	grep -q 'hooks = false' "$SCR/home/.codex/config.toml" ||
		{ fail "turn 1 did not write the disarming config"; return 1; }
	tid=$(ev "$SCR/out1.jsonl" "first('thread.started')['thread_id']")
	as_agent "$SCR/out2.jsonl" "$SCR/err2.txt" "$PROCTOR_CODEX" exec --json --skip-git-repo-check \
		-c "$hk" -c features.hooks=true --dangerously-bypass-hook-trust resume "$tid" "again" ||
		{ fail "turn 2 exited $?"; return 1; }
	[ ! -e "$SCR/ws/x.txt" ] || { fail "x.txt was written: the hook was switched off"; return 1; }
	payload_seen || { fail "the hook saw no Bash payload for x.txt"; return 1; }
	# Codex prints no event for a denied call: the denial is in what it sends the model.
	check "$SCR/out2.jsonl" "any(i.get('type') == 'function_call_output' and
		i['output'].startswith('Command blocked by PreToolUse hook: proctor-guard: denied x.txt')
		for i in log[-1]['body']['input'])" "the model was not told of the denial" || return 1
	echo "PASS $CASE"
	cleanup
}
