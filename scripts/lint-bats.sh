#!/bin/sh
# SPDX-License-Identifier: MIT
# lint-bats.sh: refuse assertions that cannot fail in the bats suites. bats runs a test body under
# `set -e`, and bash's `set -e` ignores the status of a negated pipeline, so a line `! cmd` (or
# `a && ! cmd`) in the middle of a @test or a helper function asserts nothing; only the last
# command of a body sets its status. Write `run ! cmd` (bats >= 1.5.0) or an explicit check.
# Usage: lint-bats.sh [FILE...] (default: tests/e2e/*.bats tests/e2e/*.bash tests/e2e/real/*.bash).
# With --tap, prints one TAP line per file. Exit 1 when any file has such a line.
set -u
tap=0
if [ "${1:-}" = "--tap" ]; then
	tap=1
	shift
fi
TOP=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
	cd "$TOP" || exit 1
	set -- tests/e2e/*.bats tests/e2e/*.bash tests/e2e/real/*.bash
fi

# Prints "FILE:LINE: text" for each negated command that is not the last command of its body.
# A body is a @test or a function whose closing brace is in column 0; here-documents are skipped;
# a line ending in a backslash continues the command on the next line.
lint_file() {
	awk '
	function flush_pending() {
		if (pend != "")
			printf "%s:%d: %s\n", FILENAME, pend_line, pend
		pend = ""
	}
	BEGIN { body = 0; hd = ""; pend = ""; cont = 0 }
	hd != "" {
		t = $0
		sub(/^\t+/, "", t)
		if (t == hd)
			hd = ""
		next
	}
	/^@test .*\{[ \t]*$/ || /^[A-Za-z_][A-Za-z0-9_]*\(\)[ \t]*\{[ \t]*$/ { body = 1; pend = ""; cont = 0; next }
	body && /^\}[ \t]*$/ { pend = ""; body = 0; next }
	!body { next }
	{
		line = $0
		hs = line
		gsub(/<<</, "", hs) # a here-string, not a here-document
		if (match(hs, /<<-?[ \t]*["\047]?[A-Za-z_][A-Za-z0-9_]*["\047]?/)) {
			w = substr(hs, RSTART, RLENGTH)
			sub(/^<<-?[ \t]*/, "", w)
			gsub(/["\047]/, "", w)
			hd = w
		}
		stripped = line
		sub(/^[ \t]+/, "", stripped)
		if (stripped == "" || stripped ~ /^#/)
			next
		if (!cont)
			flush_pending()
		if (!cont && (stripped ~ /^![ \t]/ || stripped ~ /&&[ \t]*![ \t]/)) {
			pend = stripped
			pend_line = FNR
		}
		cont = (line ~ /\\$/)
	}
	' "$1"
}

bad=0 n=0
[ "$tap" -eq 1 ] && echo "1..$#"
for f in "$@"; do
	n=$((n + 1))
	out=$(lint_file "$f")
	if [ -n "$out" ]; then
		bad=1
		if [ "$tap" -eq 1 ]; then
			echo "not ok $n - $f: a negated command that asserts nothing (use run ! or an explicit check)"
			echo "$out" | sed 's/^/# /'
		else
			echo "$out" | sed 's/$/  <- asserts nothing under set -e: use "run ! cmd" or an explicit check/' >&2
		fi
	elif [ "$tap" -eq 1 ]; then
		echo "ok $n - $f"
	fi
done
exit "$bad"
