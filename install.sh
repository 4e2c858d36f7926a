#!/bin/sh
# Builds git-crucible and installs it where git finds it, as `git crucible`.
#   ./install.sh                  -> $GOBIN, else $(go env GOPATH)/bin
#   PREFIX=/usr/local ./install.sh -> $PREFIX/bin
# Safe to run again: it replaces the binary atomically.
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
# every command (hooks included) would pay.
tmp="$bindir/.git-crucible.tmp.$$"
trap 'rm -f "$tmp"' EXIT
go build -trimpath -tags urfave_cli_no_docs,urfave_cli_no_suggest -o "$tmp" ./cmd/git-crucible
mv -f "$tmp" "$bindir/git-crucible"
trap - EXIT

echo "installed $bindir/git-crucible"
case ":$PATH:" in
*":$bindir:"*) ;;
*) echo "hint: $bindir is not on your PATH; add it so that 'git crucible' works:" >&2
   echo "hint:   export PATH=\"$bindir:\$PATH\"" >&2 ;;
esac
