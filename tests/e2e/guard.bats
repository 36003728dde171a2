#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# proctor guard end to end: the installed files byte for byte, teardown restoring the user's
# file exactly, refusals that touch nothing, and real-shaped Claude Code and Codex payloads.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	setup_tmp
	W=$T/ws
	mkdir -p "$W"
	W=$(cd "$W" && pwd -P)
	M=$W/.claude/skills/.proctor-guard.json
}
teardown() { teardown_tmp; }

payload() { # payload TOOL INPUT_JSON
	printf '{"session_id":"abc","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"%s","tool_input":%s,"tool_use_id":"toolu_1"}' \
		"$W" "$1" "$2"
}

@test "guard install (claude-code): marker, hook file and manifest, byte for byte" {
	run "$PROCTOR" guard install --harness claude-code --root "$W" --ttl 600 --denial-log "$T/denials.jsonl"
	[ "$status" -eq 0 ]
	exe=$(readlink -f "$PROCTOR")
	expected_hook='{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "\"'"$exe"'\" guard hook --harness claude-code \"'"$M"'\""
          }
        ]
      }
    ]
  }
}'
	[ "$(cat "$W/.claude/settings.local.json")" = "$expected_hook" ]
	[ "$(tail -c1 "$W/.claude/settings.local.json" | od -An -c | tr -d ' ')" = '\n' ]
	run sed -E 's/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"/"TS"/' "$M"
	[ "$output" = '{
  "active": true,
  "allowedRoots": [
    "'"$W"'"
  ],
  "expiresAt": "TS",
  "denialLogPath": "'"$T/denials.jsonl"'"
}' ]
	run sed -E 's/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"/"TS"/' "$W/.claude/skills/.proctor-guard.manifest.json"
	[ "$output" = '{
  "created_at": "TS",
  "settings_path": "'"$W/.claude/settings.local.json"'",
  "settings_existed": false,
  "settings_backup": null,
  "marker_path": "'"$M"'",
  "harness": "claude-code",
  "created_dirs": [
    "'"$W/.claude"'",
    "'"$W/.claude/skills"'"
  ]
}' ]
	run "$PROCTOR" guard status "$W"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "^claude-code: armed"
}

@test "guard install (codex): hooks.json with timeout and status message" {
	run "$PROCTOR" guard install --harness codex --root "$W"
	[ "$status" -eq 0 ]
	[ -f "$W/.agents/skills/.proctor-guard.json" ]
	run json_get 'd[0]["hooks"]["PreToolUse"][0]["matcher"], d[0]["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], d[0]["hooks"]["PreToolUse"][0]["hooks"][0]["statusMessage"]' \
		<<<"$(tr -d '\n' <"$W/.codex/hooks.json")"
	[ "$output" = "('^Bash\$|^apply_patch\$|^Edit\$|^Write\$', 30, 'proctor guard: checking write targets')" ]
}

@test "guard: install over the user's settings keeps every key in order; teardown restores them byte for byte" {
	mkdir -p "$W/.claude"
	printf '{\n    "model": "opus",\n    "hooks": {"PostToolUse": [{"matcher": "x", "hooks": []}],\n      "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}]},\n    "env": {"A": "1"}\n}\n' >"$W/.claude/settings.local.json"
	cp "$W/.claude/settings.local.json" "$T/original"
	run "$PROCTOR" guard install --harness claude-code --root "$W"
	[ "$status" -eq 0 ]
	run json_get 'list(d[0]), list(d[0]["hooks"]), [e["matcher"] for e in d[0]["hooks"]["PreToolUse"]], d[0]["env"]' \
		<<<"$(tr -d '\n' <"$W/.claude/settings.local.json")"
	[ "$output" = "(['model', 'hooks', 'env'], ['PostToolUse', 'PreToolUse'], ['Bash', '*'], {'A': '1'})" ]
	run "$PROCTOR" guard install --harness claude-code --root "$W"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "already installed"
	run "$PROCTOR" guard teardown "$W"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "restored $W/.claude/settings.local.json"
	cmp "$T/original" "$W/.claude/settings.local.json"
	[ ! -e "$M" ] && [ ! -e "$W/.claude/skills" ]
}

