#!/usr/bin/env bash
# `git crucible run` of a task DAG, as a whole process: a manifest of 8
# independent tasks at max-parallel 4, each task's agent (a shell script
# writing its file and its report) in its own pooled worktree, each task a
# commit on the branch, in hermetic temporary repositories (a fresh copy
# before every run, untimed). Two rows, each against a yardstick timed in
# the same run, interleaved (bench/timer):
#
#   - every agent sleeps 1 s: the run against ONE agent's run (the same
#     script, started by hand). Two waves of 4 make 2x; the goal is < 2.6x.
#     The level's critique is off for the goals (they are the scheduling's);
#     an info row shows the run with it, a third wave.
#   - the agent does its work at once: the run against plain git doing the
#     same 8 commits (write the file, git add -A, git commit), and the
#     difference per task (fixed costs included: info); then the same with
#     32 tasks, and what each task adds over git's own (32 vs 8, the fixed
#     costs cancelling out), whose goal is at most 30 ms.
#
#   bench/run_dag.sh                about a minute
#   BENCH_QUICK=1 bench/run_dag.sh  fewer runs, about 30 s; rough figures
#   BENCH_STRICT=1                  exit 1 when a goal is missed
#   BENCH_KEEP=1                    keep the temporary directory (printed)
#
# Needs only go, git and coreutils (Linux).
set -euo pipefail

cd "$(dirname "$0")/.."
tasks=8
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	n_sleep=3 n_instant=5
else
	n_sleep=7 n_instant=15
fi

. bench/common.sh
bench_tmp crucible-run-bench

bench_build
bench_hermetic

# The agent: agent.sh SECONDS sleeps, then writes its task's file and a
# report saying it did; as a level's critique, it accepts.
cat >"$tmp/agent.sh" <<'EOF'
[ -t 0 ] || cat >/dev/null
cd "$CRUCIBLE_WORKDIR" || exit 1
[ "$1" = 0 ] || sleep "$1"
if [ "$CRUCIBLE_ROLE" = critique ]; then
	printf 'verdict: accepted\nissues: []\n' >"$CRUCIBLE_OUTPUT"
	exit 0
fi
echo "$CRUCIBLE_TASK" >"$CRUCIBLE_TASK.txt"
printf 'status: completed\nfiles-modified: [%s.txt]\nverification-summary: none\ndeviations: []\n' "$CRUCIBLE_TASK" >"$CRUCIBLE_OUTPUT"
EOF

# template NAME SECONDS [CRITIQUE] makes $tmp/NAME.tmpl: a repository whose
# manifest dispatch/bench has $tasks independent tasks, agent.sh SECONDS
# playing every role. The goals are the scheduling's: the level's critique
# (a third wave of a sleeping agent) is off unless CRITIQUE is "on".
# fresh NAME copies it to $tmp/NAME, untimed.
template() {
	local dir="$tmp/$1.tmpl"
	git init -q "$dir"
	mkdir -p "$dir/dispatch/bench" "$dir/.git/crucible"
	{
		local n=${TASKS:-$tasks}
		echo "goal: $n independent tasks"
		echo "max-parallel: 4"
		[ "${3:-off}" = on ] || echo "critique: {enabled: false}"
		echo "tasks:"
		for ((i = 1; i <= n; i++)); do
			echo "  - {id: t$i, type: feature, agent: general, files: [t$i.txt]}"
		done
	} >"$dir/dispatch/bench/dispatch.yaml"
	git -C "$dir" add -A
	git -C "$dir" commit -q -m base
	printf '[agents.bench]\nkind = "command"\ncommand = ["sh", "%s", "%s"]\n[roles]\ndefault = "bench"\n' \
		"$tmp/agent.sh" "$2" >"$dir/.git/crucible/agents.toml"
}
cat >"$tmp/fresh.sh" <<EOF
rm -rf "$tmp/\$1" && cp -R "$tmp/\$1.tmpl" "$tmp/\$1"
EOF
template sleepy 1
template instant 0
template critiqued 1 on
TASKS=32 template instant32 0
# The yardsticks: one agent by hand; plain git committing what the agents write.
mkdir -p "$tmp/one"
git init -q "$tmp/plain.tmpl"
git -C "$tmp/plain.tmpl" commit -q --allow-empty -m base
cat >"$tmp/plain.sh" <<EOF
cd "$tmp/plain" || exit 1
for i in \$(seq \${1:-$tasks}); do
	echo t\$i >t\$i.txt && git add -A && git commit -q -m "task t\$i" || exit 1
