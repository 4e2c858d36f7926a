package gatecache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/notes"
)

// Options is one verify-commits run.
type Options struct {
	Base      string // the range is Base..HEAD; a commit id
	Gate      Gate
	Spec      string // Spec(Gate.Command, fingerprint)
	Mode      Mode
	KeepGoing bool   // test every commit, not stopping at the first failure
	DryRun    bool   // say what would run; run nothing
	Binary    string // this program, for the rebase's exec line
	Jobs      int    // prefill the cache in this many slot worktrees first (<2: none)
}

// Commit is one commit of the range and its verdict.
type Commit struct {
	Commit  string `json:"commit"`
	Tree    string `json:"tree"`
	Subject string `json:"subject"`
	Task    string `json:"task,omitempty"` // Crucible-Task, or the provenance note's
	Seq     string `json:"seq,omitempty"`  // Crucible-Seq, likewise
	Status  Status `json:"status,omitempty"`
	Exit    int    `json:"exit"`
	Cached  bool   `json:"cached"`        // the result came from the cache
	Log     string `json:"log,omitempty"` // the gate's output, when it ran here or before
}

// Report is a run's outcome, commits oldest first. A commit the run did
// not reach has no Status.
type Report struct {
	Base    string   `json:"base"`
	Head    string   `json:"head"`
	Gate    string   `json:"gate"`
	Command string   `json:"command"`
	Spec    string   `json:"spec"`
	Commits []Commit `json:"commits"`
	Ran     int      `json:"ran"`    // gate runs in the authoritative pass
	Cached  int      `json:"cached"` // results taken from the cache
	DryRun  bool     `json:"dry_run,omitempty"`
}

// Failed returns the commits that failed.
func (r *Report) Failed() []Commit {
	var out []Commit
	for _, c := range r.Commits {
		if c.Status == Fail {
			out = append(out, c)
		}
	}
	return out
}

// plan is what the exec line of a run reads: the gate and the rules.
type plan struct {
	Command   string   `json:"command"`
	Spec      string   `json:"spec"`
	Mode      Mode     `json:"mode"`
	KeepGoing bool     `json:"keep_going"`
	Fresh     []string `json:"fresh,omitempty"` // trees this run tested already: their results stand whatever the mode
}

// Verify runs the gate at every commit of Base..HEAD: commits with a
// result the mode trusts are answered from the cache, the others by a
// real git rebase -i --exec over the range whose exec line (Step) checks
// the cache, then runs the gate. Every commit's parent is unchanged, so
// the rebase only fast-forwards: the branch is left exactly as it was
// whether the gate passes or not (a failure aborts the rebase).
func (s *Store) Verify(ctx context.Context, o Options) (*Report, error) {
	if op := s.repo.Operation(); op != "" {
		return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("a %s is under way in this worktree", op)},
			"finish it or abort it first (git "+op+" --continue or --abort)")
	}
	head, err := s.repo.HeadCommit()
	if err != nil {
		return nil, err
	}
	rep := &Report{Base: o.Base, Head: head, Gate: o.Gate.Name, Command: o.Gate.Command, Spec: o.Spec, DryRun: o.DryRun}
	if rep.Commits, err = s.commits(ctx, o.Base, head); err != nil {
		return nil, err
	}
	trees := make([]string, len(rep.Commits))
	for i, c := range rep.Commits {
		trees[i] = c.Tree
	}
	if _, err := s.Prime(ctx, o.Spec, trees); err != nil {
		return nil, err
	}
	toRun := 0
	for i := range rep.Commits {
		if ok, err := s.answer(&rep.Commits[i], o); err != nil {
			return nil, err
		} else if !ok {
			toRun++
		}
	}
	if o.DryRun || toRun == 0 {
		return rep, s.finish(ctx, rep)
	}
	if err := s.checkClean(ctx); err != nil {
		return nil, err
	}
	var fresh []string
	if o.Jobs > 1 {
		if fresh, err = s.prefill(ctx, o, rep.Commits); err != nil {
			return nil, err
		}
	}
	if err := s.rebase(ctx, o, rep, head, fresh); err != nil {
		return nil, err
	}
	return rep, s.finish(ctx, rep)
}

