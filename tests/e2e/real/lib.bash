# SPDX-License-Identifier: MIT
# lib.bash: what real_agents.bats and bench/real_agent.sh share: finding the installed CLIs, a
# scripted model server (model.py), task files for claude-code and codex, and the checks run
# after every proctor run (nothing of the agent or mockd left).

REAL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REAL_ROOT=$(cd "$REAL_DIR/../../.." && pwd)
REAL_MODEL_WAIT_S=10

# real_cli_paths: set PROCTOR_CLAUDE and PROCTOR_CODEX from scripts/agents.sh --check, or print
# why not and return 1.
real_cli_paths() {
	local out
	if ! out=$("$REAL_ROOT/scripts/agents.sh" --check 2>&1); then
		echo "the real CLIs are not installed (scripts/agents.sh --check: $(echo "$out" | tail -n 1))"
		return 1
	fi
	PROCTOR_CLAUDE=$(echo "$out" | sed -n 's/^PROCTOR_CLAUDE=//p')
	PROCTOR_CODEX=$(echo "$out" | sed -n 's/^PROCTOR_CODEX=//p')
	if [ ! -x "$PROCTOR_CLAUDE" ] || [ ! -x "$PROCTOR_CODEX" ]; then
		echo "scripts/agents.sh --check printed no runnable PROCTOR_CLAUDE/PROCTOR_CODEX"
		return 1
	fi
}

# real_model VENDOR SCRIPT_JSON: start the scripted model server (anthropic|openai) on loopback
# with SCRIPT_JSON; sets MODEL_PID and PORT; its request log is $T/model.jsonl.
real_model() {
	printf '%s\n' "$2" >"$T/script.json"
	rm -f "$T/port" "$T/model.jsonl"
	python3 "$REAL_DIR/model.py" "$1" "$T/script.json" --log "$T/model.jsonl" \
		--port-file "$T/port" 2>"$T/model.err" &
	MODEL_PID=$!
	local n=0
	while [ ! -s "$T/port" ]; do
		n=$((n + 1))
		if [ $n -gt $((REAL_MODEL_WAIT_S * 20)) ] || ! kill -0 "$MODEL_PID" 2>/dev/null; then
			echo "the model server did not start:" >&2
			cat "$T/model.err" >&2
			return 1
		fi
		sleep 0.05
	done
	PORT=$(cat "$T/port")
}

real_model_stop() {
	if [ -n "${MODEL_PID:-}" ]; then
		kill "$MODEL_PID" 2>/dev/null || true
		wait "$MODEL_PID" 2>/dev/null || true
	fi
	MODEL_PID=
}

# real_task KIND PROMPT TURNS_JSON [EXTRA] [LIMITS_JSON]: write $T/task.json for claude-code or
# codex against the model on $PORT, with the uip mock. EXTRA is more top-level members, each
# followed by a comma (e.g. '"guard": false,'); PLUGINS_JSON, if set, is agent.plugins;
# RO_PATHS_JSON, if set, more agent.ro_paths (a JSON list's members, each followed by a comma);
# CODEX_MODEL, if set, the model slug Codex is told (default gpt-scripted, which Codex does not
# know; a slug it knows, e.g. gpt-5.5, makes it offer its apply_patch tool).
real_task() {
	local kind=$1 prompt=$2 turns=$3 extra=${4:-} limits=${5:-'{"timeout_s":120,"turn_timeout_s":60}'}
	local dir env args
	if [ "$kind" = claude-code ]; then
		dir=$(dirname "$PROCTOR_CLAUDE")
		env="\"ANTHROPIC_BASE_URL\":\"http://127.0.0.1:$PORT\",\"ANTHROPIC_API_KEY\":\"sk-dummy\",\"CLAUDE_CODE_MAX_RETRIES\":\"0\""
		args='[]'
	else
		dir=$(dirname "$PROCTOR_CODEX")
		env='"SCRIPTED_KEY":"x"'
		args="[\"-c\",\"model_provider=\\\"scripted\\\"\",\"-c\",\"model=\\\"${CODEX_MODEL:-gpt-scripted}\\\"\",\"-c\",\"model_providers.scripted={name=\\\"scripted\\\",base_url=\\\"http://127.0.0.1:$PORT/v1\\\",wire_api=\\\"responses\\\",env_key=\\\"SCRIPTED_KEY\\\",supports_websockets=false,request_max_retries=0,stream_max_retries=0}\"]"
	fi
	cat >"$T/task.json" <<JSON
{"version":1,"id":"real-$kind","workspace":{"from":"ws"},$extra
 "agent":{"kind":"$kind","prompt":"$prompt","turns":$turns,"args":$args,
   "env":{"PATH":"$dir:/usr/local/bin:/usr/bin:/bin",$env},
   "plugins":${PLUGINS_JSON:-[]},
   "ro_paths":[${RO_PATHS_JSON:-}"/opt/proctor-agents"]},
 "mocks":[{"tool":"uip","fixture":"fx.json","max_requests":10,"passthrough_argv_prefixes":[]}],
 "limits":$limits}
JSON
}

# q EXPR: true when EXPR holds over the run in $T (names: tests/e2e/real/q.py).
q() { python3 "$REAL_DIR/q.py" "$T" "$1"; }
qp() { python3 "$REAL_DIR/q.py" "$T" "$1" --print; }

# real_clean: after a run, nothing of it is left: no survivor in result.json, no process of
# the agent's or mockd's uid, the mock socket removed.
real_clean() {
	q "r['teardown']['survivors'] == [] and r['teardown']['socket_removed'] is True and r['teardown']['errors'] == []"
	local left
	left=$(procs_ours 2000,2100)
	if [ -n "$left" ]; then
		echo "processes of uid 2000/2100 left: $left" >&2
		return 1
	fi
	if [ -e "$T/run/sock/mock.sock" ]; then
		echo "the mock socket is still there" >&2
		return 1
	fi
}

REAL_LOCK=/tmp/proctor-e2e.lock

# real_lock: hold the shared e2e lock on fd 9 (the e2e suites share uids 2000 and 2100), unless a
# process this one descends from holds it already (`flock /tmp/proctor-e2e.lock make check`):
# taking it again through a new open file would wait for ever.
real_lock() {
	exec 9>"$REAL_LOCK"
	local ino pid holders
	ino=$(stat -c %i "$REAL_LOCK")
	holders=$(awk -v ino="$ino" '$2 == "FLOCK" { split($6, d, ":"); if (d[3] == ino) print $5 }' /proc/locks)
	pid=$BASHPID
	while [ -n "$pid" ] && [ "$pid" -gt 1 ]; do
		for h in $holders; do
			[ "$h" = "$pid" ] && return 0
		done
		pid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	done
	flock 9
}
