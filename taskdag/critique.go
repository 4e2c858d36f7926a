package taskdag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// The seed's escalation: an amendment round from WarnRound on is a
// warning; EscalateRound stops the run for a person.
const (
	WarnRound     = 3
	EscalateRound = 4
)

// Gate is the critique gate of each level and its amendment rounds, as
// the dispatch seed's Step 3b: one critique agent over the level's
// committed tasks; the tasks it finds blocking issues in fixed one at a
// time, the level rebuilt from its boundary, the fast gate run at each
// rebuilt commit, and critique again. A Runner without a Gate completes a
// level's tasks once the branch holds them.
type Gate struct {
	Critic Critic
	Fix    Fixer
}

// Critic runs a level's critique agent with workdir (a slot at the
// level's head) as its work tree and returns the report it wrote.
type Critic func(ctx context.Context, rv Review, workdir string) (report []byte, err error)

// Review is what a critique agent reviews.
type Review struct {
	Level, Round int // Round 0 is the level's first critique
	Tasks        []Reviewed
}

// Reviewed is a committed task under critique.
type Reviewed struct {
	Task   manifest.Task
	Commit string // "" when it changed nothing
	Output []byte // its report
}

// Fixer runs the fix agent of a task in an amendment round with workdir
// (a slot at the level's head, with the fixes before it) as its work tree.
type Fixer func(ctx context.Context, f FixJob, workdir string) (report []byte, err error)

// FixJob is a task to fix in an amendment round.
type FixJob struct {
	Task   manifest.Task
	Level  int
	Round  int
	Source string // critique or verification
	Issues []report.Issue
	Output []byte // its last report
}

// Escalated is a level whose amendment rounds reached EscalateRound:
// the run stops for a person.
type Escalated struct {
	Level, Round int
	Tasks        []string // the tasks still needing work
}

func (e *Escalated) Error() string {
	return fmt.Sprintf("level %d: amendment round %d would start (tasks %s still need work): the run escalates", e.Level, e.Round, strings.Join(e.Tasks, ", "))
}

// Amendments is what a run's amendment rounds recorded: a resumed run
// goes on from it (the caller rebuilds it from the recorded events with
// Apply).
type Amendments struct {
	Fixing map[string]Fixing // by task, while it is fixing
	Rounds map[int]int       // by level: its newest round
}

// Fixing is a task in an amendment round.
type Fixing struct {
	Source string
	Round  int
	Issues string // what it is to fix, as recorded
	Fix    string // the commit holding its fix, once its fix agent ran
	// issues are Issues as the round found them; a resumed run has only
	// the text.
	issues []report.Issue
}

// Apply applies e to a.
func (a *Amendments) Apply(e Event) {
	if a.Fixing == nil {
		a.Fixing, a.Rounds = map[string]Fixing{}, map[int]int{}
	}
	if e.Round > 0 {
		a.Rounds[e.Level] = max(a.Rounds[e.Level], e.Round)
	}
	switch {
	case e.Task == "":
	case e.Status == manifest.Fixing:
		a.Fixing[e.Task] = Fixing{Source: e.Source, Round: e.Round, Issues: e.Reason, Fix: e.Fix, issues: e.issues}
	default:
		delete(a.Fixing, e.Task)
	}
}

// Sources of a task's fixing status.
const (
	SourceCritique     = "critique"
	SourceVerification = "verification"
)

