#!/bin/sh
# A build that crashes in Phase 3 — the scripted implementer of task 1 is
# killed halfway through its edit — and `git crucible replay --from-phase 3`
# resuming it from the Phase 3 boundary: the plan first (--dry-run, which
# changes nothing), then the replay, which restores the boundary's
# checkpoint, emits its Compression State Block and finishes the pipeline;
# verify is clean. Every role is played by the scripted agent (no network,
# no model). Runs the git-crucible that ./install.sh installed.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
bindir="$("$(dirname "$0")/install.sh" --print-bindir)"
[ -x "$bindir/git-crucible" ] || { echo "error: $bindir/git-crucible is not installed; run ./install.sh first" >&2; exit 1; }
PATH="$bindir:$PATH"
[ "$(command -v git-crucible)" = "$bindir/git-crucible" ] ||
	{ echo "error: git-crucible is not $bindir/git-crucible but $(command -v git-crucible)" >&2; exit 1; }

project="$(mktemp -d "${TMPDIR:-/tmp}/crucible-replay-demo.XXXXXX")"
cd "$project"
show() { printf '\n$ %s\n' "$*"; }
say() { show "$@"; "$@"; }
# agents writes the untracked agents config: the scripted agent playing scenario $1.
agents() { "$here/testdata/agent/config" "$1" >.git/crucible/agents.toml; }

cp -R "$here/testdata/agent/sample/." .
git init -q -b main
export GIT_COMMITTER_NAME=Demo GIT_COMMITTER_EMAIL=demo@example.com GIT_AUTHOR_NAME=Demo GIT_AUTHOR_EMAIL=demo@example.com
git add .
git commit -q -m "sample project"
say git crucible hooks install
mkdir -p .git/crucible
agents crash
printf '\n# The implementer of task 1 is killed halfway through writing greet.sh.\n'
goal="Greet by name: greet.sh takes a name"
printf '\n$ git crucible build --yes %s\n' "'$goal'"
git crucible build --yes "$goal" || echo "(exit $?, as expected)"
say git crucible dispatch list
say git crucible replay --dry-run
printf '\n# From here the scripted agent plays its happy scenario (the untracked agents config).\n'
agents happy
say git crucible replay --from-phase 3 --yes
say git crucible dispatch list
say git log --oneline
say git crucible verify
printf '\nThe demo repository is %s\n' "$project"
