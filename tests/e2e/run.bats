#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# proctor run end to end, as root: the demo task, each hostile agent of tests/e2e/agents/, task
# file errors, mockd and worker failures, concurrent runs. Every result.json is checked against
# doc/RESULT.md (result_check.py); after every test no process of the agent and mockd uids, no
# socket and no mount is left behind. Skips without root or Landlock.

bats_require_minimum_version 1.5.0
load helpers

AGENTS=$BATS_TEST_DIRNAME/agents
CHECK=$BATS_TEST_DIRNAME/result_check.py
DEMO=$(cd "$BATS_TEST_DIRNAME/../../examples/troubleshoot" && pwd)
RUN_UIDS=2000,2001,2100,2101   # slots 0 and 1 of the default identity

setup() {
	[ "$(id -u)" -eq 0 ] || skip "proctor run needs root"
	"$PROCTOR" doctor --json | tr -d '\n ' | grep -q '"check":"landlock","ok":true' ||
		skip "no Landlock on this kernel: proctor run refuses to run without it"
	T=$(mktemp -d /tmp/proctor-run-XXXXXX)
	chmod 0755 "$T"
	R=$T/run
	mounts >"$T.mounts"
	procs_mark
}

teardown() {
	[ -n "${T:-}" ] || return 0
	local problems= p
	for p in ${BG:-}; do   # a proctor run a failed test left in the background
		kill -TERM "$p" 2>/dev/null && problems="proctor run $p still running; "
		wait "$p" 2>/dev/null
	done
	for p in ${HELPERS:-}; do # a test's own root helpers (a namespace's init), never left running
		kill -KILL "$p" 2>/dev/null
	done
	local left
	left=$(procs_ours "$RUN_UIDS")
	if [ -n "$left" ]; then
		problems="${problems}processes left behind: $left"
		for u in 2000 2001 2100 2101; do "$PROCTOR" reap --uid "$u" --grace 100 >/dev/null 2>&1; done
	fi
	local socks
	socks=$(find "$T" -type s 2>/dev/null)
	[ -z "$socks" ] || problems="$problems; sockets left: $socks"
	if [ -n "${FILL_FS:-}" ]; then umount "$FILL_FS" || problems="$problems; $FILL_FS still mounted"; fi
	mounts >"$T.mounts.after"
	if ! cmp -s "$T.mounts" "$T.mounts.after"; then
		problems="$problems; mounts changed: $(diff "$T.mounts" "$T.mounts.after" | grep '^[<>]')"
	fi
	rm -rf "$T" "$T.mounts" "$T.mounts.after"
	if [ -n "$problems" ]; then
		echo "after the test: $problems" >&2
		return 1
	fi
}

mounts() { cut -d' ' -f5- /proc/self/mountinfo | sort; }

# task DIR AGENT [JSON]: DIR/task.json running tests/e2e/agents/AGENT (copied beside it, so the
# task ships it) on an empty workspace DIR/ws, JSON merged into it (objects merged key by key).
task() {
	mkdir -p "$1/ws"
	cp "$AGENTS/$2" "$1/"
	python3 - "$1" "$2" "${3:-{\}}" "$SAN_ENV" <<'EOF'
import json, sys
d, agent, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
t = {"version": 1, "id": "e2e-" + agent.split(".")[0], "workspace": {"from": "ws"},
     "agent": {"kind": "command", "command": ["./" + agent]}, "limits": {"timeout_s": 30}}
def merge(a, b):
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            merge(a[k], v)
        else:
            a[k] = v
merge(t, extra)
merge(t, json.loads(sys.argv[4]))
with open(d + "/task.json", "w") as f:
    json.dump(t, f, indent=1)
EOF
}

# Under sanitizers the shim the agent runs is an ASan build, and LeakSanitizer cannot work in
# the agent's pid namespace (it reads /proc/PID/task with its namespace pid from the host's
# /proc, fails, and fails the call): leak checking stays on everywhere else.
if [ -n "${SANITIZE:-}" ]; then
	SAN_ENV='{"agent": {"env": {"ASAN_OPTIONS": "detect_leaks=0"}}}'
else
	SAN_ENV='{}'
fi

# A uip fixture in DIR/uip.json and the mock entry that serves it.
MOCK='{"mocks": [{"tool": "uip", "fixture": "uip.json", "max_requests": 20, "passthrough_argv_prefixes": []}]}'
fixture() {
	cat >"$1/uip.json" <<'EOF'
{"version": 1,
 "responses": [{"argv": ["or", "jobs", "list"], "match_mode": "subset", "stdout": "[]\n"}],
 "default": {"exit_code": 1, "stderr": "Error: not found\n"}}
EOF
}

# prun TASK [ARGS]: proctor run TASK --out $R, status and stderr kept apart.
prun() {
	local t=$1
	shift
	run --separate-stderr "$PROCTOR" run "$t" --out "$R" "$@"
}

result_ok() { # result_ok STATUS EXIT: result.json passes the contract check with these values
	run python3 "$CHECK" "$R/result.json" --status "$1" --exit-code "$2"
	echo "$output"
	[ "$status" -eq 0 ]
}

rget() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$R/result.json" "$1"; }

# The agent's events (stdout lines) of run $1 (default $R), one compact JSON object a line.
events() { python3 "$CHECK" events "${1:-$R}"; }

