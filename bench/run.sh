#!/usr/bin/env bash
# Benchmarks git-crucible as whole processes, the way hooks and users run it,
# against plain git doing the nearest equivalent, in hermetic temporary
# repositories. Prints the machine, then one line per benchmark: our median,
# the baseline's median, their ratio, the goal on that ratio, PASS or MISS
# (INFO lines have no goal).
#
#   bench/run.sh                 full run, about 3-5 minutes
#   BENCH_QUICK=1 bench/run.sh   smoke run, about 30 s: smaller repository,
#                                fewer runs; the figures are rough
#   BENCH_STRICT=1               exit 1 when a goal is missed
#   BENCH_KEEP=1                 keep the temporary directory (printed)
#   BENCH_ONLY=verify,log       run only these rows (and the set-up they need):
#                                hotpath init status log append verify growth
#                                notes import checkpoint hooks sync gates
#
# Needs only go, git and coreutils (Linux). bench/timer runs ours and the
# baseline interleaved (A B, B A, A B, ...) so that drift hits both alike,
# and reports medians.
set -euo pipefail

cd "$(dirname "$0")/.."

# only says whether the rows of section $1 are to run (BENCH_ONLY).
only() { [ -z "${BENCH_ONLY:-}" ] || [[ ",$BENCH_ONLY," == *",$1,"* ]]; }

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
	pipelines=40      # pipelines in the repository, the big and the small one included
	events=400        # events on the big (active) pipeline
	growth_events=100 # events appended for the growth measurement
	n_fast=60         # timed runs of each side, for the ~ms commands
	n_slow=30         # for the slower ones (append, cold read)
	n_verify=5        # for a whole chain's verify
	note_runs=50      # notes added by the notes benchmark, per size
else
	pipelines=1000
	events=10000
	growth_events=1000
	n_fast=300
	n_slow=200
	n_verify=9
	note_runs=300
fi

for tool in go git; do
	command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is not on PATH" >&2; exit 1; }
done

. bench/common.sh
bench_tmp crucible-bench

t_start=$(date +%s.%N)

# --- build -------------------------------------------------------------------
bench_build
# An empty Go program: the floor of any Go binary's start (init and hooks).
mkdir -p "$tmp/noop"
printf 'package main\n\nfunc main() {}\n' >"$tmp/noop/main.go"
go build -o "$tmp/bin/noop" "$tmp/noop/main.go"
# A Go program that links os/exec, as any command that runs git must: the
# floor of the init rows (the runtime's, time's, os's and exec's own).
mkdir -p "$tmp/execfloor"
printf 'package main\n\nimport (\n\t"os"\n\t"os/exec"\n)\n\nfunc main() {\n\tif len(os.Args) > 9 {\n\t\t_ = exec.Command("git").Run()\n\t}\n}\n' >"$tmp/execfloor/main.go"
go build -o "$tmp/bin/execfloor" "$tmp/execfloor/main.go"
# The cost of one provenance note among 10 and among 10,000 (git's fan-out:
# 256 subtrees), measured in process by the notes package's benchmark, which
# makes its own hermetic repositories; the row is printed with the others.
if only notes; then
go test -run '^$' -bench 'AppendScale' -benchtime "${note_runs}x" ./notes >"$tmp/notes-bench" 2>&1 ||
	{ cat "$tmp/notes-bench" >&2; exit 1; }
fi
# `git true` runs true(1) as an external git command, like `git crucible`.
ln -s "$(type -P true)" "$tmp/bin/git-true"

# --- hermetic git ------------------------------------------------------------
bench_hermetic

