// Package leftover finds what git-crucible's engines leave behind in a
// work tree and its repository when a run does not complete (it failed,
// escalated or was killed), and removes it on request: the task
// worktrees of the work tree (taskrun's slots), the agent directories its
// pipelines' dispatches left in it, and the backup branches
// (backup-<branch>-pre-dispatch) made before a task run or a fix moved a
// branch. A run that completes removes its own.
package leftover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
)

// The kinds of things left.
const (
	KindSlot     = "slot"
	KindAgentDir = "agent-dir"
	KindBackup   = "backup"
)

// Slot is a task worktree under taskdag.SlotsDir.
type Slot struct {
	N      int
	Path   string // absolute
	Commit string // its HEAD; "" when it holds no worktree of the repository
	Dirty  bool   // it has changes that are not on the branch (Find with Dirty): unsaved
}

// AgentDir is an agent directory, <work tree>/.crucible/runs/<pipeline>/<dir>.
type AgentDir struct {
	Path     string // absolute
	Pipeline string
	Report   bool // it holds the report an agent wrote, which a resume takes
}

// Backup is a backup branch.
type Backup struct {
	Branch string // its short name: backup-<Of>-pre-dispatch
	Of     string // the branch it backs up
	Commit string
	// Filled by Find with Reach: its commit is on Of; on another ref
	// than itself.
	OnBranch, Elsewhere bool
}

// Found is what is left.
type Found struct {
	Top       string // the work tree's top
	Slots     []Slot
	AgentDirs []AgentDir
	Backups   []Backup
}

// Empty says whether nothing is left.
func (f *Found) Empty() bool { return len(f.Slots)+len(f.AgentDirs)+len(f.Backups) == 0 }

// Options say how much Find looks into what it finds, each a git call
// per thing found.
type Options struct {
	Dirty bool // whether the slots have changes not on the branch
	Reach bool // where the backups' commits are
}

// backupPrefix and backupSuffix frame a backup branch's name, as
// verifycommits.BackupBranch makes it.
const (
	backupPrefix = "refs/heads/backup-"
	backupSuffix = "-pre-dispatch"
)

// BackupGone says whether backup branch branch (its short name, as a task
// run records it) is not there: a run that completed deleted it, or a
// clean-up did.
func BackupGone(repo *gitext.Repo, branch string) (bool, error) {
	oid, err := repo.ReadRef("refs/heads/" + branch)
	return oid == "" && err == nil, err
}

// Find lists what is left in repo's work tree (slots, agent
// directories) and repository (backup branches).
func Find(ctx context.Context, repo *gitext.Repo, o Options) (*Found, error) {
	f := &Found{Top: repo.WorkTree}
	if repo.WorkTree != "" {
		pool := taskdag.Slots(repo)
		nums, err := pool.Slots()
		if err != nil {
			return nil, err
		}
		head, err := repo.HeadCommit()
		if err != nil {
			return nil, err
		}
		for _, n := range nums {
			s := Slot{N: n, Path: pool.Path(n)}
			if wt, ok := pool.Worktree(n); ok {
				if head, err := wt.ReadRef("HEAD"); err == nil {
					s.Commit = head
				}
				if o.Dirty {
					if s.Dirty, err = unsaved(ctx, wt, head); err != nil {
						return nil, fmt.Errorf("%s: %w", s.Path, err)
					}
				}
			}
			f.Slots = append(f.Slots, s)
		}
		dirs, err := agentDirs(repo.WorkTree)
		if err != nil {
			return nil, err
		}
		f.AgentDirs = dirs
	}
	refs, err := repo.ListRefs(ctx, "refs/heads/")
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		of, isBackup := strings.CutPrefix(r.Name, backupPrefix)
		of, hasSuffix := strings.CutSuffix(of, backupSuffix)
		if !isBackup || !hasSuffix || of == "" {
			continue
		}
		b := Backup{Branch: strings.TrimPrefix(r.Name, "refs/heads/"), Of: of, Commit: r.OID}
		if o.Reach {
			if b.OnBranch, b.Elsewhere, err = reach(ctx, repo, r.Name, of, r.OID); err != nil {
				return nil, err
			}
		}
		f.Backups = append(f.Backups, b)
	}
	return f, nil
}