# Every "attempt" event of run $1 was blocked with a kernel error, not by chance (a missing
# target); prints the attempts; fails naming the first that was not.
all_blocked() {
	events "${1:-$R}" | python3 -c '
import json, sys
ok = {"EACCES", "EPERM", "ESRCH", "ENOTTY", "ENXIO", "EROFS", "not-visible", "not-signalled"}
n = 0
for line in sys.stdin:
    e = json.loads(line)
    if "attempt" not in e or e.get("blocked") is None:
        continue
    n += 1
    if e["blocked"] is not True or e["how"] not in ok:
        sys.exit("not blocked: %s" % line.strip())
print(n, "attempts, all blocked")
'
}

# The host pid of the live process of uid $1 whose command line contains $2.
pid_of() { pgrep -u "$1" -f -- "$2" | head -n 1; }

# The top-most ancestor of pid $1 that has the same uid: the worker hosting the agent.
worker_of() {
	local p=$1 uid up
	uid=$(awk '/^Uid:/ {print $2}' "/proc/$p/status")
	while :; do
		up=$(awk '/^PPid:/ {print $2}' "/proc/$p/status")
		[ "$up" -gt 1 ] && [ "$(awk '/^Uid:/ {print $2}' "/proc/$up/status")" = "$uid" ] || break
		p=$up
	done
	echo "$p"
}

# --- the demo -------------------------------------------------------------------------------

@test "run: the demo task does the honest work, blocks every attack, leaves nothing behind" {
	cp -a "$DEMO" "$T/demo"
	python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
t["agent"].setdefault("env", {}).update(json.loads(sys.argv[2]).get("agent", {}).get("env", {}))
json.dump(t, open(sys.argv[1], "w"))' "$T/demo/task.json" "$SAN_ENV"
	prun "$T/demo/task.json"
	echo "$output"
	echo "$stderr"
	events || true   # on failure, what the agent did
	[ "$status" -eq 0 ]
	result_ok completed 0
	# honest work: every step ok, the fix made, DIAGNOSIS.md written
	events | grep '"step"'
	[ "$(events | grep -c '"step"')" -ge 9 ]
	[ "$(events | grep '"step"' | grep -vc '"ok":true')" -eq 0 ]
	grep -q 'Invoices.Inbound' "$R/workspace/DIAGNOSIS.md"
	grep -q '"queue": "Invoices.Inbound"' "$R/workspace/invoice-sync/config.json"
	# every attack blocked by the kernel, and each kind of attack was tried
	run all_blocked
	echo "$output"
	[ "$status" -eq 0 ]
	for a in list-private read-fixture read-resolution read-journal forge-journal write-outside \
		list-other-runs disarm-guard signal-mockd ptrace tty-inject regain-root \
		leave-background-process; do
		events | grep -q "\"attempt\":\"$a\"" || { echo "attempt $a missing"; false; }
	done
	# the answer key was found (stat) but not read: no leak into the workspace
	events | grep '"attempt":"read-resolution"' | grep -q "$T/demo/RESOLUTION.md"
	[ "$(rget 'r["private"][0]["leaked_into"]')" = "[]" ]
	# the uip calls, journaled by mockd: 9 calls, all answered by subset rules
	[ "$(wc -l <"$R/logs/calls.jsonl")" -eq 9 ]
	[ "$(grep -c '"tool":"uip"' "$R/logs/calls.jsonl")" -eq 9 ]
	[ "$(rget 'r["mocks"]["calls"]')" -eq 9 ]
	[ "$(rget 'r["mocks"]["by_tool"]["uip"]')" = "{'subset': 9}" ]
	# the guard held, the bundle is intact, the left-behind process was killed: zero survivors
	[ "$(rget 'r["guard"]["disarmed"]')" = False ]
	[ "$(rget 'r["bundles"][0]["verified_after"]')" = True ]
	[ "$(rget 'r["teardown"]["left_behind"]')" -ge 1 ]
	[ "$(rget 'r["teardown"]["survivors"]')" = "[]" ]
	[ "$(rget 'r["isolation"]["fixtures_private"]["state"]')" = enforced ]
	[ "$(rget 'r["isolation"]["no_tty"]["state"]')" = enforced ]
	# the report, for a machine and for a person
	run "$PROCTOR" report "$R" --json
	[ "$status" -eq 0 ]
	echo "$output" | python3 -c 'import json,sys; json.load(sys.stdin)'
	run "$PROCTOR" report "$R"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -qi 'survivors'
	echo "$output" | grep -q 'completed'
}

@test "report: served, fell through with the nearest rule, passthrough, unused rules and guard denials, as text and JSON" {
	task "$T/t" report-mix.sh "{\"guard\": {\"harness\": \"claude-code\"}, \"mocks\": [{\"tool\": \"uip\",
		\"fixture\": \"uip.json\", \"max_requests\": 20, \"passthrough_argv_prefixes\": [[\"docs\", \"ask\"]],
		\"passthrough_executable\": \"$T/t/real-uip\"}]}"
	cat >"$T/t/uip.json" <<'EOF'
{"version": 1,
 "responses": [{"argv": ["or", "jobs", "list"], "match_mode": "subset", "stdout": "[]\n"},
               {"argv": ["or", "folders", "list"], "match_mode": "exact", "stdout": "[]\n"}],
 "default": {"exit_code": 1, "stderr": "Error: not found\n"}}
EOF
	printf '#!/bin/sh\necho "the real uip: $*"\n' >"$T/t/real-uip"
	chmod 0755 "$T/t/real-uip"
	prun "$T/t/task.json"
	echo "$stderr"
	events
	[ "$status" -eq 0 ]
	result_ok completed 0
	events | grep -q '"passthrough_exit":0'
	events | grep -q '"permissionDecision":"deny"'
	[ "$(rget 'r["mocks"]["by_tool"]["uip"]')" = "{'subset': 1, 'default': 1, 'passthrough': 1}" ]
	[ "$(rget 'r["guard"]["denials"]')" -eq 1 ]
	run "$PROCTOR" report "$R" --json
	[ "$status" -eq 0 ]
	echo "$output" >"$T/report.json"
	python3 - "$T/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["fixtures_read"] is True, r.get("fixtures_read")
d = r["defaulted"]
assert len(d) == 1 and d[0]["argv"] == ["or", "jobs", "lst", "--folder", "Shared"], d
assert d[0]["near"] and d[0]["near"][0]["rule"] == 0, d[0]["near"]
assert r["unused_rules"] == {"uip": [1]}, r["unused_rules"]
assert r["result"]["guard"]["denials"] == 1
PY
	run "$PROCTOR" report "$R"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^  uip  *subset 1 default 1 passthrough 1$'
	echo "$output" | grep -q '^  fell through (default): or jobs lst --folder Shared$'
	echo "$output" | grep -q '^      nearest rule #0: '
	echo "$output" | grep -q '^  unused rules of uip: #1$'
	echo "$output" | grep -q '^guard     claude-code: 1 denials reported by the hook'
}

