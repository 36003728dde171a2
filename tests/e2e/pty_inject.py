#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# pty_inject.py CMD...: run CMD as an operator's shell would, with a fresh pseudo-terminal as its
# controlling terminal on fds 0-2 (the harness is the terminal), wait for it, then read what is
# waiting in that terminal's input queue: whatever CMD's descendants managed to push there with
# TIOCSTI is what a root shell would run after CMD exits. Prints one JSON line:
# {"status", "tty", "injected", "output"}.
import json, os, pty, select, sys, termios

master, slave = pty.openpty()
tty = os.ttyname(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    fd = os.open(tty, os.O_RDWR)  # a session leader opening a tty acquires it as its terminal
    for i in (0, 1, 2):
        os.dup2(fd, i)
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
status = None
while status is None:
    r, _, _ = select.select([master], [], [], 0.05)
    if r:
        try:
            out += os.read(master, 65536)
        except OSError:
            pass
    p, st = os.waitpid(pid, os.WNOHANG)
    if p == pid:
        status = os.waitstatus_to_exitcode(st)
while select.select([master], [], [], 0.1)[0]:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
# The input queue of the operator's terminal, read as the shell would: non-canonical, no wait.
t = termios.tcgetattr(slave)
t[3] &= ~(termios.ICANON | termios.ECHO)
t[6][termios.VMIN] = 0
t[6][termios.VTIME] = 0
termios.tcsetattr(slave, termios.TCSANOW, t)
injected = b""
while True:
    chunk = os.read(slave, 4096)
    if not chunk:
        break
    injected += chunk
print(json.dumps({"status": status, "tty": tty, "injected": injected.decode("latin-1"),
                  "output": out.decode("latin-1")}))
