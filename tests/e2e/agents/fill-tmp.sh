#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes a $1 MiB file (default 64) into its TMPDIR, then calls uip: the call is still journaled,
# since the journal lives in RUN/logs, which the agent's writes cannot reach.
dd if=/dev/zero of="$TMPDIR/fill" bs=1M count="${1:-64}" 2>/dev/null
size=$(wc -c <"$TMPDIR/fill")
uip or jobs list --fill-tmp >/dev/null 2>&1
printf '{"agent":"fill-tmp","bytes":%d,"uip_exit":%d}\n' "$size" "$?"
exit 0
