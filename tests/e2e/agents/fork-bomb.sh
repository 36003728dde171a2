#!/bin/sh
# SPDX-License-Identifier: MIT
# A bounded fork bomb: $1 sleepers (default 150) and $2 respawners (default 20) that keep forking
# while teardown sweeps, all ignoring TERM, some in their own sessions; then exits 0.
n=${1:-150} r=${2:-20}
trap '' TERM HUP INT
i=0
while [ "$i" -lt "$n" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		setsid sh -c 'trap "" TERM HUP INT; exec sleep 1000' </dev/null >/dev/null 2>&1 &
	else
		sleep 1000 </dev/null >/dev/null 2>&1 &
	fi
	i=$((i + 1))
done
i=0
while [ "$i" -lt "$r" ]; do
	sh -c 'trap "" TERM HUP INT; while :; do sleep 0.05 & wait; done' </dev/null >/dev/null 2>&1 &
	i=$((i + 1))
done
printf '{"agent":"fork-bomb","sleepers":%d,"respawners":%d}\n' "$n" "$r"
exit 0
