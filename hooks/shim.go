package hooks

import (
	"bytes"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
)

// The hook file. It must stay cheap on every commit: no subshell and no
// external command unless a chained hook needs its input copied. It finds
// git-crucible-hook on PATH (command -v is a builtin), else at the path it
// was installed beside git-crucible (GUI clients often run git with a short
// PATH), else fails closed: a gate that cannot run must not let the commit
// through.
const shimHead = `#!/bin/sh
@MARKER@
#
# Runs "git-crucible-hook @NAME@", found on PATH or else at the path it was
# installed at. A hook kept aside by "git crucible hooks install --chain"
# runs first, with the same arguments and input; if it fails, so does this one.
installed=@FALLBACK@
crucible=git-crucible-hook
if ! command -v "$crucible" >/dev/null 2>&1; then
	crucible=$installed
	if [ ! -x "$crucible" ]; then
		printf '%s\n' >&2 \
			"error: the @NAME@ hook needs git-crucible-hook, which is neither on PATH nor at $installed" \
			"hint: install git-crucible (./install.sh in its source tree installs both) into a directory on PATH," \
			"hint: or remove this hook: git crucible hooks uninstall, or: rm $0"
		exit 1
	fi
fi
chained="$0.crucible-chained"
if [ -x "$chained" ]; then
`

// Without input, the chained hook simply runs first.
const shimChain = `	"$chained" "$@" || exit $?
fi
`

// With input, both must read all of it: it is kept in a file opened twice
// (once for each reader) and unlinked at once, so nothing is left behind.
const shimChainStdin = `	input=$(mktemp) || exit 1
	exec 3>"$input" 4<"$input" 5<"$input"
	rm -f "$input"
	cat >&3 || exit 1
	exec 3>&-
	"$chained" "$@" <&4 4<&- 5<&- || exit $?
	exec <&5 4<&- 5<&-
fi
`

const shimTail = `exec "$crucible" @NAME@ "$@"
`

// Outside a pipeline the commit hooks have nothing to do, and a commit
// should not pay for starting git-crucible-hook three times to learn it. The
// branch's active pipeline is a symbolic ref, which git always keeps as a
// loose file, so sh can look for it with builtins. Anything unusual (a
// linked worktree, GIT_COMMON_DIR, a reftable repository whose refs are no
// files) goes to git-crucible-hook, which knows.
const shimSkip = `gitdir=${GIT_DIR:-.git} head=
if [ -z "${GIT_COMMON_DIR-}" ] && [ -d "$gitdir" ] && [ ! -f "$gitdir/commondir" ] && [ ! -d "$gitdir/reftable" ] && read -r head <"$gitdir/HEAD"; then
	case $head in
	"ref: refs/heads/"*) [ -f "$gitdir/refs/crucible/active/${head#ref: refs/heads/}" ] || exit 0 ;;
	*) exit 0 ;;
	esac
fi
`

// A commit whose message no editor changes (-m, -F, -C, --no-edit) runs
// commit-msg straight after pre-commit, with nothing for a person to do in
// between; git tells the hooks of such a commit by setting GIT_EDITOR=:.
// Then commit-msg makes pre-commit's check too, in the one process it
// starts anyway, unless a git command that replays commits runs it (merge,
// rebase, cherry-pick, revert: they set GIT_REFLOG_ACTION, and run no
// pre-commit). Both hooks of a commit see the same environment, so exactly
// one of them checks; with an editor, pre-commit refuses before it opens.
const shimNoEditor = `[ "${GIT_EDITOR-}" = : ] && [ -z "${GIT_REFLOG_ACTION-}" ]`

// pre-commit leaves its check to commit-msg only when the commit-msg beside
// it, which git runs next, is this version's shim (its marker line): a
// missing, foreign or older one would not make the check.
const shimDeferCheck = `dir=${0%/*}
if @NOEDITOR@ && [ -x "$dir/commit-msg" ] && { read -r line && read -r line; } <"$dir/commit-msg" && [ "$line" = @MARKERQ@ ]; then
	exit 0
fi
`

// commit-msg asks for pre-commit's check with --pre-commit, which a binary
// older than the shim refuses as a usage error: the commit fails rather
// than go unchecked.
const shimTakeCheck = `if @NOEDITOR@; then
	set -- --pre-commit "$@"
fi
`

// PreCommitFlag is the argument before commit-msg's message file that asks
// it for pre-commit's check as well (see shimNoEditor).
const PreCommitFlag = "--pre-commit"

// post-commit queues the note commit-msg left for the commit it checked
// (notes.SetNext) with builtins, taking it back at once, and exits; the
// binary starts only when there is none (a --no-verify commit, a replaying
// command) or where the branch's ref is no loose file here (shimSkip left
// head empty). Nothing planted is followed: a linked "next" is not read
// and, with noclobber, the queue file is created new or not at all.
const shimQueueNote = `q=$gitdir/crucible/notes-queue
if [ -n "$head" ] && [ -z "${GIT_REFLOG_ACTION-}" ] && [ ! -h "$q/next" ] && [ -f "$q/next" ] && [ -s "$q/next" ] &&
	{ read -r note && read -r base; } <"$q/next" && : >"$q/next" && read -r commit <"$gitdir/${head#ref: }"; then
	case $commit in
	*[!0-9a-f]* | "") ;;
	*) set -C && printf '%s\n%s\n' "$note" "$base" 2>/dev/null >"$q/$commit" && exit 0 ;;
	esac
fi
`

// pipelineOnly are the hooks that do nothing outside a pipeline, each with
// its part of the hand-over of pre-commit's check.
var pipelineOnly = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{"pre-commit": shimDeferCheck, "commit-msg": shimTakeCheck, "post-commit": shimQueueNote}
}}

// Shim is our hook file for name; fallback is the absolute path of the
// git-crucible-hook binary to run when none is on PATH.
func Shim(name, fallback string) []byte {
	chain := shimChain
	if TakesStdin(name) {
		chain = shimChainStdin
	}
	skip := ""
	if check, ok := pipelineOnly.Get()[name]; ok {
		skip = shimSkip + check
	}
	r := strings.NewReplacer("@NOEDITOR@", shimNoEditor, "@MARKERQ@", shQuote(marker.Get()), "@MARKER@", marker.Get(),
		"@NAME@", name, "@FALLBACK@", shQuote(fallback))
	return []byte(r.Replace(shimHead + chain + skip + shimTail))
}

// shQuote quotes s as one sh word.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shUnquote reads one word written by shQuote from the start of s; it is
// "" when the word is not in that form.
func shUnquote(s string) string {
	var b strings.Builder
	for len(s) > 0 && s[0] != '\n' {
		switch {
		case s[0] == '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return ""
			}
			b.WriteString(s[1 : 1+end])
			s = s[2+end:]
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		default:
			return ""
		}
	}
	return b.String()
}

// parseShim reads a hook file: ours when it has the marker line, and the
// fallback binary it records.
func parseShim(data []byte) (fallback string, ours bool) {
	for rest := data; len(rest) > 0 && !ours; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		ours = bytes.HasPrefix(line, []byte(markerPrefix))
	}
	if _, word, ok := bytes.Cut(data, []byte("\ninstalled=")); ok && ours {
		fallback = shUnquote(string(word))
	}
	return fallback, ours
}
