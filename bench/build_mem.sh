#!/usr/bin/env bash
# Peak memory and time of `git crucible build --yes` as its plan grows: the
# default spec's four phases on the sample project (testdata/agent/sample),
# every role played by the scripted agent (testdata/agent/scripted, the
# happy scenario with a plan of N tasks, each implementer appending a line
# to one file), hooks installed, once per plan size. For each size it prints
# the peak memory of git-crucible itself and of its process tree (agents,
# git and hooks included), and the time per task against a floor measured in
# the same run: plain git committing the same change N times (add -A and
# commit, hooks installed). Then the ratio of the largest plan's peak to the
# smallest's, whose goal is flat: at most 1.25.
#
#   bench/build_mem.sh                              plans of 10 and 100 tasks,
#                                                   about a minute
#   BENCH_BUILD_TASKS="10 100 1000" bench/build_mem.sh
#                                                   1000 tasks take minutes
#   BENCH_STRICT=1    exit 1 when the goal is missed
#   BENCH_KEEP=1      keep the temporary directory (printed)
#
# Needs only go, git and coreutils (Linux).
set -euo pipefail

cd "$(dirname "$0")/.."
here=$(pwd)
sizes=${BENCH_BUILD_TASKS:-10 100}

. bench/common.sh
bench_tmp crucible-build-bench

bench_build
bench_hermetic
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# scenario N writes the happy scenario with a plan of N tasks: its own
# sections come first, so they win; the plan's section last, so that the
# agent, which reads a scenario from the top for every dispatch, reads it
# only for the few dispatches outside phase 3.
scenario() {
	cat <<'EOF'
[implementer phase=3 task=1]
write greet.sh
#!/bin/sh
# greet: say hello to the first argument, or to the world.
echo "hello, ${1:-world}"
.
append work.log
a task
.
report
status: completed
deviations: []
.

[implementer phase=3]
append work.log
a task
.
report
status: completed
deviations: []
.

[reviewer phase=3]
report
findings: {}
.

[plan-writer phase=2]
write docs/plan.md
# Plan
.
report
status: completed
deviations: []
exports:
  plan: docs/plan.md
  tasks:
EOF
	for ((i = 1; i <= $1; i++)); do
		echo "    - {id: \"$i\", title: task $i}"
	done
	printf '.\n\ninclude happy\n'
}

# project DIR makes the sample project's repository at DIR, hooks installed.
project() {
	mkdir -p "$1"
	cp -R "$here/testdata/agent/sample/." "$1"
	git -C "$1" init -q
	git -C "$1" add -A
	git -C "$1" commit -q -m "sample project"
	(cd "$1" && git-crucible hooks install >/dev/null)
}

cp testdata/agent/scenarios/happy "$tmp/happy"
echo "machine:  $(uname -sm), nproc $(nproc); $(go version | cut -d' ' -f3); $(git --version)"
echo "plans:    $sizes tasks"
echo
timer -header
first_own= last_own= first_n= last_n=
for n in $sizes; do
	scenario "$n" >"$tmp/plan-$n"
	project "$tmp/build-$n"
	mkdir -p "$tmp/build-$n/.git/crucible"
	"$here/testdata/agent/config" "$tmp/plan-$n" >"$tmp/build-$n/.git/crucible/agents.toml"
	read -r ms tree own < <(cd "$tmp/build-$n" && timer -once -own -a "git-crucible build --yes 'Greet by name: greet.sh takes a name'")
	# The floor: what git itself does for the N commits.
	project "$tmp/plain-$n"
	cat >"$tmp/plain-$n.sh" <<EOF
cd "$tmp/plain-$n" || exit 1
i=0
while [ \$i -lt $n ]; do
	i=\$((i + 1))
	echo "a task" >>work.log && git add -A && git commit -q -m "task \$i" || exit 1
done
EOF
	read -r plain_ms _ < <(timer -once -a "sh $tmp/plain-$n.sh")
	per_task=$(awk -v t="$ms" -v n="$n" 'BEGIN { printf "%.0f ms", t / n }')
	plain_per_task=$(awk -v t="$plain_ms" -v n="$n" 'BEGIN { printf "%.1f ms", t / n }')
	ratio=$(awk -v a="$ms" -v b="$plain_ms" 'BEGIN { printf "%.1fx", a / b }')
	timer -row "build: time per task ($n tasks)" "$per_task" "$plain_per_task" "$ratio" "-" "INFO (vs git add+commit per task)"
	timer -row "build: peak memory ($n tasks)" "$(mib "$own")" "-" "-" "-" \
		"INFO (git-crucible alone; $(mib "$tree") its process tree)"
	[ -n "$first_n" ] || first_n=$n first_own=$own
	last_n=$n last_own=$own
done
ratio=$(awk -v a="$last_own" -v b="$first_own" 'BEGIN { printf "%.2f", a / b }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.25 ? "PASS" : "MISS") }')
timer -row "build: peak memory ($last_n vs $first_n)" "$(mib "$last_own")" "$(mib "$first_own")" "${ratio}x" "<=1.25x" "$verdict"
if [ "${BENCH_STRICT:-0}" = 1 ] && [ "$verdict" = MISS ]; then
	exit 1
fi
