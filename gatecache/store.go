package gatecache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/notes"
)

// NotesRef holds the results: a note on each tested tree, a line per result.
const NotesRef = "refs/notes/crucible/gates"

// SkipExit is the exit status by which a gate says a commit cannot be
// tested, as for git bisect run.
const SkipExit = 125

// Status is a gate's verdict on a tree.
type Status string

// The verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// StatusOf is the verdict of a gate's exit status.
func StatusOf(exit int) Status {
	switch exit {
	case 0:
		return Pass
	case SkipExit:
		return Skip
	}
	return Fail
}

// Result is one run of a gate (Spec) on a tree.
type Result struct {
	Tree     string
	Spec     string
	Status   Status
	Exit     int
	Time     time.Time // when it finished, to the second
	Duration time.Duration
}

// lineTag starts every result line; a later format takes another tag.
const lineTag = "gate1"

// Line is r as a note line: "gate1 <spec> <status> <exit> <unix time> <ms>".
func (r Result) Line() string {
	return fmt.Sprintf("%s %s %s %d %d %d", lineTag, r.Spec, r.Status, r.Exit, r.Time.Unix(), r.Duration.Milliseconds())
}

// ParseLine reads a note line of tree's note. Lines of another format are
// errors the caller may skip: a newer writer may add some.
func ParseLine(tree, line string) (Result, error) {
	f := strings.Split(line, " ")
	if len(f) != 6 || f[0] != lineTag {
		return Result{}, fmt.Errorf("not a gate result: %q", line)
	}
	r := Result{Tree: tree, Spec: f[1], Status: Status(f[2])}
	if len(r.Spec) != 32 || strings.Trim(r.Spec, "0123456789abcdef") != "" {
		return Result{}, fmt.Errorf("bad gate spec %q", f[1])
	}
	exit, err1 := strconv.Atoi(f[3])
	unix, err2 := strconv.ParseInt(f[4], 10, 64)
	ms, err3 := strconv.ParseInt(f[5], 10, 64)
	canonical := strconv.Itoa(exit) == f[3] && strconv.FormatInt(unix, 10) == f[4] && strconv.FormatInt(ms, 10) == f[5]
	if err := errors.Join(err1, err2, err3); err != nil || !canonical || exit < 0 || exit > 255 || unix < 0 || ms < 0 || ms > 1<<40 {
		return Result{}, fmt.Errorf("bad numbers in gate result %q", line)
	}
	if StatusOf(exit) != r.Status {
		return Result{}, fmt.Errorf("gate result %q: exit %d is no %s", line, exit, r.Status)
	}
	r.Exit, r.Time, r.Duration = exit, time.Unix(unix, 0).UTC(), time.Duration(ms)*time.Millisecond
	return r, nil
}

// Latest is the newest result for spec in a note on tree, and whether
// there is one: the latest by time, and of results in the same second the
// last line (a result is appended after those it follows). Lines that are
// no result are skipped.
func Latest(tree, spec string, note []byte) (Result, bool) {
	var last Result
	found := false
	for _, line := range strings.Split(string(note), "\n") {
		if r, err := ParseLine(tree, line); err == nil && r.Spec == spec && (!found || !r.Time.Before(last.Time)) {
			last, found = r, true
		}
	}
	return last, found
}

// Store is a repository's gate results. Layout under <crucible dir>/gates:
// index/<spec>/<tree> holds the newest result line known here; pending/
// holds results not in the notes yet, one file each (Flush moves them);
// logs/<spec>/<tree>.log is the output of the last run.
type Store struct {
	repo *gitext.Repo
	dir  string
}

// Open returns repo's store; it creates nothing until written to.
func Open(repo *gitext.Repo) *Store {
	return &Store{repo: repo, dir: filepath.Join(repo.CrucibleDir(), "gates")}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) indexPath(tree, spec string) string {
	return filepath.Join(s.dir, "index", spec, tree)
}

// LogPath is where the output of the gate's last run on tree is kept.
func (s *Store) LogPath(tree, spec string) string {
	return filepath.Join(s.dir, "logs", spec, tree+".log")
}