// review is a level's gate, from its commits (boundary..head, recorded)
// to the level's head the critique accepts: critique, then, while it
// finds blocking issues, amendment rounds. It returns the head and
// commits to put on the branch and the warnings to record with each
// task. A resumed run goes on from the amendments recorded: fixes already
// made are kept, a level half re-recorded is rebuilt.
func (r *Runner) review(ctx context.Context, p Plan, record func(...Event) error, level int, boundary, head string, commits []Commit) (string, []Commit, map[string][]string, error) {
	a := p.Amend
	warnings := map[string][]string{}
	round := a.Rounds[level]
	var fixing []string
	for _, c := range commits {
		if _, ok := a.Fixing[c.Task]; ok {
			fixing = append(fixing, c.Task)
		}
	}
	rebuild, err := r.unchained(ctx, boundary, head, commits)
	if err != nil {
		return head, commits, nil, err
	}
	// A round's rebuilt commits are checked before the critique sees
	// them; a resumed round's check, which nothing records, runs again.
	check := round > 0
	for {
		if len(fixing) > 0 || rebuild {
			if head, commits, err = r.amend(ctx, p, record, level, boundary, head, commits, round); err != nil {
				return head, commits, nil, err
			}
			rebuild, check = false, true
		}
		if check {
			check = false
			failing, err := r.verify(ctx, p, commits)
			if err != nil {
				return head, commits, nil, err
			}
			if len(failing) > 0 {
				var ids []string
				for _, c := range commits {
					if _, ok := failing[c.Task]; ok {
						ids = append(ids, c.Task)
					}
				}
				if round, err = r.nextRound(record, level, round, ids, SourceVerification, commits, warnings, func(id string) []report.Issue {
					return []report.Issue{{Task: id, Severity: report.Blocking, Description: failing[id]}}
				}); err != nil {
					return head, commits, nil, err
				}
				fixing = ids
				continue
			}
		}
		set := r.gateSet(p, commits)
		if len(set) == 0 {
			return head, commits, warnings, nil
		}
		c, warning, err := r.critique(ctx, p, level, round, head, set)
		if err != nil {
			return head, commits, nil, err
		}
		if warning != "" {
			for _, rv := range set {
				warnings[rv.Task.ID] = append(warnings[rv.Task.ID], warning)
			}
		}
		var needs []string
		for _, id := range c.NeedsWork() {
			if slices.ContainsFunc(set, func(rv Reviewed) bool { return rv.Task.ID == id }) {
				needs = append(needs, id)
			}
		}
		if len(needs) == 0 {
			return head, commits, warnings, nil
		}
		if round, err = r.nextRound(record, level, round, needs, SourceCritique, commits, warnings, c.IssuesOf); err != nil {
			return head, commits, nil, err
		}
		fixing = needs
	}
}

// nextRound starts the next amendment round with ids fixing, or
// escalates.
func (r *Runner) nextRound(record func(...Event) error, level, round int, ids []string, source string, commits []Commit,
	warnings map[string][]string, issues func(string) []report.Issue) (int, error) {
	round++
	if round >= EscalateRound {
		return round, &Escalated{Level: level, Round: round, Tasks: ids}
	}
	var fixing []Event
	for _, id := range ids {
		if round >= WarnRound {
			warnings[id] = append(warnings[id], fmt.Sprintf("amendment round %d: one more and the run escalates", round))
		}
		fixing = append(fixing, Event{Task: id, Status: manifest.Fixing, CommitSHA: commitOf(commits, id), Level: level, Source: source, Round: round,
			Reason: issueText(issues(id)), issues: issues(id)})
	}
	return round, record(fixing...)
}

func commitOf(commits []Commit, id string) string {
	for _, c := range commits {
		if c.Task == id {
			return c.SHA
		}
	}
	return ""
}

// issueText is issues as a fixing event records them.
func issueText(issues []report.Issue) string {
	var lines []string
	for _, is := range issues {
		line := is.Severity
		if is.File != "" {
			line += " in " + is.File
		}
		lines = append(lines, line+": "+strings.TrimSpace(is.Description))
	}
	return strings.Join(lines, "\n")
}

// NeedsCritique is the seed's table: whether task t is critiqued, by
// its own setting, else the run's.
func NeedsCritique(m *manifest.Manifest, t *manifest.Task) bool {
	if t.Critique != nil {
		return t.Critique.Enabled
	}
	return m.Critique.Enabled
}

