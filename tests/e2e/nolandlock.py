#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nolandlock.py [--also NR]... CMD [ARGS...]: run CMD as under gVisor, whose kernel has no
Landlock: a seccomp filter makes landlock_create_ruleset, landlock_add_rule and
landlock_restrict_self (444-446 on every architecture) fail with ENOSYS, as a kernel without
them does, and allows everything else; --also NR refuses syscall NR too, as a strict container
seccomp profile would. Sets no_new_privs first (a filter needs it without CAP_SYS_ADMIN; a baseline pod has it).
Exits 125 when the filter cannot be installed, so a test can tell that from CMD's failure."""
import ctypes
import os
import struct
import sys

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
LD_W_ABS, JEQ_K, JGE_K, JGT_K, RET_K = 0x20, 0x15, 0x35, 0x25, 0x06
RET_ALLOW, RET_ERRNO, ENOSYS = 0x7FFF0000, 0x00050000, 38


def program(extra):
    """Landlock's 444-446 and each of `extra` fail with ENOSYS; all else is allowed."""
    prog = [(LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr is at offset 0; (code, jt, jf, k)
    for nr in extra:
        prog.append((JEQ_K, 0, 1, nr))  # equal: the next instruction returns ENOSYS
        prog.append((RET_K, 0, 0, RET_ERRNO | ENOSYS))
    prog += [
        (JGE_K, 0, 2, 444),  # nr < 444: allow
        (JGT_K, 1, 0, 446),  # nr > 446: allow
        (RET_K, 0, 0, RET_ERRNO | ENOSYS),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    return prog


def main():
    args, extra = sys.argv[1:], []
    while len(args) > 1 and args[0] == "--also":
        extra.append(int(args[1]))
        args = args[2:]
    if not args:
        sys.exit("usage: nolandlock.py [--also NR]... CMD [ARGS...]")
    prog = program(extra)
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("@HP", len(prog), ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fbuf), 0, 0) != 0:
        print("nolandlock: seccomp: %s" % os.strerror(ctypes.get_errno()), file=sys.stderr)
        sys.exit(125)
    os.execvp(args[0], args)


main()