# --- agents that misbehave ----------------------------------------------------------------

@test "run: an agent that exits 0 at once: completed, exit 0" {
	task "$T/t" exit-at-once.sh
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	result_ok completed 0
	[ "$(rget 'r["agent"]["exit_code"]')" -eq 0 ]
	[ "$(rget 'r["agent"]["events"]')" -eq 1 ]
	[ "$(rget 'r["mocks"]')" = None ]
	[ "$(rget 'r["guard"]')" = None ]
}

@test "run: an agent that exits 3 at once: agent_failed, proctor run still exits 0" {
	task "$T/t" exit-at-once.sh '{"agent": {"command": ["./exit-at-once.sh", "3"]}}'
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	result_ok agent_failed 0
	[ "$(rget 'r["agent"]["exit_code"]')" -eq 3 ]
	[ "$(rget 'r["agent"]["signal"]')" = None ]
}

@test "run: an agent that never exits and ignores TERM: timeout, killed, on time" {
	task "$T/t" never-exits.sh '{"limits": {"timeout_s": 2}}'
	SECONDS=0
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 15 ]
	result_ok timeout 0
	[ "$(rget 'r["agent"]["timed_out"]')" = True ]
	[ "$(rget 'r["durations_ms"]["agent"]')" -ge 2000 ]
	[ "$(rget 'r["teardown"]["survivors"]')" = "[]" ]
}

@test "run: an agent that sleeps past the timeout: timeout" {
	task "$T/t" sleeps.sh '{"limits": {"timeout_s": 1}}'
	SECONDS=0
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 10 ]
	result_ok timeout 0
	[ "$(rget 'r["durations_ms"]["agent"]')" -ge 1000 ]
}

@test "run: a double-forked grandchild holding stdout open does not hold up the run, and dies" {
	task "$T/t" double-fork.sh
	SECONDS=0
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 10 ]
	result_ok completed 0
	[ "$(rget 'r["teardown"]["left_behind"]')" -ge 1 ]
	[ "$(rget 'r["teardown"]["survivors"]')" = "[]" ]
}

@test "run: a bounded fork bomb that keeps forking during teardown: every process is killed" {
	task "$T/t" fork-bomb.sh '{"agent": {"command": ["./fork-bomb.sh", "150", "20"]}}'
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	result_ok completed 0
	# the agent's process group ends with it; the 75 sleepers in sessions of their own escape it
	# and are counted as left behind, then killed by teardown
	[ "$(rget 'r["teardown"]["left_behind"]')" -ge 1 ]
	[ "$(rget 'r["teardown"]["survivors"]')" = "[]" ]
}

@test "run: an agent that SIGKILLs its worker: isolation_failed, exit 3 (no effect in a pid namespace)" {
	task "$T/t" stop-worker.sh '{"agent": {"command": ["./stop-worker.sh", "KILL", "5"]}}'
	SECONDS=0
	prun "$T/t/task.json"
	echo "status $status, stderr: $stderr"
	[ "$SECONDS" -lt 20 ]
	if [ "$(rget 'r["isolation"]["pid_namespace"]["state"]')" = enforced ]; then
		# the worker is pid 1 of the agent's namespace: a signal from inside without a handler
		# is dropped, the worker lives on and reports the agent's exit
		[ "$status" -eq 0 ]
		result_ok completed 0
	else
		[ "$status" -eq 3 ]
		result_ok isolation_failed 3
		rget 'r["reason"]' | grep -qi worker
	fi
	[ "$(rget 'r["teardown"]["survivors"]')" = "[]" ]
}

@test "run: an agent that SIGSTOPs its worker cannot hold the run past its timeout" {
	task "$T/t" stop-worker.sh '{"agent": {"command": ["./stop-worker.sh", "STOP", "60"]}, "limits": {"timeout_s": 3}}'
	SECONDS=0
	prun "$T/t/task.json"
	echo "$stderr"
	[ "$SECONDS" -lt 25 ]
	run python3 "$CHECK" "$R/result.json"
	echo "$output"
	[ "$status" -eq 0 ]
	case $(rget 'r["status"]') in timeout | isolation_failed) ;; *) false ;; esac
	[ "$(rget 'r["teardown"]["survivors"]')" = "[]" ]
}