// gateSet is the committed tasks of the level that need critique.
func (r *Runner) gateSet(p Plan, commits []Commit) []Reviewed {
	var set []Reviewed
	for _, c := range commits {
		t := p.Manifest.Task(c.Task)
		if t != nil && NeedsCritique(p.Manifest, t) {
			set = append(set, Reviewed{Task: *t, Commit: c.SHA, Output: p.Outputs[c.Task]})
		}
	}
	return set
}

// CritiqueError is a level's critique that did not judge: its agent
// failed, timed out or was stopped, or wrote no report or one that does
// not parse. A critique that did not judge never accepts a level (the
// seed's "accept with a warning" would let unreviewed work through): the
// run stops, the level's commits held on the work ref and the branch
// where it was, and running it again runs the critique again.
type CritiqueError struct {
	Level, Round int // Round 0 is the level's first critique
	Err          error
}

func (e *CritiqueError) Error() string {
	return fmt.Sprintf("level %d: its critique did not judge, so the level is not accepted: %v", e.Level, e.Err)
}

func (e *CritiqueError) Unwrap() error { return e.Err }

// critique runs the level's critique agent in slot 1 at head (the
// level's tasks are done: it counts toward max-parallel as one of them).
// A critique that fails or writes no valid report is a *CritiqueError; one
// halted before it started is its ErrHalted error; one that changes files
// has them discarded, with a warning.
func (r *Runner) critique(ctx context.Context, p Plan, level, round int, head string, set []Reviewed) (report.Critique, string, error) {
	var warnings []string
	var rep []byte
	var failed error
	err := r.inSlot(ctx, head, func(wt *gitext.Repo, dir string) error {
		rep, failed = r.Gate.Critic(ctx, Review{Level: level, Round: round, Tasks: set}, dir)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		changed, err := discard(ctx, wt)
		if len(changed) > 0 {
			warnings = append(warnings, "the critique changed "+strings.Join(changed, ", ")+": discarded")
		}
		return err
	})
	if err != nil {
		return report.Critique{}, "", err
	}
	c, perr := report.ParseCritique(rep)
	switch {
	case errors.Is(failed, ErrHalted):
		return report.Critique{}, "", failed
	case failed != nil:
		return report.Critique{}, "", &CritiqueError{Level: level, Round: round, Err: errors.New(firstLine(failed.Error()))}
	case rep == nil:
		return report.Critique{}, "", &CritiqueError{Level: level, Round: round, Err: errors.New("it wrote no report")}
	case perr != nil:
		return report.Critique{}, "", &CritiqueError{Level: level, Round: round, Err: perr}
	}
	return c, strings.Join(warnings, "; "), nil
}

// inSlot runs f in pool slot 1 checked out at commit, cleaned.
func (r *Runner) inSlot(ctx context.Context, commit string, f func(wt *gitext.Repo, dir string) error) error {
	slot, err := r.Pool.Hold(1)
	if err != nil {
		return err
	}
	defer slot.Release()
	wt, err := slot.Checkout(ctx, commit)
	if err != nil {
		return err
	}
	if err := wt.Clean(ctx); err != nil {
		return err
	}
	return f(wt, slot.Dir)
}

// discard puts wt back at its HEAD and lists what had changed.
func discard(ctx context.Context, wt *gitext.Repo) ([]string, error) {
	entries, err := wt.Status(ctx, gitext.UntrackedAll)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	changed := make([]string, len(entries))
	for i, e := range entries {
		changed[i] = e.Path
	}
	if err := wt.ResetHard(ctx); err != nil {
		return changed, err
	}
	return changed, wt.Clean(ctx)
}

// unchained reports whether commits do not make the chain boundary..head
// (a kill left the level half re-recorded): it is rebuilt then.
func (r *Runner) unchained(ctx context.Context, boundary, head string, commits []Commit) (bool, error) {
	want := boundary
	for _, c := range commits {
		if c.SHA == "" || c.SHA == want { // a task sharing its unit's commit
			continue
		}
		parent, err := r.Repo.FirstParent(ctx, c.SHA)
		if err != nil || parent != want {
			return true, nil
		}
		want = c.SHA
	}
	return want != head, nil
}

