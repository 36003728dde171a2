#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Man-page lint (issue 15): every doc/*.1 that exists, whoever added it, must pass mandoc's and
# groff's linters, carry the sections STYLE.md asks for exactly once, and proctor(1) must cite
# each command's page in that command's entry only, and every page in its SEE ALSO.

bats_require_minimum_version 1.5.0

DOC=$(cd "$BATS_TEST_DIRNAME/../../doc" && pwd)

setup() {
	command -v mandoc >/dev/null || {
		echo "mandoc is not installed (it is in scripts/deps.sh: run it as root)" >&2
		return 1
	}
	PAGES=$(ls "$DOC"/*.1)
	[ -n "$PAGES" ]
}

@test "man: mandoc -T lint finds no warning or error in any page" {
	bad=0
	for p in $PAGES; do
		out=$(mandoc -T lint -W warning "$p" 2>&1) || true
		if [ -n "$out" ]; then echo "$out"; bad=1; fi
	done
	[ "$bad" -eq 0 ]
}

@test "man: groff -ww finds no warning in any page" {
	bad=0
	for p in $PAGES; do
		out=$(groff -ww -z -man "$p" 2>&1) || true
		if [ -n "$out" ]; then echo "$p: $out"; bad=1; fi
	done
	[ "$bad" -eq 0 ]
}

@test "man: every page has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, FILES, EXIT STATUS, EXAMPLES, SEE ALSO once each" {
	bad=0
	for p in $PAGES; do
		for sec in NAME SYNOPSIS DESCRIPTION OPTIONS FILES 'EXIT STATUS' EXAMPLES 'SEE ALSO'; do
			n=$(grep -cE "^\.SH \"?$sec\"?\$" "$p" || true)
			if [ "$n" -ne 1 ]; then echo "$p: section $sec appears $n times"; bad=1; fi
		done
	done
	[ "$bad" -eq 0 ]
}

@test "man: proctor(1) cites each command's page in that command's entry only, and every page in SEE ALSO" {
	top="$DOC/proctor.1"
	# The COMMANDS section, one entry per .TP: "command<TAB>pages it cites".
	entries=$(awk '
		/^\.SH / { in_cmds = ($0 == ".SH COMMANDS"); next }
		!in_cmds { next }
		/^\.TP/ { if (cmd != "") print cmd "\t" cites; cmd = ""; cites = ""; want = 1; next }
		want { split($0, w, /[ "]+/); cmd = w[2]; want = 0; next }
		{ while (match($0, /proctor\\?-[a-z-]+ *\(1\)/)) {
			c = substr($0, RSTART, RLENGTH); gsub(/\\|[ ()1]/, "", c); cites = cites " " c
			$0 = substr($0, RSTART + RLENGTH) } }
		END { if (cmd != "") print cmd "\t" cites }' "$top")
	[ -n "$entries" ]
	bad=0
	while IFS="$(printf '\t')" read -r cmd cites; do
		for c in $cites; do
			if [ "$c" != "proctor-$cmd" ]; then echo "proctor(1) COMMANDS: entry '$cmd' cites $c(1)"; bad=1; fi
		done
	done <<<"$entries"
	seealso=$(sed -n '/^\.SH SEE ALSO/,/^\.SH /p' "$top")
	for p in $PAGES; do
		name=$(basename "$p" .1)
		[ "$name" = proctor ] && continue
		if ! echo "$seealso" | grep -q "^\.BR $name (1)"; then echo "proctor(1) SEE ALSO lacks $name(1)"; bad=1; fi
		cmd=${name#proctor-}
		if ! echo "$entries" | grep -q "^$cmd	"; then echo "proctor(1) COMMANDS lacks $cmd"; bad=1; fi
	done
	for c in $(echo "$seealso" | sed -n 's/^\.BR \(proctor-[a-z-]*\) (1).*/\1/p'); do
		if [ ! -f "$DOC/$c.1" ]; then echo "proctor(1) SEE ALSO cites $c(1), which does not exist"; bad=1; fi
	done
	[ "$bad" -eq 0 ]
}