@test "run: ptrace of mockd and of the worker, and their memory, are refused" {
	task "$T/t" ptrace.sh "$MOCK"
	fixture "$T/t"
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	result_ok completed 0
	events
	run all_blocked
	echo "$output"
	[ "$status" -eq 0 ]
	# whatever the agent could see was attacked; with no pid namespace it sees mockd
	if [ "$(rget 'r["isolation"]["pid_namespace"]["state"]')" != enforced ]; then
		events | grep -q '"attempt":"ptrace-mockd"'
	fi
}

@test "run: TIOCSTI finds no terminal, even when proctor run has one" {
	task "$T/t" tiocsti.sh
	# script(1) gives proctor run a pseudo-terminal as its controlling terminal and stdio
	run script -qec "$PROCTOR run $T/t/task.json --out $R" /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	result_ok completed 0
	[ "$(events | grep -c '"attempt":"tty-inject"')" -eq 4 ]
	run all_blocked
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(rget 'r["isolation"]["no_tty"]["state"]')" = enforced ]
}

@test "run: without the rpc group, the agent uid cannot connect to the mock socket" {
	task "$T/t" hold.sh "$MOCK"
	fixture "$T/t"
	"$PROCTOR" run "$T/t/task.json" --out "$R" >"$T/out" 2>&1 &
	local pid=$!
	BG=$pid
	wait_file "$R/workspace/ready"
	[ -S "$R/sock/mock.sock" ]
	connect='import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    sys.exit(e.strerror)'
	run "$PROCTOR" drop --uid 2000 --gid 2000 --clear-groups -- /usr/bin/python3 -c "$connect" "$R/sock/mock.sock"
	echo "$output"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q 'Permission denied'
	# the same with the group connects: the refusal above is the group's doing
	run "$PROCTOR" drop --uid 2000 --gid 2000 --groups 2200 -- /usr/bin/python3 -c "$connect" "$R/sock/mock.sock"
	echo "$output"
	[ "$status" -eq 0 ]
	touch "$R/workspace/go"
	wait "$pid"
	BG=
	result_ok completed 0
	events | grep -q '"uip_exit":"0"'
}

@test "run: an agent cannot list, read or write another run's workspace, even of its own uid" {
	# another run's workspace: owned by the same agent uid, so only Landlock stands in the way
	mkdir -p "$T/other/workspace"
	echo secret >"$T/other/workspace/mine"
	chown -R 2000:2000 "$T/other"
	chmod 0700 "$T/other/workspace"
	task "$T/t" peek.sh "{\"agent\": {\"env\": {\"OTHER\": \"$T/other/workspace\"}}}"
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	result_ok completed 0
	events
	[ "$(events | grep -c '"attempt"')" -eq 3 ]
	run all_blocked
	[ "$status" -eq 0 ]
	[ ! -e "$T/other/workspace/planted" ]
	# the check can fail: the same agent run by drop without Landlock reads it
	run "$PROCTOR" drop --uid 2000 --gid 2000 --clear-groups --setenv "OTHER=$T/other/workspace" \
		--setenv "PROCTOR_WORKSPACE=$T" --chdir "$T/other/workspace" -- "$AGENTS/peek.sh"
	echo "$output" | grep -q '"attempt":"read-other","blocked":false'
}

@test "hostile: an agent that fills the run's filesystem still has its uip call journaled, its events and result.json written" {
	# The run directory on a 48 MiB tmpfs of its own, so the agent can fill it for real.
	mkdir "$T/fs"
	mount -t tmpfs -o size=48m,mode=0755 proctor-e2e-fill "$T/fs" || skip "cannot mount a tmpfs here"
	FILL_FS=$T/fs
	R=$T/fs/run
	task "$T/t" fill-tmp.sh "{\"agent\": {\"command\": [\"./fill-tmp.sh\", \"256\", \"100\"]}, ${MOCK#\{}"
	fixture "$T/t"
	prun "$T/t/task.json"
	echo "$stderr"
	[ "$status" -eq 0 ]
	result_ok completed 0
	grep -q '"full\\":true,\\"uip_exit\\":0' "$R/logs/events.jsonl" # the disk was full when the agent called uip
	grep -q '"--fill-tmp"' "$R/logs/calls.jsonl"
	[ "$(rget 'r["mocks"]["calls"]')" -eq 1 ]
	[ ! -e "$R/.reserve" ] # it became result.json
	# 100 events of 64 KB on a full disk: those past the space set aside are counted as lost,
	# none is left in part (every line of events.jsonl is whole), and once the agent freed its
	# file the next one is written again
	lost=$(rget 'r["agent"]["events_lost"]')
	echo "events lost: $lost"
	[ "$lost" -gt 0 ] && [ "$lost" -lt 100 ]
	python3 - "$R/logs/events.jsonl" "$lost" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"", "the last line is cut"
evs = [json.loads(l) for l in lines[:-1]]  # every line whole
lost = int(sys.argv[2])
assert evs[-1]["seq"] - len(evs) == lost, (evs[-1]["seq"], len(evs), lost)  # the gaps are the lost ones
out = [json.loads(e["text"]) for e in evs]  # the agent's stdout lines, each whole
assert len([o for o in out if "flood" in o]) == 100 - lost
assert out[-1] == {"agent": "fill-tmp", "after": "freed"}, out[-1]
PY
}

@test "run: result.json is written into the space set aside (the reserve's own blocks), never after giving it back" {
	task "$T/t" hold.sh
	"$PROCTOR" run "$T/t/task.json" --out "$R" >"$T/out" 2>&1 &
	local pid=$! ino
	BG=$pid
	wait_file "$R/workspace/ready"
	[ "$(stat -c '%U %a %s' "$R/.reserve")" = "root 600 $((8 << 20))" ]
	ino=$(stat -c %i "$R/.reserve")
	touch "$R/workspace/go"
	wait "$pid"
	BG=
	result_ok completed 0
	# the same inode: no moment without the space, in which a concurrent run could take it
	[ "$(stat -c '%i %U %a' "$R/result.json")" = "$ino root 644" ]
	[ ! -e "$R/.reserve" ]
	[ "$(stat -c %s "$R/result.json")" -lt 65536 ] # cut to the record's length
}

