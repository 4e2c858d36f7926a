// Package checkpoint snapshots a worktree into a shadow repository: a bare
// repository of git-crucible's own under the common dir, one per worktree,
// with its own objects and index. Nothing here touches the user's index,
// refs or objects, and gc in the user's repository cannot prune it.
package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// RefPrefix holds one ref per checkpoint, named by its id. Checkpoint
// commits have no parents, so deleting a ref frees exactly that snapshot.
const RefPrefix = "refs/checkpoints/"

// Shadow is one worktree's shadow repository.
type Shadow struct {
	main *gitext.Repo
	repo *gitext.Repo // the shadow, with the user's worktree as its work tree
	// Progress, when set, hears each step of a long operation.
	Progress func(step string)
}

func (s *Shadow) step(what string) {
	if s.Progress != nil {
		s.Progress(what)
	}
}

// Open returns the shadow of main's worktree, creating it on first use. A
// shadow that exists but is damaged is reported, never re-created.
func Open(ctx context.Context, main *gitext.Repo) (*Shadow, error) {
	if main.WorkTree == "" {
		return nil, errors.New("checkpoints need a work tree; this is a bare repository")
	}
	name := "main"
	if main.GitDir != main.CommonDir {
		name = "worktree-" + filepath.Base(main.GitDir)
	}
	dir := filepath.Join(main.CrucibleDir(), "shadow", name)
	s := &Shadow{main: main, repo: &gitext.Repo{GitDir: dir, CommonDir: dir, WorkTree: main.WorkTree, Format: main.Format, Private: true, NoReflogs: true}}
	_, headErr := os.Stat(filepath.Join(dir, "HEAD"))
	_, objErr := os.Stat(filepath.Join(dir, "objects"))
	switch {
	case headErr == nil && objErr == nil:
		// Shadows made by older versions get the settings on first use.
		if err := writeSettings(dir); err != nil {
			return nil, err
		}
		if err := sweepInits(filepath.Dir(dir)); err != nil {
			return nil, err
		}
	case errors.Is(headErr, os.ErrNotExist) && errors.Is(objErr, os.ErrNotExist):
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			return nil, fmt.Errorf("the shadow repository %s is damaged (no HEAD, no objects); it was left as it is", dir)
		}
		if err := create(ctx, dir, main.Format); err != nil {
			return nil, err
		}
	default:
		// Never re-initialise over a damaged shadow: what it still holds is
		// recoverable (git --git-dir=<shadow> fsck --lost-found).
		return nil, fmt.Errorf("the shadow repository %s is damaged (HEAD: %v, objects: %v); it was left as it is", dir, headErr, objErr)
	}
	return s, nil
}

// create makes the shadow in a directory of its own and renames it into
// place, so that two first checkpoints at once never see half a repository.
// They take turns (initLock): the second finds the first's shadow made. The
// holder of the lock knows every other .init- directory stale, one a
// process killed halfway left, and removes it.
func create(ctx context.Context, dir, format string) error {
	parent := filepath.Dir(dir)
	unlock, err := fsutil.Lock(filepath.Join(parent, initLock))
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil // another process made it while this one waited
	}
	if err := removeInits(parent); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, initPrefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := gitext.InitBare(ctx, tmp, format); err != nil {
		return err
	}
	if err := writeSettings(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "HEAD")); serr == nil {
			return nil // a process of a version without initLock made it first
		}
		return err
	}
	return nil
}

// A shadow is made in a directory named initPrefix+random beside it, while
// its maker holds the flock initLock there.
const (
	initPrefix = ".init-"
	initLock   = "init-lock"
)

// sweepInits removes what first checkpoints killed halfway left in parent,
// unless one is making a shadow now (it holds initLock): it removes its
// own when it ends, or the next checkpoint does.
func sweepInits(parent string) error {
	if len(inits(parent)) == 0 {
		return nil
	}
	unlock, err := fsutil.TryLock(filepath.Join(parent, initLock), nil)
	var held *fsutil.HeldError
	if errors.As(err, &held) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	return removeInits(parent)
}

// removeInits removes the .init- directories in parent: its caller holds
// initLock, so no process is making one of them.
func removeInits(parent string) error {
	for _, path := range inits(parent) {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	}
	return nil
}

// inits are the .init- directories in parent.
func inits(parent string) []string {
	entries, _ := os.ReadDir(parent)
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), initPrefix) {
			out = append(out, filepath.Join(parent, e.Name()))
		}
	}
	return out
}

