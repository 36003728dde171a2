#!/bin/sh
# SPDX-License-Identifier: MIT
# Exits at once with the code given as $1 (default 0), after one event line.
printf '{"agent":"exit-at-once","code":%d}\n' "${1:-0}"
exit "${1:-0}"
