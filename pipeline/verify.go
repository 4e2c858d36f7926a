package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/refs"
)

// Problem is one thing wrong with a chain, and where it is.
type Problem struct {
	Pipeline string `json:"pipeline"`
	Commit   string `json:"commit,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Message  string `json:"message"`
}

func (p Problem) String() string {
	where := p.Pipeline
	if p.Commit != "" {
		where += " " + p.Commit[:min(12, len(p.Commit))]
	}
	if p.Seq != 0 {
		where += fmt.Sprintf(" seq %d", p.Seq)
	}
	return where + ": " + p.Message
}

// chainFiles are all the entries a chain commit may have at its top level.
var chainFiles = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		refs.FormatFile: true, refs.EventsFile: true, refs.StateFile: true, HeaderFile: true, LedgerFile: true,
		dispatchDir: true, handoffsDir: true, importDir: true, replayDir: true, TasksDir: true,
	}
}}

// stateFormats is the state format of each chain format.
var stateFormats = lazy.Value[map[string]int]{New: func() map[string]int {
	return map[string]int{refs.FormatV1: 1, refs.FormatV2: 2}
}}

// Directories: prompts and outputs (DispatchPath), handoffs (HandoffPath),
// replays' Compression State Blocks (ReplayStatePath).
const dispatchDir, handoffsDir, importDir, replayDir = "dispatch", "handoffs", "import", "replay"

// Verify replays pipeline id's chain from its root and reports every
// structural fault, illegal transition and state that its events do not
// produce. A merge commit must carry the state Merged computes from every
// event it reaches. No problems means every transition on the chain was
// legal.
func (s *Service) Verify(ctx context.Context, id string) ([]Problem, error) {
	tip, err := s.Store.Tip(id)
	if err != nil {
		return nil, err
	}
	problems, err := s.VerifyAt(ctx, id, tip)
	if err != nil {
		return nil, err
	}
	rewound, err := s.rewound(ctx, id, tip)
	if rewound != nil {
		problems = append(problems, *rewound)
	}
	return problems, err
}

// rewound reports a chain its reflog says was rewound: the newest tip
// git-crucible moved it to (every move of a chain is logged, with a
// "crucible: " reason: gitext.BeginRefs) that the chain no longer
// contains, and how to put it back. A commit someone else put there and
// took away again is not git-crucible's to miss.
func (s *Service) rewound(ctx context.Context, id, tip string) (*Problem, error) {
	ref := refs.PipelineRef(id)
	moves, err := s.Repo.Reflog(ctx, ref, 0)
	if err != nil {
		return nil, nil // no reflog: nothing to say
	}
	var logged []string
	for _, m := range moves {
		if strings.HasPrefix(m.Subject, "crucible: ") {
			logged = append(logged, m.OID)
		}
	}
	if len(logged) == 0 {
		return nil, nil
	}
	gone, err := s.Repo.RevListIDs(ctx, gitext.RevSet{Include: logged, Exclude: []string{tip}}, gitext.NewestFirst)
	if err != nil {
		return nil, err
	}
	lost := map[string]bool{}
	for _, c := range gone {
		lost[c] = true
	}
	for _, c := range logged { // newest first
		if lost[c] {
			return &Problem{Pipeline: id, Commit: tip, Message: fmt.Sprintf(
				"the chain lost commits git-crucible wrote: its reflog holds %s, which the chain no longer contains; put it back with: git update-ref %s %s %s",
				c[:12], ref, c, tip)}, nil
		}
	}
	return nil, nil
}

// VerifyKnown is Verify for audits that run often (pre-push, pre-receive,
// verify --range): it replays only what came after the newest commit an
// earlier VerifyKnown found sound, while the chain still contains it, and
// records the new tip once it is found sound. The record is a cache under
// .git/crucible, no more trusted than the refs beside it.
func (s *Service) VerifyKnown(ctx context.Context, id string) ([]Problem, error) {
	tip, err := s.Store.Tip(id)
	if err != nil {
		return nil, err
	}
	return s.VerifyKnownAt(ctx, id, tip)
}

// VerifyKnownAt is VerifyKnown of the chain as it is at commit tip, e.g.
// the tip a push is about to send. A tip the recorded sound commit already
// contains is sound as it is.
func (s *Service) VerifyKnownAt(ctx context.Context, id, tip string) ([]Problem, error) {
	known := s.Store.Verified(id)
	if known == tip {
		return nil, nil
	}
	if known != "" {
		if ok, err := s.Store.IsAncestor(ctx, known, tip); err != nil || !ok {
			if behind, err := s.Store.IsAncestor(ctx, tip, known); err == nil && behind {
				return nil, nil
			}
			known = "" // rewritten, or gone: replay it all
		}
	}
	problems, err := s.VerifySince(ctx, id, known, tip)
	if err == nil && len(problems) == 0 {
		s.Store.SetVerified(id, tip) // best effort: a lost record costs a full replay
	}
	return problems, err
}

// VerifyAt is Verify of pipeline id's chain as it is at commit tip, e.g. a
// chain just fetched and not yet taken in.
func (s *Service) VerifyAt(ctx context.Context, id, tip string) ([]Problem, error) {
	return s.VerifySince(ctx, id, "", tip)
}

// VerifySince is VerifyAt that takes the commits reachable from trusted (a
// chain this clone already holds, "" for none) as sound, and replays only
// the others, starting from the states their trusted parents carry: a
// fetch checks what arrived, not the whole history again.
func (s *Service) VerifySince(ctx context.Context, id, trusted, tip string) ([]Problem, error) {
	var problems []Problem
	report := func(commit string, seq int64, format string, args ...any) {
		problems = append(problems, Problem{Pipeline: id, Commit: commit, Seq: seq, Message: fmt.Sprintf(format, args...)})
	}
	states := map[string]*State{}
	left := map[string]int{} // commits to come that need a state, for those that need it only as a parent
	// stateOf is a parent's state: replayed here, or carried by a trusted commit.
	stateOf := func(oid string) (*State, bool) {
		if st, ok := states[oid]; ok || trusted == "" {
			return st, ok
		}
		h, err := s.Store.HeadAt(ctx, id, oid)
		if err != nil {
			return nil, false
		}
		st, err := s.stateAt(ctx, h)
		if err != nil {
			return nil, false
		}
		states[oid] = st
		return st, true
	}
	var header string // pipeline.toml blob of the root, which no commit may change
	roots := 0
	chain := gitext.RevSet{Include: []string{tip}}
	if trusted != "" {
		h, err := s.Store.HeadAt(ctx, id, trusted)
		if err != nil {
			return nil, err
		}
		for _, e := range h.Tree {
			if e.Name == HeaderFile {
				header = e.OID
			}
		}
		roots, chain.Exclude = 1, []string{trusted}
	}
	checker := newDerivedChecker(id, s.Repo)
	read := []string{refs.FormatFile, refs.EventsFile}
	err := s.Store.WalkFrom(ctx, chain, read, func(c *refs.ChainCommit) (bool, error) {
		files := make(map[string]gitext.TreeEntry, len(c.Entries))
		for _, e := range c.Entries {
			files[e.Name] = e
			if !chainFiles.Get()[e.Name] {
				report(c.OID, 0, "unexpected entry %q in the tree", e.Name)
			}
		}
		read := func(name string) []byte {
			if _, ok := files[name]; !ok {
				report(c.OID, 0, "missing %s", name)
				return nil
			}
			b, err := c.File(name)
			if err != nil {
				report(c.OID, 0, "cannot read %s: %v", name, err)
			}
			return b
		}
		f := read(refs.FormatFile)
		format, known := stateFormats.Get()[string(f)]
		if f != nil && !known {
			report(c.OID, 0, "unknown format %q", bytes.TrimSpace(f))
			return false, nil // nothing further can be trusted to mean what this version thinks
		}
		if e, ok := files[HeaderFile]; ok {
			if header == "" {
				header = e.OID
			} else if e.OID != header {
				report(c.OID, 0, "%s changed after the pipeline started", HeaderFile)
			}
		}
		own, err := DecodeEvents(read(refs.EventsFile))
		if err != nil {
			report(c.OID, 0, "%s: %v", refs.EventsFile, err)
		}
		var st *State // the state the commit's events apply to
		switch n := len(c.Commit.Parents); {
		case n == 0:
			if roots++; roots > 1 {
				report(c.OID, 0, "a second root; a chain has one")
			}
		case n == 1:
			if prev, ok := stateOf(c.Commit.Parents[0]); ok {
				copied := *prev
				st = &copied
			}
		case n == 2:
			if len(own) != 0 {
				report(c.OID, 0, "a merge commit records events of its own")
			}
			base, err := s.Store.MergeBase(ctx, c.Commit.Parents[0], c.Commit.Parents[1])
			if err != nil {
				return false, err
			}
			baseState, ok := stateOf(base)
			if !ok {
				report(c.OID, 0, "merges two chains that share no history")
				return true, nil
			}
			var sides [2]Side
			for i, p := range c.Commit.Parents {
				sides[i].State, _ = stateOf(p)
				if sides[i].Events, err = s.eventsSince(ctx, base, p); err != nil {
					return false, err
				}
			}
			merged, err := Merged(baseState, sides[0], sides[1])
			if err != nil {
				report(c.OID, 0, "cannot merge: %v", err)
				return true, nil
			}
			st = merged
		default:
			report(c.OID, 0, "has %d parents; a chain merges two at most", n)
		}
		if st == nil {
			st = &State{}
		}
		states[c.OID] = st
		// A state is kept while a commit to come may need it: a child, or a
		// merge whose base it is, which has two children at least.
		for _, p := range c.Commit.Parents {
			if left[p]--; left[p] == 0 {
				delete(states, p)
			}
		}
		if c.Children < 2 {
			left[c.OID] = c.Children
		}
		if len(own) == 0 && err == nil && len(c.Commit.Parents) < 2 {
			report(c.OID, 0, "records no events")
		}
		for _, e := range own {
			if err := e.checkID(); err != nil {
				report(c.OID, e.Seq, "%v", err)
			}
			if e.Writer == "" {
				report(c.OID, e.Seq, "event has no writer")
			}
			if _, err := st.Apply(e); err != nil {
				report(c.OID, e.Seq, "illegal %s: %v", e.Type, err)
			}
		}
		if st.Seq == 0 {
			return true, nil // nothing valid to compare against yet
		}
		if st.ID != id {
			report(c.OID, 0, "chain of %s records pipeline %q", id, st.ID)
		}
		if format != 0 { // its files are rendered in the commit's own format
			st.Format = format
		}
		checker.check(c.OID, files, st, len(problems))
		return true, nil
	})
	return checker.merge(problems), err
}

// derivedChecker compares the files a commit carries that its events
// derive (state.json, ledger.md) with what the replay produced, on another
// core than the replay: rendering them is most of a replay's work. It takes
// the states as the replay leaves them, which Apply no longer changes.
type derivedChecker struct {
	id      string
	repo    *gitext.Repo
	checks  chan derivedCheck
	done    chan struct{}
	marks   []int       // per check: where its problems go among the replay's
	results [][]Problem // per check, filled by the checking goroutine
	// The last ledger rendered and its blob id: most events leave the
	// ledger as it was, and the same ledger renders the same bytes.
	last     ledger.Ledger
	lastBlob string
	encoder  stateEncoder
	// tasks are the blob ids of the task files of the state checked
	// last, when it was in format 2: the next check renders only the
	// files whose entries it changed.
	tasks struct {
		st    *State
		blobs map[string]string
	}
}

type derivedCheck struct {
	commit string
	files  map[string]gitext.TreeEntry
	st     *State
}

func newDerivedChecker(id string, repo *gitext.Repo) *derivedChecker {
	d := &derivedChecker{id: id, repo: repo, checks: make(chan derivedCheck, 64), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for c := range d.checks {
			d.results = append(d.results, d.problems(c))
		}
	}()
	return d
}

// check queues a commit's check; at is how many problems the replay found
// up to and with that commit.
func (d *derivedChecker) check(commit string, files map[string]gitext.TreeEntry, st *State, at int) {
	d.marks = append(d.marks, at)
	d.checks <- derivedCheck{commit, files, st}
}

// problems compares by blob id: the same test as comparing the bytes,
// without reading them.
func (d *derivedChecker) problems(c derivedCheck) []Problem {
	var found []Problem
	for _, f := range []struct{ name, blob string }{
		{refs.StateFile, d.repo.HashObject("blob", d.encoder.encode(c.st))},
		{LedgerFile, d.ledgerBlob(&c.st.Gates.Ledger)},
	} {
		e, ok := c.files[f.name]
		msg := ""
		switch {
		case !ok:
			msg = "missing " + f.name
		case e.IsTree() || e.OID != f.blob:
			msg = f.name + " does not match what the events produce"
		}
		if msg != "" {
			found = append(found, Problem{Pipeline: d.id, Commit: c.commit, Message: msg})
		}
	}
	want, err := d.tasksTree(c.st)
	e, ok := c.files[TasksDir]
	switch {
	case err != nil:
		found = append(found, Problem{Pipeline: d.id, Commit: c.commit, Message: fmt.Sprintf("cannot render %s/: %v", TasksDir, err)})
	case want == "" && ok && c.st.Format < 2:
		found = append(found, Problem{Pipeline: d.id, Commit: c.commit, Message: fmt.Sprintf("unexpected entry %q in the tree", TasksDir)})
	case want == "" && ok || want != "" && (!ok || !e.IsTree() || e.OID != want):
		found = append(found, Problem{Pipeline: d.id, Commit: c.commit, Message: TasksDir + "/ does not match what the events produce"})
	}
	return found
}

// tasksTree is the id of the tree of task files st renders to, "" when
// it renders none (a state in format 1 renders none: state.json holds
// its tasks). The files the state before left as they were are not
// rendered again.
func (d *derivedChecker) tasksTree(st *State) (string, error) {
	if st.Format < 2 {
		d.tasks.st, d.tasks.blobs = nil, nil
		return "", nil
	}
	blobs := map[string]string{}
	if d.tasks.st != nil {
		maps.Copy(blobs, d.tasks.blobs)
	}
	for _, file := range changedTaskFiles(d.tasks.st, st) {
		if f := taskFileIn(st, file); f != nil {
			blobs[file.name()] = d.repo.HashObject("blob", d.encoder.render(f))
		} else {
			delete(blobs, file.name())
		}
	}
	d.tasks.st, d.tasks.blobs = st, blobs
	return taskFilesTree(d.repo, blobs)
}

// ledgerBlob is the blob id of l rendered as ledger.md, rendered again only
// when l is not the ledger of the check before.
func (d *derivedChecker) ledgerBlob(l *ledger.Ledger) string {
	if d.lastBlob == "" || d.last != *l {
		d.last, d.lastBlob = *l, d.repo.HashObject("blob", ledger.Render(l))
	}
	return d.lastBlob
}

// merge waits for the checks and places their problems among the replay's,
// each after those of its commit.
func (d *derivedChecker) merge(replay []Problem) []Problem {
	close(d.checks)
	<-d.done
	var out []Problem
	from := 0
	for i, at := range d.marks {
		out = append(append(out, replay[from:at]...), d.results[i]...)
		from = at
	}
	return append(out, replay[from:]...)
}