// shadowConfig is appended to the shadow's config once. The split index
// and the untracked cache make a create cost about one git status: only
// what changed is written back, and only directories that changed are read
// again. No fsmonitor or hook of the user's global config runs for the
// shadow, and untracked files are listed one by one, as the cache expects.
// No reflog is kept (git would keep one, the shadow having a work tree):
// it would hold pruned checkpoints' content.
const shadowConfig = `
# git-crucible's settings for the shadow repository
[core]
	splitIndex = true
	untrackedCache = true
	fsmonitor = false
	hooksPath = /dev/null
[status]
	showUntrackedFiles = all
[crucible]
	shadowSettings = 1
` + shadowNoReflog

// shadowNoReflog is added to shadows made before it was part of shadowConfig.
const shadowNoReflog = `[core]
	logAllRefUpdates = false
`

// shadowAttributes take precedence over every .gitattributes (git reads
// $GIT_DIR/info/attributes first), so that a checkpoint stores and restores
// the work tree's bytes as they are: no clean or smudge filter (git-lfs
// would store pointers, or fail), no end-of-line conversion (unset text
// makes git ignore eol and core.autocrlf), no $Id$ expansion, no
// re-encoding. diff is left alone: it only decides how diffs look.
const shadowAttributes = `# git-crucible: checkpoints hold the work tree's bytes as they are
* -text -filter -ident -working-tree-encoding
`

// writeSettings gives the shadow at dir its config and attributes, leaving
// what is already there alone.
func writeSettings(dir string) error {
	cfgPath := filepath.Join(dir, "config")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	add := ""
	switch {
	case !bytes.Contains(cfg, []byte("shadowSettings = 1")):
		add = shadowConfig
	case !bytes.Contains(cfg, []byte(shadowNoReflog)):
		add = shadowNoReflog
	}
	if add != "" {
		if err := fsutil.WriteAtomic(cfgPath, append(cfg, add...), 0o644); err != nil {
			return err
		}
	}
	attrPath := filepath.Join(dir, "info", "attributes")
	if b, err := os.ReadFile(attrPath); err == nil && string(b) == shadowAttributes {
		return nil
	}
	return fsutil.WriteAtomic(attrPath, []byte(shadowAttributes), 0o644)
}

// Dir is where the shadow repository lives.
func (s *Shadow) Dir() string { return s.repo.GitDir }

// Checkpoint is one snapshot and what was recorded with it.
type Checkpoint struct {
	ID     string `json:"id"` // the shadow commit
	Tree   string `json:"tree"`
	Reason string `json:"reason"`
	Source string `json:"source"`
	Branch string `json:"branch"`
	Head   string `json:"head"`
	Time   string `json:"time"`
	Seq    int    `json:"seq"` // creation order in this shadow
	// Pipeline is the pipeline that was active when it was taken, if any.
	Pipeline string `json:"pipeline,omitempty"`
}

// Result is what Create did.
type Result struct {
	Checkpoint
	Unchanged bool     `json:"unchanged"` // the tree matched the newest checkpoint, which is returned
	Skipped   []string `json:"skipped"`   // nested repositories left out
	TooLarge  []string `json:"too_large"` // files over crucible.checkpoint.maxFileSize, left out
}

// Create snapshots the whole work tree — tracked and untracked files,
// honouring .gitignore, .git/info/exclude and core.excludesFile — unless
// nothing changed since the newest checkpoint, whose id it then returns.
func (s *Shadow) Create(ctx context.Context, reason, source, pipeline string) (*Result, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	s.clearStaleLocks()
	recs, err := s.records(ctx) // under the lock: nobody adds one meanwhile
	if err != nil {
		return nil, err
	}
	var newest *Checkpoint
	for _, r := range recs {
		if c := parse(r); newest == nil || c.Seq > newest.Seq {
			newest = &c
		}
	}
	if newest != nil {
		if err := s.pointHead(ctx, newest.ID); err != nil {
			return nil, err
		}
	}
	index := s.indexFile()
	skipped, tooLarge, err := s.stage(ctx, index)
	if err != nil {
		return nil, err
	}
	r := &Result{Skipped: skipped, TooLarge: tooLarge}
	s.step("writing the tree")
	tree, err := s.repo.With(gitext.Exec{Index: index}).WriteTree(ctx)
	if err != nil {
		return nil, err
	}
	branch, _ := s.main.HeadBranch()
	head, _ := s.main.HeadCommit()
	seq := 1
	if newest != nil {
		// The newest stands for this one only if HEAD is where it was: a
		// restore's safety checkpoint must name the branch and commit of now.
		if newest.Tree == tree && newest.Branch == branch && newest.Head == head {
			r.Checkpoint, r.Unchanged = *newest, true
			return r, nil
		}
		seq = newest.Seq + 1
	}
	c, err := s.commit(tree, branch, head, seq, reason, source, pipeline)
	if err != nil {
		return nil, err
	}
	// The checkpoint's ref and the branch move together: a kill leaves
	// both or neither.
	move, err := s.headMove(c.ID)
	if err != nil {
		return nil, err
	}
	if err := s.repo.UpdateRefs(ctx, "checkpoint: "+reason, append(move, gitext.RefUpdate{Name: RefPrefix + c.ID, New: c.ID})...); err != nil {
		return nil, err
	}
	s.addRecord(record{id: c.ID, tree: tree, message: c.message()})
	s.packRefs(ctx)
	r.Checkpoint = *c
	return r, nil
}

