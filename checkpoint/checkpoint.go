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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
)

// RefPrefix holds one ref per checkpoint, named by its id. Checkpoint
// commits have no parents, so deleting a ref frees exactly that snapshot.
const RefPrefix = "refs/checkpoints/"

// Shadow is one worktree's shadow repository.
type Shadow struct {
	ctx  context.Context
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
	s := &Shadow{ctx: ctx, main: main, repo: &gitext.Repo{GitDir: dir, CommonDir: dir, WorkTree: main.WorkTree, Format: main.Format}}
	_, headErr := os.Stat(filepath.Join(dir, "HEAD"))
	_, objErr := os.Stat(filepath.Join(dir, "objects"))
	switch {
	case headErr == nil && objErr == nil:
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
// place, so that two first checkpoints at once never see half a repository:
// the loser of the rename uses the winner's.
func create(ctx context.Context, dir, format string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".init-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := gitext.InitBare(ctx, tmp, format); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "HEAD")); serr == nil {
			return nil // another process made it first
		}
		return err
	}
	return nil
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
func (s *Shadow) Create(reason, source, pipeline string) (*Result, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	index := filepath.Join(s.repo.GitDir, "index")
	// Under the lock no other git-crucible works in the shadow, so an index
	// lock left there is a killed create's: git's own, in our repository.
	if err := os.Remove(index + ".lock"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	skipped, tooLarge, err := s.stage(index)
	if err != nil {
		return nil, err
	}
	r := &Result{Skipped: skipped, TooLarge: tooLarge}
	s.step("writing the tree")
	out, err := s.repo.GitIndex(s.ctx, index, "write-tree")
	if err != nil {
		return nil, err
	}
	tree := strings.TrimSpace(string(out))
	list, err := s.List() // under the lock: nobody adds one meanwhile
	if err != nil {
		return nil, err
	}
	seq := 1
	if len(list) > 0 {
		if list[0].Tree == tree {
			r.Checkpoint, r.Unchanged = list[0], true
			return r, nil
		}
		seq = list[0].Seq + 1
	}
	c, err := s.commit(tree, seq, reason, source, pipeline)
	if err != nil {
		return nil, err
	}
	if err := s.repo.UpdateRef(RefPrefix+c.ID, c.ID, ""); err != nil {
		return nil, err
	}
	r.Checkpoint = *c
	return r, nil
}

// stage brings index up to the work tree, nested repositories left out
// (they are returned): git cannot add one without a commit, and one with a
// commit would be a link to commits the shadow does not have.
func (s *Shadow) stage(index string) (skipped, tooLarge []string, err error) {
	settings := s.settings()
	// Nested repositories show as "dir/" among the untracked files, once
	// the shadow's excludes are back to the user's alone.
	if err := s.syncExcludes(nil); err != nil {
		return nil, nil, err
	}
	s.step("looking for changes")
	changed, err := s.repo.GitIndex(s.ctx, index, "ls-files", "-o", "-m", "-z", "--full-name", "--exclude-standard", "--", ":/")
	if err != nil {
		return nil, nil, err
	}
	skipped, tooLarge = []string{}, []string{}
	var exclusions []string
	for _, p := range strings.Split(string(changed), "\x00") {
		switch {
		case strings.HasSuffix(p, "/"):
			skipped = append(skipped, strings.TrimSuffix(p, "/"))
		case p != "" && settings.maxFileSize > 0:
			fi, err := os.Lstat(filepath.Join(s.main.WorkTree, filepath.FromSlash(p)))
			if err == nil && fi.Mode().IsRegular() && fi.Size() > settings.maxFileSize {
				// A file that grew past the cap keeps its last checkpointed version.
				tooLarge = append(tooLarge, fmt.Sprintf("%s (%d bytes)", p, fi.Size()))
				exclusions = append(exclusions, ":(exclude,top,literal)"+p)
			}
		}
	}
	if err := s.syncExcludes(skipped); err != nil {
		return nil, nil, err
	}
	s.step("adding files")
	if _, err := s.repo.GitIndex(s.ctx, index, s.addArgs(settings, exclusions)...); err != nil {
		return nil, nil, err
	}
	staged, err := s.repo.GitIndex(s.ctx, index, "ls-files", "-s", "-z", "--full-name", "--", ":/")
	if err != nil {
		return nil, nil, err
	}
	var links []string
	for _, entry := range bytes.Split(staged, []byte{0}) {
		if meta, path, ok := bytes.Cut(entry, []byte{'\t'}); ok && bytes.HasPrefix(meta, []byte("160000 ")) {
			links = append(links, ":(top,literal)"+string(path))
			skipped = append(skipped, string(path))
		}
	}
	if len(links) > 0 {
		if _, err := s.repo.GitIndex(s.ctx, index, append([]string{"rm", "-q", "--cached", "--"}, links...)...); err != nil {
			return nil, nil, err
		}
	}
	return skipped, tooLarge, nil
}

// lock serialises the shadow's writers. It is an flock, which the kernel
// releases when its holder dies, so a killed create never blocks the next.
func (s *Shadow) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.repo.GitDir, "crucible.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (s *Shadow) addArgs(settings settings, exclusions []string) []string {
	args := []string{"add", "-A", "--ignore-errors"}
	if settings.excludesFile != "" {
		args = append([]string{"-c", "core.excludesFile=" + settings.excludesFile}, args...)
	}
	// The whole work tree, from any subdirectory, less what is too large.
	return append(append(args, "--", ":/"), exclusions...)
}

// DefaultMaxFileSize is the per-file cap when crucible.checkpoint.maxFileSize is unset.
const DefaultMaxFileSize = 100 << 20

type settings struct {
	excludesFile string // the user's core.excludesFile, "" for git's default
	maxFileSize  int64  // 0: no cap
}

// settings reads, in one git process, what the main repository's config
// (its local file included) says for checkpoints.
func (s *Shadow) settings() settings {
	st := settings{maxFileSize: DefaultMaxFileSize}
	out, err := s.main.Git(s.ctx, "config", "--get-regexp", `^(core\.excludesfile|crucible\.checkpoint\.maxfilesize)$`)
	if err != nil {
		return st
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		key, value, _ := strings.Cut(line, " ")
		switch key {
		case "core.excludesfile":
			if rest, ok := strings.CutPrefix(value, "~/"); ok {
				if home, err := os.UserHomeDir(); err == nil {
					value = filepath.Join(home, rest)
				}
			}
			st.excludesFile = value
		case "crucible.checkpoint.maxfilesize":
			if n, ok := parseSize(value); ok {
				st.maxFileSize = n
			}
		}
	}
	return st
}

// parseSize reads git's integer syntax: digits with an optional k, m or g.
func parseSize(v string) (int64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, strings.TrimSuffix(v, "m")
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, strings.TrimSuffix(v, "g")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mult, true
}

// syncExcludes makes the shadow ignore what .git/info/exclude ignores,
// and the nested repositories.
func (s *Shadow) syncExcludes(nested []string) error {
	b, err := os.ReadFile(filepath.Join(s.main.CommonDir, "info", "exclude"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(nested) > 0 {
		b = append(append([]byte(nil), b...), "\n# nested repositories, left out by git-crucible\n"...)
		for _, n := range nested {
			b = append(b, "/"+escapeGlob(n)+"/\n"...)
		}
	}
	path := filepath.Join(s.repo.GitDir, "info", "exclude")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// escapeGlob quotes the pattern characters of an exclude line.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]\!# `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// commit records tree as checkpoint number seq.
func (s *Shadow) commit(tree string, seq int, reason, source, pipeline string) (*Checkpoint, error) {
	now, err := gitext.Now()
	if err != nil {
		return nil, err
	}
	branch, _ := s.main.HeadBranch()
	head, _ := s.main.HeadCommit()
	c := &Checkpoint{Tree: tree, Reason: reason, Source: source, Branch: branch, Head: head,
		Time: now.UTC().Format(time.RFC3339), Seq: seq, Pipeline: pipeline}
	msg := fmt.Sprintf("checkpoint: %s\n\nReason: %s\nSource: %s\nBranch: %s\nHead: %s\nTime: %s\nSeq: %d\nPipeline: %s\n",
		reason, reason, source, branch, head, c.Time, seq, pipeline)
	sig := gitext.Signature("git-crucible", "checkpoint@git-crucible", now)
	obj := gitext.Commit{Tree: tree, Author: sig, Committer: sig, Message: msg}
	if c.ID, err = s.repo.WriteObject("commit", obj.Encode()); err != nil {
		return nil, err
	}
	return c, nil
}

func parse(id string, c *gitext.Commit) *Checkpoint {
	cp := &Checkpoint{ID: id, Tree: c.Tree}
	for _, line := range strings.Split(c.Message, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Reason":
			cp.Reason = v
		case "Source":
			cp.Source = v
		case "Branch":
			cp.Branch = v
		case "Head":
			cp.Head = v
		case "Time":
			cp.Time = v
		case "Seq":
			cp.Seq, _ = strconv.Atoi(v)
		case "Pipeline":
			cp.Pipeline = v
		}
	}
	return cp
}

// List returns every checkpoint, newest first.
func (s *Shadow) List() ([]Checkpoint, error) {
	out, err := s.repo.Git(s.ctx, "for-each-ref", "--format=%(objectname)%00%(tree)%00%(contents)%00", RefPrefix)
	if err != nil {
		return nil, err
	}
	list := []Checkpoint{}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		id := strings.TrimSpace(fields[i])
		list = append(list, *parse(id, &gitext.Commit{Tree: fields[i+1], Message: fields[i+2]}))
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Seq > list[j].Seq })
	return list, nil
}

// Find names a checkpoint by id prefix, or by reason (the newest with it).
func (s *Shadow) Find(name string) (*Checkpoint, error) {
	list, err := s.List()
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
func (s *Shadow) Files(c *Checkpoint) ([]string, error) {
	out, err := s.repo.Git(s.ctx, "ls-tree", "-r", "-z", "--full-tree", c.Tree)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(f, "\t")
		if mode, _, _ := strings.Cut(meta, " "); ok {
			files = append(files, mode+" "+path)
		}
	}
	return files, nil
}

// Prune deletes all but the newest keep checkpoints of each pipeline (and
// of none), sparing every pre-restore-safety checkpoint younger than
// safetyAge, then lets the shadow's gc free their objects. It returns the
// checkpoints it deleted.
func (s *Shadow) Prune(keep int, safetyAge time.Duration) ([]Checkpoint, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	now, err := gitext.Now()
	if err != nil {
		return nil, err
	}
	kept := map[string]int{}
	var gone []Checkpoint
	for _, c := range list { // newest first
		if c.Reason == "pre-restore-safety" {
			if t, err := time.Parse(time.RFC3339, c.Time); err == nil && now.Sub(t) < safetyAge {
				continue
			}
		}
		if kept[c.Pipeline] < keep {
			kept[c.Pipeline]++
			continue
		}
		if _, err := s.repo.Git(s.ctx, "update-ref", "-d", RefPrefix+c.ID, c.ID); err != nil {
			return gone, err
		}
		gone = append(gone, c)
	}
	if len(gone) > 0 {
		if _, err := s.repo.Git(s.ctx, "gc", "-q", "--prune=now"); err != nil {
			return gone, err
		}
	}
	return gone, nil
}
