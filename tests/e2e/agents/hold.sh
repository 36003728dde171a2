#!/bin/sh
# SPDX-License-Identifier: MIT
# Lets a test act while the agent runs: writes its pid to ./ready, waits (at most $1 seconds,
# default 30) until the test creates ./go, calls `uip or jobs list` when there is a mock, prints
# what it saw and exits $2 (default 0).
echo "$$" >ready.tmp && mv ready.tmp ready
i=0
while [ ! -e go ] && [ "$i" -lt $(( ${1:-30} * 10 )) ]; do
	sleep 0.1
	i=$((i + 1))
done
rc=none
if [ -n "${PROCTOR_MOCK_SOCKET:-}" ]; then
	uip or jobs list >/dev/null 2>&1
	rc=$?
fi
printf '{"agent":"hold","go":%s,"uip_exit":"%s"}\n' "$([ -e go ] && echo true || echo false)" "$rc"
exit "${2:-0}"