// indexFile is the shadow's own index.
func (s *Shadow) indexFile() string { return filepath.Join(s.repo.GitDir, "index") }

// clearStaleLocks runs under the lock: no other git-crucible works in the
// shadow then, so a lock git left there (on the index or packed-refs) is a
// killed one's, in our repository, and it goes; so do the temporary files
// of a killed restore, before a checkpoint could take them in.
func (s *Shadow) clearStaleLocks() {
	os.Remove(s.indexFile() + ".lock")
	os.Remove(filepath.Join(s.repo.GitDir, "packed-refs.lock"))
	s.clearRestoreTemps() // best effort: a leftover is only an untracked file
}

// maxLoose is how many checkpoint refs may be loose files: every listing
// reads each one, and one packed-refs file reads faster.
const maxLoose = 64

// packRefs packs the checkpoint refs when too many are loose. It is best
// effort: loose refs are only slower to list.
func (s *Shadow) packRefs(ctx context.Context) {
	if loose, _ := os.ReadDir(filepath.Join(s.repo.GitDir, filepath.FromSlash(RefPrefix))); len(loose) > maxLoose {
		_ = s.repo.PackRefs(ctx)
	}
}

// pointHead moves the shadow's branch to the newest checkpoint, id, so
// that the status a create runs finds nothing staged.
func (s *Shadow) pointHead(ctx context.Context, id string) error {
	move, err := s.headMove(id)
	if err != nil {
		return err
	}
	return s.repo.UpdateRefs(ctx, "checkpoint: newest", move...)
}

// headMove is the update that points the shadow's branch at id, none when
// it is there. Only the shadow's writers move it, under the lock: a lock
// file on it is a killed one's.
func (s *Shadow) headMove(id string) ([]gitext.RefUpdate, error) {
	branch, err := s.repo.ReadSymref("HEAD")
	if err != nil || branch == "" {
		return nil, err
	}
	cur, err := s.repo.ReadRef(branch)
	if err != nil || cur == id {
		return nil, err
	}
	os.Remove(filepath.Join(s.repo.GitDir, filepath.FromSlash(branch)) + ".lock")
	return []gitext.RefUpdate{{Name: branch, Old: cur, New: id}}, nil
}

// maxListed is how many paths a git command is given one by one; past it,
// letting git look at the whole tree costs less (pathspec matching is each
// path against each pathspec).
const maxListed = 200

