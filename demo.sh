#!/bin/sh
# Part one walks a pipeline through all four phases by hand in a throw-away
# repository: a blocked start, a quality-gate verdict, a skipped gate with its
# separate acknowledgement, a commit the pre-commit hook refuses and one it lets
# through with its provenance, a sync to a bare remote, and a clean verify.
# Part two runs a whole pipeline with `git crucible build` on a small sample
# project, every role played by the scripted agent (no network, no model).
# Part three runs a task DAG of three levels with `git crucible run`: its
# agents in parallel in their own worktrees, a commit per task, a critique
# per level.
# Runs the git-crucible that ./install.sh installed (same PREFIX and GOBIN),
# whatever else is on PATH. Every command it shows can be pasted into a shell.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
bindir="$("$(dirname "$0")/install.sh" --print-bindir)"
[ -x "$bindir/git-crucible" ] || { echo "error: $bindir/git-crucible is not installed; run ./install.sh first" >&2; exit 1; }
PATH="$bindir:$PATH"
[ "$(command -v git-crucible)" = "$bindir/git-crucible" ] ||
	{ echo "error: git-crucible is not $bindir/git-crucible but $(command -v git-crucible)" >&2; exit 1; }
# git runs git-<cmd> from its own exec path before PATH.
shadow="$(git --exec-path)/git-crucible"
[ ! -e "$shadow" ] || { echo "error: git would run $shadow instead of $bindir/git-crucible" >&2; exit 1; }

repo="$(mktemp -d "${TMPDIR:-/tmp}/crucible-demo.XXXXXX")"
cd "$repo"
# shquote prints its arguments as a shell reads them back: quoted when
# they hold anything but plain characters.
shquote() {
	out=
	for arg; do
		case "$arg" in
		"" | *[!A-Za-z0-9_./:=@%+,-]*) arg="'$(printf '%s' "$arg" | sed "s/'/'\\\\''/g")'" ;;
		esac
		out="$out${out:+ }$arg"
	done
	printf '%s' "$out"
}
show() { printf '\n$ %s\n' "$(shquote "$@")"; }
say() { show "$@"; "$@"; }
try() { show "$@"; "$@" || echo "(exit $?, as expected)"; }

git init -q -b main
git -c user.name=Demo -c user.email=demo@example.com commit -q --allow-empty -m "initial commit"
export GIT_COMMITTER_NAME=Demo GIT_COMMITTER_EMAIL=demo@example.com GIT_AUTHOR_NAME=Demo GIT_AUTHOR_EMAIL=demo@example.com
say git crucible init
say git crucible hooks install

goal="Add get_user_email(user_id) to src/users.py"
show git crucible start "$goal"
id="$(git crucible start "$goal")"
echo "$id"
try git crucible ledger begin plan
say git crucible ledger begin design
say git crucible gate verdict design --verdict PASS --rounds 2
say git crucible ledger pass design --artifact docs/design.md
say git crucible ledger skip plan --reason "one-function change; user asked to skip"
try git crucible ledger begin execute
echo 'def get_user_email(user_id): ...' >users.py
git add users.py
try git commit -q -m "Add get_user_email"
say git crucible ledger ack plan --confirm "SKIP GATE"
say git crucible ledger begin execute
say git commit -q -m "Add get_user_email"
say git log -1 --format=%B
say git crucible hooks flush # the note post-commit queued; any git crucible command writes it
say git notes --ref=crucible/provenance show HEAD
say git crucible ledger complete execute --tasks 3/3
say git crucible ledger begin completion
say git crucible gate verdict completion --verdict PASS
say git crucible ledger pass completion
say git crucible status
say git crucible log -n 4
git init -q --bare "$repo.remote.git"
git remote add origin "$repo.remote.git"
say git crucible sync origin
say git crucible verify --range main
say git crucible verify
say git show "refs/crucible/pipelines/$id:ledger.md"

printf '\n=== Part two: git crucible build, with the scripted agent playing every role\n'
project="$repo.build"
mkdir "$project"
cp -R "$here/testdata/agent/sample/." "$project"
cd "$project"
git init -q -b main
git add .
git commit -q -m "sample project"
say git crucible hooks install
# The agents: the untracked per-repository config needs no trust.
mkdir -p .git/crucible
"$here/testdata/agent/config" happy >.git/crucible/agents.toml
say cat .git/crucible/agents.toml
say git crucible build --yes "Greet by name: greet.sh takes a name"
say git crucible status
say git crucible metrics
say git log --format='%h %s%n%(trailers:only,unfold)'
say git crucible verify
build_id="$(git crucible list --json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)"
say git show "refs/crucible/pipelines/$build_id:ledger.md"

printf '\n=== Part three: git crucible run, a task DAG with the scripted agent\n'
dagproject="$repo.run"
mkdir "$dagproject"
cp -R "$here/testdata/agent/sample/." "$dagproject"
mkdir -p "$dagproject/dispatch/greet"
cp "$here/testdata/agent/sample-dag/dispatch.yaml" "$dagproject/dispatch/greet/"
cd "$dagproject"
git init -q -b main
git add .
git commit -q -m "sample project and its task run"
mkdir -p .git/crucible
"$here/testdata/agent/config" dag >.git/crucible/agents.toml
say git crucible run --dry-run
say git crucible run greet
say git log --format='%h %s' main
say git crucible status
say git crucible verify

printf '\nThe demo repositories are %s (its remote: %s.remote.git), %s and %s\n' "$repo" "$repo" "$project" "$dagproject"

printf '\n=== The report of the build: one HTML file, open it in a browser\n'
cd "$project"
say git crucible report "$build_id"
