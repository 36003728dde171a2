#!/bin/sh
# SPDX-License-Identifier: MIT
# Floods stdout with $1 JSON lines (default 100,000): most short, every 1,000th one 70 KB
# (more than a pipe holds), written in chunks that split lines, so the reader must reassemble.
exec python3 -c '
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
buf = []
for i in range(n):
    pad = "x" * (70000 if i % 1000 == 999 else i % 50)
    buf.append(b"{\"n\":%d,\"pad\":\"%s\"}\n" % (i, pad.encode()))
    if len(buf) == 97:
        data = b"".join(buf)
        buf = []
        out.write(data[:len(data) // 2]); out.flush()
        out.write(data[len(data) // 2:]); out.flush()
out.write(b"".join(buf))
out.flush()
' "${1:-100000}"
