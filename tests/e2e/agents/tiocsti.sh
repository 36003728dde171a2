#!/bin/sh
# SPDX-License-Identifier: MIT
# Keystroke injection: TIOCSTI on its stdin, stdout and stderr and on /dev/tty, one event line
# each. Holding the caller's terminal, this would type a command into the root shell that ran
# proctor run; with no controlling terminal and pipes for fds, it must fail.
exec python3 -c '
import errno, fcntl, json, os, termios
for target in ("fd 0", "fd 1", "fd 2", "/dev/tty"):
    how = "injected"
    try:
        fd = int(target[3:]) if target.startswith("fd ") else os.open(target, os.O_RDWR)
        for ch in "echo INJECTED\n":
            fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
    except OSError as e:
        how = errno.errorcode.get(e.errno, str(e.errno))
    print(json.dumps({"attempt": "tty-inject", "blocked": how != "injected", "how": how,
                      "target": target}), flush=True)
'
