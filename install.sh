#!/bin/sh
# Builds git-crucible and installs it where git finds it, as `git crucible`,
# with git-crucible-hook beside it: what the installed git hooks run; and
# its manual pages where man finds them for that bin directory.
#   ./install.sh                  -> $GOBIN, else $(go env GOPATH)/bin
#   PREFIX=/usr/local ./install.sh -> $PREFIX/bin
#   ./install.sh --print-bindir   -> prints that directory, installs nothing
# The pages go to <prefix>/share/man/man1, <prefix> being the bin
# directory's parent: man looks there for every <prefix>/bin on PATH.
# Safe to run again: it replaces each binary and page atomically, the hook
# binary first (hooks that an older git-crucible wrote run git-crucible
# itself), and removes the pages it installed for commands that are gone.
set -eu
cd "$(dirname "$0")"

case "${1:-}" in
"") ;;
--print-bindir) ;;
*) echo "usage: ./install.sh [--print-bindir]" >&2; exit 129 ;;
esac

command -v go >/dev/null 2>&1 || { echo "error: go is not on PATH (https://go.dev/dl/)" >&2; exit 1; }

if [ -n "${PREFIX:-}" ]; then
	bindir="$PREFIX/bin"
elif [ -n "${GOBIN:-}" ]; then
	bindir="$GOBIN"
else
	bindir="$(go env GOPATH)/bin"
fi
if [ "${1:-}" = --print-bindir ]; then
	printf '%s\n' "$bindir"
	exit 0
fi

command -v git >/dev/null 2>&1 || { echo "error: git is not on PATH" >&2; exit 1; }
mkdir -p "$bindir"
mandir="$(dirname "$bindir")/share/man/man1"
mkdir -p "$mandir"

# urfave_cli_no_docs leaves out the man-page renderer, whose start-up cost
# every command would pay (docs/man holds the pages, rendered by the tests).
# GOEXPERIMENT=nogreenteagc keeps Go 1.25's garbage collector: Go 1.26's
# (Green Tea) writes a new span's mark bits at its end when it makes it, a
# page fault more for every size class a process allocates in: 23-38 of a
# command's 350, 3-4% of ledger check and of a hook. Our commands are
# short-lived and their heaps small (verify of a 900-event chain, nine
# collections: 0.98x the CPU). A Go that no longer knows the opt-out builds
# with its own collector.
goexperiment="${GOEXPERIMENT:+$GOEXPERIMENT,}nogreenteagc"
if GOEXPERIMENT="$goexperiment" go env GOEXPERIMENT >/dev/null 2>&1; then
	export GOEXPERIMENT="$goexperiment"
fi
hook_tmp="$bindir/.git-crucible-hook.tmp.$$"
tmp="$bindir/.git-crucible.tmp.$$"
page_tmp="$mandir/.git-crucible.1.tmp.$$"
trap 'rm -f "$hook_tmp" "$tmp" "$page_tmp"' EXIT
go build -trimpath -o "$hook_tmp" ./cmd/git-crucible-hook
# -buildvcs=auto: the commit built from is what git crucible --version says.
go build -trimpath -buildvcs=auto -tags urfave_cli_no_docs,urfave_cli_no_suggest -o "$tmp" ./cmd/git-crucible
mv -f "$hook_tmp" "$bindir/git-crucible-hook"
mv -f "$tmp" "$bindir/git-crucible"

pages=0
for page in docs/man/git-crucible*.1; do
	cp "$page" "$page_tmp"
	chmod 644 "$page_tmp"
	mv -f "$page_tmp" "$mandir/$(basename "$page")"
	pages=$((pages + 1))
done
# A page of ours (its title line names our manual) for a command that no
# longer exists.
for page in "$mandir"/git-crucible*.1; do
	if [ -f "$page" ] && [ ! -f "docs/man/$(basename "$page")" ] &&
		head -n 1 "$page" | grep -q '"Git Crucible Manual"$'; then
		rm -f "$page"
	fi
done
trap - EXIT

echo "installed $bindir/git-crucible and $bindir/git-crucible-hook"
echo "installed $pages manual pages in $mandir"
case ":$PATH:" in
*":$bindir:"*) ;;
*) echo "hint: $bindir is not on your PATH; add it so that 'git crucible' works:" >&2
   echo "hint:   export PATH=\"$bindir:\$PATH\"" >&2 ;;
esac
if command -v man >/dev/null 2>&1 &&
	! PATH="$bindir:$PATH" man -w git-crucible >/dev/null 2>&1; then
	echo "hint: man does not find git-crucible(1) there, so 'git crucible --help' fails;" >&2
	case "${MANPATH:-:}" in
	*:) echo "hint: add the pages to man's search path:" >&2 ;;
	*) echo "hint: your MANPATH replaces man's search beside PATH; end it with a colon, or add the pages:" >&2 ;;
	esac
	echo "hint:   export MANPATH=\"$(dirname "$mandir")\${MANPATH:+:\$MANPATH}:\"" >&2
	echo "hint: 'git crucible help <command>' prints the built-in help without man" >&2
fi
