# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# Sourced (not run) by scripts/agents.sh and scripts/k8s-schema.sh: what installing pinned npm
# packages into a cache directory takes, once. The sourcing script sets NAME (the prefix of its
# messages) and HERE (its directory), and defines usage() and installed DIR (true when DIR holds
# the pinned tree).

die() {
	echo "$NAME: $*" >&2
	exit 1
}

# pinned_args "$@": --check sets check=1, --help prints usage(); anything else is exit 2.
# shellcheck disable=SC2034 # check is the sourcing script's
pinned_args() {
	check=0
	for a in "$@"; do
		case "$a" in
		--check) check=1 ;;
		--help | -h)
			usage
			exit 0
			;;
		*)
			echo "$NAME: unknown argument: $a" >&2
			usage >&2
			exit 2
			;;
		esac
	done
}

# pinned_dir VALUE VARIABLE: DIR=VALUE, which must be absolute (VARIABLE names it in the error).
pinned_dir() {
	DIR=$1
	case "$DIR" in /*) ;; *) die "$2 must be absolute: $DIR" ;; esac
}

# pinned_install LOCKDIR MESSAGE [NPM-CI-ARGS...]: `npm ci` of LOCKDIR's package.json and
# package-lock.json (versions and tarball hashes pinned there) into a new directory beside $DIR,
# checked with installed() and verify() (the sourcing script's, given the new tree; define it as
# true when there is nothing more to check), readable by every uid, then swapped in for $DIR:
# a failed install never leaves a half tree at $DIR.
pinned_install() {
	src=$1 msg=$2
	shift 2
	umask 022
	mkdir -p "$(dirname "$DIR")"
	tmp=$(mktemp -d "$DIR.new.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	cp "$src/package.json" "$src/package-lock.json" "$tmp/"
	echo "$NAME: $msg" >&2
	(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
		--cache "$tmp/.npm-cache" "$@" >&2) || die "npm ci failed in $tmp (no registry?)"
	rm -rf "$tmp/.npm-cache"
	installed "$tmp" || die "the tree installed in $tmp lacks the pinned versions"
	verify "$tmp"
	# The agent runs as another uid (2000): everything readable, directories and binaries executable.
	chmod -R u+rwX,go+rX,go-w "$tmp"
	chmod 755 "$tmp"
	if [ -e "$DIR" ]; then
		rm -rf "$DIR.old"
		mv "$DIR" "$DIR.old"
	fi
	mv "$tmp" "$DIR"
	trap - EXIT
	rm -rf "$DIR.old"
}
