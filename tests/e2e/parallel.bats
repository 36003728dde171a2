#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A suite through GNU parallel, as root (issue 14): 20 tasks, each a real proctor task (a command
# agent that calls its one mock and naps, so runs overlap), run with
# `parallel -j4 proctor run --suite S --index {} --out OUT`. Checked: 20 final result.json files
# in OUT/<id>/, runs alive at once never shared an agent uid (identity.slots 4), collect's JSON
# and CSV counts and rows, a second identical run is a no-op, nothing is left behind; and three
# tasks whose identity slot another holder keeps busy exit 3 and are the only ones a rerun runs.

bats_require_minimum_version 1.5.0
load helpers

AGENTS=$BATS_TEST_DIRNAME/agents
CHECK=$BATS_TEST_DIRNAME/parallel_check.py
RUN_UIDS=2000,2001,2002,2003,2040,2100,2101,2102,2103,2140
# The identity of the tasks made to fail: one slot, its lock held by the test (as a concurrent
# run on the host would hold it), so proctor run waits RUN_SLOT_WAIT_MS (10 s) and exits 3.
BUSY_IDENTITY='{"agent_uid":2040,"agent_gid":2040,"mockd_uid":2140,"rpc_gid":2240,"slots":1}'
BUSY_LOCK=/run/proctor/id-2040.lock

setup() {
	[ "$(id -u)" -eq 0 ] || skip "proctor run needs root"
	command -v parallel >/dev/null || skip "GNU parallel is not installed (scripts/deps.sh installs the Debian package parallel)"
	parallel --version 2>/dev/null | grep -q '^GNU parallel' ||
		skip "parallel is not GNU parallel (moreutils' has another syntax; install the Debian package parallel)"
	"$PROCTOR" doctor --json | tr -d '\n ' | grep -q '"check":"landlock","ok":true' ||
		skip "no Landlock on this kernel: proctor run refuses to run without it"
	T=$(mktemp -d /tmp/proctor-parallel-XXXXXX)
	chmod 0755 "$T"
	HOLD=
	procs_mark
}

teardown() {
	[ -n "${T:-}" ] || return 0
	release_slot
	procs_left_fail
}

# suite DIR [BUSY...]: DIR/t00.json ... DIR/t19.json (ids t00 ... t19: byte order is index order),
# each with the agent mock-nap.sh, one mock (uip, one subset rule) and identity.slots 4; the
# indices BUSY get the one-slot identity BUSY_IDENTITY instead.
suite() {
	local dir=$1 i id ident
	shift
	mkdir -p "$dir/ws" "$dir/files" # files/: not *.json directly in the suite, so no task
	cp "$AGENTS/mock-nap.sh" "$dir/files/"
	echo '{"version":1,"responses":[{"argv":["or","jobs","list"],"match_mode":"subset","stdout":"[]\n"}]}' >"$dir/files/f.json"
	for i in $(seq 0 19); do
		id=$(printf 't%02d' "$i")
		ident='{"slots":4}'
		case " $* " in *" $i "*) ident=$BUSY_IDENTITY ;; esac
		printf '{"version":1,"id":"%s","workspace":{"from":"ws"},"agent":{"kind":"command","command":["files/mock-nap.sh","0.3"]},"mocks":[{"tool":"uip","fixture":"files/f.json","max_requests":5,"passthrough_argv_prefixes":[]}],"limits":{"timeout_s":60},"identity":%s}\n' \
			"$id" "$ident" >"$dir/$id.json"
	done
}

# prun JOBLOG: the suite through GNU parallel, 4 jobs, as the man page's example does.
prun() {
	rm -f "$1"
	run --separate-stderr parallel -j4 --joblog "$1" "$PROCTOR" run --quiet --suite "$T/s" --index {} --out "$T/out" ::: $(seq 0 19)
}

# A fingerprint of every result.json: name, inode, mtime and content hash.
results_stamp() {
	for f in "$T"/out/t*/result.json; do
		printf '%s %s %s\n' "$f" "$(stat -c %i.%Y "$f")" "$(sha256sum <"$f" | cut -c1-64)"
	done
}

jget() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

# Hold the busy identity's slot lock, as a concurrent proctor run would: one process that keeps
# the flock until killed.
hold_slot() {
	mkdir -p -m 0700 /run/proctor
	(umask 077 && : >>"$BUSY_LOCK")
	(exec 9<>"$BUSY_LOCK" && flock -n 9 && exec sleep 600) >/dev/null 2>&1 &
	HOLD=$!
	sleep 0.2
	kill -0 "$HOLD" # still alive: it has the lock
}

release_slot() {
	[ -n "${HOLD:-}" ] || return 0
	kill "$HOLD" 2>/dev/null
	wait "$HOLD" 2>/dev/null || true
	HOLD=
}

all_done() { # the joblog line of a run where every index exited 0
	seq 0 19 | sed 's/$/:0/' | tr '\n' ' ' | sed 's/ $//'
}

# collect_counts: proctor collect OUT's status counts (the nonzero ones, sorted), or fails.
collect_counts() {
	"$PROCTOR" collect "$T/out" --format json >"$T/sum.json" || return 1
	jget "$T/sum.json" 'sorted((k, v) for k, v in r["counts"].items() if v)'
}

