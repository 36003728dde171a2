#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the real agent CLIs proctor is tested against (Claude Code and Codex), pinned by
# scripts/agents/package-lock.json (versions and tarball hashes), into a cache directory, and
# print the absolute paths of their native linux-x64 binaries (ELF files, not the node wrappers):
#
#   PROCTOR_CLAUDE=/opt/proctor-agents/node_modules/@anthropic-ai/claude-code-linux-x64/claude
#   PROCTOR_CODEX=/opt/proctor-agents/node_modules/@openai/codex-linux-x64/vendor/.../bin/codex
#
# so `eval "$(scripts/agents.sh)"` sets both. Idempotent: when the pinned versions are there it
# installs nothing. It does not own running the CLIs (tests/agents/ does) nor any config for them.
set -eu

CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
CLAUDE_REL=node_modules/@anthropic-ai/claude-code-linux-x64/claude
CODEX_REL=node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex

usage() {
	cat <<USAGE
usage: scripts/agents.sh [--check] [--help]

Install @anthropic-ai/claude-code $CLAUDE_VERSION and @openai/codex $CODEX_VERSION from the npm
registry into \$PROCTOR_AGENTS_DIR (default /opt/proctor-agents), then print
PROCTOR_CLAUDE=PATH and PROCTOR_CODEX=PATH (the native binaries). Does nothing when the pinned
versions are installed. Installs nodejs and npm with apt-get when missing (needs root).

  --check   install nothing: print the paths and exit 0 when installed, else exit 1
  --help    this text

Exit status: 0 ok, 1 not installed (--check) or install failed, 2 usage error.
USAGE
}

# shellcheck disable=SC2034 # read by npm-pinned.sh
NAME=agents
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/npm-pinned.sh
. "$HERE/npm-pinned.sh"
pinned_args "$@"
pinned_dir "${PROCTOR_AGENTS_DIR:-/opt/proctor-agents}" PROCTOR_AGENTS_DIR

# pkg_version DIR NAME: the version in an installed package.json ("" when absent).
pkg_version() {
	f="$1/node_modules/$2/package.json"
	[ -r "$f" ] || return 0
	sed -n 's/^  "version": "\([^"]*\)",*$/\1/p' "$f" | head -n 1
}

# is_elf FILE: true when FILE is an executable ELF file (the native binary, not a script).
is_elf() {
	[ -f "$1" ] && [ -x "$1" ] || return 1
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]
}

installed() {
	[ "$(pkg_version "$1" @anthropic-ai/claude-code)" = "$CLAUDE_VERSION" ] &&
	[ "$(pkg_version "$1" @anthropic-ai/claude-code-linux-x64)" = "$CLAUDE_VERSION" ] &&
	[ "$(pkg_version "$1" @openai/codex)" = "$CODEX_VERSION" ] &&
	is_elf "$1/$CLAUDE_REL" && is_elf "$1/$CODEX_REL"
}

print_paths() {
	echo "PROCTOR_CLAUDE=$DIR/$CLAUDE_REL"
	echo "PROCTOR_CODEX=$DIR/$CODEX_REL"
}

if installed "$DIR"; then
	print_paths
	exit 0
fi
if [ "$check" -eq 1 ]; then
	echo "agents: not installed in $DIR (run scripts/agents.sh as root)" >&2
	exit 1
fi

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || die "only linux x86_64 is supported, not $(uname -s)-$(uname -m)"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] || die "nodejs and npm are missing; run as root (apt-get install nodejs npm)"
	echo "agents: installing nodejs and npm" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -q >&2
	apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends nodejs npm >&2
fi

# --ignore-scripts: Claude Code's postinstall only copies the native binary we use directly.
verify() {
	"$1/$CLAUDE_REL" --version | grep -q "^$CLAUDE_VERSION " || die "$CLAUDE_REL does not run"
	"$1/$CODEX_REL" --version | grep -q " $CODEX_VERSION\$" || die "$CODEX_REL does not run"
}
pinned_install "$HERE/agents" "installing claude-code $CLAUDE_VERSION and codex $CODEX_VERSION into $DIR"
print_paths
