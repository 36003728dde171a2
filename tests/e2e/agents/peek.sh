#!/bin/sh
# SPDX-License-Identifier: MIT
# Tries to reach another run: lists and reads $OTHER (a workspace or a run directory), writes
# into it, connects to $OTHER_SOCK (its mock socket) when set, and signals the pid in
# ./other.pid (its agent, as the host numbers it) when the test wrote one; one event line each.
# Leaves ./mine in its own workspace first so the other side has something to look for. Waits
# for ./go (at most $1 seconds, default 0) before peeking.
echo "secret of $PROCTOR_WORKSPACE" >mine
echo "$$" >ready.tmp && mv ready.tmp ready
i=0
while [ ! -e go ] && [ "$i" -lt $(( ${1:-0} * 10 )) ]; do
	sleep 0.1
	i=$((i + 1))
done
errno_of() {
	case $1 in
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*"No such file or directory"*) echo ENOENT ;;
	*"No such process"*) echo ESRCH ;;
	*"Connection refused"*) echo ECONNREFUSED ;;
	*) echo "failed" ;;
	esac
}
peek() { # peek NAME CMD...
	name=$1
	shift
	if err=$("$@" 2>&1 >/dev/null); then
		printf '{"attempt":"%s","blocked":false,"how":"it worked"}\n' "$name"
	else
		printf '{"attempt":"%s","blocked":true,"how":"%s"}\n' "$name" "$(errno_of "$err")"
	fi
}
peek list-other ls "$OTHER"
peek read-other cat "$OTHER/mine"
peek write-other sh -c ': >>"$1"/planted' sh "$OTHER"
if [ -n "${OTHER_SOCK:-}" ]; then
	peek connect-other python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$OTHER_SOCK"
fi
if [ -s other.pid ]; then
	peek signal-other kill -TERM "$(cat other.pid)"
fi
exit 0
