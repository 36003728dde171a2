#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# proctor run --suite and proctor collect, as root: a 3-task suite run by index from the flag and
# from each scheduler variable, a second start that finds a final result, index and suite
# errors (exit 4, the source named), collect's JSON, CSV and table checked for exact counts and a
# malformed result.json that stays one task's problem; and proctor run as pid 1 of a pid
# namespace (unshare): it reaps orphans and turns SIGTERM into a teardown and a final result.

bats_require_minimum_version 1.5.0
load helpers

AGENTS=$BATS_TEST_DIRNAME/agents
CHECK=$BATS_TEST_DIRNAME/result_check.py
RUN_UIDS=2000,2001,2100,2101

setup() {
	[ "$(id -u)" -eq 0 ] || skip "proctor run needs root"
	"$PROCTOR" doctor --json | tr -d '\n ' | grep -q '"check":"landlock","ok":true' ||
		skip "no Landlock on this kernel: proctor run refuses to run without it"
	T=$(mktemp -d /tmp/proctor-suite-XXXXXX)
	chmod 0755 "$T"
	procs_mark
}

teardown() {
	[ -n "${T:-}" ] || return 0
	[ -z "${BG:-}" ] || { kill -KILL "$BG" 2>/dev/null; wait "$BG" 2>/dev/null; }
	procs_left_fail
}

# suite DIR: three tasks DIR/c.json (exits 3: agent_failed), DIR/a.json (exits 0), DIR/b.json
# (invalid: an unknown key), so the byte order a, b, c differs from the order written.
suite() {
	mkdir -p "$1/ws"
	cp "$AGENTS/exit-at-once.sh" "$1/"
	local id code extra
	for spec in c:3: a:0: b:0:,\"bogus\":1; do
		id=${spec%%:*} code=${spec#*:} code=${code%%:*} extra=${spec#*:*:}
		printf '{"version":1,"id":"task-%s","workspace":{"from":"ws"},"agent":{"kind":"command","command":["./exit-at-once.sh","%s"]},"limits":{"timeout_s":30}%s}\n' \
			"$id" "$code" "$extra" >"$1/$id.json"
	done
}

srun() { run --separate-stderr "$PROCTOR" run --quiet "$@"; }
jget() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

@test "suite: three tasks by index, from --index, JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID" {
	suite "$T/s"
	srun --suite "$T/s" --index 0 --out "$T/out"
	[ "$status" -eq 0 ]
	python3 "$CHECK" "$T/out/task-a/result.json" --status completed --exit-code 0
	[ "$(jget "$T/out/task-a/result.json" 'r["suite"]["index_from"]')" = --index ]
	[ "$(jget "$T/out/task-a/result.json" 'r["suite"]["tasks"]')" -eq 3 ]
	JOB_COMPLETION_INDEX=1 SLURM_ARRAY_TASK_ID=0 srun --suite "$T/s" --out "$T/out"
	[ "$status" -eq 4 ] # task-b is invalid: config_error, still a result
	python3 "$CHECK" "$T/out/task-b/result.json" --status config_error --exit-code 4
	[ "$(jget "$T/out/task-b/result.json" 'r["suite"]["index_from"]')" = JOB_COMPLETION_INDEX ]
	[ "$(jget "$T/out/task-b/result.json" 'r["suite"]["index"]')" -eq 1 ]
	[ "$(jget "$T/out/task-b/result.json" 'r["task_id"]')" = task-b ] # though its file did not load
	SLURM_ARRAY_TASK_ID=2 srun --suite "$T/s" --out "$T/out"
	[ "$status" -eq 0 ]
	python3 "$CHECK" "$T/out/task-c/result.json" --status agent_failed --exit-code 0
	[ "$(jget "$T/out/task-c/result.json" 'r["suite"]["index_from"]')" = SLURM_ARRAY_TASK_ID ]
	[ "$(ls "$T/out")" = "$(printf 'task-a\ntask-b\ntask-c')" ]
}

@test "suite: a JSON Lines suite names tasks relative to itself" {
	suite "$T/s"
	printf '"s/c.json"\n\n"s/a.json"\n' >"$T/suite.jsonl"
	srun --suite "$T/suite.jsonl" --index 1 --out "$T/out"
	[ "$status" -eq 0 ]
	[ "$(jget "$T/out/task-a/result.json" 'r["task_file"]')" = "$T/s/a.json" ]
}

@test "suite: a second start of a finished index is skipped, says already done, keeps the exit code" {
	suite "$T/s"
	srun --suite "$T/s" --index 1 --out "$T/out"
	[ "$status" -eq 4 ]
	before=$(stat -c %Y.%i "$T/out/task-b/result.json")
	srun --suite "$T/s" --index 1 --out "$T/out"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"already done: $T/out/task-b/result.json is final (status config_error, exit 4)"* ]]
	[ "$(stat -c %Y.%i "$T/out/task-b/result.json")" = "$before" ]
	srun --suite "$T/s" --index 0 --out "$T/out"
	[ "$status" -eq 0 ]
	srun --suite "$T/s" --index 0 --out "$T/out"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"already done"* ]]
}

