#!/bin/sh
# SPDX-License-Identifier: MIT
# Never exits and ignores TERM, HUP and INT: only SIGKILL ends it (timeout_s must).
trap '' TERM HUP INT
echo '{"agent":"never-exits"}'
while :; do sleep 1; done
