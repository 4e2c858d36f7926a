// Package remote carries pipeline history to and from git remotes, through
// the git CLI so that ssh config and credential helpers apply. A fetch lands
// in a tracking namespace (refs/crucible-remote/<remote>/...), is verified,
// and is then integrated into the local chains (fast-forward or merge);
// pushes are atomic and never forced. Plain git push and fetch are never
// changed: nothing here writes remote configuration.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
)

// Namespaces on both sides. Notes travel as their whole subtree.
const (
	notesPrefix    = "refs/notes/crucible/"
	trackingPrefix = "refs/crucible-remote/"
)

// TrackingPrefix is where remote's pipeline refs are fetched to.
func TrackingPrefix(remote string) string { return trackingPrefix + remote + "/pipelines/" }

// TrackingNotes is where remote's notes refs are fetched to.
func TrackingNotes(remote string) string { return trackingPrefix + remote + "/notes/" }

// Syncer moves pipeline history between this repository and its remotes.
type Syncer struct {
	Svc *pipeline.Service
	// Progress receives git's progress output; nil keeps it quiet.
	Progress io.Writer
}

// PipelineResult is what a fetch did to one pipeline.
type PipelineResult struct {
	ID            string       `json:"id"`
	Outcome       refs.Outcome `json:"outcome,omitempty"`
	Conflicts     int          `json:"conflicts,omitempty"` // open merge conflicts after it
	FileConflicts []string     `json:"file_conflicts,omitempty"`
	Activated     string       `json:"activated,omitempty"` // branch it became active on
	// Rejected holds why the fetched chain was not taken in.
	Rejected []string `json:"rejected,omitempty"`
}

// FetchReport is what Fetch did.
type FetchReport struct {
	Remote    string           `json:"remote"`
	Pipelines []PipelineResult `json:"pipelines"`
	Notes     []string         `json:"notes"` // local notes refs that took in remote notes
}

