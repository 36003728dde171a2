#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: a real mockd serving examples/uip-fixture.json to the `uip` shim, then the journal.
set -eu
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$TOP/$BUILD" && pwd)
W=$(mktemp -d /tmp/proctor-demo-XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT INT TERM
chmod 0755 "$W"
mkdir "$W/bin"
ln -s "$B/proctor-shim" "$W/bin/uip"
export PATH="$W/bin:$PATH" PROCTOR_MOCK_SOCKET="$W/mock.sock"

mkfifo "$W/ready"
"$B/proctor" mockd --config "$TOP/examples/mock-config.json" --socket "$W/mock.sock" \
	--socket-mode 0666 --journal "$W/calls.jsonl" --ready-fd 3 3>"$W/ready" &
PID=$!
read -r _ <"$W/ready"
echo "mockd is serving examples/mock-config.json on $W/mock.sock"

run() { # run CMD...: show a call, its output and exit code
	printf '\n$ %s\n' "$*"
	set +e
	"$@"
	rc=$?
	set -e
	echo "[exit $rc]"
}

run uip or jobs get 7f3c2a10-0000-4abc-9def-000000000042          # subset: --output json is noise
run uip or jobs get 7f3c2a10-0000-4abc-9def-000000000042 --output=json --limit=5
run uip folders or list                                           # normalized: order does not matter
run uip login                                                     # exit code and stderr from the fixture
run uip or queues list                                            # no rule: the fixture's default
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	run setpriv --reuid 65534 --regid 65534 --clear-groups uip or jobs list   # a caller not allowed: 77
fi
for _ in 1 2 3 4; do uip or jobs list >/dev/null 2>&1 || true; done
run uip or jobs list                                              # budget of 8 spent: 75

kill "$PID" && wait "$PID" || true
PID=
printf '\nThe journal mockd wrote (the agent cannot write it):\n'
cat "$W/calls.jsonl"
