#!/bin/sh
# SPDX-License-Identifier: MIT
# Leaves a grandchild in its own session that ignores TERM and HUP and keeps stdout and stderr
# open (so the events pipe never reaches end of file), then exits 0 at once.
( setsid sh -c 'trap "" TERM HUP INT; while :; do sleep 1; done' & ) </dev/null
echo '{"agent":"double-fork"}'
exit 0
