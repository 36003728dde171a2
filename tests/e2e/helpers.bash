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
