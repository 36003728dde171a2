#!/bin/sh
# SPDX-License-Identifier: MIT
# Sends signal $1 (STOP or KILL, default STOP) to its worker: its ancestors of its own uid,
# found through /proc (the agent may not be the worker's direct child). Then sleeps $2 seconds
# (default 2) and exits 0.
sig=${1:-STOP}
me=$(id -u)
uid_of() { sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
p=$PPID
while [ "$p" -gt 1 ] && [ "$(uid_of "$p")" = "$me" ]; do
	if kill -s "$sig" "$p" 2>/dev/null; then r=sent; else r=failed; fi
	printf '{"agent":"stop-worker","signal":"%s","pid":%d,"result":"%s"}\n' "$sig" "$p" "$r"
	p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
	[ -n "$p" ] || break
done
sleep "${2:-2}"
exit 0
