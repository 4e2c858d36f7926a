# Sourced by the benchmarks: what they share.

# bench_tmp makes the temporary directory $tmp, removed on exit unless
# BENCH_KEEP=1 (then printed). $1 names it.
bench_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	trap bench_cleanup EXIT
}
bench_cleanup() {
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}

# bench_hermetic makes git hermetic in $tmp, with $tmp/bin first on PATH:
# no user or system configuration, a fixed identity, no automatic gc. Go
# builds come first: they would find no build cache in the new HOME.
bench_hermetic() {
	for v in $(env | sed -n 's/^\(GIT_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	export PATH="$tmp/bin:$PATH"
	export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config"
	export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$tmp/home/.gitconfig"
	export GIT_AUTHOR_NAME="Bench" GIT_AUTHOR_EMAIL="bench@example.com"
	export GIT_COMMITTER_NAME="Bench" GIT_COMMITTER_EMAIL="bench@example.com"
	export GIT_TERMINAL_PROMPT=0 LC_ALL=C
	mkdir -p "$HOME"
	# No automatic gc: the repository stays as the benchmarks leave it until
	# they run gc themselves.
	cat >"$GIT_CONFIG_GLOBAL" <<'EOF'
[init]
	defaultBranch = main
[gc]
	auto = 0
[maintenance]
	auto = false
[advice]
	detachedHead = false
EOF
}

# bench_build installs git-crucible and builds bench/timer into $tmp/bin;
# before bench_hermetic, whose new HOME has no Go build cache.
bench_build() {
	GOBIN="$tmp/bin" ./install.sh >/dev/null 2>&1 || GOBIN="$tmp/bin" ./install.sh
	go build -o "$tmp/bin/timer" ./bench/timer
}

# timer runs the bench/timer that bench_build built.
timer() { "$tmp/bin/timer" "$@"; }
