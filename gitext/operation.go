package gitext

import (
	"os"
	"path/filepath"
)

// operations are the markers git leaves in a worktree's git dir while a
// multi-step command is under way, most specific first.
var operations = []struct{ marker, name string }{
	{"rebase-merge", "rebase"},
	{"rebase-apply", "rebase"}, // also git am
	{"CHERRY_PICK_HEAD", "cherry-pick"},
	{"REVERT_HEAD", "revert"},
	{"MERGE_HEAD", "merge"},
	{"sequencer", "cherry-pick"},
}

// Operation names the rebase, cherry-pick, revert or merge under way in
// this worktree, or returns "" when there is none. Hooks use it to leave
// commits that replay other commits alone.
func (r *Repo) Operation() string {
	for _, op := range operations {
		if _, err := os.Lstat(filepath.Join(r.GitDir, op.marker)); err == nil {
			return op.name
		}
	}
	return ""
}
