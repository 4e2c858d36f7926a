package enforce

import (
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// PushRef is one ref update a push brings, from pre-push input ("<local
// ref> <local oid> <remote ref> <remote oid>") or pre-receive input ("<old>
// <new> <ref>"): Local is what the remote ref becomes, Remote what it was.
type PushRef struct{ LocalRef, Local, RemoteRef, Remote string }

// ParsePushInput reads a push hook's input; receive selects the
// pre-receive form. Lines of another shape are skipped.
func ParsePushInput(input string, receive bool) []PushRef {
	var out []PushRef
	for _, line := range strings.Split(input, "\n") {
		f := strings.Fields(line)
		switch {
		case receive && len(f) == 3:
			out = append(out, PushRef{Local: f[1], RemoteRef: f[2], Remote: f[0]})
		case !receive && len(f) == 4:
			out = append(out, PushRef{LocalRef: f[0], Local: f[1], RemoteRef: f[2], Remote: f[3]})
		}
	}
	return out
}

// zeroID reports whether oid is git's all-zero "no object".
func zeroID(oid string) bool { return strings.Trim(oid, "0") == "" }

// New reports whether the remote ref did not exist before.
func (r PushRef) New() bool { return zeroID(r.Remote) }

// Audited reports whether the update brings commits an audit looks at: a
// branch that is created or moved, not deleted (tags and other refs are
// not audited).
func (r PushRef) Audited() bool {
	return !zeroID(r.Local) && strings.HasPrefix(r.RemoteRef, "refs/heads/")
}

// Range is the update as a revision range, for 'verify --range'.
func (r PushRef) Range() string {
	if r.New() {
		return r.Local
	}
	return r.Remote + ".." + r.Local
}

// PushRevs names the commits a push brings: those the remote lacks, or,
// perBranch (a protected branch), those the branch lacks — commits already
// on the remote's other branches still need their pipelines complete to
// land. remoteKnown says whether the remote ref's old commit is in this
// repository.
func PushRevs(r PushRef, remoteName string, perBranch, remoteKnown bool) gitext.RevSet {
	revs := gitext.RevSet{Include: []string{r.Local}} // a new protected branch: all it holds
	if remoteKnown && !r.New() {
		revs.Exclude = []string{r.Remote}
	}
	if !perBranch {
		revs.ExcludeRemote = remoteName
	}
	return revs
}

// ReceiveRevs names the commits a protected branch gains on the server:
// new ^old, or for a new branch everything not already on another
// protected branch (otherTips: their commits). Commits on the server's
// other branches still count: landing on a protected branch is what needs
// their pipelines complete.
func ReceiveRevs(r PushRef, otherTips []string) gitext.RevSet {
	if !r.New() {
		return gitext.RevSet{Include: []string{r.Local}, Exclude: []string{r.Remote}}
	}
	return gitext.RevSet{Include: []string{r.Local}, Exclude: otherTips}
}