@test "run: 100,000 stdout lines become 100,000 events, none split or lost" {
	task "$T/t" flood.sh
	prun "$T/t/task.json"
	[ "$status" -eq 0 ]
	result_ok completed 0
	[ "$(rget 'r["agent"]["events"]')" -eq 100000 ]
	events | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    e = json.loads(line)
    assert e["n"] == n, (e["n"], n)
    assert len(e["pad"]) == (70000 if n % 1000 == 999 else n % 50), n
    n += 1
assert n == 100000, n
'
}

@test "run: an inherited file size limit (ulimit -f) costs events, each counted, never the run or a whole line" {
	task "$T/t" flood.sh
	# 12 MiB: room for the 8 MiB reserve, not for the 20 MB of events. SIGXFSZ would kill proctor.
	run --separate-stderr bash -c 'ulimit -f 12288; exec "$0" run "$1" --out "$2"' "$PROCTOR" "$T/t/task.json" "$R"
	echo "$stderr"
	[ "$status" -eq 0 ]
	result_ok completed 0
	python3 - "$R" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/result.json"))
lines = open(sys.argv[1] + "/logs/events.jsonl", "rb").read().split(b"\n")
assert lines[-1] == b"", "the last line is cut"
evs = [json.loads(l) for l in lines[:-1]]
lost = r["agent"]["events_lost"]
assert r["agent"]["events"] == 100000 and lost > 0, (r["agent"], len(evs))
assert len(evs) + lost == 100000 and all(json.loads(e["text"])["n"] == e["seq"] - 1 for e in evs)
print("kept %d, lost %d" % (len(evs), lost))
PY
}

# --- task file errors: exit 4, config_error, the file and the field named ------------------

config_error() { # config_error TASK FIELD-TEXT: proctor run TASK fails as it should
	prun "$1"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 4 ]
	echo "$stderr" | grep -qF -- "$2"
	result_ok config_error 4
	[ -z "$(procs_ours "$RUN_UIDS")" ]
}

@test "run: a task file that is not JSON" {
	mkdir -p "$T/t"
	printf '{"version": 1, "id": "x",\n' >"$T/t/task.json"
	config_error "$T/t/task.json" "task.json"
	[ "$(rget 'r["task_id"]')" = None ]
}

@test "run: an unknown key, a missing field, a wrong type" {
	task "$T/t" exit-at-once.sh '{"agnet": {}}'
	config_error "$T/t/task.json" "task.json: agnet"
	rm -rf "$R"
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); del t["id"]; json.dump(t, open(sys.argv[1], "w"))' "$T/t/task.json"
	config_error "$T/t/task.json" "task.json: id"
	rm -rf "$R"
	task "$T/u" exit-at-once.sh '{"limits": {"timeout_s": "10"}}'
	config_error "$T/u/task.json" "task.json: limits.timeout_s"
	rm -rf "$R"
	task "$T/v" exit-at-once.sh '{"agent": {"command": "./exit-at-once.sh"}}'
	config_error "$T/v/task.json" "task.json: agent.command"
}

@test "run: a private path inside the workspace" {
	task "$T/t" exit-at-once.sh '{"private": ["ws/answers.md"]}'
	echo 42 >"$T/t/ws/answers.md"
	config_error "$T/t/task.json" "task.json: private[0]"
}

@test "run: ids that belong to an account of this host are refused before anything runs" {
	getent passwd 65534 >/dev/null || skip "no user with uid 65534 here"
	task "$T/t" exit-at-once.sh '{"identity": {"agent_uid": 65534}}'
	config_error "$T/t/task.json" "identity.agent_uid: uid 65534 (slot 0) belongs to user '$(getent passwd 65534 | cut -d: -f1)'"
	[ ! -e "$R/workspace" ]
	rm -rf "$R"
	getent group 65534 >/dev/null || skip "no group with gid 65534 here"
	task "$T/u" exit-at-once.sh '{"identity": {"rpc_gid": 65530, "slots": 5}}'
	config_error "$T/u/task.json" "identity.rpc_gid: gid 65534 (slot 4) belongs to group"
}

@test "run: a reserved environment name" {
	task "$T/t" exit-at-once.sh '{"agent": {"env": {"HOME": "/root"}}}'
	config_error "$T/t/task.json" "task.json: agent.env.HOME"
	rm -rf "$R"
	task "$T/u" exit-at-once.sh '{"agent": {"env": {"PROCTOR_WORKSPACE": "/"}}}'
	config_error "$T/u/task.json" "task.json: agent.env.PROCTOR_WORKSPACE"
}

@test "run: a missing fixture, a bad mock entry" {
	task "$T/t" exit-at-once.sh '{"mocks": [{"tool": "uip", "fixture": "absent.json", "max_requests": 5, "passthrough_argv_prefixes": []}]}'
	config_error "$T/t/task.json" "task.json: mocks[0].fixture"
	rm -rf "$R"
	task "$T/u" exit-at-once.sh '{"mocks": [{"fixture": "uip.json", "max_requests": 5, "passthrough_argv_prefixes": []}]}'
	fixture "$T/u"
	config_error "$T/u/task.json" "task.json: mocks[0].tool"
	rm -rf "$R"
	task "$T/v" exit-at-once.sh '{"mocks": [{"tool": "uip", "fixture": "uip.json", "max_requests": "many", "passthrough_argv_prefixes": []}]}'
	fixture "$T/v"
	# mockd's loader checks the entry and names its field in the staged mock-config.json
	config_error "$T/v/task.json" "task.json: mocks"
	echo "$stderr" | grep -q 'max_requests: must be an integer'
	echo "$stderr" | grep -qF "mocks[0] ($T/v/uip.json)"
}

