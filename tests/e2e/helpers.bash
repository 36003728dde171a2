# SPDX-License-Identifier: MIT
# helpers.bash: start/stop a real mockd on a temporary socket; paths to the built binaries.

PROCTOR_BUILD=${PROCTOR_BUILD:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build}
PROCTOR=$PROCTOR_BUILD/proctor
SHIM=$PROCTOR_BUILD/proctor-shim
RAWSOCK="python3 $BATS_TEST_DIRNAME/rawsock.py"
CORPUS=${PROCTOR_CORPUS:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/../shared/corpus/uipath-troubleshoot}

# A per-test directory that uid 65534 can traverse (bats' own tmpdir may not be).
setup_tmp() {
	T=$(mktemp -d /tmp/proctor-e2e-XXXXXX)
	chmod 0755 "$T"
	SOCK=$T/mock.sock
	JOURNAL=$T/calls.jsonl
	export PROCTOR_MOCK_SOCKET=$SOCK
	mkdir "$T/bin"
	ln -s "$SHIM" "$T/bin/uip"
	UIP=$T/bin/uip
}

# start_mockd ARGS...: run mockd on $SOCK with $JOURNAL; wait for its readiness byte.
start_mockd() {
	mkfifo "$T/ready"
	"$PROCTOR" mockd --socket "$SOCK" --journal "$JOURNAL" --ready-fd 3 "$@" \
		3>"$T/ready" 2>"$T/mockd.err" &
	MOCKD_PID=$!
	if ! read -r -t 10 _ <"$T/ready"; then
		echo "mockd did not become ready:" >&2
		cat "$T/mockd.err" >&2
		return 1
	fi
}

stop_mockd() {
	if [ -n "${MOCKD_PID:-}" ] && kill -0 "$MOCKD_PID" 2>/dev/null; then
		kill -TERM "$MOCKD_PID"
		wait "$MOCKD_PID" || true
	fi
	MOCKD_PID=
}

teardown_tmp() {
	stop_mockd
	if [ -n "${T:-}" ]; then rm -rf "$T"; fi
}

write_fixture() { # write_fixture FILE JSON
	printf '%s\n' "$2" >"$1"
}

journal_lines() { [ -f "$JOURNAL" ] && wc -l <"$JOURNAL" | tr -d ' ' || echo 0; }

# jq-free JSON field access for assertions: json_get 'expr' < line
json_get() { python3 -c "import json,sys; d=[json.loads(l) for l in sys.stdin if l.strip()]; print(eval(sys.argv[1]))" "$1"; }

# Processes a test can be blamed for. A host may run processes of its own under the uids the
# tests use (a CI host did: python3.11 processes of uid 2000 started in the middle of a test), so
# counting every process of a uid fails a clean run. procs_mark, at setup, records the pid
# namespaces alive then; procs_ours UIDS lists the live processes of UIDS, as "pid:uid:comm ",
# that are in a pid namespace born since (every process of proctor run's agent is) or whose
# environment, command line or working directory names the test's directory $T (mockd, the
# worker, a command started with `drop --setenv PROCTOR_E2E=$T`).
procs_mark() {
	PROCS_NS=" $(for p in /proc/[0-9]*; do readlink "$p/ns/pid"; done 2>/dev/null | sort -u | tr '\n' ' ') "
}

procs_ours() {
	local pid uid stat comm ns
	ps -u "$1" -o pid=,uid=,stat=,comm= 2>/dev/null | while read -r pid uid stat comm; do
		case $stat in Z* | X*) continue ;; esac # dead: its parent has yet to reap it
		ns=$(readlink "/proc/$pid/ns/pid" 2>/dev/null) || continue # gone meanwhile
		case ${PROCS_NS:-} in
		*" $ns "*)
			{ tr '\0' '\n' <"/proc/$pid/environ"; tr '\0' ' ' <"/proc/$pid/cmdline"
			  readlink "/proc/$pid/cwd"; } 2>/dev/null | grep -qF -- "$T" || continue ;;
		esac
		printf '%s:%s:%s ' "$pid" "$uid" "$comm"
	done
}

# result_valid RUN: when RUN/result.json exists, it must pass tests/e2e/result_check.py (doc/RESULT.md);
# for teardowns, so every run of a file is checked whatever its test asserts.
result_valid() {
	[ -f "$1/result.json" ] || return 0
	python3 "$BATS_TEST_DIRNAME/result_check.py" "$1/result.json" >&2
}

# The end of a teardown that ran proctor: remove $T, then fail naming them if processes of
# $RUN_UIDS that procs_ours blames on this test are left; they are reaped first, so one test's
# leftovers do not fail the next.
procs_left_fail() {
	local left u
	left=$(procs_ours "$RUN_UIDS")
	rm -rf "$T"
	[ -n "$left" ] || return 0
	for u in ${RUN_UIDS//,/ }; do "$PROCTOR" reap --uid "$u" --grace 100 >/dev/null 2>&1; done
	echo "after the test: processes left behind: $left" >&2
	return 1
}

# wait_file PATH [SECONDS]: until PATH exists (default 20 s); fails when it does not appear.
wait_file() {
	local i=0
	while [ ! -e "$1" ]; do
		[ "$i" -lt $((${2:-20} * 10)) ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}