// unsaved says whether the slot worktree wt has changes that are not on
// head, the work tree's branch: changes the engine did not stage (an
// agent stopped at work), or staged ones (a task's work as the engine
// took it) whose paths head does not have as the slot does: a task's
// work that was not committed (it failed), or that a later task changed
// again (kept all the same: nothing tells them apart cheaply).
func unsaved(ctx context.Context, wt *gitext.Repo, head string) (bool, error) {
	entries, err := wt.Status(ctx, gitext.UntrackedNormal)
	if err != nil {
		return false, err
	}
	var staged []string // what differs between HEAD and the index alone
	for _, e := range entries {
		if e.InWorkTree() {
			return true, nil // changed in the work tree, or untracked
		}
		staged = append(staged, e.Path)
	}
	if staged == nil {
		return false, nil
	}
	if head == "" {
		return true, nil
	}
	return wt.DiffQuiet(ctx, head, true, staged...)
}

// agentDirs are the agent directories under top's agent.RunsDir.
func agentDirs(top string) ([]AgentDir, error) {
	runs := filepath.Join(top, filepath.FromSlash(agent.RunsDir))
	pipelines, err := os.ReadDir(runs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []AgentDir
	for _, p := range pipelines {
		if !p.IsDir() {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(runs, p.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range entries {
			if !d.IsDir() {
				continue
			}
			a := AgentDir{Path: filepath.Join(runs, p.Name(), d.Name()), Pipeline: p.Name()}
			if fi, err := os.Lstat(filepath.Join(a.Path, "output.yaml")); err == nil && fi.Mode().IsRegular() {
				a.Report = true
			}
			dirs = append(dirs, a)
		}
	}
	return dirs, nil
}

// reach says whether commit, backup's, is on branch of, and on a ref
// other than backup.
func reach(ctx context.Context, repo *gitext.Repo, backup, of, commit string) (onBranch, elsewhere bool, err error) {
	names, err := repo.RefsContaining(ctx, commit)
	if err != nil {
		return false, false, err
	}
	for _, name := range names {
		switch name {
		case backup:
		case "refs/heads/" + of:
			onBranch, elsewhere = true, true
		default:
			elsewhere = true
		}
	}
	return onBranch, elsewhere, nil
}

// Holders are the live engines that hold what is left: the one on the
// work tree's branch, and those of pipelines and of branches.
type Holders struct {
	Branch    string           // the work tree's branch; "" when HEAD is detached
	Here      *pipeline.Holder // the engine on Branch: the slots and agent directories are its
	Pipelines map[string]*pipeline.Holder
	Branches  map[string]*pipeline.Holder
}

// HoldersOf reads which engines hold what f found.
func HoldersOf(repo *gitext.Repo, f *Found) (Holders, error) {
	h := Holders{Pipelines: map[string]*pipeline.Holder{}, Branches: map[string]*pipeline.Holder{}}
	branch, err := repo.HeadBranch()
	if err != nil {
		return h, err
	}
	if h.Branch = branch; branch != "" {
		h.Here = pipeline.BranchHolder(repo, branch)
	}
	for _, a := range f.AgentDirs {
		if _, ok := h.Pipelines[a.Pipeline]; !ok {
			h.Pipelines[a.Pipeline] = pipeline.HolderOf(repo, a.Pipeline)
		}
	}
	for _, b := range f.Backups {
		if _, ok := h.Branches[b.Of]; !ok {
			h.Branches[b.Of] = pipeline.BranchHolder(repo, b.Of)
		}
	}
	return h, nil
}

// HeldError refuses a clean-up while an engine runs on the work tree's
// branch: what is left there is its work.
type HeldError struct {
	Branch string
	Holder pipeline.Holder
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("branch '%s' is in use by %s: its slots and agent directories are its work", e.Branch, e.Holder)
}

// Hint says what to do instead.
func (e *HeldError) Hint() string {
	return fmt.Sprintf("wait for it to stop, or stop it (kill %d); then run git crucible clean again", e.Holder.Pid)
}

// Item is one thing left and what a clean-up does with it.
type Item struct {
	Kind   string `json:"kind"` // KindSlot, KindAgentDir or KindBackup
	Name   string `json:"name"` // a path from the work tree's top, or a branch's short name
	Commit string `json:"commit,omitempty"`
	Remove bool   `json:"-"`
	// Reason says why it is kept; Force whether --force would remove it.
	Reason string `json:"reason,omitempty"`
	Force  bool   `json:"-"`
	// Lost: a backup whose commit is on no other ref: removing it leaves
	// the commit to git gc.
	Lost bool `json:"lost,omitempty"`

	path string // a slot's or an agent directory's, absolute
	slot int
}

// Plan is what a clean-up of f does, the items in f's order: slots,
// agent directories, backup branches. Removed: a slot without
// uncommitted changes, an agent directory without a report, a backup
// whose commit is on the branch it backs up; force removes the others
// too, except what an engine holds. A *HeldError when an engine runs on
// the work tree's branch.
func Plan(f *Found, h Holders, force bool) ([]Item, error) {
	if h.Here != nil && (len(f.Slots) > 0 || len(f.AgentDirs) > 0) {
		return nil, &HeldError{Branch: h.Branch, Holder: *h.Here}
	}
	var items []Item
	for _, s := range f.Slots {
		it := Item{Kind: KindSlot, Name: rel(f.Top, s.Path), Commit: s.Commit, Remove: true, path: s.Path, slot: s.N}
		if s.Dirty {
			it.Reason, it.Force, it.Remove = "it has changes that are not on the branch: an agent's unfinished work, maybe", true, force
		}
		items = append(items, it)
	}
	for _, a := range f.AgentDirs {
		it := Item{Kind: KindAgentDir, Name: rel(f.Top, a.Path), Remove: true, path: a.Path}
		switch held := h.Pipelines[a.Pipeline]; {
		case held != nil:
			it.Reason, it.Remove = fmt.Sprintf("pipeline %s's engine, %s, is running", a.Pipeline, held), false
		case a.Report:
			it.Reason, it.Force, it.Remove = fmt.Sprintf("it holds an agent's report, which resuming pipeline %s takes", a.Pipeline), true, force
		}
		items = append(items, it)
	}
	for _, b := range f.Backups {
		it := Item{Kind: KindBackup, Name: b.Branch, Commit: b.Commit, Remove: true}
		switch held := h.Branches[b.Of]; {
		case held != nil:
			it.Reason, it.Remove = fmt.Sprintf("%s is running on branch '%s'", held, b.Of), false
		case b.OnBranch:
		case b.Elsewhere:
			it.Reason, it.Force, it.Remove = fmt.Sprintf("its commit is not on branch '%s'", b.Of), true, force
		default:
			it.Reason, it.Force, it.Remove = "its commit is on no other branch or ref: removing it would lose the commit", true, force
			it.Lost = force
		}
		items = append(items, it)
	}
	return items, nil
}

// Clean removes the items planned for removal: the slots' worktrees (git
// worktree remove, then prune), the agent directories, the backup
// branches (compare-and-swap from the commit found: one that moved
// since is kept, and said in its Reason). It returns the items, each
// with what became of it.
func Clean(ctx context.Context, repo *gitext.Repo, items []Item) ([]Item, error) {
	out := slices.Clone(items)
	pool := taskdag.Slots(repo)
	slotted := false
	for i, it := range out {
		if !it.Remove {
			continue
		}
		switch it.Kind {
		case KindSlot:
			slotted = true
			if err := pool.Remove(ctx, it.slot); err != nil {
				return out, err
			}
		case KindAgentDir:
			if err := os.RemoveAll(it.path); err != nil {
				return out, err
			}
			removeEmpty(filepath.Dir(it.path), repo.WorkTree)
		case KindBackup:
			err := repo.UpdateRefs(ctx, "git crucible clean", gitext.RefUpdate{Name: "refs/heads/" + it.Name, Old: it.Commit})
			if errors.Is(err, gitext.ErrRefChanged) {
				out[i].Remove, out[i].Reason, out[i].Lost = false, "it moved since it was looked at", false
				continue
			}
			if err != nil {
				return out, err
			}
		}
	}
	if slotted {
		if err := pool.Prune(ctx); err != nil {
			return out, err
		}
		removeEmpty(filepath.Dir(pool.Dir), repo.WorkTree)
	}
	return out, nil
}

// removeEmpty removes dir and its parents below top while they are empty.
func removeEmpty(dir, top string) {
	for ; dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return
		}
	}
}

// rel is path from top when it is under it.
func rel(top, path string) string {
	if r, err := filepath.Rel(top, path); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return path
}
