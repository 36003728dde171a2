#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Every attack row of the guard's verdict table (tests/unit/guard_table.tsv) run for real under
# bash as the agent's uid (2000), each in a fresh scratch workspace: its effect must happen, so
# the deny the unit test pins for it is a deny of an attack that works.

bats_require_minimum_version 1.5.0
load helpers

@test "guard attacks: every attack row of the verdict table works when run under bash as uid 2000" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run the attacks as uid 2000"
	run python3 "$BATS_TEST_DIRNAME/guard_attacks.py" "$PROCTOR" "$BATS_TEST_DIRNAME/../unit/guard_table.tsv" 2000
	echo "$output" | tail -40
	[ "$status" -eq 0 ]
	echo "$output" | grep -Eq '^[0-9]+ attacks run, [0-9]+ proven, 0 not proven$'
	n=$(echo "$output" | sed -n 's/^\([0-9]*\) attacks run.*/\1/p')
	[ "$n" -ge 400 ]
}