# bench runs a timer line and keeps it, for BENCH_STRICT.
bench() { "$tmp/bin/timer" "$@" | tee -a "$tmp/results"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# --- machine -----------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1 || true)
echo "machine:  $(uname -sm), ${cpu:-unknown CPU}, nproc $(nproc)"
echo "go:       $(go version)"
echo "git:      $(git --version)"
echo "tmp fs:   $(stat -f -c %T "$tmp") ($tmp)"
echo "mode:     $([ "$quick" = 1 ] && echo "QUICK (smoke run; figures are rough)" || echo full)"
echo

# --- the repository: $pipelines pipelines, the active one with $events events -
#
# The big pipeline is created first, on main, with phase 1 IN_PROGRESS;
# every further event is `gate verdict 1 --verdict FAIL`, which keeps it
# there. The other pipelines are started on branch "others", each with
# --fresh (abandoning the one before), concurrently with the big pipeline's
# events, which name it with --pipeline. Both loops go through the CLI.
t0=$(now)
repo="$tmp/repo"
git init -q "$repo"
cd "$repo"
git commit -q --allow-empty -m "first"
git commit -q --allow-empty -m "second"
oid1=$(git rev-parse HEAD)
oid2=$(git rev-parse HEAD~1)

git-crucible start "big pipeline" --id bench-big >/dev/null 2>&1
git-crucible ledger begin 1 >/dev/null # event 2
git checkout -q -b others
(
	for i in $(seq 1 $((pipelines - 2))); do
		git-crucible start "goal $i" --fresh --id "bench-$i" >/dev/null 2>&1
	done
) &
starts=$!
timer -repeat $((events - 2)) -a "git-crucible gate verdict 1 --verdict FAIL --pipeline bench-big"
wait "$starts"

# A small pipeline, on its own branch: start, begin, 8 verdicts = 10 events.
git checkout -q -b small
git-crucible start "small pipeline" --id bench-small >/dev/null 2>&1
git-crucible ledger begin 1 >/dev/null
timer -repeat 8 -a "git-crucible gate verdict 1 --verdict FAIL"
git checkout -q main

seq_of() { git show "refs/crucible/pipelines/$1:state.json" | sed -n 's/^ *"seq": *\([0-9]*\).*/\1/p' | head -n 1; }
big_seq=$(seq_of bench-big)
small_seq=$(seq_of bench-small)
n_refs=$(git for-each-ref refs/crucible/pipelines/ | wc -l)
echo "setup:    $n_refs pipelines; active one on main: bench-big with ${big_seq:-?} events," \
	"bench-small ${small_seq:-?} events; $(elapsed "$t0")"
echo

# --- benchmarks --------------------------------------------------------------
: >"$tmp/results"
timer -header

if only hotpath; then
# 1. The hot path: what a hook runs on every commit, as a whole process.
# Hooks call the binary directly (their shim execs git-crucible), so that is
# the goal; through git's own dispatch it costs git's hand-off on top.
bench -name "hot-path read (ledger check)" -n "$n_fast" -goal 1.5 \
	-a "git-crucible ledger check --quiet" -b "git rev-parse HEAD"
bench -name "  info: via git crucible" -n "$n_fast" \
	-a "git crucible ledger check --quiet" -b "git rev-parse HEAD"
# The floor for any `git <external command>`: git dispatching to true(1).
bench -name "  info: floor: git true" -n "$n_fast" \
	-a "git true" -b "git rev-parse HEAD"
# The first read after the cache is gone: falls back to git cat-file.
bench -name "  info: cold (no cache file)" -n "$n_slow" \
	-pre-a "rm -rf '$repo/.git/crucible/cache'" \
	-a "git-crucible ledger check --quiet" -b "git rev-parse HEAD"
fi

if only init; then
# 1a. Package initialisation, which every command of a binary pays whatever
# it does: under GODEBUG=inittrace=1, the sum of the packages' init clock
# times per run (medians), against a Go program that only links os/exec
# (itself against an empty one's, the runtime's own); then whose packages
# it is, with their allocations, and the slowest.
bench -inittrace -name "init: a Go program with os/exec" -n "$n_fast" \
	-a "execfloor" -b "noop"
bench -inittrace -name "init: git-crucible (any command)" -n "$n_fast" \
	-a "git-crucible ledger check --quiet" -b "execfloor"
bench -inittrace -name "init: git-crucible-hook" -n "$n_fast" \
	-a "git-crucible-hook pre-commit" -b "execfloor"
fi

if only status; then
# 3. status reads the state carried in the tip commit: its cost must not
# depend on how many events came before.
bench -name "status ($big_seq vs $small_seq events)" -n "$n_fast" -goal 1.5 \
	-a "git crucible status --pipeline bench-big" -b "git crucible status --pipeline bench-small"
fi

if only log; then
# 3b. log's first page: it reads from the tip, so its cost must not depend
# on how many events came before either.
bench -name "log -n 20 ($big_seq vs $small_seq events)" -n "$n_fast" -goal 1.5 \
	-a "git crucible log -n 20 --pipeline bench-big" -b "git crucible log -n 20 --pipeline bench-small"
fi

if only append; then
# 2. One append through the CLI, as an orchestrator runs it, against one
# ref update by git. Each git run moves the ref to the other commit. An
# append writes four or five loose objects (events, state, ledger, tree,
# commit) besides the ref, and each new file costs what update-ref's one does.
bench -name "append (gate verdict)" -n "$n_slow" -goal 2.5 \
	-a "git crucible gate verdict 1 --verdict FAIL" -b "git update-ref refs/bench/x {alt:$oid1|$oid2}"
bench -name "  info: git-crucible directly" -n "$n_slow" \
	-a "git-crucible gate verdict 1 --verdict FAIL" -b "git update-ref refs/bench/x {alt:$oid1|$oid2}"
# The same append done with plain git plumbing, for scale: blobs, tree,
# commit and a compare-and-swap ref update.
cat >"$tmp/plain-append.sh" <<'SH'
set -e
tip=$(git rev-parse refs/bench/plain)
b1=$(echo "{\"seq\":$$}" | git hash-object -w --stdin)
b2=$(echo "state $$" | git hash-object -w --stdin)
t=$(printf '100644 blob %s\tevents.jsonl\n100644 blob %s\tstate.json\n' "$b1" "$b2" | git mktree)
c=$(git commit-tree "$t" -p "$tip" -m append)
git update-ref refs/bench/plain "$c" "$tip"
SH
git update-ref refs/bench/plain "$oid1"
bench -name "  info: plain git plumbing" -n "$n_slow" \
	-a "git-crucible gate verdict 1 --verdict FAIL" -b "sh $tmp/plain-append.sh"

# 2b. A dispatch start and finish as an orchestrator runs them, against two
# ref updates; both sides run in one sh.
cat >"$tmp/dispatch.sh" <<'SH'
seq=$(git crucible dispatch start --role implementer --phase 1 --pipeline bench-big) &&
git crucible dispatch finish "$seq" --status completed --pipeline bench-big >/dev/null
SH
cat >"$tmp/two-updates.sh" <<SH
git update-ref refs/bench/y $oid1 && git update-ref refs/bench/y $oid2
SH
bench -name "dispatch start+finish" -n "$n_slow" -goal 2.5 \
	-a "sh $tmp/dispatch.sh" -b "sh $tmp/two-updates.sh"
fi

# 1b. The hot path in a repository after gc: refs in packed-refs, objects packed.
git gc -q --prune=now
if only hotpath || only log; then
bench -name "  info: hot path after git gc" -n "$n_fast" \
	-a "git-crucible ledger check --quiet" -b "git rev-parse HEAD"
bench -name "  info: log -n 20 after git gc" -n "$n_fast" \
	-a "git crucible log -n 20 --pipeline bench-big" -b "git crucible log -n 20 --pipeline bench-small"
fi
if only verify; then
# 1c. verify replays the whole chain, every commit's objects read and every
# event applied: against git listing the same objects, both packed. The
# goal is about 1 s where git takes 50 ms (it was 25x and more).
bench -name "verify ($big_seq events, packed)" -n "$n_verify" -warmup 1 -goal 20 \
	-a "git crucible verify bench-big" -b "git rev-list --objects refs/crucible/pipelines/bench-big"
fi

if only growth; then
# 4. Repository growth per event: bytes under .git/objects after gc, before
# and after $growth_events more events.
objects_bytes() {
	git gc -q --prune=now
	find "$repo/.git/objects" -type f -exec wc -c {} + | awk '$2 != "total" { s += $1 } END { print s + 0 }'
}
before=$(objects_bytes)
timer -repeat "$growth_events" -a "git-crucible gate verdict 1 --verdict FAIL" >/dev/null
after=$(objects_bytes)
per_event=$(( (after - before) / growth_events ))
verdict=PASS
[ "$per_event" -le 2048 ] || verdict=MISS
bench -row "growth per event (after gc)" "$per_event B" "-" "-" "<=2048 B" \
	"$verdict ($growth_events events: $before -> $after bytes of objects)"
fi

if only notes; then
# 4b. One provenance note added among 10,000 notes against one among 10
# (bench/run.sh ran the go benchmark at the start).
note_ns() { awk -v want="$1" '$1 ~ "AppendScale/notes=" want "-" { print $3 }' "$tmp/notes-bench"; }
notes_small=$(note_ns 10) notes_big=$(note_ns 10000)
ratio=$(awk -v a="$notes_big" -v b="$notes_small" 'BEGIN { printf "%.2f", a / b }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.5 ? "PASS" : "MISS") }')
bench -row "note added (10000 vs 10 notes)" "$((notes_big / 1000)) us" "$((notes_small / 1000)) us" "${ratio}x" "<=1.5x" "$verdict (n=$note_runs)"
fi

if only import; then
# 5. Import of a 10,000-line crucible manifest (5,000 dispatches, each with
# a 4 KiB dispatch file), then status and metrics on the 5,000-dispatch
# pipeline it makes against a 10-dispatch one. Peak memory must not grow
# with the dispatch files: one is held at a time.
scratch_big="$tmp/scratch-big"
scratch_small="$tmp/scratch-small"
mkdir -p "$scratch_big" "$scratch_small"
prompt=$(head -c 4096 /dev/zero | tr '\0' 'p')
gen_scratch() { # dir id dispatches
	local d=$1 id=$2 n=$3 i
	printf '# Build Gate Ledger\nRun: 2026-11-22T10:00:00\nPipelineID: %s\nGoal: bench\nMode: feature\n\n## Phase 1: Design\nStatus: NOT_STARTED\n\n## Phase 2: Plan\nStatus: NOT_STARTED\n\n## Phase 3: Execute\nStatus: NOT_STARTED\n\n## Phase 4: Completion\nStatus: NOT_STARTED\n' "$id" >"$d/build-gate-ledger.md"
	for ((i = 1; i <= n; i++)); do
		printf '{"seq":%d,"file":"%d-impl.md","role":"implementer","phase":"3","task":%d,"status":"dispatched","input_chars":4096,"model_tier":"sonnet"}\n' $i $i $i
		printf '{"seq":%d,"file":"%d-impl.md","role":"implementer","phase":"3","task":%d,"status":"completed","duration_s":60,"output_chars":800,"model_tier":"sonnet"}\n' $i $i $i
		printf '%s' "$prompt" >"$d/$i-impl.md"
	done >"$d/manifest.jsonl"
}
n_disp=5000
[ "$quick" = 1 ] && n_disp=500
gen_scratch "$scratch_big" bench-import "$n_disp"
gen_scratch "$scratch_small" bench-import-small 5
read -r import_ms import_kib < <(timer -once -a "git-crucible import $scratch_big")
verdict=PASS
[ "$import_ms" -le 2000 ] || verdict=MISS
bench -row "import ($((n_disp * 2)) lines, $n_disp files)" "$import_ms ms" "-" "-" "<=2000 ms" \
	"$verdict (peak memory $((import_kib / 1024)) MiB)"
read -r _ import_small_kib < <(timer -once -a "git-crucible import $scratch_small")
bench -row "  info: import peak memory, 5 files" "$((import_small_kib / 1024)) MiB" "-" "-" "-" "INFO"
bench -name "status ($n_disp vs 5 dispatches)" -n "$n_fast" -goal 1.5 \
	-a "git-crucible status --pipeline bench-import" -b "git-crucible status --pipeline bench-import-small"
read -r metrics_ms _ < <(timer -once -a "git-crucible metrics --pipeline bench-import")
verdict=PASS
[ "$metrics_ms" -le 1000 ] || verdict=MISS
bench -row "metrics ($n_disp dispatches)" "$metrics_ms ms" "-" "-" "<=1000 ms" "$verdict"
fi

if only checkpoint; then
# 6. Checkpoints of a 20,000-file tree (2,000 in quick mode).
n_files=20000
[ "$quick" = 1 ] && n_files=2000
cp_repo="$tmp/cp-repo"
mkdir -p "$cp_repo" && cd "$cp_repo"
git init -q -b main
for ((d = 0; d < n_files / 100; d++)); do
	mkdir -p "dir$d"
	for ((f = 0; f < 100; f++)); do echo "file $d $f" >"dir$d/f$f.txt"; done
done
git add -A && git commit -q -m tree
# First checkpoint against adding everything into a fresh index plus
# write-tree. Both write every blob: git into an empty object directory
# (the tree is committed, so its own store already has them), the
# checkpoint into the shadow's.
cat >"$tmp/fresh-add.sh" <<SH
rm -rf "$tmp/fresh-index" "$tmp/fresh-objects" && mkdir "$tmp/fresh-objects" &&
GIT_OBJECT_DIRECTORY="$tmp/fresh-objects" GIT_INDEX_FILE="$tmp/fresh-index" git add -A &&
GIT_OBJECT_DIRECTORY="$tmp/fresh-objects" GIT_INDEX_FILE="$tmp/fresh-index" git write-tree >/dev/null
SH
cat >"$tmp/first-cp.sh" <<SH
rm -rf "$cp_repo/.git/crucible/shadow" && git-crucible checkpoint create first >/dev/null 2>&1
SH
bench -name "checkpoint: first ($n_files files)" -n 5 -warmup 1 -goal 1.5 -a "sh $tmp/first-cp.sh" -b "sh $tmp/fresh-add.sh"
# The last run above left the "first" checkpoint for the restores below.
# A checkpoint after 10 files changed against git status.
cat >"$tmp/ten-changes.sh" <<SH
for i in 0 1 2 3 4 5 6 7 8 9; do echo "\$\$-\$i" >"$cp_repo/dir\$i/f1.txt"; done
SH
bench -name "checkpoint: after 10 changes" -n 20 -warmup 2 -goal 2 -pre-a "sh $tmp/ten-changes.sh" \
	-a "git-crucible checkpoint create ten" -b "git status --porcelain"
# Restoring 10 changed files against git checkout -f.
bench -name "checkpoint: restore 10 files" -n 10 -warmup 1 -goal 2 -pre-a "sh $tmp/ten-changes.sh" -pre-b "sh $tmp/ten-changes.sh" \
	-a "git-crucible checkpoint restore first --yes --keep-head" -b "git checkout -f -q"
cd "$repo"
fi

if only hooks; then
# 7. Hooks, in the repository of section 1 (bench-big, 10,000 events, active
# on main), each against the floor of any hook: the same hook doing nothing
# (`exit 0`). The pre-commit hook as git runs it for a commit that opens an
# editor: the installed shim, which execs git-crucible-hook. Then whole
# commits with every hook installed against the same commit with hooks that
# exit 0, inside the pipeline (trailers written, a provenance note queued)
# and outside any (branch "plain"). The info rows put a hook that execs an
# empty Go program in our place: the floor of any hook binary written in
# Go. A commit with no editor (-m, as here) starts ours once, commit-msg
# making pre-commit's check and post-commit queueing the note in sh, hence
# the second floor: that program for commit-msg alone.
git checkout -q main
git-crucible hooks install >/dev/null
empty_hooks="$tmp/empty-hooks" go_hooks="$tmp/go-hooks" go1_hooks="$tmp/go1-hooks"
mkdir -p "$empty_hooks" "$go_hooks" "$go1_hooks"
for h in pre-commit commit-msg post-commit post-rewrite pre-push; do
	printf '#!/bin/sh\nexit 0\n' >"$empty_hooks/$h"
	printf '#!/bin/sh\nexec noop "$@"\n' >"$go_hooks/$h"
	chmod +x "$empty_hooks/$h" "$go_hooks/$h"
done
cp "$empty_hooks"/* "$go1_hooks" && cp "$go_hooks/commit-msg" "$go1_hooks"
bench -name "pre-commit hook (shim, in pipeline)" -n "$n_fast" -goal 1.3 \
	-a "$repo/.git/hooks/pre-commit" -b "$empty_hooks/pre-commit"
bench -name "  info: floor: shim of an empty Go program" -n "$n_fast" \
	-a "$go_hooks/pre-commit" -b "$empty_hooks/pre-commit"
bench -name "  info: ours vs that floor" -n "$n_fast" \
	-a "$repo/.git/hooks/pre-commit" -b "$go_hooks/pre-commit"
bench -name "git commit, hooks vs exit 0 (in pipeline)" -n "$n_slow" -goal 1.5 \
	-a "git commit -q --allow-empty -m bench" -b "git -c core.hooksPath=$empty_hooks commit -q --allow-empty -m bench"
bench -name "  info: floor: hooks of an empty Go program" -n "$n_slow" \
	-a "git -c core.hooksPath=$go_hooks commit -q --allow-empty -m bench" -b "git -c core.hooksPath=$empty_hooks commit -q --allow-empty -m bench"
bench -name "  info: floor: that program once" -n "$n_slow" \
	-a "git -c core.hooksPath=$go1_hooks commit -q --allow-empty -m bench" -b "git -c core.hooksPath=$empty_hooks commit -q --allow-empty -m bench"
bench -name "  info: ours vs that floor" -n "$n_slow" \
	-a "git commit -q --allow-empty -m bench" -b "git -c core.hooksPath=$go1_hooks commit -q --allow-empty -m bench"
git checkout -q -b plain
bench -name "git commit, hooks vs exit 0 (no pipeline)" -n "$n_slow" -goal 1.5 \
	-a "git commit -q --allow-empty -m bench" -b "git -c core.hooksPath=$empty_hooks commit -q --allow-empty -m bench"
git checkout -q main
git-crucible hooks uninstall >/dev/null
fi

if only sync; then
# 8. sync of 100 pipelines (10 events each) to a bare remote, against a
# plain git push of the same refs: first to an empty remote, then when
# everything is up to date.
sync_repo="$tmp/sync-repo"
git init -q "$sync_repo" && cd "$sync_repo"
git commit -q --allow-empty -m base
for i in $(seq 1 100); do
	git-crucible start "sync $i" --fresh --id "sync-$i" >/dev/null 2>&1
	for j in 1 2 3 4 5 6 7 8 9; do git-crucible decide --type t --choice "c$j" >/dev/null; done
done
git remote add ours "$tmp/ours.git"
git remote add plain "$tmp/plain.git"
push_plain="git push -q --atomic plain refs/crucible/pipelines/*:refs/crucible/pipelines/*"
cat >"$tmp/empty-ours.sh" <<SH
rm -rf "$tmp/ours.git" && git init -q --bare "$tmp/ours.git" &&
git for-each-ref --format='delete %(refname)' refs/crucible-remote | git update-ref --stdin
SH
cat >"$tmp/empty-plain.sh" <<SH
rm -rf "$tmp/plain.git" && git init -q --bare "$tmp/plain.git"
SH
bench -name "sync 100 pipelines, empty remote" -n 10 -pre-a "sh $tmp/empty-ours.sh" -pre-b "sh $tmp/empty-plain.sh" \
	-a "git-crucible sync ours" -b "$push_plain"
bench -name "sync 100 pipelines, up to date" -n 20 \
	-a "git-crucible sync ours" -b "$push_plain"
cd "$repo"
fi

if only gates; then
# 9. verify-commits on a 50-commit stack against plain git rebase --exec
# on the same stack, each run from an empty cache unless said otherwise:
# with a gate that costs nothing (the per-commit overhead of ours against
# rebase --exec's own), with a 200 ms gate at -j 2 against serial rebase
# --exec, and a rerun with every tree cached against a first run.
gates_repo="$tmp/gates-repo"
git init -q "$gates_repo" && cd "$gates_repo"
git commit -q --allow-empty -m base && git tag base
for i in $(seq 1 50); do echo "$i" >"f$i" && git add "f$i" && git commit -q -m "commit $i"; done
cat >"$tmp/forget.sh" <<SH
rm -rf "$gates_repo/.git/crucible/gates/index" "$gates_repo/.git/crucible/gates/pending" &&
git -C "$gates_repo" update-ref -d refs/notes/crucible/gates
SH
n_gates=15 n_slow_gates=3
[ "$quick" = 1 ] && n_gates=5 n_slow_gates=1
bench -name "verify-commits, no-op gate, 50" -n "$n_gates" -warmup 1 -goal 1.3 -pre-a "sh $tmp/forget.sh" \
	-a "git-crucible verify-commits --exec 'test -e .git' base" -b "git rebase -q --exec 'test -e .git' base"
bench -name "verify-commits -j 2, 200 ms gate, 50" -n "$n_slow_gates" -warmup 0 -goal 0.625 -pre-a "sh $tmp/forget.sh" \
	-a "git-crucible verify-commits -j 2 --exec 'sleep 0.2' base" -b "git rebase -q --exec 'sleep 0.2' base"
git-crucible verify-commits --exec 'sleep 0.2' base >/dev/null
bench -name "verify-commits cached vs first run" -n "$n_slow_gates" -warmup 0 -goal 0.05 -pre-b "sh $tmp/forget.sh" \
	-a "git-crucible verify-commits --exec 'sleep 0.2' base" -b "git-crucible verify-commits --exec 'sleep 0.2' base"
cd "$repo"
fi

echo
misses=$(grep -c ' MISS ' "$tmp/results" || true)
goals=$(grep -c -E ' (PASS|MISS) ' "$tmp/results" || true)
echo "goals met: $((goals - misses)) of $goals; total time $(elapsed "$t_start")"
if [ "${BENCH_STRICT:-0}" = 1 ] && [ "$misses" -gt 0 ]; then
	exit 1
fi
