#!/bin/sh
# Builds git-crucible and installs it where git finds it, as `git crucible`,
# with git-crucible-hook beside it: what the installed git hooks run.
#   ./install.sh                  -> $GOBIN, else $(go env GOPATH)/bin
#   PREFIX=/usr/local ./install.sh -> $PREFIX/bin
# Safe to run again: it replaces each binary atomically, the hook binary
# first (hooks that an older git-crucible wrote run git-crucible itself).
set -eu
cd "$(dirname "$0")"

command -v go >/dev/null 2>&1 || { echo "error: go is not on PATH (https://go.dev/dl/)" >&2; exit 1; }
command -v git >/dev/null 2>&1 || { echo "error: git is not on PATH" >&2; exit 1; }

if [ -n "${PREFIX:-}" ]; then
	bindir="$PREFIX/bin"
elif [ -n "${GOBIN:-}" ]; then
	bindir="$GOBIN"
else
	bindir="$(go env GOPATH)/bin"
fi
mkdir -p "$bindir"

# urfave_cli_no_docs leaves out the man-page renderer, whose start-up cost
# every command would pay.
hook_tmp="$bindir/.git-crucible-hook.tmp.$$"
tmp="$bindir/.git-crucible.tmp.$$"
trap 'rm -f "$hook_tmp" "$tmp"' EXIT
go build -trimpath -o "$hook_tmp" ./cmd/git-crucible-hook
go build -trimpath -tags urfave_cli_no_docs,urfave_cli_no_suggest -o "$tmp" ./cmd/git-crucible
mv -f "$hook_tmp" "$bindir/git-crucible-hook"
mv -f "$tmp" "$bindir/git-crucible"
trap - EXIT

echo "installed $bindir/git-crucible and $bindir/git-crucible-hook"
case ":$PATH:" in
*":$bindir:"*) ;;
*) echo "hint: $bindir is not on your PATH; add it so that 'git crucible' works:" >&2
   echo "hint:   export PATH=\"$bindir:\$PATH\"" >&2 ;;
esac