@test "guard: settings that are not JSON or have the wrong types are refused and left alone" {
	mkdir -p "$W/.claude"
	for bad in 'not json' '{"hooks": []}' '{"hooks": {"PreToolUse": {}}}' '[1]'; do
		printf '%s' "$bad" >"$W/.claude/settings.local.json"
		run "$PROCTOR" guard install --harness claude-code --root "$W"
		[ "$status" -eq 1 ]
		echo "$output" | grep -q "refusing to change it"
		[ "$(cat "$W/.claude/settings.local.json")" = "$bad" ]
		[ ! -e "$M" ]
	done
}

@test "guard teardown: after a crash between writes, with a stray marker, a corrupt manifest, or nothing" {
	mkdir -p "$W/.claude" && echo '{"a": 1}' >"$W/.claude/settings.local.json"
	cp "$W/.claude/settings.local.json" "$T/original"
	"$PROCTOR" guard install --harness claude-code --root "$W" >/dev/null
	cp "$T/original" "$W/.claude/settings.local.json" # as if we died before writing the hook file
	run "$PROCTOR" guard teardown "$W"
	[ "$status" -eq 0 ]
	cmp "$T/original" "$W/.claude/settings.local.json"
	mkdir -p "$W/.claude/skills" && echo '{}' >"$M"
	run "$PROCTOR" guard teardown "$W"
	echo "$output" | grep -q "removed stray marker"
	[ ! -e "$M" ]
	"$PROCTOR" guard install --harness claude-code --root "$W" >/dev/null
	echo 'garbage' >"$W/.claude/skills/.proctor-guard.manifest.json"
	run "$PROCTOR" guard teardown "$W"
	echo "$output" | grep -q "corrupt manifest"
	[ ! -e "$M" ] && [ ! -e "$W/.claude/skills/.proctor-guard.manifest.json" ]
	run "$PROCTOR" guard teardown "$W"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "nothing installed"
}

@test "guard hook (claude-code): real-shaped payloads get the exact verdict; allows print nothing" {
	"$PROCTOR" guard install --harness claude-code --root "$W" --denial-log "$T/denials.jsonl" >/dev/null
	run bash -c "$(printf '%q ' "$PROCTOR" guard hook --harness claude-code "$M") <<<'$(payload Write '{"file_path":"/etc/passwd","content":"x"}')'"
	[ "$status" -eq 0 ]
	[ "$output" = '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"proctor guard: Write /etc/passwd: outside the allowed roots"}}' ]
	run bash -c "$(printf '%q ' "$PROCTOR" guard hook --harness claude-code "$M") <<<'$(payload Bash '{"command":"echo ok > out.txt","description":"write"}')'"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run bash -c "$(printf '%q ' "$PROCTOR" guard hook --harness claude-code "$M") <<<'$(payload Bash '{"command":"echo SECRET-TEXT > /etc/x"}')'"
	echo "$output" | grep -q '"permissionDecision":"deny"'
	[ "$(wc -l <"$T/denials.jsonl")" -eq 2 ]
	run ! grep -q SECRET-TEXT "$T/denials.jsonl"
	run json_get 'd[1]["tool"], d[1]["targets"], d[1]["input_keys"]' <"$T/denials.jsonl"
	[ "$output" = "('Bash', ['/etc/x'], ['command'])" ]
}

@test "guard hook (codex): block verdict for apply_patch and Bash" {
	"$PROCTOR" guard install --harness codex --root "$W" >/dev/null
	CM=$W/.agents/skills/.proctor-guard.json
	patch='{"command":["apply_patch","*** Begin Patch\n*** Add File: /etc/evil\n+x\n*** End Patch"]}'
	run bash -c "$(printf '%q ' "$PROCTOR" guard hook --harness codex "$CM") <<<'$(payload apply_patch "$patch")'"
	[ "$output" = '{"decision":"block","reason":"proctor guard: apply_patch /etc/evil: outside the allowed roots"}' ]
	run bash -c "$(printf '%q ' "$PROCTOR" guard hook --harness codex "$CM") <<<'$(payload Bash '{"command":"git push"}')'"
	[ "$output" = '{"decision":"block","reason":"proctor guard: Bash: git push: network operations are not allowed"}' ]
}

