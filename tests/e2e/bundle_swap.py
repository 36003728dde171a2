#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bundle_swap.py WATCHED_DIR A B: the agent's half of the bundle symlink race (issue 12, finding
# 6). Prints "armed", then waits until WATCHED_DIR is opened (the walk reaching it, after it has
# checked the links before it) and exchanges A and B (renameat2 RENAME_EXCHANGE) at that moment.
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0o2000000)  # IN_CLOEXEC
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0:  # IN_OPEN
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
print("armed", flush=True)
os.read(fd, 4096)
if libc.renameat2(-100, sys.argv[2].encode(), -100, sys.argv[3].encode(), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
    sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
