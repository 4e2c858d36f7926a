package enforce

import "strings"

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
