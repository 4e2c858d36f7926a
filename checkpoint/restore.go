package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// Change is one path a restore changes: A (comes back), M (content or mode
// goes back) or D (created since; removed, kept in the safety checkpoint).
type Change struct {
	Op   string `json:"op"`
	Path string `json:"path"`
}

// BranchError refuses a restore on another branch than the checkpoint's.
type BranchError struct{ Want, Have string }

func (e *BranchError) Error() string {
	return fmt.Sprintf("Pipeline was running on branch %s but you are on %s. Switch to %s before resuming — "+
		"restoring a checkpoint from a different branch would contaminate your working directory.", e.Want, e.Have, e.Want)
}

// Plan takes the pre-restore-safety checkpoint and returns it with the
// changes restoring cp would make, limited to paths when any are given.
// Nothing in the work tree has changed yet.
func (s *Shadow) Plan(ctx context.Context, cp *Checkpoint, paths []string) (*Result, []Change, error) {
	branch, err := s.main.HeadBranch()
	if err != nil {
		return nil, nil, err
	}
	if branch != cp.Branch {
		return nil, nil, &BranchError{Want: cp.Branch, Have: branch}
	}
	safety, err := s.Create(ctx, "pre-restore-safety", "git-crucible", cp.Pipeline)
	if err != nil {
		return nil, nil, fmt.Errorf("taking the safety checkpoint: %w", err)
	}
	changes, err := s.changes(ctx, safety.Tree, cp.Tree, paths)
	return safety, changes, err
}

// changes lists what differs from tree a to tree b (limited to paths), as
// git diff-tree -r --name-status does. Without paths the trees are compared
// in process, subtree by subtree, loose or packed: that costs less than
// starting git.
func (s *Shadow) changes(ctx context.Context, a, b string, paths []string) ([]Change, error) {
	var changes []Change
	if len(paths) == 0 {
		err := s.diffTrees("", a, b, &changes)
		if err == nil || !errors.Is(err, gitext.ErrMissing) {
			return changes, err
		}
		changes = nil
	}
	slashed := make([]string, len(paths))
	for i, p := range paths {
		slashed[i] = filepath.ToSlash(p)
	}
	diff, err := s.repo.TreeChanges(ctx, a, b, slashed)
	for _, c := range diff {
		changes = append(changes, Change{Op: c.Status, Path: c.Path})
	}
	return changes, err
}