// Rejected lists the pipelines whose fetched chains were not taken in.
func (r *FetchReport) Rejected() []string {
	var ids []string
	for _, p := range r.Pipelines {
		if len(p.Rejected) > 0 {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// CheckName refuses a remote name that cannot name a tracking namespace
// (git's ref-name rules, which also keep out paths and URLs), would read as
// an option, or would put its tracking refs inside another remote's: under
// remote a's tracking namespace lie a/pipelines/... and a/notes/..., so a
// pruning fetch from a would delete theirs (an *OverlapError).
func CheckName(remote string) error {
	if strings.HasPrefix(remote, "-") || strings.HasPrefix(remote, "/") ||
		gitext.CheckRefName(TrackingPrefix(remote)+"x") != nil {
		return fmt.Errorf("'%s' is not a usable remote name", remote)
	}
	parts := strings.Split(remote, "/")
	for i := 1; i < len(parts); i++ {
		if parts[i] == "pipelines" || parts[i] == "notes" {
			return &OverlapError{Name: remote, Inside: strings.Join(parts[:i], "/")}
		}
	}
	return nil
}

// OverlapError refuses a remote name whose tracking refs would lie inside
// those of remote Inside.
type OverlapError struct{ Name, Inside string }

func (e *OverlapError) Error() string {
	return fmt.Sprintf("'%s' is not a usable remote name: its tracking refs would lie inside those of remote '%s'", e.Name, e.Inside)
}

// Fetch copies remote's pipeline refs and notes into the tracking
// namespace, verifies every chain that moved, and integrates the sound ones
// into the local refs. A chain that fails verification stays in the
// tracking namespace only, and is reported.
func (x *Syncer) Fetch(ctx context.Context, remote string) (*FetchReport, error) {
	if err := CheckName(remote); err != nil {
		return nil, err
	}
	unlock, err := x.lockTransfers()
	if err != nil {
		return nil, err
	}
	defer unlock()
	repo := x.Svc.Repo
	if err := repo.With(gitext.Exec{Progress: x.Progress}).Fetch(ctx, remote,
		"+"+refs.PipelinePrefix+"*:"+TrackingPrefix(remote)+"*",
		"+"+notesPrefix+"*:"+TrackingNotes(remote)+"*"); err != nil {
		if errors.Is(err, gitext.ErrRefChanged) { // another fetch of this clone moved a tracking ref first
			return nil, fmt.Errorf("%w: %w", ErrLostRace, err)
		}
		return nil, err
	}
	report := &FetchReport{Remote: remote, Pipelines: []PipelineResult{}, Notes: []string{}}
	fetched, err := repo.ListRefs(ctx, TrackingPrefix(remote))
	if err != nil {
		return nil, err
	}
	for _, r := range fetched {
		id := strings.TrimPrefix(r.Name, TrackingPrefix(remote))
		res, err := x.integrate(ctx, id, r.OID)
		if err != nil {
			// One chain that cannot be taken in (e.g. two clones started
			// pipelines with the same id) must not hold up the others.
			res.Rejected = append(res.Rejected, err.Error())
		}
		report.Pipelines = append(report.Pipelines, res)
	}
	fetchedNotes, err := repo.ListRefs(ctx, TrackingNotes(remote))
	if err != nil {
		return report, err
	}
	for _, r := range fetchedNotes {
		local := notesPrefix + strings.TrimPrefix(r.Name, TrackingNotes(remote))
		if cur, err := repo.ReadRef(local); err != nil {
			return report, err
		} else if cur == r.OID {
			continue
		}
		if _, err := notes.Merge(ctx, repo, local, r.OID); err != nil {
			return report, fmt.Errorf("%s: %w", local, err)
		}
		report.Notes = append(report.Notes, local)
	}
	return report, nil
}

// lockTransfers makes the fetches and pushes of this repository (all its
// worktrees) take turns. Side by side, one's git can look for an object
// while the other's unpack-objects writes it (loose, one at a time, a
// commit before its tree): a push's pack-objects reading the tree of a tip
// the remote has, say. Git 2.39 then finds the object missing and, a moment
// later, its file present, and dies calling it corrupt.
func (x *Syncer) lockTransfers() (func(), error) {
	return fsutil.Lock(filepath.Join(x.Svc.Repo.CrucibleDir(), "transfer.lock"))
}

func (x *Syncer) integrate(ctx context.Context, id, tip string) (PipelineResult, error) {
	res := PipelineResult{ID: id}
	if err := refs.ValidateID(id); err != nil {
		res.Rejected = []string{err.Error()}
		return res, nil
	}
	local, err := x.Svc.Repo.ReadRef(refs.PipelineRef(id))
	if err != nil {
		return res, err
	}
	if local == tip {
		res.Outcome = refs.UpToDate
		return res, nil
	}
	// Archived here: a chain this clone put aside is not verified nor
	// taken in again (Integrate refuses it too, should it race).
	if local == "" {
		if archived, err := x.Svc.Store.IsArchived(id); err != nil || archived {
			res.Outcome = refs.Archived
			return res, err
		}
	}
	problems, err := x.Svc.VerifySince(ctx, id, local, tip) // the local chain is ours: only what arrived is replayed
	if err != nil {
		return res, err
	}
	for _, p := range problems {
		res.Rejected = append(res.Rejected, p.String())
	}
	if len(problems) > 0 {
		return res, nil
	}
	in, err := x.Svc.Integrate(ctx, id, tip)
	if err != nil {
		return res, err
	}
	if in.Outcome == refs.Archived {
		res.Outcome = in.Outcome
		return res, nil
	}
	res.Outcome, res.Conflicts, res.FileConflicts = in.Outcome, len(in.State.Conflicts), in.FileConflicts
	if in.Outcome == refs.Created {
		res.Activated, err = x.adopt(in.State)
	}
	return res, err
}

// adopt makes a pipeline that arrived from another clone active on its
// branch, when it is open and nothing is active there, so that the clone
// that checks out the branch carries on where the other stopped.
func (x *Syncer) adopt(st *pipeline.State) (string, error) {
	if st.Finished() || st.Branch == "" {
		return "", nil
	}
	active, err := x.Svc.Store.Active(st.Branch)
	if err != nil || active != "" {
		return "", err
	}
	if err := x.Svc.Store.SetActive(st.Branch, st.ID, ""); err != nil {
		if errors.Is(err, gitext.ErrRefChanged) {
			return "", nil // another pipeline became active meanwhile: it stays
		}
		return "", err
	}
	return st.Branch, nil
}

// PushReport is what Push did.
type PushReport struct {
	Remote string   `json:"remote"`
	Pushed []string `json:"pushed"` // refs the remote took
	Same   []string `json:"same"`   // refs the remote already had
}

// ErrRemoteMoved says the remote holds history this clone has not taken in
// yet; a sync (fetch, integrate, push) resolves it.
var ErrRemoteMoved = errors.New("the remote has pipeline history this clone does not have yet")

// ErrLostRace says another fetch or push moved the same ref between git's
// check and its lock, here or at the remote, or held the remote's lock on
// it for longer than the remote waits; a sync starts over.
var ErrLostRace = errors.New("another sync moved the same ref at the same time")

// Selection names the pipelines a push sends: those of Branch, those named
// in IDs, or (both empty) all of them; never those in Except.
type Selection struct {
	Branch string
	IDs    []string
	Except []string
	// Refs are more local refs the push sends to the same names, never
	// forced, in the same atomic push: a CI job's task ref, a collector's
	// branch. They are not verified: what they hold is checked by whoever
	// takes them in.
	Refs []string
}

func (sel Selection) all() bool { return sel.Branch == "" && len(sel.IDs) == 0 }

// Push sends the selected local pipeline refs and the notes to remote in
// one atomic, never-forced push.
func (x *Syncer) Push(ctx context.Context, remote string, sel Selection) (*PushReport, error) {
	if err := CheckName(remote); err != nil {
		return nil, err
	}
	unlock, err := x.lockTransfers()
	if err != nil {
		return nil, err
	}
	defer unlock()
	snapshot, err := x.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := x.verifyOutgoing(ctx, remote, sel, snapshot); err != nil {
		return nil, err
	}
	specs, err := x.pushSpecs(ctx, sel, snapshot)
	if err != nil {
		return nil, err
	}
	report := &PushReport{Remote: remote, Pushed: []string{}, Same: []string{}}
	if len(specs) == 0 {
		return report, nil
	}
	out, err := x.Svc.Repo.With(gitext.Exec{Progress: x.Progress}).Push(ctx, remote, specs...)
	lines, parseErr := parsePorcelain(out)
	var gerr *gitext.Error
	if err != nil && errors.As(err, &gerr) {
		for _, l := range lines {
			if l.flag == '!' && (strings.Contains(l.summary, "fetch first") || strings.Contains(l.summary, "non-fast-forward")) {
				return nil, fmt.Errorf("%w: %s", ErrRemoteMoved, l.ref)
			}
		}
		// The remote's ref moved between its check and its lock, or another
		// push held its lock longer than the remote waits (100ms unless its
		// core.filesRefLockTimeout says otherwise; nothing sent from here
		// can change that of a remote's git).
		if errors.Is(err, gitext.ErrRefChanged) || gerr.HeldLock() != "" {
			return nil, fmt.Errorf("%w: %w", ErrLostRace, err)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if parseErr != nil {
		return nil, parseErr
	}
	var moves []gitext.RefUpdate
	for _, l := range lines {
		switch l.flag {
		case '=':
			report.Same = append(report.Same, l.ref)
		default:
			report.Pushed = append(report.Pushed, l.ref)
		}
		move, err := x.track(remote, l, snapshot)
		if err != nil {
			return report, err
		}
		moves = append(moves, move...)
	}
	err = x.Svc.Repo.UpdateRefs(ctx, "crucible: push to "+remote, moves...)
	if errors.Is(err, gitext.ErrRefChanged) {
		err = nil // a sync beside this one recorded the remote first; the next fetch reads it anyway
	}
	return report, err
}

// ChainError refuses a push of chains that fail verification: the remote
// would take them, and every other clone's fetch would then refuse them and
// its sync stop.
type ChainError struct{ Problems []pipeline.Problem }

// IDs lists the pipelines whose chains failed, each once.
func (e *ChainError) IDs() []string {
	var ids []string
	for _, p := range e.Problems {
		if !slices.Contains(ids, p.Pipeline) {
			ids = append(ids, p.Pipeline)
		}
	}
	return ids
}

func (e *ChainError) Error() string {
	return "pipeline chain(s) fail verification and were not pushed: " + strings.Join(e.IDs(), ", ")
}

// verifyOutgoing verifies the selected chains as the snapshot holds them,
// replaying only what came after the newest commit found sound before; a
// chain the remote is recorded to hold already is not looked at again.
func (x *Syncer) verifyOutgoing(ctx context.Context, remote string, sel Selection, snapshot map[string]string) error {
	var ids []string
	for name := range snapshot {
		if id, ok := strings.CutPrefix(name, refs.PipelinePrefix); ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	outgoing, err := x.selected(ctx, sel, ids)
	if err != nil {
		return err
	}
	var problems []pipeline.Problem
	for _, id := range outgoing {
		oid := snapshot[refs.PipelineRef(id)]
		if has, err := x.Svc.Repo.ReadRef(TrackingPrefix(remote) + id); err != nil || has == oid {
			if err != nil {
				return err
			}
			continue
		}
		ps, err := x.Svc.VerifyKnownAt(ctx, id, oid)
		if err != nil {
			return fmt.Errorf("verifying %s before the push: %w", id, err)
		}
		problems = append(problems, ps...)
	}
	if len(problems) > 0 {
		return &ChainError{Problems: problems}
	}
	return nil
}

// snapshot reads the refs a push may send, before it runs: what the
// remote is recorded to have afterwards is what was there to send, never a
// commit appended while the push ran.
func (x *Syncer) snapshot(ctx context.Context) (map[string]string, error) {
	refsNow := map[string]string{}
	for _, prefix := range []string{refs.PipelinePrefix, notesPrefix} {
		list, err := x.Svc.Repo.ListRefs(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, r := range list {
			refsNow[r.Name] = r.OID
		}
	}
	return refsNow, nil
}

// pushSpecs lists what a push sends: the selected pipeline refs, each to
// the same name, never forced, and the notes. Active markers
// (refs/crucible/active/*) are this clone's own. All pipelines go as one
// pattern: git matches a hundred explicit refspecs four times slower than
// a pattern that names the same refs.
func (x *Syncer) pushSpecs(ctx context.Context, sel Selection, snapshot map[string]string) ([]string, error) {
	var specs, ids []string
	for name := range snapshot {
		if id, isPipeline := strings.CutPrefix(name, refs.PipelinePrefix); isPipeline {
			ids = append(ids, id)
		} else if len(specs) == 0 {
			specs = append(specs, notesPrefix+"*:"+notesPrefix+"*")
		}
	}
	if sel.all() && len(sel.Except) == 0 && len(ids) > 0 {
		specs = append(specs, refs.PipelinePrefix+"*:"+refs.PipelinePrefix+"*")
	} else {
		wanted, err := x.selected(ctx, sel, ids)
		if err != nil {
			return nil, err
		}
		for _, id := range wanted {
			specs = append(specs, refs.PipelineRef(id)+":"+refs.PipelineRef(id))
		}
	}
	for _, r := range sel.Refs {
		if !strings.HasPrefix(r, "refs/") || strings.ContainsAny(r, ":+*^~? \t\n") {
			return nil, fmt.Errorf("%q: not a ref a push sends", r)
		}
		specs = append(specs, r+":"+r)
	}
	sort.Strings(specs)
	return specs, nil
}

// FetchRefs copies the remote's refs under prefix (refs/..., ending in
// "/"), or the one ref prefix names, to the same names under
// refs/crucible-remote/<remote>/ (TrackingRefs), as the remote has them
// (forced, pruned: the tracking copy is the remote's word, not trusted),
// and returns them by their remote name. A CI collector reads the task
// refs of a pipeline from there, and checks each commit before taking it.
func (x *Syncer) FetchRefs(ctx context.Context, remote, prefix string) (map[string]string, error) {
	if err := CheckName(remote); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(prefix, "refs/") || strings.ContainsAny(prefix, ":+*^~? \t\n") {
		return nil, fmt.Errorf("%q: not a ref or a ref prefix", prefix)
	}
	star := ""
	if strings.HasSuffix(prefix, "/") {
		star = "*"
	}
	unlock, err := x.lockTransfers()
	if err != nil {
		return nil, err
	}
	defer unlock()
	repo := x.Svc.Repo
	tracking := TrackingRefs(remote, prefix)
	if err := repo.Fetch(ctx, remote, "+"+prefix+star+":"+tracking+star); err != nil {
		if errors.Is(err, gitext.ErrRefChanged) {
			return nil, fmt.Errorf("%w: %w", ErrLostRace, err)
		}
		return nil, err
	}
	out := map[string]string{}
	if star == "" {
		oid, err := repo.ReadRef(tracking)
		if oid != "" {
			out[prefix] = oid
		}
		return out, err
	}
	list, err := repo.ListRefs(ctx, tracking)
	if err != nil {
		return nil, err
	}
	for _, r := range list {
		out[prefix+strings.TrimPrefix(r.Name, tracking)] = r.OID
	}
	return out, nil
}

// TrackingRefs is where FetchRefs puts the remote's refs under prefix.
func TrackingRefs(remote, prefix string) string {
	return trackingPrefix + remote + "/" + strings.TrimPrefix(prefix, "refs/")
}

// track is the move that records what the remote now has in the tracking
// namespace, so the next fetch starts from it; none when it is recorded.
func (x *Syncer) track(remote string, l porcelainLine, snapshot map[string]string) ([]gitext.RefUpdate, error) {
	var tracking string
	switch {
	case strings.HasPrefix(l.ref, refs.PipelinePrefix):
		tracking = TrackingPrefix(remote) + strings.TrimPrefix(l.ref, refs.PipelinePrefix)
	case strings.HasPrefix(l.ref, notesPrefix):
		tracking = TrackingNotes(remote) + strings.TrimPrefix(l.ref, notesPrefix)
	default:
		return nil, nil
	}
	repo := x.Svc.Repo
	oid, ok := snapshot[l.ref]
	if !ok {
		return nil, nil
	}
	old, err := repo.ReadRef(tracking)
	if err != nil || old == oid {
		return nil, err
	}
	return []gitext.RefUpdate{{Name: tracking, Old: old, New: oid}}, nil
}

// porcelainLine is one ref line of `git push --porcelain`.
type porcelainLine struct {
	flag    byte
	ref     string // the remote ref
	summary string
}

// parsePorcelain reads `git push --porcelain` output: "To <url>", then
// "<flag>\t<src>:<dst>\t<summary>" per ref, then "Done".
func parsePorcelain(out []byte) ([]porcelainLine, error) {
	var lines []porcelainLine
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" || line == "Done" || strings.HasPrefix(line, "To ") {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) < 2 || len(fields[0]) != 1 {
			return lines, fmt.Errorf("unexpected line from git push: %q", line)
		}
		_, dst, ok := strings.Cut(fields[1], ":")
		if !ok {
			return lines, fmt.Errorf("unexpected line from git push: %q", line)
		}
		l := porcelainLine{flag: fields[0][0], ref: dst}
		if len(fields) == 3 {
			l.summary = fields[2]
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// SyncReport is what Sync did.
type SyncReport struct {
	Fetch    *FetchReport `json:"fetch"`
	Push     *PushReport  `json:"push"`
	Attempts int          `json:"attempts"`
}

// syncPatience bounds how long Sync keeps starting over because the remote
// moved between its fetch and its push, or another sync won a race for a
// ref. A time rather than a count of attempts: among many racers on a loaded
// machine every attempt is slow and most are lost, yet each sync gets its
// turn well within it. Retries back off, with jitter, so racers spread out.
// A variable so that tests can see it run out.
var syncPatience = 2 * time.Minute

// maxBackOff caps one wait between attempts.
const maxBackOff = 2 * time.Second

// ErrRejected ends a sync whose fetch refused chains it was to push: they
// are left out of its push (the remote would only refuse them in turn, as
// it holds history this clone did not take), the others still go.
var ErrRejected = errors.New("fetched pipeline chains failed verification and were not taken in")

// selected returns the ids among ids that a push of sel sends. An id with
// no local pipeline (a chain that was not taken in) is not sent.
func (x *Syncer) selected(ctx context.Context, sel Selection, ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		if slices.Contains(sel.Except, id) {
			continue
		}
		wanted := sel.all() || slices.Contains(sel.IDs, id)
		if !wanted && sel.Branch != "" {
			st, _, err := x.Svc.Load(ctx, id)
			if errors.Is(err, refs.ErrNoPipeline) {
				continue
			} else if err != nil {
				return nil, err
			}
			wanted = st.Branch == sel.Branch
		}
		if wanted {
			out = append(out, id)
		}
	}
	return out, nil
}

// Sync fetches and integrates remote's history, then pushes the result,
// starting over (for up to syncPatience) when the remote moved between.
func (x *Syncer) Sync(ctx context.Context, remote string, sel Selection) (*SyncReport, error) {
	report := &SyncReport{}
	giveUp := time.Now().Add(syncPatience)
	retry := func(err error) (bool, error) {
		if !errors.Is(err, ErrRemoteMoved) && !errors.Is(err, ErrLostRace) {
			return false, err
		}
		if time.Now().After(giveUp) {
			return false, fmt.Errorf("gave up after %d attempts in %s: %w", report.Attempts, syncPatience, err)
		}
		return true, backOff(ctx, report.Attempts)
	}
	for report.Attempts = 1; ; report.Attempts++ {
		fetch, err := x.Fetch(ctx, remote)
		report.Fetch = fetch
		if errors.Is(err, ErrLostRace) {
			if again, err := retry(err); !again || err != nil {
				return report, err
			}
			continue
		}
		if err != nil {
			return report, err
		}
		blocked, err := x.selected(ctx, sel, fetch.Rejected())
		if err != nil {
			return report, err
		}
		rest := sel
		rest.Except = append(slices.Clone(sel.Except), blocked...)
		push, err := x.Push(ctx, remote, rest)
		if err == nil {
			report.Push = push
			if len(blocked) > 0 {
				return report, fmt.Errorf("%w: %s", ErrRejected, strings.Join(blocked, ", "))
			}
			return report, nil
		}
		if again, err := retry(err); !again || err != nil {
			return report, err
		}
	}
}

// backOff waits a random time below a ceiling that doubles with the attempt
// from 20ms up to maxBackOff.
func backOff(ctx context.Context, attempt int) error {
	return WaitBelow(ctx, backOffCeiling(attempt))
}

// WaitBelow waits a random time below ceiling, or until ctx ends: a lost
// race's back-off, so that racers spread out.
func WaitBelow(ctx context.Context, ceiling time.Duration) error {
	t := time.NewTimer(time.Duration(rand.Int64N(int64(ceiling))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backOffCeiling is the longest wait after the given attempt.
func backOffCeiling(attempt int) time.Duration {
	return min(10*time.Millisecond<<min(attempt, 10), maxBackOff)
}