# --- infrastructure failures: isolation_failed, exit 3 -----------------------------------

@test "run: a fixture mockd's loader rejects is a task error: config_error, exit 4, the rule named" {
	task "$T/t" exit-at-once.sh "$MOCK"
	# valid JSON, but two exact rules with the same argv: mockd's own loader refuses it
	cat >"$T/t/uip.json" <<'EOF'
{"version": 1, "responses": [{"argv": ["login"]}, {"argv": ["login"]}]}
EOF
	config_error "$T/t/task.json" "task.json: mocks"
	echo "$stderr" | grep -q 'responses\[1\]'
	[ "$(rget 'r["agent"]["exit_code"]')" = None ]
}

@test "run: mockd failing at startup: isolation_failed, exit 3, mockd's message" {
	task "$T/t" exit-at-once.sh "$MOCK"
	fixture "$T/t"
	# a run directory whose socket path does not fit in sun_path: mockd cannot bind
	R=$T/$(printf 'r%.0s' $(seq 90))
	prun "$T/t/task.json"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 3 ]
	result_ok isolation_failed 3
	rget 'r["reason"]' | grep -qi mockd
	rget 'r["reason"]' | grep -q 'socket path is longer'
	# its exit status, in the reason and in teardown.mockd_exit
	code=$(rget 'r["teardown"]["mockd_exit"]')
	[[ "$code" =~ ^[1-9][0-9]*$ ]]
	rget 'r["reason"]' | grep -qF "mockd did not become ready (it exited with status $code)"
	[ "$(rget 'r["agent"]["exit_code"]')" = None ]
}

@test "run: mockd that never becomes ready: isolation_failed after the readiness deadline, exit 3, nothing left" {
	task "$T/t" exit-at-once.sh "$MOCK"
	# a fixture big enough that mockd is still loading it when the test stops it
	python3 - "$T/t/uip.json" <<'PY'
import json, sys
rules = [{"argv": ["or", "jobs", "get", "j%d" % i], "match_mode": "exact", "stdout": "{}\n"} for i in range(60000)]
json.dump({"version": 1, "responses": rules, "default": {"exit_code": 1}}, open(sys.argv[1], "w"))
PY
	"$PROCTOR" run "$T/t/task.json" --out "$R" >"$T/out" 2>&1 &
	local pid=$! m= i rc=0
	BG=$pid
	for i in $(seq 1 2000); do
		m=$(pgrep -f -- "--config $R/private/mock-config.json" | head -n 1) && [ -n "$m" ] && break
		sleep 0.002
	done
	[ -n "$m" ]
	kill -STOP "$m"
	wait "$pid" || rc=$?
	BG=
	cat "$T/out"
	[ "$rc" -eq 3 ]
	result_ok isolation_failed 3
	rget 'r["reason"]' | grep -qF 'mockd did not become ready (timed out after 10000 ms)'
	[ "$(rget 'r["agent"]["exit_code"]')" = None ]
	run ! kill -0 "$m" # killed, and reaped
}

@test "run: a libcap-ng that cannot be loaded: isolation_failed, exit 3, said before the worker starts" {
	task "$T/t" exit-at-once.sh
	mkdir "$T/lib"
	echo 'not an ELF object' >"$T/lib/libcap-ng.so.0"
	LD_LIBRARY_PATH="$T/lib" prun "$T/t/task.json"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 3 ]
	result_ok isolation_failed 3
	rget 'r["reason"]' | grep -q "the agent's drop: load libcap-ng.so.0"
	[ "$(rget 'r["agent"]["exit_code"]')" = None ]
	[ ! -s "$R/logs/worker.log" ] # the worker was never forked
}

# --- a kernel without Landlock (gVisor), emulated: nolandlock.py makes the Landlock calls ENOSYS

NOLL=$BATS_TEST_DIRNAME/nolandlock.py

