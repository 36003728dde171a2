#!/bin/sh
# SPDX-License-Identifier: MIT
# Fills the filesystem of its TMPDIR (up to $1 MiB, default 256), proves it full (one more byte
# cannot be written), then calls uip: the call must still be journaled and this event recorded,
# since mockd and proctor set space aside for them before the agent ran. Then prints $2 (default
# 0) events of 64 KB each, past the space set aside for events while the disk is still full,
# frees its file and prints one last event: events.jsonl must hold whole lines only.
dd if=/dev/zero of="$TMPDIR/fill" bs=1M count="${1:-256}" 2>/dev/null
size=$(wc -c <"$TMPDIR/fill")
full=false
printf x 2>/dev/null >"$TMPDIR/one-more" || full=true
uip or jobs list --fill-tmp >/dev/null 2>&1
rc=$?
printf '{"agent":"fill-tmp","bytes":%d,"full":%s,"uip_exit":%d}\n' "$size" "$full" "$rc"
pad=$(head -c 65000 /dev/zero | tr '\0' x)
i=0
while [ "$i" -lt "${2:-0}" ]; do
	printf '{"flood":%d,"pad":"%s"}\n' "$i" "$pad"
	i=$((i + 1))
done
rm -f "$TMPDIR/fill"
echo '{"agent":"fill-tmp","after":"freed"}'
exit 0