@test "suite: a start that left no final result is kept aside and the task runs again" {
	suite "$T/s"
	mkdir -p "$T/out/task-a"
	echo partial >"$T/out/task-a/task.json" # a start killed before its result.json
	srun --suite "$T/s" --index 0 --out "$T/out"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"held no final result"* ]]
	python3 "$CHECK" "$T/out/task-a/result.json" --status completed --exit-code 0
	[ "$(cat "$T"/out/.attempts/task-a-*/task.json)" = partial ]
}

@test "suite: a start waits for the task's lock (an earlier start still tearing down), then runs" {
	suite "$T/s"
	mkdir -p -m 0700 "$T/out/.locks"
	flock "$T/out/.locks/task-a.lock" sh -c "touch '$T/held'; sleep 2; touch '$T/released'" &
	BG=$!
	wait_file "$T/held"
	srun --suite "$T/s" --index 0 --out "$T/out" # task-a
	[ "$status" -eq 0 ]
	[ -e "$T/released" ] # it could not start before the lock was given back
	[ "$T/out/task-a/result.json" -nt "$T/released" ]
	python3 "$CHECK" "$T/out/task-a/result.json" --status completed --exit-code 0
	wait "$BG"
	BG=
}

@test "suite: index and suite errors exit 4 and name their source" {
	suite "$T/s"
	srun --suite "$T/s" --index 3 --out "$T/out"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"--index: index 3 is out of range: $T/s has 3 tasks (0 to 2)"* ]]
	JOB_COMPLETION_INDEX=x1 SLURM_ARRAY_TASK_ID=0 srun --suite "$T/s" --out "$T/out"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"JOB_COMPLETION_INDEX: 'x1' is not a task index"* ]]
	run --separate-stderr env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID "$PROCTOR" run --suite "$T/s" --out "$T/out"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"no task index: give --index N, or set JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID"* ]]
	printf '"s/a.json"\n42\n' >"$T/bad.jsonl"
	srun --suite "$T/bad.jsonl" --index 0 --out "$T/out"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"$T/bad.jsonl:2: must be a JSON string"* ]]
	echo '{"version":1}' >"$T/s/d.json"
	srun --suite "$T/s" --index 3 --out "$T/out"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"$T/s/d.json: id: missing or not a string"* ]]
	[ ! -e "$T/out/task-a" ]
	run "$PROCTOR" run "$T/s/a.json" --index 0
	[ "$status" -eq 2 ]
}