// Lookup reads the local index alone: no git process, so it is what runs
// at every commit. Prime fills it from the notes first.
func (s *Store) Lookup(tree, spec string) (Result, bool, error) {
	if !s.repo.ValidOID(tree) {
		return Result{}, false, fmt.Errorf("not a tree id: %q", tree)
	}
	b, err := os.ReadFile(s.indexPath(tree, spec))
	if errors.Is(err, fs.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	r, found := Latest(tree, spec, b)
	return r, found, nil
}

// Prime brings the index up to date with the notes for trees: a result
// the notes hold that is newer than the index's (or the index lacks)
// replaces it. The index is only ever a copy of the notes plus what was
// recorded here, so a lost or deleted index is rebuilt this way. It
// returns how many of trees have a result.
func (s *Store) Prime(ctx context.Context, spec string, trees []string) (int, error) {
	r, err := notes.NewReader(ctx, s.repo, NotesRef)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	known := 0
	for _, tree := range trees {
		have, inIndex, err := s.Lookup(tree, spec)
		if err != nil {
			return 0, err
		}
		note, ok, err := r.Read(ctx, tree)
		if err != nil {
			return 0, err
		}
		noted, inNotes := Latest(tree, spec, note)
		if ok && inNotes && (!inIndex || noted.Time.After(have.Time)) {
			if err := fsutil.WriteAtomic(s.indexPath(tree, spec), []byte(noted.Line()+"\n"), 0o644); err != nil {
				return 0, err
			}
		}
		if inIndex || (ok && inNotes) {
			known++
		}
	}
	return known, nil
}

// records numbers the results this process records, for unique names.
var records atomic.Int64

// Record keeps a result and the gate's output: the log, the index, and a
// pending file that Flush turns into a note. Each file is written
// atomically, so a kill leaves a result either recorded or not; a pending
// file is named for its writer, so concurrent writers never overwrite one
// another's.
func (s *Store) Record(r Result, output []byte) error {
	if !s.repo.ValidOID(r.Tree) {
		return fmt.Errorf("not a tree id: %q", r.Tree)
	}
	line := []byte(r.Line() + "\n")
	if err := fsutil.WriteAtomic(s.LogPath(r.Tree, r.Spec), output, 0o644); err != nil {
		return err
	}
	pending := filepath.Join(s.dir, "pending", fmt.Sprintf("%s-%s-%d-%d-%d", r.Tree, r.Spec, os.Getpid(), time.Now().UnixNano(), records.Add(1)))
	if err := fsutil.WriteAtomic(pending, line, 0o644); err != nil {
		return err
	}
	return fsutil.WriteAtomic(s.indexPath(r.Tree, r.Spec), line, 0o644)
}

// Flush writes every pending result into the notes, in one notes commit
// moved by compare-and-swap, then deletes the pending files it wrote. A
// kill before the delete only means the lines are offered again, and a
// note never takes a line twice. It returns how many results it wrote.
func (s *Store) Flush(ctx context.Context) (int, error) {
	dir := filepath.Join(s.dir, "pending")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	byTree := map[string]int{}
	var batch []notes.Lines
	var done []string
	for _, e := range entries {
		tree, _, _ := strings.Cut(e.Name(), "-")
		if strings.HasPrefix(e.Name(), ".") || !s.repo.ValidOID(tree) {
			continue // a temporary file being written, or not ours
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // another Flush took it
		}
		if err != nil {
			return 0, err
		}
		line := strings.TrimSuffix(string(b), "\n")
		if _, err := ParseLine(tree, line); err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name()), err)
		}
		i, ok := byTree[tree]
		if !ok {
			i = len(batch)
			byTree[tree] = i
			batch = append(batch, notes.Lines{Object: tree})
		}
		batch[i].Lines = append(batch[i].Lines, []byte(line))
		done = append(done, filepath.Join(dir, e.Name()))
	}
	if err := notes.AppendEach(ctx, s.repo, NotesRef, batch); err != nil {
		return 0, err
	}
	for _, p := range done {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	return len(done), nil
}