@test "guard hook: fails closed on an absent, malformed or expired marker; inactive allows; unreadable payloads are denied" {
	run bash -c "echo '$(payload Bash '{"command":"ls"}')' | '$PROCTOR' guard hook --harness claude-code '$T/absent.json'"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "marker $T/absent.json is missing; the guard fails closed"
	mkdir -p "$(dirname "$M")"
	echo 'garbage' >"$M"
	run bash -c "echo '$(payload Bash '{"command":"ls"}')' | '$PROCTOR' guard hook --harness claude-code '$M'"
	echo "$output" | grep -q "is unreadable or malformed"
	printf '{"active":true,"allowedRoots":["%s"],"expiresAt":"2001-01-01T00:00:00.000Z","denialLogPath":null}' "$W" >"$M"
	run bash -c "echo '$(payload Bash '{"command":"ls"}')' | '$PROCTOR' guard hook --harness claude-code '$M'"
	echo "$output" | grep -q "expired at 2001-01-01T00:00:00Z while the hook is still installed"
	printf '{"active":false,"allowedRoots":["%s"],"expiresAt":"2001-01-01T00:00:00.000Z","denialLogPath":null}' "$W" >"$M"
	run bash -c "echo '$(payload Write '{"file_path":"/etc/x"}')' | '$PROCTOR' guard hook --harness claude-code '$M'"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	printf '{"active":true,"allowedRoots":["%s"],"expiresAt":"2999-01-01T00:00:00.000Z","denialLogPath":null}' "$W" >"$M"
	run bash -c "echo 'not json' | '$PROCTOR' guard hook --harness claude-code '$M'"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "unreadable hook payload"
}

@test "guard hook: a payload of exactly 4 MiB is decided; one byte more is denied unread" {
	"$PROCTOR" guard install --harness claude-code --root "$W" >/dev/null
	# An allowed command padded (in its description) to exactly N bytes, N = 4 MiB and 4 MiB + 1.
	python3 - "$(payload Bash '{"command":"ls","description":"PAD"}')" "$T" <<-'PY'
	import sys
	p, t = sys.argv[1], sys.argv[2]
	for name, n in (("at", 4 << 20), ("over", (4 << 20) + 1)):
	    data = p.replace("PAD", "x" * (n - len(p) + 3))
	    assert len(data) == n
	    open(t + "/" + name + ".json", "w").write(data)
	PY
	run "$PROCTOR" guard hook --harness claude-code "$M" <"$T/at.json"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$PROCTOR" guard hook --harness claude-code "$M" <"$T/over.json"
	[ "$status" -eq 0 ]
	[ "$output" = '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"proctor guard: payload larger than 4194304 bytes"}}' ]
}

@test "guard: every subcommand has --help; an unknown --harness or a missing marker in hook is a usage error" {
	for sub in install teardown status hook; do
		run "$PROCTOR" guard "$sub" --help
		[ "$status" -eq 0 ]
		echo "$output" | grep -q "usage: proctor guard install"
	done
	run bash -c "echo '{}' | '$PROCTOR' guard hook --harness cursor '$M'"
	[ "$status" -eq 2 ]
	echo "$output" | grep -q -- "--harness: 'cursor' is not claude-code or codex"
	run bash -c "echo '{}' | '$PROCTOR' guard hook --harness codex"
	[ "$status" -eq 2 ]
	echo "$output" | grep -q "give the marker path"
}

@test "guard teardown: a delete that fails is reported, exits non-zero, and keeps the marker" {
	"$PROCTOR" guard install --harness claude-code --root "$W" >/dev/null
	rm "$W/.claude/settings.local.json"
	mkdir -p "$W/.claude/settings.local.json/keep" # unlink now fails (EISDIR), even for root
	run "$PROCTOR" guard teardown "$W"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "$W/.claude/settings.local.json: cannot remove: Is a directory"
	echo "$output" | grep -q "teardown of $W incomplete"
	[ -e "$M" ]
	rm -r "$W/.claude/settings.local.json"
	run "$PROCTOR" guard teardown "$W"
	[ "$status" -eq 0 ]
	[ ! -e "$M" ]
}

@test "guard hook as the agent (uid 2000): the agent cannot tear the guard down or reach the network" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as uid 2000"
	"$PROCTOR" guard install --harness claude-code --root "$W" >/dev/null
	chown -R 2000:2000 "$W"
	for cmd in "proctor guard teardown $W" "rm -rf .claude" "git clean -fdx" "git -c alias.x=push x" "npm i left-pad" \
		"echo '{\"disableAllHooks\":true}' > .claude/settings.json" "mv .claude .old"; do
		p=$(payload Bash "$(python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1]}))' "$cmd")")
		run bash -c "$(printf '%q ' "$PROCTOR" drop --uid 2000 --gid 2000 --clear-groups -- "$PROCTOR" guard hook --harness claude-code "$M") <<<$(printf '%q' "$p")"
		echo "$cmd -> $output"
		echo "$output" | grep -q '"permissionDecision":"deny"'
	done
}
