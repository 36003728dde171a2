#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""subreaper.py CMD...: run CMD as a child subreaper that waits for CMD only, the way a pod's
shell entrypoint would, then list any process CMD left to us (a zombie included): exit 99 if
there is one, else CMD's exit status."""
import ctypes
import glob
import os
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("subreaper.py: prctl(PR_SET_CHILD_SUBREAPER): errno %d" % ctypes.get_errno())
code = subprocess.run(sys.argv[1:], check=False).returncode
me = str(os.getpid())
for path in glob.glob("/proc/[0-9]*/status"):
    try:
        with open(path, encoding="utf-8") as f:
            st = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        continue
    if st.get("PPid", "").strip() == me:
        print("left to the caller: pid %s, uid %s, state %s" %
              (path.split("/")[2], st["Uid"].split()[0], st["State"].strip()))
        code = 99
sys.exit(code)