@test "parallel: 20 tasks, 4 jobs: 20 final results, no uid shared at once, collect right, a rerun is a no-op" {
	suite "$T/s"
	prun "$T/joblog"
	[ "$status" -eq 0 ]
	[ "$(python3 "$CHECK" joblog "$T/joblog")" = "$(all_done)" ]
	[ "$(ls "$T/out" | tr '\n' ' ')" = "$(seq -f 't%02g' 0 19 | tr '\n' ' ')" ]
	run python3 "$CHECK" rows "$T/out"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 20 ]
	for i in $(seq 0 19); do
		id=$(printf 't%02d' "$i")
		[ "${lines[$i]}" = "$id $id completed 0 $i 1 0" ]
		[ "$(jget "$T/out/$id/result.json" 'r["task_file"]')" = "$T/s/$id.json" ]
	done
	# Runs alive at the same instant had different agent uids (slots 0-3 of 2000); with naps of
	# 0.3 s and 4 jobs, several were alive at once.
	run python3 "$CHECK" overlap "$T/out"
	[ "$status" -eq 0 ]
	echo "# $output" >&3 # how many ran at once, and their uids: shown by bats --tap
	[[ "$output" =~ ^concurrent=([0-9]+)\ uids=([0-9,]+)\ clashes=0$ ]]
	[ "${BASH_REMATCH[1]}" -ge 2 ] && [ "${BASH_REMATCH[1]}" -le 4 ]
	[[ "${BASH_REMATCH[2]}" =~ ^2000(,200[1-3])+$ ]]

	run --separate-stderr "$PROCTOR" collect "$T/out" --format json
	[ "$status" -eq 0 ]
	echo "$output" >"$T/sum.json"
	[ "$(jget "$T/sum.json" 'r["total"]')" -eq 20 ]
	[ "$(jget "$T/sum.json" 'sorted((k, v) for k, v in r["counts"].items() if v)')" = "[('completed', 20)]" ]
	[ "$(jget "$T/sum.json" 'len(r["counts"])')" -eq 8 ]
	[ "$(jget "$T/sum.json" '[t["dir"] for t in r["tasks"]] == ["t%02d" % i for i in range(20)]')" = True ]
	[ "$(jget "$T/sum.json" 'all(t["task_id"] == t["dir"] and t["status"] == "completed" and t["exit_code"] == 0 and t["mock_calls"] == 1 and t["mock_hits"] == 1 and t["mock_misses"] == 0 and t["teardown_survivors"] == 0 and t["teardown_errors"] == 0 and t["agent_ms"] >= 300 and t["duration_ms"] > t["agent_ms"] for t in r["tasks"])')" = True ]
	run --separate-stderr "$PROCTOR" collect "$T/out" --format csv
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 21 ]
	[ "${lines[0]}" = "dir,task_id,status,exit_code,duration_ms,agent_ms,mock_calls,mock_hits,mock_passthrough,mock_misses,guard_denials,teardown_survivors,teardown_errors,error" ]
	for i in $(seq 1 20); do
		id=$(printf 't%02d' $((i - 1)))
		[[ "${lines[$i]}" == "$id,$id,completed,0,"*",1,1,0,0,,0,0," ]]
	done

	# The same command again: every index is final, so nothing runs and nothing changes.
	before=$(results_stamp)
	prun "$T/joblog2"
	[ "$status" -eq 0 ]
	[ "$(python3 "$CHECK" joblog "$T/joblog2")" = "$(all_done)" ]
	[ "$(grep -c 'already done: .* is final (status completed, exit 0)' <<<"$stderr")" -eq 20 ]
	[ "$(results_stamp)" = "$before" ]
	[ ! -e "$T/out/.attempts" ]
	[ -z "$(procs_ours "$RUN_UIDS")" ]
}

@test "parallel: tasks that exit 3 (identity slot busy) are the only ones a rerun runs again" {
	suite "$T/s" 5 11 17
	hold_slot
	prun "$T/joblog"
	[ "$status" -eq 3 ] # GNU parallel exits with the number of jobs that failed
	[ "$(python3 "$CHECK" joblog "$T/joblog")" = "$(all_done | sed 's/\b5:0/5:3/; s/11:0/11:3/; s/17:0/17:3/')" ]
	for id in t05 t11 t17; do
		[ "$(jget "$T/out/$id/result.json" 'r["status"], r["exit_code"]')" = "('isolation_failed', 3)" ]
		[[ "$(jget "$T/out/$id/result.json" 'r["reason"]')" == "no identity slot: every slot is taken by another run"* ]]
	done
	[ "$(collect_counts)" = "[('completed', 17), ('isolation_failed', 3)]" ]
	[ -z "$(procs_ours "$RUN_UIDS")" ]

	# The slot is free again: the rerun runs t05, t11 and t17 only; their first attempts are kept.
	release_slot
	done17=$(results_stamp | grep -v -e /t05/ -e /t11/ -e /t17/)
	prun "$T/joblog2"
	[ "$status" -eq 0 ]
	[ "$(python3 "$CHECK" joblog "$T/joblog2")" = "$(all_done)" ]
	[ "$(grep -c 'already done: ' <<<"$stderr")" -eq 17 ]
	[ "$(grep -c 'held no final result' <<<"$stderr")" -eq 3 ]
	[ "$(results_stamp | grep -v -e /t05/ -e /t11/ -e /t17/)" = "$done17" ]
	[ "$(ls "$T/out/.attempts" | sed 's/-[0-9.]*$//' | tr '\n' ' ')" = "t05 t11 t17 " ]
	for a in "$T"/out/.attempts/*; do
		[ "$(jget "$a/result.json" 'r["exit_code"]')" -eq 3 ]
	done
	for id in t05 t11 t17; do
		[ "$(jget "$T/out/$id/result.json" 'r["status"], r["exit_code"], r["identity"]["agent_uid"]')" = "('completed', 0, 2040)" ]
	done
	[ "$(collect_counts)" = "[('completed', 20)]" ]
	[ -z "$(procs_ours "$RUN_UIDS")" ]
}