// checkClean refuses a work tree with changes to tracked files, which
// the rebase would refuse half-way through set-up.
func (s *Store) checkClean(ctx context.Context) error {
	_, _ = s.repo.GitEnv(ctx, s.repo.WorkTree, nil, "update-index", "-q", "--refresh")
	_, err := s.repo.GitEnv(ctx, s.repo.WorkTree, nil, "diff-index", "--quiet", "HEAD", "--")
	var gerr *gitext.Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 {
		return outcome.WithHints(&outcome.Refused{Err: errors.New("the work tree has changes to tracked files: the rebase needs it clean")},
			"commit or stash them first")
	}
	return err
}

// answer fills c from the cache when the mode trusts its result.
func (s *Store) answer(c *Commit, o Options) (bool, error) {
	r, ok, err := s.Lookup(c.Tree, o.Spec)
	if err != nil || !ok || !o.Mode.Reuse(r) {
		return false, err
	}
	c.Status, c.Exit, c.Cached = r.Status, r.Exit, true
	if _, err := os.Stat(s.LogPath(c.Tree, o.Spec)); err == nil {
		c.Log = s.LogPath(c.Tree, o.Spec)
	}
	return true, nil
}

// finish counts the verdicts and writes the new results into the notes.
func (s *Store) finish(ctx context.Context, rep *Report) error {
	rep.Ran, rep.Cached = 0, 0
	for _, c := range rep.Commits {
		switch {
		case c.Status == "":
		case c.Cached:
			rep.Cached++
		default:
			rep.Ran++
		}
	}
	_, err := s.Flush(ctx)
	return err
}

// commits lists base..head oldest first, with what attributes a failure.
// The range must be a line: a rebase would flatten a merge.
func (s *Store) commits(ctx context.Context, base, head string) ([]Commit, error) {
	if ok, err := s.repo.IsAncestor(ctx, base, head); err != nil {
		return nil, err
	} else if !ok {
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is not an ancestor of HEAD", base)}
	}
	out, err := s.repo.Git(ctx, "rev-list", "--reverse", "--parents", base+".."+head, "--")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	objects, err := s.repo.NewObjectReader(ctx)
	if err != nil {
		return nil, err
	}
	defer objects.Close()
	prov, err := notes.NewReader(ctx, s.repo, notes.ProvenanceRef)
	if err != nil {
		return nil, err
	}
	defer prov.Close()
	list := make([]Commit, 0, len(lines))
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) > 2 {
			return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s is a merge: the range must be a line of commits", f[0])},
				"verify the commits after it: git crucible verify-commits "+f[0]+"..HEAD")
		}
		data, err := objects.ReadKind(f[0], "commit")
		if err != nil {
			return nil, err
		}
		c, err := gitext.DecodeCommit(data)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", f[0], err)
		}
		subject, _, _ := strings.Cut(c.Message, "\n")
		item := Commit{Commit: f[0], Tree: c.Tree, Subject: subject}
		for _, t := range enforce.CrucibleLines(c.Message) {
			switch {
			case strings.EqualFold(t.Key, enforce.TrailerTask):
				item.Task = t.Value
			case strings.EqualFold(t.Key, enforce.TrailerSeq):
				item.Seq = t.Value
			}
		}
		if item.Task == "" && item.Seq == "" {
			note, _, err := prov.Read(ctx, f[0])
			if err != nil {
				return nil, err
			}
			if recs, _ := notes.ParseProvenance(note); len(recs) > 0 {
				r := recs[len(recs)-1]
				if r.Task > 0 {
					item.Task = strconv.Itoa(r.Task)
				}
				if r.Seq > 0 {
					item.Seq = strconv.Itoa(r.Seq)
				}
			}
		}
		list = append(list, item)
	}
	return list, nil
}

// pinned is the configuration the rebase runs with, whatever the user's:
// no editor, no autosquash or autostash, no other refs moved, no
// signing, nothing abbreviated.
var pinned = []string{
	"-c", "rebase.autoSquash=false", "-c", "rebase.autoStash=false", "-c", "rebase.updateRefs=false",
	"-c", "rebase.missingCommitsCheck=ignore", "-c", "rebase.abbreviateCommands=false",
	"-c", "rebase.instructionFormat=", "-c", "rebase.forkPoint=false", "-c", "commit.gpgSign=false",
	"-c", "sequence.editor=true", "-c", "core.editor=true", "-c", "advice.skippedCherryPicks=false",
}

