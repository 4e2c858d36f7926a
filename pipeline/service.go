package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/refs"
)

// Files a chain commit carries besides the store's own.
const (
	HeaderFile = "pipeline.toml"
	LedgerFile = "ledger.md"
)

// Header is pipeline.toml, written once when the pipeline starts.
type Header struct {
	ID       string `toml:"id"`
	Goal     string `toml:"goal"`
	Mode     string `toml:"mode"`
	Branch   string `toml:"branch"`
	Baseline string `toml:"baseline"`
	Created  string `toml:"created"`
	Writer   string `toml:"writer"`
}

// Encode writes the header as TOML. It is written by hand because seven
// string keys do not need a TOML library, and linking one costs every
// process — hooks included — its start-up (it reads the local time zone).
func (h Header) Encode() []byte {
	var b bytes.Buffer
	for _, kv := range [][2]string{{"id", h.ID}, {"goal", h.Goal}, {"mode", h.Mode}, {"branch", h.Branch},
		{"baseline", h.Baseline}, {"created", h.Created}, {"writer", h.Writer}} {
		b.WriteString(kv[0] + " = " + tomlString(kv[1]) + "\n")
	}
	return b.Bytes()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Service records and reads pipelines in one repository. Like its
// Store, it is for one goroutine at a time.
type Service struct {
	Repo  *gitext.Repo
	Store *refs.Store
	// last is the decoded state of the chain commit the service read or
	// wrote last: an engine loads the state it has just written after every
	// step and appends to it again, and decoding it costs as much as the
	// state has grown. Callers get shallow copies: State.Apply changes no
	// map or slice in place, so a copy's changes never reach it.
	last struct {
		id, commit string
		st         *State
	}
	// Hook says this service records for a hook (git crucible hook
	// claude): while an engine holds a pipeline, it may still record the
	// dispatches of the agents' own subagents, marked as the hook's.
	Hook bool
	// Relay, when set, carries each append Update makes to a shared
	// copy of the chain (a CI job's pushes to its remote): it calls
	// append, which appends to the local chain from its tip as it is
	// then, and may roll that append back, bring the chain up to date
	// and call append again (the plan runs again on the new state), as
	// often as it needs. Its error is Update's.
	Relay func(ctx context.Context, id string, append func() error) error
	// relaying is set while Relay runs: an Update it makes is not
	// relayed again.
	relaying bool
	// guard is each pipeline an engine guards (Guard) -> its last append.
	guard map[string]string
	// enc renders state.json into buffers it reuses: a state grows with
	// its pipeline, and an engine renders one for every append.
	enc stateEncoder
}

// Open returns a service on repo; Close releases it.
func Open(repo *gitext.Repo) *Service {
	return &Service{Repo: repo, Store: refs.Open(repo)}
}

// Close releases the store.
func (s *Service) Close() error { return s.Store.Close() }

// NoActiveError says no pipeline is active where one was needed.
type NoActiveError struct{ Branch string }

func (e *NoActiveError) Error() string {
	if e.Branch == "" {
		return "HEAD is detached, so no pipeline is active"
	}
	return fmt.Sprintf("no pipeline is active on branch '%s'", e.Branch)
}

// Resolve names the pipeline a command works on: id when given (a unique
// prefix will do), else the one active on the current branch.
func (s *Service) Resolve(ctx context.Context, id string) (string, error) {
	if id == "" {
		branch, err := s.Repo.HeadBranch()
		if err != nil {
			return "", err
		}
		if branch == "" {
			return "", &NoActiveError{}
		}
		active, err := s.Store.Active(branch)
		if err != nil {
			return "", err
		}
		if active == "" {
			return "", &NoActiveError{Branch: branch}
		}
		return active, nil
	}
	if err := refs.ValidateID(id); err != nil {
		return "", err
	}
	if oid, err := s.Repo.ReadRef(refs.PipelineRef(id)); err != nil || oid != "" {
		return id, err
	}
	all, err := s.Store.List(ctx)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, cand := range all {
		if strings.HasPrefix(cand, id) {
			matches = append(matches, cand)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w: %s", refs.ErrNoPipeline, id)
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("pipeline id %q is ambiguous: %s", id, strings.Join(matches, ", "))
}

// Load returns pipeline id's current state and head.
func (s *Service) Load(ctx context.Context, id string) (*State, *refs.Head, error) {
	h, err := s.Store.Head(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.state(ctx, h)
	if err != nil {
		return nil, nil, fmt.Errorf("pipeline %s: %w", id, err)
	}
	return st, h, nil
}

// LoadArchived returns archived pipeline id's state.
func (s *Service) LoadArchived(ctx context.Context, id string) (*State, error) {
	h, err := s.Store.ArchivedHead(ctx, id)
	if err != nil {
		return nil, err
	}
	st, err := s.state(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", id, err)
	}
	return st, nil
}

// state is the state of head h: a copy of the last one decoded or written
// when it is h's.
func (s *Service) state(ctx context.Context, h *refs.Head) (*State, error) {
	if s.last.st == nil || s.last.id != h.ID || s.last.commit != h.Commit {
		st, err := s.stateAt(ctx, h)
		if err != nil {
			return nil, err
		}
		s.remember(h, st)
	}
	c := *s.last.st
	return &c, nil
}

// stateAt decodes the state head h carries: its state.json, and from
// format 2 on its task files.
func (s *Service) stateAt(ctx context.Context, h *refs.Head) (*State, error) {
	st, err := DecodeState(h.State)
	if err != nil || st.Format < 2 {
		return st, err
	}
	files, err := s.Store.ReadDir(ctx, h.Tree, TasksDir)
	if err != nil {
		return nil, err
	}
	if err := st.addTaskFiles(files); err != nil {
		return nil, err
	}
	return st, nil
}

// remember keeps a copy of st as the state of head h.
func (s *Service) remember(h *refs.Head, st *State) {
	c := *st
	s.last.id, s.last.commit, s.last.st = h.ID, h.Commit, &c
}

// writer returns this clone's writer, setting the clone up on first use.
func (s *Service) writer(ctx context.Context) (*Writer, error) {
	w, err := LoadWriter(s.Repo)
	if err != nil || w != nil {
		return w, err
	}
	w, _, err = Init(ctx, s.Repo)
	return w, err
}

// Now is the timestamp events get: git's notion of now, UTC, to the second.
func Now() (string, error) {
	t, err := gitext.Now()
	if err != nil {
		return "", err
	}
	return t.UTC().Format(time.RFC3339), nil
}

// Record appends drafts to pipeline id as one commit, checking each against
// the state it applies to. It retries on a concurrent append, re-checking
// against the new state.
func (s *Service) Record(ctx context.Context, id string, drafts ...Draft) (*State, []string, error) {
	return s.Update(ctx, id, func(*State, string) (*Change, error) { return &Change{Drafts: drafts}, nil })
}

// Change is what one append records: events, and files kept in the tree.
type Change struct {
	Drafts []Draft
	Files  map[string][]byte
	Blobs  map[string]string // path -> blob already written
}

// Update appends the change plan derives from the pipeline's current state
// and the time its events will carry. On a concurrent append, plan runs
// again against the new state, so it must derive everything from st.
func (s *Service) Update(ctx context.Context, id string, plan func(st *State, now string) (*Change, error)) (*State, []string, error) {
	var st *State
	var warnings []string
	err := s.Relayed(ctx, id, func() error {
		var err error
		st, warnings, err = s.update(ctx, id, plan)
		return err
	})
	return st, warnings, err
}

// Relayed runs fn, which appends to pipeline id (any number of times),
// through Relay when there is one (fn may then run more than once): the
// appends go to the shared chain as one. Without a Relay, or inside one,
// it runs fn.
func (s *Service) Relayed(ctx context.Context, id string, fn func() error) error {
	if s.Relay == nil || s.relaying {
		return fn()
	}
	s.relaying = true
	defer func() { s.relaying = false }()
	return s.Relay(ctx, id, fn)
}

// update is Update, not relayed.
func (s *Service) update(ctx context.Context, id string, plan func(st *State, now string) (*Change, error)) (*State, []string, error) {
	w, err := s.writer(ctx)
	if err != nil {
		return nil, nil, err
	}
	now, err := Now()
	if err != nil {
		return nil, nil, err
	}
	var st *State
	var warnings []string
	next, err := s.Store.Append(ctx, id, w.identity(), func(h *refs.Head) (*refs.Batch, error) {
		if err := s.checkGuard(ctx, id, h.Commit); err != nil {
			return nil, err
		}
		if h.Commit == "" {
			return nil, fmt.Errorf("%w: %s", refs.ErrNoPipeline, id)
		}
		cur, err := s.state(ctx, h)
		if err != nil {
			return nil, err
		}
		st = cur
		change, err := plan(cur, now)
		if err != nil {
			return nil, err
		}
		if err := s.mayAppend(id, change.Drafts); err != nil {
			return nil, err
		}
		batch, warn, err := s.batch(w, st, now, change.Drafts)
		if err != nil {
			return nil, err
		}
		for p, content := range change.Files {
			batch.Files[p] = content
		}
		batch.Blobs = change.Blobs
		warnings = warn
		return batch, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if _, guarded := s.guard[id]; guarded {
		s.guard[id] = next.Commit
	}
	s.remember(next, st)
	return st, warnings, nil
}

// batch applies drafts to st and renders the commit that records them.
func (s *Service) batch(w *Writer, st *State, now string, drafts []Draft) (*refs.Batch, []string, error) {
	b := &refs.Batch{Files: map[string][]byte{}}
	before := *st // Apply changes no map or slice in place
	var warnings, subjects []string
	for _, d := range drafts {
		data, err := json.Marshal(d.Data)
		if err != nil {
			return nil, nil, err
		}
		e := Event{Seq: st.Seq + 1, Lamport: st.Lamport + 1, Time: now, Writer: w.ID, Type: d.Type, Data: data}
		if err := e.seal(); err != nil {
			return nil, nil, err
		}
		warn, err := st.Apply(e)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, warn...)
		line, err := json.Marshal(e)
		if err != nil {
			return nil, nil, err
		}
		b.Events = append(b.Events, line)
		subjects = append(subjects, Describe(e))
		if e.Type == TypeStart {
			hdr := Header{ID: st.ID, Goal: st.Goal, Mode: st.Mode, Branch: st.Branch, Baseline: st.Baseline,
				Created: st.Created, Writer: w.ID}
			b.Files[HeaderFile] = hdr.Encode()
		}
	}
	st.Format = StateFormat
	b.Files[refs.StateFile] = bytes.Clone(s.enc.encode(st)) // kept: the store's head holds it
	s.addTaskFiles(b, &before, st)
	b.Files[LedgerFile] = ledger.Render(&st.Gates.Ledger)
	b.Subject = strings.Join(subjects, "; ")
	return b, warnings, nil
}

// addTaskFiles adds to b the task files whose entries differ between
// before and after.
func (s *Service) addTaskFiles(b *refs.Batch, before, after *State) {
	for _, file := range changedTaskFiles(before, after) {
		if f := taskFileIn(after, file); f != nil { // never empties: no entry is ever removed
			b.Files[TasksDir+"/"+file.name()] = bytes.Clone(s.enc.render(f))
		}
	}
}

// StartOptions configure a new pipeline.
type StartOptions struct {
	Goal  string
	Mode  string
	ID    string // "" for a generated one
	Fresh bool   // abandon the branch's active pipeline instead of refusing
	// Beside leaves an open active pipeline where it is: the new one is
	// created without becoming active (an import next to live work).
	Beside bool
	// Started is when the pipeline began, if before now (RFC 3339): an
	// import's original start.
	Started string
}

// Validate checks what can be checked without a repository.
func (o StartOptions) Validate() error {
	if o.ID != "" {
		if err := refs.ValidateID(o.ID); err != nil {
			return err
		}
	}
	return validateStart(StartData{Goal: o.Goal, Mode: o.Mode})
}

// ActiveError refuses a second active pipeline on a branch.
type ActiveError struct{ Branch, ID string }

func (e *ActiveError) Error() string {
	return fmt.Sprintf("pipeline %s is already active on branch '%s'", e.ID, e.Branch)
}

// adoptOrphan makes active, and returns, the pipeline a killed Start left
// behind when it had made the pipeline but not yet made it active: an open
// one that recorded nothing but its start, which is start's own (branch,
// baseline, goal, mode). A Start run again after the kill so goes on with
// it rather than leaving it beside a second one. nil when there is none.
func (s *Service) adoptOrphan(ctx context.Context, start StartData) (*State, error) {
	return s.adopt(ctx, start.Branch, func(st *State) bool {
		return st.Baseline == start.Baseline && st.Goal == start.Goal && st.Mode == start.Mode
	})
}

// AdoptOrphan is adoptOrphan for a resume, which knows no goal: the
// current branch's orphan whose baseline is the branch's commit. nil when
// there is none.
func (s *Service) AdoptOrphan(ctx context.Context) (*State, error) {
	branch, err := s.Repo.HeadBranch()
	if err != nil || branch == "" {
		return nil, err
	}
	head, err := s.Repo.HeadCommit()
	if err != nil {
		return nil, err
	}
	if head == "" { // an unborn branch, as Start records it
		head = s.Repo.EmptyTree()
	}
	if active, err := s.Store.Active(branch); err != nil || active != "" {
		return nil, err
	}
	return s.adopt(ctx, branch, func(st *State) bool { return st.Baseline == head })
}

// adopt makes active on branch the first open pipeline of it that
// recorded nothing but its start and that match accepts.
func (s *Service) adopt(ctx context.Context, branch string, match func(*State) bool) (*State, error) {
	ids, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		st, _, err := s.Load(ctx, id)
		if err != nil || st.Seq != 1 || st.Finished() || st.Branch != branch || !match(st) {
			continue
		}
		if err := s.Store.SetActive(branch, id, ""); err != nil {
			return nil, fmt.Errorf("cannot make %s active on '%s': %w", id, branch, err)
		}
		return st, nil
	}
	return nil, nil
}

// EmptyBaseline says whether st started on a branch with no commits: its
// baseline is then the empty tree, as Start records it.
func (s *Service) EmptyBaseline(st *State) bool { return st.Baseline == s.Repo.EmptyTree() }

// StartPoint is where Start would begin a pipeline: the current branch,
// and the pipeline active there, if any.
type StartPoint struct {
	Branch string
	Active string // "" when none is
	Open   bool   // Active is unfinished: Start refuses unless Fresh or Beside
}

// StartPoint reads where Start would begin, for Start and for a dry run
// that says what it would do; a detached HEAD is an error, as for Start.
func (s *Service) StartPoint(ctx context.Context) (StartPoint, error) {
	branch, err := s.Repo.HeadBranch()
	if err != nil {
		return StartPoint{}, err
	}
	if branch == "" {
		return StartPoint{}, errors.New("HEAD is detached: a pipeline belongs to a branch")
	}
	active, err := s.Store.Active(branch)
	if err != nil || active == "" {
		return StartPoint{Branch: branch}, err
	}
	// A finished or abandoned pipeline gives way to a new one by itself.
	prev, _, err := s.Load(ctx, active)
	if err != nil {
		return StartPoint{}, err
	}
	return StartPoint{Branch: branch, Active: active, Open: !prev.Finished()}, nil
}

// Start creates a pipeline on the current branch and makes it active there.
// Its baseline is the branch's commit, or the empty tree on a branch with
// no commits yet.
// A finished pipeline there (Phase 4 PASS, or abandoned) simply gives way;
// an open one refuses unless Fresh, which abandons it. Start returns the
// new state and the id of the pipeline it abandoned, if any.
func (s *Service) Start(ctx context.Context, o StartOptions) (*State, string, error) {
	at, err := s.StartPoint(ctx)
	if err != nil {
		return nil, "", err
	}
	branch, old, stillOpen := at.Branch, at.Active, at.Open
	if stillOpen && !o.Fresh && !o.Beside {
		return nil, "", &ActiveError{Branch: branch, ID: old}
	}
	// A fresh start must not pull the branch from under an engine at work.
	if h := holderIn(BranchLock(s.Repo, branch)); stillOpen && o.Fresh && h != nil && h.Pid != os.Getpid() {
		return nil, "", &HeldError{ID: old, Holder: *h, Types: []string{TypeAbandon}}
	}
	id := o.ID
	if id == "" {
		t, err := gitext.Now()
		if err != nil {
			return nil, "", err
		}
		if id, err = refs.NewID(t); err != nil {
			return nil, "", err
		}
	}
	if err := refs.ValidateID(id); err != nil {
		return nil, "", err
	}
	baseline, err := s.Repo.HeadCommit()
	if err != nil {
		return nil, "", err
	}
	if baseline == "" { // an unborn branch: its work is measured against nothing
		baseline = s.Repo.EmptyTree()
	}
	start := StartData{ID: id, Goal: o.Goal, Mode: o.Mode, Branch: branch, Baseline: baseline, Started: o.Started}
	if err := validateStart(start); err != nil {
		return nil, "", err
	}
	if old == "" && o.ID == "" && !o.Beside {
		if st, err := s.adoptOrphan(ctx, start); st != nil || err != nil {
			return st, "", err
		}
	}
	w, err := s.writer(ctx)
	if err != nil {
		return nil, "", err
	}
	var st *State
	_, err = s.Store.Append(ctx, id, w.identity(), func(h *refs.Head) (*refs.Batch, error) {
		if h.Commit != "" {
			return nil, fmt.Errorf("pipeline %s already exists", id)
		}
		st = &State{}
		now, err := Now()
		if err != nil {
			return nil, err
		}
		b, _, err := s.batch(w, st, now, []Draft{{Type: TypeStart, Data: start}})
		return b, err
	})
	if err != nil {
		return nil, "", err
	}
	if stillOpen && o.Beside {
		return st, "", nil
	}
	if err := s.Store.SetActive(branch, id, old); err != nil {
		// Someone else changed the branch's pipeline meanwhile: ours must not linger as a rival.
		s.Record(ctx, id, Draft{Type: TypeAbandon, Data: AbandonData{Reason: "another pipeline became active first"}})
		return nil, "", fmt.Errorf("cannot make %s active on '%s': %w", id, branch, err)
	}
	if !stillOpen {
		return st, "", nil
	}
	if _, _, err := s.Record(ctx, old, Draft{Type: TypeAbandon, Data: AbandonData{Reason: "replaced by a fresh start", ReplacedBy: id}}); err != nil {
		return st, old, fmt.Errorf("%s is active, but %s could not be marked abandoned: %w", id, old, err)
	}
	return st, old, nil
}
