#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The real fixture corpus (../shared/corpus/uipath-troubleshoot: 297 scenarios, 1,887 rules):
# every config loads, and every rule answers its own argv, extra flags and --f=v forms.

load helpers

setup() {
	[ -d "$CORPUS" ] || skip "corpus not found at $CORPUS (../shared is absent)"
	setup_tmp
}

teardown() {
	if [ -n "${T:-}" ]; then teardown_tmp; fi
}

@test "corpus: every mock-config.json and its fixture load and validate" {
	n=0
	while IFS= read -r cfg; do
		run "$PROCTOR" mockd --config "$cfg" --check
		if [ "$status" -ne 0 ]; then
			echo "$cfg: $output" >&2
			return 1
		fi
		n=$((n + 1))
	done < <(find "$CORPUS" -name mock-config.json | sort)
	[ "$n" -eq 297 ]
}

@test "corpus: every rule answers its own argv, with extra flags, and in --f=v form" {
	run python3 "$BATS_TEST_DIRNAME/corpus_check.py" "$PROCTOR" "$SHIM" "$CORPUS" "$T"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^checked 297 scenarios, 5661 calls, 0 failures$'
}