done
EOF

echo "machine:  $(uname -sm), nproc $(nproc); $(go version | cut -d' ' -f3); $(git --version)"
echo
timer -header
timer -name "run: $tasks tasks x 1 s, 4 at once" -n "$n_sleep" -warmup 1 -goal 2.6 \
	-pre-a "sh $tmp/fresh.sh sleepy" -a "git -C $tmp/sleepy crucible run bench" \
	-b "env CRUCIBLE_WORKDIR=$tmp/one CRUCIBLE_TASK=t1 CRUCIBLE_OUTPUT=$tmp/one/output.yaml sh $tmp/agent.sh 1" |
	tee "$tmp/results"
timer -name "  ... with the level's critique (one more agent)" -n "$n_sleep" -warmup 1 \
	-pre-a "sh $tmp/fresh.sh critiqued" -a "git -C $tmp/critiqued crucible run bench" \
	-b "env CRUCIBLE_WORKDIR=$tmp/one CRUCIBLE_TASK=t1 CRUCIBLE_OUTPUT=$tmp/one/output.yaml sh $tmp/agent.sh 1"
timer -name "run: $tasks instant tasks" -n "$n_instant" -warmup 2 \
	-pre-a "sh $tmp/fresh.sh instant" -a "git -C $tmp/instant crucible run bench" \
	-pre-b "sh $tmp/fresh.sh plain" -b "sh $tmp/plain.sh" | tee "$tmp/instant.row"
# The medians the row printed (ours, then git's), per task, and the difference.
read -r ours plain < <(grep -o "[0-9.]* ms" "$tmp/instant.row" | awk '{ printf "%s ", $1 } END { print "" }')
overhead=$(awk -v a="$ours" -v b="$plain" -v n="$tasks" 'BEGIN { printf "%.1f", (a - b) / n }')
verdict=$(awk -v o="$overhead" 'BEGIN { print (o <= 30 ? "PASS" : "MISS") }')
timer -row "  per task: ours vs git add+commit" \
	"$(awk -v a="$ours" -v n="$tasks" 'BEGIN { printf "%.1f ms", a / n }')" \
	"$(awk -v b="$plain" -v n="$tasks" 'BEGIN { printf "%.1f ms", b / n }')" \
	"$(awk -v a="$ours" -v b="$plain" 'BEGIN { printf "%.2fx", a / b }')" "-" "INFO"
timer -row "  overhead per task (difference)" "$overhead ms" "-" "-" "-" "INFO"
# What a task adds: 32 tasks against 8, ours and git's, the fixed costs
# (start, pipeline, backup, records of the run) cancelling out.
timer -name "run: 32 instant tasks" -n "$n_instant" -warmup 1 \
	-pre-a "sh $tmp/fresh.sh instant32" -a "git -C $tmp/instant32 crucible run bench" \
	-pre-b "sh $tmp/fresh.sh plain" -b "sh $tmp/plain.sh 32" | tee "$tmp/instant32.row"
read -r ours32 plain32 < <(grep -o "[0-9.]* ms" "$tmp/instant32.row" | awk '{ printf "%s ", $1 } END { print "" }')
marginal=$(awk -v a="$ours" -v b="$plain" -v a2="$ours32" -v b2="$plain32" -v n="$tasks" 'BEGIN { printf "%.1f", ((a2 - a) - (b2 - b)) / (32 - n) }')
verdict=$(awk -v o="$marginal" 'BEGIN { print (o <= 30 ? "PASS" : "MISS") }')
timer -row "  overhead a task adds (32 vs $tasks)" "$marginal ms" "-" "-" "<=30 ms" "$verdict" | tee -a "$tmp/results"
if [ "${BENCH_STRICT:-0}" = 1 ] && grep -q ' MISS' "$tmp/results"; then
	exit 1
fi
