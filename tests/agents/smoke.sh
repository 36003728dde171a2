#!/bin/sh
# SPDX-License-Identifier: MIT
# Smoke test of the real agent CLIs, bare (not under proctor): each runs as uid 2000 with HOME and
# TMPDIR in a scratch dir, stdin /dev/null, in a network namespace that has only loopback,
# against a scripted model server (tests/agents/model_*.py). Per CLI:
#   two_turns  turn 1 runs a Bash tool call (echo hi > x.txt) and answers text; turn 2 resumes the
#              session by id, and the model checks the resumed request carries turn 1's history
#   hook       a root-owned PreToolUse hook denies a Bash write on a resumed turn after the agent
#              tried to switch hooks off from inside (settings / config.toml)
#   drop       the model server drops the connection: the CLI exits non-zero, reports the error
#              in its events, and does not hang
# It owns no proctor code; it proves the command lines doc/AGENTS-FACTS.md gives.
#
# usage: tests/agents/smoke.sh [--tap] [claude|codex]...   (default: both; --tap: TAP lines)
# Skips a CLI with a reason when it is not installed (scripts/agents.sh) or when not root.
# Last line: "N passed, N failed, N skipped"; exit 1 when any failed.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
AGENT_UID=${PROCTOR_AGENT_UID:-2000}
TURN_TIMEOUT=${PROCTOR_SMOKE_TIMEOUT:-120}

# In the network namespace: run one case, print PASS/FAIL lines.
if [ "${1:-}" = --in-netns ]; then
	shift
	# shellcheck source=tests/agents/smoke_cases.sh
	. "$HERE/smoke_cases.sh"
	ip link set lo up || { echo "FAIL $1 $2: cannot bring up lo"; exit 1; }
	"case_$1_$2"
	exit $?
fi

passed=0 failed=0 skipped=0 n=0 tap=0
[ "${1:-}" = --tap ] && { tap=1; shift; }
agents=${*:-claude codex}

# report STATUS TEXT: one result line, plain (PASS/FAIL/SKIP) or TAP.
report() {
	n=$((n + 1))
	case "$tap$1" in
	0*) echo "$1 $2" ;;
	1PASS) echo "ok $n - $2" ;;
	1FAIL) echo "not ok $n - $2" ;;
	1SKIP) echo "ok $n - $2 # skip" ;;
	*) ;;
	esac
}

if [ "$(id -u)" -ne 0 ]; then
	for a in $agents; do report SKIP "$a: needs root (setpriv to uid $AGENT_UID, unshare -n)"; done
	echo "0 passed, 0 failed, $n skipped"
	exit 0
fi

paths=$(PROCTOR_AGENTS_DIR=${PROCTOR_AGENTS_DIR:-/opt/proctor-agents} \
	"$ROOT/scripts/agents.sh" --check 2>/dev/null) || paths=""
PROCTOR_CLAUDE=${PROCTOR_CLAUDE:-$(echo "$paths" | sed -n 's/^PROCTOR_CLAUDE=//p')}
PROCTOR_CODEX=${PROCTOR_CODEX:-$(echo "$paths" | sed -n 's/^PROCTOR_CODEX=//p')}
export PROCTOR_CLAUDE PROCTOR_CODEX AGENT_UID TURN_TIMEOUT

for a in $agents; do
	case "$a" in
	claude) bin=$PROCTOR_CLAUDE ;;
	codex) bin=$PROCTOR_CODEX ;;
	*) echo "smoke: unknown agent $a (claude or codex)" >&2; exit 2 ;;
	esac
	for c in ${PROCTOR_SMOKE_CASES:-two_turns drop hook}; do
		if [ -z "$bin" ] || [ ! -x "$bin" ]; then
			report SKIP "$a $c: not installed (run scripts/agents.sh as root)"
			skipped=$((skipped + 1))
			continue
		fi
		out=$(unshare -n "$0" --in-netns "$a" "$c" 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then
			passed=$((passed + 1))
			report PASS "$(echo "$out" | sed -n 's/^PASS //p' | tail -n 1)"
			echo "$out" | sed -n 's/^note /# note /p'
		else
			failed=$((failed + 1))
			report FAIL "$a $c"
			echo "$out" | sed 's/^/# /'
		fi
	done
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