// rebase is the authoritative pass: git rebase -i --exec over the range,
// the exec line being Step. On a failure it aborts the rebase, which puts
// the branch back.
func (s *Store) rebase(ctx context.Context, o Options, rep *Report, head string, fresh []string) error {
	run, err := os.MkdirTemp(mkdirs(filepath.Join(s.dir, "runs")), "run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(run)
	b, err := json.Marshal(plan{Command: o.Gate.Command, Spec: o.Spec, Mode: o.Mode, KeepGoing: o.KeepGoing, Fresh: fresh})
	if err != nil {
		return err
	}
	if err := fsutil.WriteAtomic(filepath.Join(run, "plan.json"), b, 0o644); err != nil {
		return err
	}
	exec := shellQuote(o.Binary) + " verify-commits --step " + shellQuote(run)
	args := append(append([]string{}, pinned...), "rebase", "-i", "--no-autosquash", "--no-autostash", "--no-update-refs",
		"--reschedule-failed-exec", "--no-fork-point", "--exec", exec, o.Base)
	_, rebaseErr := s.repo.GitEnv(ctx, s.repo.WorkTree, []string{"GIT_SEQUENCE_EDITOR=true", "GIT_EDITOR=true"}, args...)
	if s.repo.Operation() == "rebase" {
		if _, err := s.repo.GitEnv(context.WithoutCancel(ctx), s.repo.WorkTree, nil, "rebase", "--abort"); err != nil {
			return fmt.Errorf("cannot abort the rebase: %w", err)
		}
	}
	results, err := readResults(run)
	if err != nil {
		return err
	}
	for i := range rep.Commits {
		c := &rep.Commits[i]
		tested := slices.Contains(fresh, c.Tree)
		if r, ok := results[c.Commit]; ok {
			c.Status, c.Exit, c.Cached = r.Status, r.Exit, r.cached && !tested
			c.Log = s.LogPath(c.Tree, o.Spec)
		} else if tested {
			// Past the failure that stopped the rebase, but tested already.
			if _, err := s.answer(c, Options{Spec: o.Spec, Mode: UseCache}); err != nil {
				return err
			}
			c.Cached = false
		}
	}
	now, err := s.repo.HeadCommit()
	if err != nil {
		return err
	}
	if now != head {
		return fmt.Errorf("HEAD moved from %s to %s during the rebase; the old tip is in the reflog", head, now)
	}
	if rebaseErr != nil && len(rep.Failed()) == 0 {
		return fmt.Errorf("git rebase --exec failed: %w", rebaseErr)
	}
	return ctx.Err()
}

// stepResult is one line of a run's results file.
type stepResult struct {
	Status Status
	Exit   int
	cached bool
}

// readResults reads the lines the exec lines appended: "<commit> <status>
// <exit> <ran|cached>".
func readResults(run string) (map[string]stepResult, error) {
	b, err := os.ReadFile(filepath.Join(run, "results"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]stepResult{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		exit, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		out[f[0]] = stepResult{Status: Status(f[1]), Exit: exit, cached: f[3] == "cached"}
	}
	return out, nil
}

// Step is the rebase's exec line: the gate at HEAD, from the cache when
// the run's mode trusts it, its result appended to the run's results. It
// returns the exit status for the rebase: 0 to go on (a pass, a skip, or
// any result with KeepGoing), 1 to stop at a failure.
func Step(ctx context.Context, repo *gitext.Repo, run string) (int, error) {
	b, err := os.ReadFile(filepath.Join(run, "plan.json"))
	if err != nil {
		return 0, err
	}
	var p plan
	if err := json.Unmarshal(b, &p); err != nil {
		return 0, fmt.Errorf("%s: %w", run, err)
	}
	out, err := repo.Git(ctx, "rev-parse", "HEAD", "HEAD^{tree}")
	if err != nil {
		return 0, err
	}
	ids := strings.Fields(string(out))
	if len(ids) != 2 {
		return 0, fmt.Errorf("git rev-parse HEAD HEAD^{tree}: %q", out)
	}
	dir, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	mode := p.Mode
	if slices.Contains(p.Fresh, ids[1]) {
		mode = UseCache
	}
	r, ran, err := Open(repo).Check(ctx, dir, p.Command, p.Spec, ids[1], mode)
	if err != nil {
		return 0, err
	}
	how := map[bool]string{true: "ran", false: "cached"}[ran]
	f, err := os.OpenFile(filepath.Join(run, "results"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	_, err = fmt.Fprintf(f, "%s %s %d %s\n", ids[0], r.Status, r.Exit, how)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || r.Status != Fail || p.KeepGoing {
		return 0, err
	}
	return 1, nil
}

// mkdirs creates dir and returns it; MkdirTemp reports a failure.
func mkdirs(dir string) string {
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