// stage brings index up to the work tree: one status finds what changed
// (the untracked cache and the index's stat data make it cheap), then
// update-index takes exactly those paths. Nested repositories (status
// shows them as "dir/") and files over the size cap are left out and
// returned: git cannot add a repository without a commit, and one with a
// commit would be a link to commits the shadow does not have.
func (s *Shadow) stage(ctx context.Context, index string) (skipped, tooLarge []string, err error) {
	if err := s.syncExcludes(); err != nil {
		return nil, nil, err
	}
	// The main repository's settings take git processes of their own: the
	// status runs meanwhile with the excludes file the last create was
	// given, and again in the rare case that it changed.
	type found struct {
		settings
		err error
	}
	ready := make(chan found, 1)
	go func() {
		st, err := s.settings(ctx)
		ready <- found{st, err}
	}()
	s.step("looking for changes")
	last := settings{excludesFile: s.lastExcludesFile()}
	changed, err := s.status(ctx, index, last)
	f := <-ready
	settings := f.settings
	if err == nil {
		err = f.err
	}
	if err == nil && settings.excludesFile != last.excludesFile {
		s.saveExcludesFile(settings.excludesFile)
		changed, err = s.status(ctx, index, settings)
	}
	if err != nil {
		return nil, nil, err
	}
	skipped, tooLarge = []string{}, []string{}
	var update []string
	var exclusions []string
	for _, p := range changed {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			skipped = append(skipped, dir)
			exclusions = append(exclusions, dir)
			continue
		}
		if settings.maxFileSize > 0 {
			fi, err := os.Lstat(filepath.Join(s.main.WorkTree, filepath.FromSlash(p)))
			if err == nil && fi.Mode().IsRegular() && fi.Size() > settings.maxFileSize {
				// A file that grew past the cap keeps its last checkpointed version.
				tooLarge = append(tooLarge, fmt.Sprintf("%s (%d bytes)", p, fi.Size()))
				exclusions = append(exclusions, p)
				continue
			}
		}
		update = append(update, p)
	}
	s.step("adding files")
	if len(update) == 0 {
		return skipped, tooLarge, nil
	}
	if len(update) <= maxListed {
		if err := s.work(index, nil).UpdateIndexPaths(ctx, update); err == nil {
			return skipped, tooLarge, nil
		}
	}
	// Many paths (update-index writes thousands of new blobs much slower
	// than add), or some that update-index refuses and add takes (a tracked
	// path now beyond a symbolic link, a file that became a directory since
	// the status): add the whole tree, as git add -A sees it.
	links, err := s.addAll(ctx, index, settings, exclusions)
	return append(skipped, links...), tooLarge, err
}

// status lists the paths whose work-tree side differs from index
// (modified, deleted, type changed, unmerged) and the untracked ones, in
// git's order. What differs only between the index and HEAD is left out:
// the index already has it. A nested repository is an untracked path
// ending in "/".
func (s *Shadow) status(ctx context.Context, index string, settings settings) ([]string, error) {
	entries, err := s.work(index, settings.config()).Status(ctx, gitext.UntrackedAll)
	var paths []string
	for _, e := range entries {
		if e.InWorkTree() {
			paths = append(paths, e.Path)
		}
	}
	return paths, err
}

func (s *Shadow) excludesFilePath() string {
	return filepath.Join(s.repo.GitDir, "crucible-excludesfile")
}

// lastExcludesFile is the excludes file the last create was given.
func (s *Shadow) lastExcludesFile() string {
	b, _ := os.ReadFile(s.excludesFilePath())
	return string(b)
}

// saveExcludesFile is best effort: a wrong guess only costs a second status.
func (s *Shadow) saveExcludesFile(path string) {
	_ = fsutil.WriteAtomic(s.excludesFilePath(), []byte(path), 0o644)
}

// addAll adds the whole work tree but the exclusions, and takes out again
// any nested repository that appeared since the status (git adds one as a
// link), returning those.
func (s *Shadow) addAll(ctx context.Context, index string, settings settings, exclusions []string) ([]string, error) {
	if err := s.work(index, settings.config()).AddAll(ctx, gitext.AddOptions{IgnoreErrors: true, Exclude: exclusions}); err != nil {
		return nil, err
	}
	own := s.repo.With(gitext.Exec{Index: index})
	staged, err := own.LsFiles(ctx)
	if err != nil {
		return nil, err
	}
	var links []string
	for _, e := range staged {
		if e.Mode == "160000" {
			links = append(links, e.Path)
		}
	}
	if len(links) > 0 {
		if err := own.RemoveCached(ctx, links); err != nil {
			return nil, err
		}
	}
	return links, nil
}

// work is the shadow with index, run from the top of the work tree, so
// that the paths git reads and prints are the work tree's, with config
// (settings.config).
func (s *Shadow) work(index string, config []string) *gitext.Repo {
	return s.repo.With(gitext.Exec{Dir: s.main.WorkTree, Index: index, Config: config})
}

// lock serialises the shadow's writers. It is an flock, which the kernel
// releases when its holder dies, so a killed create never blocks the next.
func (s *Shadow) lock() (func(), error) {
	return fsutil.Lock(filepath.Join(s.repo.GitDir, "crucible.lock"))
}

// DefaultMaxFileSize is the per-file cap when crucible.checkpoint.maxFileSize is unset.
const DefaultMaxFileSize = 100 << 20

type settings struct {
	excludesFile string // the user's core.excludesFile, "" for git's default
	maxFileSize  int64  // 0: no cap
}

// config passes the main repository's excludes file, which may be set in
// its own config, to git in the shadow, which reads only its own.
func (st settings) config() []string {
	if st.excludesFile == "" {
		return nil
	}
	return []string{"-c", "core.excludesFile=" + st.excludesFile}
}