@test "collect: JSON, CSV and table count every status exactly; a malformed result.json is its own row" {
	suite "$T/s"
	for i in 0 1 2; do srun --suite "$T/s" --index "$i" --out "$T/out"; done
	mkdir "$T/out/task-x" "$T/out/task-y" "$T/out/.attempts/old" -p
	echo '{"status": "completed"' >"$T/out/task-x/result.json" # cut short: not JSON
	run --separate-stderr "$PROCTOR" collect "$T/out"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"1 result.json unreadable"* ]]
	echo "$output" >"$T/sum.json"
	[ "$(jget "$T/sum.json" 'r["total"]')" -eq 5 ]
	[ "$(jget "$T/sum.json" 'sorted((k, v) for k, v in r["counts"].items() if v)')" = \
		"[('agent_failed', 1), ('completed', 1), ('config_error', 1), ('no_result', 1), ('unreadable', 1)]" ]
	[ "$(jget "$T/sum.json" '[t["dir"] for t in r["tasks"]]')" = "['task-a', 'task-b', 'task-c', 'task-x', 'task-y']" ]
	[ "$(jget "$T/sum.json" 'r["tasks"][3]["error"]')" = "task-x/result.json: not JSON" ]
	[ "$(jget "$T/sum.json" 'r["tasks"][0]["teardown_survivors"]')" -eq 0 ]
	[ "$(jget "$T/sum.json" 'r["tasks"][0]["duration_ms"] > 0')" = True ]
	run --separate-stderr "$PROCTOR" collect "$T/out" --format csv
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "dir,task_id,status,exit_code,duration_ms,agent_ms,mock_calls,mock_hits,mock_passthrough,mock_misses,guard_denials,teardown_survivors,teardown_errors,error" ]
	[ "${#lines[@]}" -eq 6 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -d, -f3 | sort | uniq -c | tr -s ' ' | tr '\n' ';')" = \
		" 1 agent_failed; 1 completed; 1 config_error; 1 no_result; 1 status; 1 unreadable;" ]
	[[ "${lines[2]}" == task-b,task-b,config_error,4,* ]] # the task did not load; its id is the suite's
	run --separate-stderr "$PROCTOR" collect "$T/out" --format table
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "5 tasks: 1 completed, 1 agent_failed, 1 config_error, 1 unreadable, 1 no_result" ]
	[[ "${lines[2]}" == "task-a "*" completed "* ]]
	run "$PROCTOR" collect "$T/out" --format xml
	[ "$status" -eq 2 ]
	run "$PROCTOR" collect "$T/nowhere"
	[ "$status" -eq 1 ]
}

@test "collect: every result readable exits 0" {
	suite "$T/s"
	srun --suite "$T/s" --index 0 --out "$T/out"
	run --separate-stderr "$PROCTOR" collect "$T/out" --format table
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "1 tasks: 1 completed" ]
}

# The host pid of pid 1 of the namespace `unshare` (pid $1) made: its only child.
ns_init() { pgrep -P "$1" | head -n 1; }

@test "pid 1: proctor run reaps orphans and turns SIGTERM into a teardown and a final result.json" {
	command -v unshare >/dev/null || skip "no unshare(1)"
	mkdir -p "$T/s/ws"
	cp "$AGENTS/never-exits.sh" "$T/s/"
	echo '{"version":1,"id":"forever","workspace":{"from":"ws"},"agent":{"kind":"command","command":["./never-exits.sh"]},"limits":{"timeout_s":120}}' >"$T/s/t.json"
	unshare --pid --fork --mount-proc "$PROCTOR" run --quiet --suite "$T/s" --index 0 --out "$T/out" 2>"$T/err" &
	BG=$!
	for _ in $(seq 100); do [ -n "$(pgrep -u 2000 -f never-exits.sh)" ] && break; sleep 0.1; done
	init=$(ns_init "$BG")
	[ -n "$init" ]
	[ "$(awk '/^NSpid:/ {print $NF}' "/proc/$init/status")" -eq 1 ]
	# Orphans in its namespace: each double-forked child exits at once; pid 1 must reap it.
	for _ in 1 2 3; do nsenter --target "$init" --pid -- sh -c '(sleep 0.1 &) ; :'; done
	sleep 1
	zombies=$(ps --ppid "$init" -o pid=,stat= | awk '$2 ~ /^Z/' | wc -l)
	[ "$zombies" -eq 0 ]
	kill -TERM "$init"
	wait "$BG" || rc=$?
	BG=
	[ "${rc:-0}" -eq 3 ]
	python3 "$CHECK" "$T/out/forever/result.json" --status isolation_failed --exit-code 3
	[[ "$(jget "$T/out/forever/result.json" 'r["reason"]')" == "interrupted by signal 15"* ]]
	[ "$(jget "$T/out/forever/result.json" 'r["teardown"]["survivors"]')" = "[]" ]
}