// amend runs the fix agents of the level's fixing tasks, one at a time,
// each in slot 1 at the level's head with the fixes before it, each fix
// held as a commit on the work ref and recorded as it is made; then
// rebuilds the level from its boundary (each task's work is its commit's
// diff and its fix's), records the new commits and the level, round
// round, and returns them.
func (r *Runner) amend(ctx context.Context, p Plan, record func(...Event) error, level int, boundary, head string, commits []Commit, round int) (string, []Commit, error) {
	cur := head
	for _, c := range commits {
		f, ok := p.Amend.Fixing[c.Task]
		if !ok {
			continue
		}
		if f.Fix != "" {
			cur = f.Fix
			continue
		}
		fix, err := r.fix(ctx, p, level, c, f, cur)
		if err != nil {
			return head, commits, err
		}
		if err := r.holdWork(ctx, p, fix); err != nil {
			return head, commits, err
		}
		f.Fix = fix
		if err := record(Event{Task: c.Task, Status: manifest.Fixing, CommitSHA: c.SHA, Level: level, Source: f.Source, Round: f.Round,
			Reason: f.Issues, Fix: fix, issues: f.issues}); err != nil {
			return head, commits, err
		}
		cur = fix
	}
	results, messages, err := r.rework(ctx, p, boundary, commits)
	if err != nil {
		return head, commits, err
	}
	units := Units(p.Manifest.Commits.Strategy, Group(p.Manifest), results)
	rebuilt, next, err := r.CommitLevel(ctx, boundary, units, func(u Unit) string {
		// A unit keeps its commit's message, the seed says.
		if msg, ok := messages[u.Results[0].ID]; ok {
			return msg
		}
		return p.Message(u)
	})
	if err != nil {
		return head, commits, err
	}
	// Until the rebuilt level is recorded, a resume needs the fixes as
	// well: the work ref holds both, through a commit with the two as
	// parents, then the level alone.
	hold := next
	if cur != head {
		hold, err = r.Repo.CommitTree(ctx, next+"^{tree}", []string{next, cur},
			fmt.Sprintf("git crucible run: level %d rebuilt in amendment round %d, and its fixes\n", level, round))
		if err != nil {
			return head, commits, err
		}
	}
	if hold != boundary {
		if err := r.holdWork(ctx, p, hold); err != nil {
			return head, commits, err
		}
	}
	var decided []Event
	for _, c := range rebuilt {
		e := Event{Task: c.Task, Status: manifest.Committed, CommitSHA: c.SHA, Level: level, Round: round}
		if c.SHA == "" {
			e.Reason = "changed nothing"
		}
		decided = append(decided, e)
	}
	if next != boundary {
		decided = append(decided, Event{Level: level, Boundary: boundary, Head: next, Round: round})
	}
	if err := record(decided...); err != nil {
		return head, commits, err
	}
	if hold != next && next != boundary {
		if err := r.holdWork(ctx, p, next); err != nil {
			return head, commits, err
		}
	}
	return next, rebuilt, nil
}

// fix runs c's fix agent at cur and returns the commit holding its work
// tree after it (on cur: its diff is the fix).
func (r *Runner) fix(ctx context.Context, p Plan, level int, c Commit, f Fixing, cur string) (string, error) {
	t := p.Manifest.Task(c.Task)
	issues := f.issuesOf(c.Task)
	var fix string
	err := r.inSlot(ctx, cur, func(wt *gitext.Repo, dir string) error {
		rep, err := r.Gate.Fix(ctx, FixJob{Task: *t, Level: level, Round: f.Round, Source: f.Source, Issues: issues, Output: p.Outputs[c.Task]}, dir)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrHalted) {
			return err // never started: the round goes on from here when the run resumes
		}
		// A fix that failed still counts: what it changed, if anything,
		// goes to the next critique, which judges it.
		if rep != nil {
			if _, err := report.ParseTask(rep); err == nil {
				p.Outputs[c.Task] = rep
			}
		}
		tree, _, err := r.snapshot(ctx, wt, cur)
		if err != nil {
			return err
		}
		fix, err = r.Repo.CommitTree(ctx, tree, []string{cur}, fmt.Sprintf("fix of task %s, amendment round %d\n", c.Task, f.Round))
		return err
	})
	return fix, err
}