// settings reads what the main repository's config (its local file
// included) says for checkpoints, typed by git.
func (s *Shadow) settings(ctx context.Context) (settings, error) {
	size, err := s.main.ConfigInt(ctx, "crucible.checkpoint.maxFileSize", DefaultMaxFileSize)
	if err != nil {
		return settings{}, err
	}
	excludes, err := s.main.ConfigPath(ctx, "core.excludesFile")
	return settings{excludesFile: excludes, maxFileSize: size}, err
}

// syncExcludes makes the shadow ignore what .git/info/exclude ignores. It
// is rewritten only when that changed: the untracked cache starts over when
// it does.
func (s *Shadow) syncExcludes() error {
	b, err := os.ReadFile(filepath.Join(s.main.CommonDir, "info", "exclude"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	path := filepath.Join(s.repo.GitDir, "info", "exclude")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return fsutil.WriteAtomic(path, b, 0o644)
}

// commit records tree, taken on branch at head, as checkpoint number seq.
func (s *Shadow) commit(tree, branch, head string, seq int, reason, source, pipeline string) (*Checkpoint, error) {
	now, err := gitext.Now()
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Tree: tree, Reason: reason, Source: source, Branch: branch, Head: head,
		Time: now.UTC().Format(time.RFC3339), Seq: seq, Pipeline: pipeline}
	sig := gitext.Signature("git-crucible", "checkpoint@git-crucible", now)
	obj := gitext.Commit{Tree: tree, Author: sig, Committer: sig, Message: c.message()}
	if c.ID, err = s.repo.WriteObject("commit", obj.Encode()); err != nil {
		return nil, err
	}
	return c, nil
}

// Find names a checkpoint by id prefix, or by reason (the newest with it).
func (s *Shadow) Find(ctx context.Context, name string) (*Checkpoint, error) {
	list, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var byPrefix []Checkpoint
	for _, c := range list {
		if c.Reason == name {
			return &c, nil
		}
		if len(name) >= 4 && strings.HasPrefix(c.ID, name) {
			byPrefix = append(byPrefix, c)
		}
	}
	switch len(byPrefix) {
	case 0:
		return nil, fmt.Errorf("no checkpoint %q (by id prefix or reason)", name)
	case 1:
		return &byPrefix[0], nil
	}
	return nil, fmt.Errorf("checkpoint %q is ambiguous (%d match)", name, len(byPrefix))
}

// Files lists the paths a checkpoint holds, with their modes.
func (s *Shadow) Files(ctx context.Context, c *Checkpoint) ([]string, error) {
	list, err := s.repo.ListTree(ctx, c.Tree)
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(list))
	for _, f := range list {
		files = append(files, f.Mode+" "+f.Path)
	}
	return files, nil
}

// Prune deletes all but the newest keep checkpoints of each pipeline (and
// of none), sparing every pre-restore-safety checkpoint younger than
// safetyAge, then lets the shadow's gc free their objects. It returns the
// checkpoints it deleted.
func (s *Shadow) Prune(ctx context.Context, keep int, safetyAge time.Duration) ([]Checkpoint, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	s.clearStaleLocks()
	recs, err := s.records(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(recs, func(i, j int) bool { return parse(recs[i]).Seq > parse(recs[j]).Seq })
	now, err := gitext.Now()
	if err != nil {
		return nil, err
	}
	kept := map[string]int{}
	var gone []Checkpoint
	var left []record
	var deletes []gitext.RefUpdate
	for _, r := range recs { // newest first
		c := parse(r)
		if c.Reason == "pre-restore-safety" {
			if t, err := time.Parse(time.RFC3339, c.Time); err == nil && now.Sub(t) < safetyAge {
				left = append(left, r)
				continue
			}
		}
		if kept[c.Pipeline] < keep {
			kept[c.Pipeline]++
			left = append(left, r)
			continue
		}
		deletes = append(deletes, gitext.RefUpdate{Name: RefPrefix + c.ID, Old: c.ID})
		gone = append(gone, c)
	}
	if len(gone) > 0 {
		// The newest is always kept; the branch must not hold a pruned one.
		move, err := s.headMove(parse(left[0]).ID)
		if err != nil {
			return nil, err
		}
		if err := s.repo.UpdateRefs(ctx, "checkpoint: prune", append(move, deletes...)...); err != nil {
			return nil, err
		}
		s.saveRecords(left)
		if err := s.repo.PruneNow(ctx); err != nil {
			return gone, err
		}
	}
	return gone, nil
}
