# Sourced by the benchmarks: hermetic git in $tmp (set by the caller), with
# $tmp/bin first on PATH: no user or system configuration, a fixed identity,
# no automatic gc.
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

