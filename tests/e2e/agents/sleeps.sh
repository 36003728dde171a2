#!/bin/sh
# SPDX-License-Identifier: MIT
# Sleeps $1 seconds (default 600), past the task's timeout; TERM ends it normally.
echo '{"agent":"sleeps"}'
exec sleep "${1:-600}"
