#!/bin/sh
# SPDX-License-Identifier: MIT
# Calls the mocked uip once, naps $1 seconds (default 0: concurrent runs then overlap), and
# prints one event line with the answer it was served.
out=$(uip or jobs list) || exit 5
sleep "${1:-0}"
printf '{"agent":"mock-nap","uip":%s}\n' "$out"
