package hookcli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestMainOutcomes: Main words each kind of hook outcome as git does, with its exit
// status: usage errors 129, a bad push policy fatal with its fix, a
// nothing-to-do push 0.
func TestMainOutcomes(t *testing.T) {
	repo := gittest.Init(t)
	t.Chdir(repo)
	for _, c := range []struct {
		name   string
		config string // crucible.pushPolicy, when set
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{"no hook", "", nil, "", 129, "error: missing <hook> (one of pre-commit, commit-msg, post-commit, post-rewrite, pre-push, pre-receive)\n" +
			"hint: usage: git-crucible-hook <hook> [<arg>...], as the hooks that 'git crucible hooks install' writes run it\n"},
		{"unknown hook", "", []string{"post-merge"}, "", 129, "error: unknown hook 'post-merge' (one of pre-commit, commit-msg, post-commit, post-rewrite, pre-push, pre-receive)\n"},
		{"commit-msg without its file", "", []string{"commit-msg"}, "", 129, "error: commit-msg takes the message file\n"},
		{"outside a pipeline", "", []string{"pre-commit"}, "", 0, ""},
		{"pre-push without a remote", "", []string{"pre-push"}, "", 129, "error: pre-push takes the remote's name and URL\n"},
		{"a bad policy", "strict", []string{"pre-push", "origin", "url"}, "", 128, "fatal: crucible.pushPolicy is 'strict'\nhint: set it to gated, verified, complete or off\n"},
		{"policy off", "off", []string{"pre-push"}, "refs/heads/main 1 refs/heads/main 2\n", 0, ""},
		{"a deletion", "gated", []string{"pre-push", "origin", "url"},
			"(delete) " + strings.Repeat("0", 40) + " refs/heads/gone " + strings.Repeat("1", 40) + "\n", 0, ""},
	} {
		if c.config != "" {
			gittest.Git(t, repo, "config", "crucible.pushPolicy", c.config)
		}
		var out, errb bytes.Buffer
		code := Main(append([]string{"git-crucible-hook"}, c.args...), strings.NewReader(c.stdin), &out, &errb)
		if code != c.code || errb.String() != c.stderr || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want %d, %q", c.name, code, errb.String(), out.String(), c.code, c.stderr)
		}
	}
}
