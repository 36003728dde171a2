#!/bin/sh
# SPDX-License-Identifier: MIT
# Sends signal $1 (STOP or KILL, default STOP) to its worker: its parent, and the parent's
# ancestors of its own uid, found through /proc. In a pid namespace the worker is pid 1, which
# ignores signals it has no handler for when they come from inside, so kill reports success and
# nothing happens. Then sleeps $2 seconds (default 2) and exits 0.
sig=${1:-STOP}
me=$(id -u)
uid_of() { sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
p=$PPID
while [ -n "$p" ] && [ "$p" -ge 1 ]; do
	if kill -s "$sig" "$p" 2>/dev/null; then r=sent; else r=failed; fi
	printf '{"agent":"stop-worker","signal":"%s","pid":%d,"result":"%s"}\n' "$sig" "$p" "$r"
	[ "$p" -gt 1 ] || break
	p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
	[ "$(uid_of "$p")" = "$me" ] || break
done
sleep "${2:-2}"
exit 0