// issuesOf are what a fixing task is to fix: as the round found them, or
// as its event recorded them.
func (f Fixing) issuesOf(task string) []report.Issue {
	if f.issues != nil {
		return f.issues
	}
	return []report.Issue{{Task: task, Severity: report.Blocking, Description: f.Issues}}
}

// rework is each committed task's work, for the rebuild: its commit's
// changes, then its fix's on top; and the messages of its commit.
func (r *Runner) rework(ctx context.Context, p Plan, boundary string, commits []Commit) ([]Result, map[string]string, error) {
	messages := map[string]string{}
	var results []Result
	for _, c := range commits {
		res := Result{ID: c.Task, Passed: true, Report: p.Outputs[c.Task], Tree: boundary}
		if c.SHA != "" {
			out, err := r.Repo.LogFormat(ctx, "%B", gitext.LogOptions{Max: 1}, c.SHA)
			if err != nil {
				return nil, nil, err
			}
			messages[c.Task] = string(out)
			if res.Changed, err = r.Repo.ChangedPaths(ctx, c.SHA+"^", c.SHA); err != nil {
				return nil, nil, err
			}
			res.Tree = c.SHA
		}
		if f, ok := p.Amend.Fixing[c.Task]; ok && f.Fix != "" {
			fixed, err := r.Repo.ChangedPaths(ctx, f.Fix+"^", f.Fix)
			if err != nil {
				return nil, nil, err
			}
			if res.Tree, err = r.overlay(ctx, res.Tree, Unit{Results: []Result{{Tree: f.Fix}}, Paths: [][]string{fixed}}); err != nil {
				return nil, nil, err
			}
			for _, path := range fixed {
				if !slices.Contains(res.Changed, path) {
					res.Changed = append(res.Changed, path)
				}
			}
			slices.Sort(res.Changed)
		}
		results = append(results, res)
	}
	return results, messages, nil
}

// ErrNoCommitGate stops an amendment round that has no command to check
// its rebuilt commits with: the seed never skips that check silently.
var ErrNoCommitGate = errors.New("an amendment round rebuilt the level's commits, and the manifest gives no command to check each with: set validation.fast-gate, or no-fast-gate: true with a verify pipeline")

// verify runs the fast gate at each rebuilt commit in slot 1 and returns
// the failing tasks' logs.
func (r *Runner) verify(ctx context.Context, p Plan, commits []Commit) (map[string]string, error) {
	failing := map[string]string{}
	if p.FastGate == "" {
		return nil, ErrNoCommitGate
	}
	for _, c := range commits {
		if c.SHA == "" {
			continue
		}
		err := r.inSlot(ctx, c.SHA, func(_ *gitext.Repo, dir string) error {
			code, out, err := fastgate.Run(ctx, dir, p.FastGate)
			if err != nil {
				return err
			}
			if code != 0 {
				failing[c.Task] = fmt.Sprintf("the fast gate `%s` fails at the rebuilt commit %s (exit status %d):\n%s", p.FastGate, c.SHA[:12], code, tail(out))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return failing, nil
}

// tail is the end of a gate's output, enough to fix by.
func tail(out []byte) string {
	const keep = 4000
	s := strings.TrimRight(string(out), "\n")
	if len(s) > keep {
		s = "..." + s[len(s)-keep:]
	}
	return s
}
