package verifycommits

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/verifycommits/results"
)

// NotesRef holds the results: a note on each tested tree, a line per result.
const NotesRef = "refs/notes/crucible/gates"

// The results, as package results defines them for the hook binary.
type (
	Status = results.Status
	Result = results.Result
)

// SkipExit is the exit status by which a gate says a commit cannot be
// tested, as for git bisect run.
const SkipExit = results.SkipExit

// The verdicts.
const (
	Pass = results.Pass
	Fail = results.Fail
	Skip = results.Skip
)

// Store is a repository's gate results. Layout under <crucible dir>/gates:
// index/<spec> lists the results known here, a "<tree> <result line>" line
// each, appended to (the newest for a tree wins); pending/ holds results
// not in the notes yet (Flush moves them); logs/<spec>/<tree>.log is the
// output of the last run. The index and pending files are only appended
// to or written whole and renamed: a kill -9 loses at most the line being
// appended, which reading skips and Prime restores from the notes.
type Store struct {
	repo  *gitext.Repo
	dir   string
	mu    sync.Mutex                   // guards index: slots record at once
	index map[string]map[string]Result // by spec, then tree; loaded once
}

// Open returns repo's store; it creates nothing until written to.
func Open(repo *gitext.Repo) *Store {
	return &Store{repo: repo, dir: filepath.Join(repo.CrucibleDir(), "gates"), index: map[string]map[string]Result{}}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) indexPath(spec string) string {
	return filepath.Join(results.IndexDir(s.repo.CrucibleDir()), spec)
}

// LogPath is where the output of the gate's last run on tree is kept.
func (s *Store) LogPath(tree, spec string) string {
	return filepath.Join(s.dir, "logs", spec, tree+".log")
}

// loadIndex reads spec's index once: one file, so a lookup costs no git
// process and no more than one read for a whole range. s.mu is held.
func (s *Store) loadIndex(spec string) (map[string]Result, error) {
	if m, ok := s.index[spec]; ok {
		return m, nil
	}
	b, err := os.ReadFile(s.indexPath(spec))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	m := map[string]Result{}
	for _, line := range strings.Split(string(b), "\n") {
		tree, rest, _ := strings.Cut(line, " ")
		r, err := results.ParseLine(tree, rest)
		if err != nil || r.Spec != spec || !s.repo.ValidOID(tree) {
			continue // a line cut short by a kill, or not ours
		}
		if old, ok := m[tree]; !ok || !r.Time.Before(old.Time) {
			m[tree] = r
		}
	}
	s.index[spec] = m
	return m, nil
}

// appendIndex adds results to their specs' index files, one write each.
func (s *Store) appendIndex(rs []Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	bySpec := map[string][]byte{}
	for _, r := range rs {
		bySpec[r.Spec] = append(bySpec[r.Spec], r.Tree+" "+r.Line()+"\n"...)
		if m, ok := s.index[r.Spec]; ok {
			m[r.Tree] = r
		}
	}
	for spec, lines := range bySpec {
		if err := os.MkdirAll(filepath.Dir(s.indexPath(spec)), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(s.indexPath(spec), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(lines)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Lookup reads the local index alone: no git process. Prime fills it from
// the notes first.
func (s *Store) Lookup(tree, spec string) (Result, bool, error) {
	if !s.repo.ValidOID(tree) {
		return Result{}, false, fmt.Errorf("not a tree id: %q", tree)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.loadIndex(spec)
	if err != nil {
		return Result{}, false, err
	}
	r, ok := m[tree]
	return r, ok, nil
}

// Prime brings the index up to date with the notes for trees: a result
// the notes hold that is newer than the index's (or the index lacks) is
// added to it. The index is only ever a copy of the notes plus what was
// recorded here, so a lost or deleted index is rebuilt this way. It
// returns how many of trees have a result.
func (s *Store) Prime(ctx context.Context, spec string, trees []string) (int, error) {
	s.mu.Lock()
	m, err := s.loadIndex(spec)
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	r, err := notes.NewReader(ctx, s.repo, NotesRef)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var newer []Result
	known := 0
	for _, tree := range trees {
		s.mu.Lock()
		have, inIndex := m[tree]
		s.mu.Unlock()
		note, ok, err := r.Read(ctx, tree)
		if err != nil {
			return 0, err
		}
		noted, inNotes := results.Latest(tree, spec, note)
		if ok && inNotes && (!inIndex || noted.Time.After(have.Time)) {
			newer = append(newer, noted)
		}
		if inIndex || (ok && inNotes) {
			known++
		}
	}
	return known, s.appendIndex(newer)
}

// Outcome is a result and the gate's output: Output, or the file LogFile
// holds, which Record moves into place.
type Outcome struct {
	Result
	Output  []byte
	LogFile string
}

// records numbers the pending files this process writes, for unique names.
var records atomic.Int64

// Record keeps results and the gate's output: the logs, one pending file
// that Flush turns into notes, and the index. The pending file is written
// whole and renamed into place and is named for its writer, so a kill
// leaves the batch recorded or not, and concurrent writers never
// overwrite one another's.
func (s *Store) Record(outs ...Outcome) error {
	var pending []byte
	rs := make([]Result, 0, len(outs))
	for _, o := range outs {
		if !s.repo.ValidOID(o.Tree) {
			return fmt.Errorf("not a tree id: %q", o.Tree)
		}
		log := s.LogPath(o.Tree, o.Spec)
		if o.LogFile != "" {
			if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
				return err
			}
			if err := os.Rename(o.LogFile, log); err != nil {
				return err
			}
		} else if err := fsutil.WriteAtomic(log, o.Output, 0o644); err != nil {
			return err
		}
		pending = append(pending, o.Tree+" "+o.Line()+"\n"...)
		rs = append(rs, o.Result)
	}
	if len(rs) == 0 {
		return nil
	}
	name := fmt.Sprintf("%d-%d-%d", os.Getpid(), time.Now().UnixNano(), records.Add(1))
	if err := fsutil.WriteAtomic(filepath.Join(s.dir, "pending", name), pending, 0o644); err != nil {
		return err
	}
	return s.appendIndex(rs)
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
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // a file being written
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another Flush took it
		}
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			tree, rest, _ := strings.Cut(line, " ")
			if _, err := results.ParseLine(tree, rest); err != nil || !s.repo.ValidOID(tree) {
				return 0, fmt.Errorf("%s: not a gate result: %q", path, line)
			}
			i, ok := byTree[tree]
			if !ok {
				i = len(batch)
				byTree[tree] = i
				batch = append(batch, notes.Lines{Object: tree})
			}
			batch[i].Lines = append(batch[i].Lines, []byte(rest))
			n++
		}
		done = append(done, path)
	}
	if err := notes.AppendEach(ctx, s.repo, NotesRef, batch); err != nil {
		return 0, err
	}
	for _, p := range done {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	return n, nil
}