# verdict FILE: the --termination-log line, checked: one line of JSON within 4 KB whose
# result_sha256 is result.json's; prints "status exit_code".
verdict() {
	python3 - "$1" "$R/result.json" <<'EOF'
import hashlib, json, sys
raw = open(sys.argv[1], "rb").read()
assert len(raw) <= 4096 and raw.endswith(b"\n") and raw.count(b"\n") == 1, raw
v = json.loads(raw)
assert v["result_sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest(), v
assert v["result"] == sys.argv[2] and v["task_id"] == json.load(open(sys.argv[2]))["task_id"], v
print(v["status"], v["exit_code"])
EOF
}

@test "run: no Landlock (gVisor): refused before the agent runs, exit 4, the decision recorded" {
	task "$T/t" exit-at-once.sh "$MOCK"
	fixture "$T/t"
	run --separate-stderr python3 "$NOLL" "$PROCTOR" run "$T/t/task.json" --out "$R" --termination-log "$T/term"
	[ "$status" -eq 4 ]
	echo "$stderr" | grep -qF "this kernel has no Landlock"
	echo "$stderr" | grep -qF -- "--allow-no-landlock runs it anyway"
	result_ok isolation_failed 4
	[ "$(rget 'r["isolation"]["landlock"]["state"]')" = absent ]
	rget 'r["isolation"]["landlock"]["detail"]' | grep -q '^refused: '
	[ "$(rget 'r["agent"]["turns"]')" = "[]" ]
	[ "$(verdict "$T/term")" = "isolation_failed 4" ]
}

@test "run: --allow-no-landlock runs without it, says so, and still proves the private files unreadable" {
	task "$T/t" exit-at-once.sh "$MOCK"
	fixture "$T/t"
	chmod 0700 "$T/t" # without Landlock only permissions keep the task's files from the agent
	run --separate-stderr python3 "$NOLL" "$PROCTOR" run "$T/t/task.json" --out "$R" --allow-no-landlock \
		--termination-log "$T/term"
	[ "$status" -eq 0 ]
	result_ok completed 0
	[ "$(rget 'r["isolation"]["landlock"]["state"]')" = absent ]
	rget 'r["isolation"]["landlock"]["detail"]' | grep -q '^accepted by --allow-no-landlock'
	[ "$(rget 'r["isolation"]["landlock_scope"]["state"]')" = absent ]
	[ "$(rget 'r["isolation"]["fixtures_private"]["state"]')" = enforced ]
	[ "$(rget 'r["identity"]["verified"]["landlock"]["abi"]')" -eq 0 ]
	[ "$(verdict "$T/term")" = "completed 0" ]
	# the same task where the agent's uid can read its files: the probe from inside catches it
	chmod 0755 "$T/t"
	rm -rf "$R"
	run --separate-stderr python3 "$NOLL" "$PROCTOR" run "$T/t/task.json" --out "$R" --allow-no-landlock
	[ "$status" -eq 3 ]
	result_ok isolation_failed 3
	[ "$(rget 'r["isolation"]["fixtures_private"]["state"]')" = failed ]
	rget 'r["isolation"]["fixtures_private"]["detail"]' | grep -qF "the agent's uid could open $T/t/"
}

@test "run: --termination-log without a run (a bad index) still says why; a bad path only warns" {
	task "$T/t" exit-at-once.sh
	echo "\"$T/t/task.json\"" >"$T/suite.jsonl"
	run --separate-stderr "$PROCTOR" run --suite "$T/suite.jsonl" --index 7 --out "$T/out" --termination-log "$T/term"
	[ "$status" -eq 4 ]
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); assert v["status"] is None and v["exit_code"] == 4 and v["result_sha256"] is None and "7" in v["reason"], v' "$T/term"
	run --separate-stderr "$PROCTOR" run "$T/t/task.json" --out "$R" --termination-log "$T/no/such/dir/term"
	[ "$status" -eq 0 ]
	echo "$stderr" | grep -qF -- "warning: --termination-log $T/no/such/dir/term: No such file or directory"
	result_ok completed 0
	ln -s "$T/elsewhere" "$T/link" # root does not follow a link to write the verdict
	run --separate-stderr "$PROCTOR" run --suite "$T/suite.jsonl" --index 0 --out "$T/out" --termination-log "$T/link"
	[ "$status" -eq 0 ]
	[ ! -e "$T/elsewhere" ]
	echo "$stderr" | grep -qF -- "--termination-log $T/link: Too many levels of symbolic links"
	# a second start of a finished index reports the first run's result
	run --separate-stderr "$PROCTOR" run --suite "$T/suite.jsonl" --index 0 --out "$T/out" --termination-log "$T/term"
	[ "$status" -eq 0 ]
	R=$T/out/e2e-exit-at-once
	[ "$(verdict "$T/term")" = "completed 0" ]
}

@test "run: mockd killed during the run: isolation_failed, exit 3" {
	task "$T/t" hold.sh "$MOCK"
	fixture "$T/t"
	"$PROCTOR" run "$T/t/task.json" --out "$R" >"$T/out" 2>&1 &
	local pid=$!
	BG=$pid
	wait_file "$R/workspace/ready"
	local m
	m=$(pgrep -u 2100 | head -n 1)
	[ -n "$m" ]
	kill -KILL "$m"
	touch "$R/workspace/go"
	local rc=0
	wait "$pid" || rc=$?
	BG=
	cat "$T/out"
	[ "$rc" -eq 3 ]
	result_ok isolation_failed 3
	rget 'r["reason"]' | grep -qi mockd
}

@test "run: a process of the agent's uid that cannot be killed: teardown_failed, exit 3, the survivor named" {
	command -v nsenter >/dev/null || skip "nsenter (util-linux) not installed"
	# pid 1 of a pid namespace ignores every signal sent from inside it. proctor run, started in
	# that namespace, finds it once it has become the agent's uid and cannot kill it.
	task "$T/t" hold.sh
	unshare --pid --fork --kill-child --mount-proc sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done
		exec setpriv --reuid 2000 --regid 2000 --clear-groups sleep 8887' sh "$T/flag" 3>&- &
	local ns=$! init= pid i rc=0
	HELPERS=$ns
	for i in $(seq 1 100); do init=$(pgrep -P "$ns" -x sh) && break; sleep 0.05; done
	[ -n "$init" ]
	HELPERS="$init $ns"
	nsenter --target "$init" --pid --mount "$PROCTOR" run "$T/t/task.json" --out "$R" >"$T/out" 2>&1 &
	pid=$!
	BG=$pid
	wait_file "$R/workspace/ready"
	touch "$T/flag" # the namespace's init becomes the agent's uid
	for i in $(seq 1 100); do
		[ "$(awk '/^Uid:/ {print $2}' "/proc/$init/status")" = 2000 ] && break
		sleep 0.05
	done
	touch "$R/workspace/go"
	wait "$pid" || rc=$?
	BG=
	kill -KILL "$init"
	wait "$ns" || true
	cat "$T/out"
	[ "$rc" -eq 3 ]
	result_ok teardown_failed 3
	[ "$(rget 'r["teardown"]["survivors"]')" = "[1]" ]
	grep -q 'teardown_failed' "$T/out"
}