// diffTrees appends to out the changes from tree a to tree b ("" is the
// empty tree), under prefix, in git's order: entries sort by name, a
// subtree as if its name ended in "/".
func (s *Shadow) diffTrees(prefix, a, b string, out *[]Change) error {
	ea, err := s.readTree(a)
	if err != nil {
		return err
	}
	eb, err := s.readTree(b)
	if err != nil {
		return err
	}
	key := func(e gitext.TreeEntry) string {
		if e.IsTree() {
			return e.Name + "/"
		}
		return e.Name
	}
	// one reports an entry on one side only: every file under a subtree.
	one := func(op string, e gitext.TreeEntry) error {
		if !e.IsTree() {
			*out = append(*out, Change{Op: op, Path: prefix + e.Name})
			return nil
		}
		if op == "D" {
			return s.diffTrees(prefix+e.Name+"/", e.OID, "", out)
		}
		return s.diffTrees(prefix+e.Name+"/", "", e.OID, out)
	}
	for len(ea) > 0 || len(eb) > 0 {
		var err error
		switch {
		case len(eb) == 0 || len(ea) > 0 && key(ea[0]) < key(eb[0]):
			err, ea = one("D", ea[0]), ea[1:]
		case len(ea) == 0 || key(eb[0]) < key(ea[0]):
			err, eb = one("A", eb[0]), eb[1:]
		default:
			x, y := ea[0], eb[0]
			ea, eb = ea[1:], eb[1:]
			switch {
			case x.OID == y.OID && x.Mode == y.Mode:
			case x.IsTree():
				err = s.diffTrees(prefix+x.Name+"/", x.OID, y.OID, out)
			case kind(x.Mode) != kind(y.Mode):
				*out = append(*out, Change{Op: "T", Path: prefix + x.Name})
			default:
				*out = append(*out, Change{Op: "M", Path: prefix + x.Name})
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// kind is what a mode makes an entry: a file (whatever its permissions), a
// symbolic link or a link to a commit. diff-tree says T when it changes.
func kind(mode string) string {
	if strings.HasPrefix(mode, "100") {
		return "file"
	}
	return mode
}

// readTree reads a tree of the shadow's, in process; "" is the empty tree.
func (s *Shadow) readTree(oid string) ([]gitext.TreeEntry, error) {
	if oid == "" {
		return nil, nil
	}
	k, data, err := s.repo.ReadStored(oid)
	if err != nil {
		return nil, err
	}
	if k != "tree" {
		return nil, fmt.Errorf("%s is a %s, not a tree", oid, k)
	}
	return gitext.DecodeTree(data, s.repo.HashLen())
}

// CheckPath refuses a --path that is not inside the work tree as a
// checkpoint holds it: absolute, climbing out with "..", or in .git, which
// would otherwise match nothing and report a restore of "0 paths".
func CheckPath(p string) error {
	slash := filepath.ToSlash(p)
	if slash == "" || !filepath.IsLocal(p) || strings.HasPrefix(slash, "/") {
		return fmt.Errorf("path %q is outside the work tree: give a path relative to its top", p)
	}
	for _, part := range strings.Split(slash, "/") {
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("path %q is inside .git, which checkpoints do not hold", p)
		}
	}
	return nil
}

// Apply makes the work tree match cp for the planned changes: files
// created since are removed first (deepest first), then cp's files are
// written, each atomically. It never removes through a symbolic link or outside the work
// tree; such a path is returned as refused. Ignored files are never in a
// plan, so they are never touched.
func (s *Shadow) Apply(ctx context.Context, cp *Checkpoint, changes []Change) (refused []string, err error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	s.clearStaleLocks()
	var removals []string
	for _, c := range changes {
		if c.Op == "D" {
			removals = append(removals, c.Path)
		}
	}
	sort.Slice(removals, func(i, j int) bool { return strings.Count(removals[i], "/") > strings.Count(removals[j], "/") })
	for _, p := range removals {
		if err := s.removeInside(p); err != nil {
			refused = append(refused, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if err := s.writeFiles(ctx, cp, changes); err != nil {
		return refused, err
	}
	return refused, nil
}

// removeInside removes a work-tree file, and the directories it leaves
// empty, provided no directory on its way is a symbolic link.
func (s *Shadow) removeInside(rel string) error {
	top := s.main.WorkTree
	parts := strings.Split(rel, "/")
	dir := top
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil // already gone
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return errors.New("a directory on its path is a symbolic link or a file; left alone")
		}
	}
	if err := os.Remove(filepath.Join(top, filepath.FromSlash(rel))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for d := filepath.Dir(filepath.Join(top, filepath.FromSlash(rel))); d != top && strings.HasPrefix(d, top); d = filepath.Dir(d) {
		if os.Remove(d) != nil { // not empty: stop
			break
		}
	}
	return nil
}

// HeadGoneError: the commit HEAD was at when the checkpoint was taken is no
// longer in the repository (reset away, then garbage-collected).
type HeadGoneError struct{ Head string }

func (e *HeadGoneError) Error() string {
	return fmt.Sprintf("commit %s, HEAD when the checkpoint was taken, is gone (garbage-collected)", e.Head)
}

// CommitsLeaving are the commits that moving the branch from from back
// to head leaves behind (from reaches them, head does not), oldest first:
// what a restore shows before it asks. An error when head is gone (gc).
func (s *Shadow) CommitsLeaving(ctx context.Context, from, head string) ([]gitext.LoggedCommit, error) {
	return s.main.Log(ctx, from, []string{head}, 0)
}

// ResetBranch moves the current branch (and the index, not the work tree)
// from from, where the restore's safety checkpoint found it, to head,
// through git so that the reflog keeps where it was. The move is a
// compare-and-swap: a commit made on the branch while the restore ran is
// never dropped from it (the error wraps gitext.ErrRefChanged).
func (s *Shadow) ResetBranch(ctx context.Context, from, head string) error {
	if head == "" {
		return nil
	}
	if _, err := s.main.Resolve(ctx, head+"^{commit}"); errors.Is(err, gitext.ErrMissing) {
		return &HeadGoneError{Head: head}
	}
	branch, err := s.main.HeadBranch()
	if err != nil {
		return err
	}
	headLocks, indexLock, origHeadLock := s.resetLocks(branch)
	// git reset takes no old value: git update-ref moves HEAD (the branch
	// it names) by compare-and-swap, with reset's reflog message, then a
	// reset of every path brings the index along and ORIG_HEAD is set, as
	// git reset --mixed would have done.
	moveHead := func() error { return s.main.UpdateRef(ctx, "reset: moving to "+head, "HEAD", head, from) }
	if err := s.underResetLocks(branch, headLocks, moveHead); err != nil {
		return err
	}
	resetIndex := func() error { return s.main.ResetIndex(ctx) }
	if err := s.underResetLocks(branch, indexLock, resetIndex); err != nil || from == "" {
		return err
	}
	return s.underResetLocks(branch, origHeadLock, func() error { return s.main.SetOrigHead(ctx, from) })
}

// Diff returns the patch (or, with stat, the diffstat) from checkpoint a to
// b, or to the work tree as it is now when b is nil. The work tree is
// snapshotted through a temporary index, so the shadow's own stays as it is.
func (s *Shadow) Diff(ctx context.Context, a, b *Checkpoint, stat bool) ([]byte, error) {
	to := ""
	if b != nil {
		to = b.Tree
	} else {
		tree, err := s.worktreeTree(ctx)
		if err != nil {
			return nil, err
		}
		to = tree
	}
	if stat {
		return s.repo.TreeDiffstat(ctx, a.Tree, to)
	}
	return s.repo.TreePatch(ctx, a.Tree, to)
}

// worktreeTree writes the work tree as a tree of the shadow and returns it.
func (s *Shadow) worktreeTree(ctx context.Context) (string, error) {
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	tmp, err := os.CreateTemp(s.repo.GitDir, "diff-index-")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if b, err := os.ReadFile(filepath.Join(s.repo.GitDir, "index")); err == nil {
		// Starting from the shadow's index makes this as cheap as a status.
		if err := os.WriteFile(tmp.Name(), b, 0o644); err != nil {
			return "", err
		}
	} else {
		os.Remove(tmp.Name()) // git makes a fresh one
	}
	if _, _, err := s.stage(ctx, tmp.Name()); err != nil {
		return "", err
	}
	return s.repo.With(gitext.Exec{Index: tmp.Name()}).WriteTree(ctx)
}
