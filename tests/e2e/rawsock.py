#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A protocol v1 peer written only from doc/PROTOCOL.md, for end-to-end tests.

  rawsock.py send SOCKET BYTES_FILE|-      send raw bytes, print the response line
  rawsock.py call SOCKET TOOL ARG...       a well-formed request, print the response line
  rawsock.py late-call SOCKET TOOL ARG...  connect, wait 0.3 s (a slow client), then as call
  rawsock.py idle SOCKET [MARKER]          connect, (touch MARKER), send nothing, print the reply
  rawsock.py hangup SOCKET TOOL ARG...     send a request, read 1 byte, close
  rawsock.py flood SOCKET N TOOL ARG...    N connections at once; print exit-code counts
  rawsock.py padflood SOCKET N TOOL ARG... N requests each padded to ~64 KiB with an ignored key
                                           of `{}`s, sent at once; then all hang up unanswered
  rawsock.py server SOCKET EXIT STDOUT     serve one canned response per connection (a foreign server)
  rawsock.py garbage-server SOCKET LINE    answer every request with LINE
  rawsock.py mute-server SOCKET            accept, read, never answer
"""
import json
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s


def read_line(s):
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.split(b"\n", 1)[0]


def request(tool, argv):
    return (json.dumps({"version": 1, "tool": tool, "argv": argv}, separators=(",", ":")) + "\n").encode()


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "send":
        data = sys.stdin.buffer.read() if sys.argv[3] == "-" else open(sys.argv[3], "rb").read()
        s = connect(path)
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before taking everything
        sys.stdout.write(read_line(s).decode() + "\n")
    elif cmd in ("call", "late-call"):
        s = connect(path)
        if cmd == "late-call":
            time.sleep(0.3)  # the server may answer (77) before we write: we must still read it
        s.sendall(request(sys.argv[3], sys.argv[4:]))
        sys.stdout.write(read_line(s).decode() + "\n")
    elif cmd == "idle":
        s = connect(path)
        if len(sys.argv) > 3:
            open(sys.argv[3], "w").close()  # tell the test we hold the connection
        sys.stdout.write(read_line(s).decode() + "\n")
    elif cmd == "hangup":
        s = connect(path)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(request(sys.argv[3], sys.argv[4:]))
        s.recv(1)
        s.close()
    elif cmd == "flood":
        n = int(sys.argv[3])
        socks = [connect(path) for _ in range(n)]
        req = request(sys.argv[4], sys.argv[5:])
        for s in socks:
            s.sendall(req)
        counts = {}
        for s in socks:
            line = read_line(s)
            code = json.loads(line)["exit_code"] if line else "none"
            counts[code] = counts.get(code, 0) + 1
            s.close()
        print(" ".join(f"{k}:{v}" for k, v in sorted(counts.items(), key=str)))
    elif cmd == "padflood":
        n = int(sys.argv[3])
        base = {"version": 1, "tool": sys.argv[4], "argv": sys.argv[5:]}
        head = json.dumps(base, separators=(",", ":"))[:-1] + ',"pad":['
        count = (65536 - len(head) - 4) // 3  # "{}," each; "]}\n" closes it under 64 KiB
        line = (head + ",".join(["{}"] * count) + "]}\n").encode()
        assert len(line) <= 65536, len(line)
        socks = [connect(path) for _ in range(n)]
        for s in socks:
            s.sendall(line)
        time.sleep(0.5)  # let the server read them all and queue them
        for s in socks:
            s.close()
        print(count)
    elif cmd == "mute-server":
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(16)
        print("ready", flush=True)
        held = []
        while True:
            c, _ = srv.accept()
            held.append(c)
    elif cmd in ("server", "garbage-server"):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(16)
        os.chmod(path, 0o666)
        print("ready", flush=True)
        while True:
            c, _ = srv.accept()
            req = json.loads(read_line(c))
            if cmd == "server":
                out = sys.argv[4] + " " + " ".join(req["argv"]) + "\n"
                line = json.dumps({"version": 1, "exit_code": int(sys.argv[3]), "stdout": out,
                                   "stderr": "", "extra": True}, separators=(",", ":")) + "\n"
            else:
                line = sys.argv[3] + "\n"
            c.sendall(line.encode())
            c.close()


if __name__ == "__main__":
    main()