@test "run: the worker killed during the run: isolation_failed, exit 3" {
	task "$T/t" hold.sh
	"$PROCTOR" run "$T/t/task.json" --out "$R" >"$T/out" 2>&1 &
	local pid=$!
	BG=$pid
	wait_file "$R/workspace/ready"
	local agent worker
	agent=$(pid_of 2000 hold.sh)
	[ -n "$agent" ]
	worker=$(worker_of "$agent")
	[ "$worker" != "$agent" ]
	kill -KILL "$worker"
	local rc=0
	wait "$pid" || rc=$?
	BG=
	cat "$T/out"
	[ "$rc" -eq 3 ]
	result_ok isolation_failed 3
	rget 'r["reason"]' | grep -qi worker
}

# --- concurrent runs ------------------------------------------------------------------------

@test "run: SIGTERM while waiting for an identity slot ends the run at once: isolation_failed, exit 3" {
	task "$T/a" hold.sh '{"id": "e2e-a", "identity": {"slots": 1}}'
	task "$T/b" exit-at-once.sh '{"id": "e2e-b", "identity": {"slots": 1}}'
	"$PROCTOR" run "$T/a/task.json" --out "$T/ra" >"$T/out-a" 2>&1 &
	local a=$! b rc=0 i
	BG=$a
	wait_file "$T/ra/workspace/ready" # a holds the only slot
	"$PROCTOR" run "$T/b/task.json" --out "$R" >"$T/out-b" 2>&1 &
	b=$!
	BG="$a $b"
	sleep 1 # b is waiting for the slot (up to 10 s)
	kill -TERM "$b"
	for i in $(seq 1 40); do kill -0 "$b" 2>/dev/null || break; sleep 0.05; done
	run ! kill -0 "$b" 2>/dev/null # b ended within 2 s, while a still holds the slot
	[ ! -e "$T/ra/result.json" ]
	wait "$b" || rc=$?
	BG=$a
	cat "$T/out-b"
	[ "$rc" -eq 3 ]
	result_ok isolation_failed 3
	[ "$(rget 'r["reason"]')" = "interrupted by signal 15" ]
	[ "$(rget 'r["identity"]')" = None ] # no slot was taken
	touch "$T/ra/workspace/go"
	wait "$a"
	BG=
	R=$T/ra result_ok completed 0
}

@test "run: two concurrent runs (slots 2) both complete and neither reaches the other" {
	local A=$T/runA B=$T/runB
	local mocks=${MOCK#\{}
	mocks=${mocks%\}}
	task "$T/a" peek.sh "{\"id\": \"e2e-a\", \"identity\": {\"slots\": 2}, $mocks, \"agent\": {\"command\": [\"./peek.sh\", \"20\"], \"env\": {\"OTHER\": \"$B/workspace\", \"OTHER_SOCK\": \"$B/sock/mock.sock\"}}}"
	task "$T/b" peek.sh "{\"id\": \"e2e-b\", \"identity\": {\"slots\": 2}, $mocks, \"agent\": {\"command\": [\"./peek.sh\", \"20\"], \"env\": {\"OTHER\": \"$A/workspace\", \"OTHER_SOCK\": \"$A/sock/mock.sock\"}}}"
	fixture "$T/a"
	fixture "$T/b"
	"$PROCTOR" run "$T/a/task.json" --out "$A" >"$T/a.out" 2>&1 &
	local pa=$!
	"$PROCTOR" run "$T/b/task.json" --out "$B" >"$T/b.out" 2>&1 &
	local pb=$!
	BG="$pa $pb"
	# both agents are up at the same time before either peeks
	wait_file "$A/workspace/ready"
	wait_file "$B/workspace/ready"
	# each agent gets the other's pid as the host numbers it, to signal
	agent_in "$B/workspace" >"$A/workspace/other.pid"
	agent_in "$A/workspace" >"$B/workspace/other.pid"
	[ -s "$A/workspace/other.pid" ] && [ -s "$B/workspace/other.pid" ]
	touch "$A/workspace/go" "$B/workspace/go"
	local ra=0 rb=0
	wait "$pa" || ra=$?
	wait "$pb" || rb=$?
	BG=
	cat "$T/a.out" "$T/b.out"
	[ "$ra" -eq 0 ]
	[ "$rb" -eq 0 ]
	R=$A result_ok completed 0
	R=$B result_ok completed 0
	[ "$(R=$A rget 'r["identity"]["slot"]') $(R=$B rget 'r["identity"]["slot"]')" != "0 0" ]
	[ "$(R=$A rget 'r["identity"]["agent_uid"]')" != "$(R=$B rget 'r["identity"]["agent_uid"]')" ]
	for r in "$A" "$B"; do
		events "$r"
		[ "$(events "$r" | grep -c '"attempt"')" -eq 5 ] # each agent lived to report all five
		run all_blocked "$r"
		[ "$status" -eq 0 ]
		[ ! -e "$r/workspace/planted" ]
	done
}

agent_in() { # agent_in DIR: the host pid of the peek.sh whose working directory is DIR
	local p
	for p in $(pgrep -f peek.sh); do
		[ "$(readlink "/proc/$p/cwd")" = "$1" ] && echo "$p" && return 0
	done
	return 1
}
