package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/verifycommits"
)

// TaskRun is a task DAG to run on the current branch, recorded in the
// engine's pipeline: git crucible run's manifest, or Phase 3's plan.
type TaskRun struct {
	Manifest    *manifest.Manifest
	Path        string // the manifest file, from the work tree's top; "" when there is none
	MaxParallel int
	Templates   *prompt.Set
	Template    string // the task agents' template
	Role        string // who plays the task agents
	Step        string // the step their dispatches are at
	Test        string // the project's test command, for the prompts
	// Progress, when given, hears of each status change (from one
	// goroutine at a time): git crucible run prints them on stderr.
	Progress func(taskdag.Event)
	// Approve, when given, is asked before a run that has something left
	// to do records anything: its error refuses the run.
	Approve func() error
	// Saw, when given, is called with Manifest after each event is
	// recorded and applied (from one goroutine at a time): git crucible
	// run rewrites the manifest file as a view of the chain.
	Saw func(*manifest.Manifest)
	// Prompt, when given, is a task's prompt data (its upstream context
	// is added): build's Phase 3 gives its implement step's. It is called
	// from the tasks' goroutines.
	Prompt func(taskdag.Job) prompt.Data
	// Retry runs again the tasks a run before this one failed: a build
	// resumed after a failed task.
	Retry bool
	// Between is taskdag.Plan's: it runs between levels.
	Between func(head string) (string, error)
	// Titles are the tasks' titles, by id (a plan's): their dispatches'
	// and their commits' subjects. A task without one goes by its id.
	Titles map[string]string
	// Collect makes the run a CI collector's (taskdag.Plan.Collect): no
	// task is dispatched, each is taken from its job's task commit.
	Collect bool
}

// TaskRunResult is how a task run ended.
type TaskRunResult struct {
	Head   string // the branch's commit after it
	Backup string // the backup branch, made before the run's first level moved the branch
	Failed []string
	// Reasons says why each task failed, of those this run failed.
	Reasons map[string]string
	Status  string // completed, failed (some task failed or can never run, or a critique did not judge) or escalated
	Reason  string
	Done    bool // the chain had the run completed already: nothing ran, nothing was recorded
	// Budget is the stop at the cost cap that escalated the run, nil when
	// none did; Critique the critique that did not judge and failed it.
	Budget   CostCap
	Critique *taskdag.CritiqueError
	// NotReady, for a collector, is the level whose jobs have not all
	// left their work: the run goes on (Status in-progress).
	NotReady *taskdag.NotReady
}

// WorkRef holds a task run's newest level commits until its branch does.
func WorkRef(id string) string { return "refs/crucible/work/" + id }

// RunTasks runs tr's tasks level by level (taskdag.Run), each task's
// agent dispatched durably in its own worktree, each change a dag.task or
// dag.level event in the chain before the run goes on. It picks up where
// the chain's events leave the run: a killed run resumes, never
// recreating the backup branch. The engine's Recover must have settled the
// pipeline's dispatches first.
func (e *Engine) RunTasks(ctx context.Context, tr TaskRun) (TaskRunResult, error) {
	at, err := e.taskRunAt(ctx, tr)
	if err != nil {
		return TaskRunResult{}, err
	}
	res := TaskRunResult{Backup: at.backup}
	if runDone(tr.Manifest) {
		res.Head, res.Status, res.Done = at.head, string(manifest.RunCompleted), true
		if err := e.dropWork(ctx, at.head); err != nil {
			return res, err
		}
		// A run killed after its end was recorded left what it leaves.
		return res, e.leave(ctx, at.branch, res.Backup, at.start)
	}
	if tr.Approve != nil {
		if err := tr.Approve(); err != nil {
			return TaskRunResult{}, err
		}
	}
	if err := e.GoOnPastCap(ctx); err != nil {
		return TaskRunResult{}, err
	}
	log, err := e.openTaskLog(ctx, tr, at, &res)
	if err != nil {
		return res, err
	}
	runner, plan, err := log.runner(ctx, at)
	if err != nil {
		return res, err
	}
	var retry []taskdag.Event
	for _, t := range tr.Manifest.Tasks {
		if tr.Retry && t.Status == manifest.Failed {
			retry = append(retry, taskdag.Event{Task: t.ID, Status: manifest.Pending})
		}
	}
	if err := log.record(ctx, retry...); err != nil {
		return res, err
	}
	res.Head, err = runner.Run(ctx, plan)
	return log.end(ctx, at, res, err)
}

// taskRunAt is where a task run stands before it goes on: the branch and
// its commit, the chain's events, and what they say of the run.
type taskRunAt struct {
	branch, head string
	events       []pipeline.Event
	began        *pipeline.DAGRunData // nil before the run's first event
	amend        *taskdag.Amendments
	backup       string // the backup branch
	start        string // where the run began
}

// taskRunAt reads where tr stands; it sets tr.Manifest's tasks as the
// chain has them.
func (e *Engine) taskRunAt(ctx context.Context, tr TaskRun) (taskRunAt, error) {
	repo := e.Service.Repo
	short, err := repo.HeadBranch()
	if err != nil {
		return taskRunAt{}, err
	}
	if short == "" {
		return taskRunAt{}, errors.New("HEAD is detached: a task run commits on a branch")
	}
	at := taskRunAt{branch: "refs/heads/" + short, amend: &taskdag.Amendments{}}
	at.head, err = repo.HeadCommit()
	if err != nil || at.head == "" {
		return taskRunAt{}, errors.Join(err, errors.New("the branch has no commit to build on"))
	}
	if at.events, err = e.events(ctx); err != nil {
		return taskRunAt{}, err
	}
	tr.Manifest.ClearState() // the chain says where the run stands, not the file
	if at.began, err = replayTaskRun(at.events, tr.Manifest, at.amend); err != nil {
		return taskRunAt{}, err
	}
	at.backup, at.start = verifycommits.BackupBranch(at.branch), at.head
	if at.began != nil {
		if at.began.Backup != "" {
			at.backup = at.began.Backup
		}
		at.start = at.began.Start
	}
	return at, nil
}

// taskLog records a task run's events in the chain as they happen, and
// applies them to the manifest and the run's result.
type taskLog struct {
	e       *Engine
	tr      TaskRun
	res     *TaskRunResult
	phase   int
	numbers map[string]int // each task's number, from 1 in the manifest
	left    *taskLeft
	prov    *provenance
	outputs map[string][]byte
}

// openTaskLog begins the run in the chain, or keeps a resumed one's
// backup branch, and opens its log.
func (e *Engine) openTaskLog(ctx context.Context, tr TaskRun, at taskRunAt, res *TaskRunResult) (*taskLog, error) {
	phase, err := e.phase(ctx)
	if err != nil {
		return nil, err
	}
	l := &taskLog{e: e, tr: tr, res: res, phase: phase, numbers: map[string]int{}}
	if l.outputs, err = e.taskOutputs(ctx, at.events, tr.Step); err != nil {
		return nil, err
	}
	if at.began == nil {
		if err := e.begin(ctx, tr, at.branch, at.head, res.Backup); err != nil {
			return nil, err
		}
		tr.Manifest.Status = manifest.RunInProgress
	} else if err := e.keepBackup(ctx, res.Backup, at.start); err != nil {
		return nil, err
	}
	tr.Manifest.BackupBranch = strings.TrimPrefix(res.Backup, "refs/heads/")
	l.saw()
	for i, t := range tr.Manifest.Tasks {
		l.numbers[t.ID] = i + 1
	}
	if l.left, err = leftOf(at.events, tr.Step); err != nil {
		return nil, err
	}
	l.prov = &provenance{e: e, phase: phase, role: tr.Role, number: l.numbers, made: map[string][]int{}}
	res.Reasons = map[string]string{}
	return l, nil
}

// saw shows the manifest as it now is to tr.Saw.
func (l *taskLog) saw() {
	if l.tr.Saw != nil {
		l.tr.Saw(l.tr.Manifest)
	}
}

// record appends evs to the chain, their provenance first, then applies
// them: the manifest, the run's failures, its progress.
func (l *taskLog) record(ctx context.Context, evs ...taskdag.Event) error {
	if len(evs) == 0 {
		return nil
	}
	drafts := make([]pipeline.Draft, len(evs))
	for i, ev := range evs {
		if err := l.prov.saw(ctx, ev); err != nil {
			return err
		}
		drafts[i] = taskDraft(ev)
	}
	if err := l.e.Append(ctx, drafts...); err != nil {
		return err
	}
	for _, ev := range evs {
		l.left.saw(ev)
		if ev.Status == manifest.Failed {
			l.res.Reasons[ev.Task] = ev.Reason
		}
		if l.tr.Progress != nil {
			l.tr.Progress(ev)
		}
		if err := taskdag.Apply(l.tr.Manifest, ev); err != nil {
			return err
		}
	}
	l.saw()
	return nil
}

// runner is the run's level runner, its agents dispatched through the
// engine, its critique gate and its halt at the cost cap, and the plan it
// runs.
func (l *taskLog) runner(ctx context.Context, at taskRunAt) (*taskdag.Runner, taskdag.Plan, error) {
	e, tr := l.e, l.tr
	data, render, renderTask := e.taskPrompts(tr)
	renderFix := func(f taskdag.FixJob, report string) (Prompt, error) {
		d := data(fixStep, tr.Role, &f.Task, prompt.ReportTask)
		d.Round, d.MaxRounds, d.Issues = f.Round, taskdag.WarnRound, f.Issues
		return render(tr.Template, d, report)
	}
	critic := cmp.Or(tr.Manifest.Critique.Agent, critiqueStep)
	renderCritique := func(rv taskdag.Review, report string) (Prompt, error) {
		d := data(critiqueStep, critic, nil, prompt.ReportCritique)
		d.Round, d.MaxRounds = rv.Round+1, taskdag.WarnRound
		for _, t := range rv.Tasks {
			instructions := tr.Manifest.Critique.Prompt
			if t.Task.Critique != nil && t.Task.Critique.Prompt != "" {
				instructions = t.Task.Critique.Prompt
			}
			d.Reviewed = append(d.Reviewed, prompt.Reviewed{ID: t.Task.ID, Commit: t.Commit, Files: t.Task.Files,
				Output: strings.TrimSpace(string(t.Output)), Instructions: strings.TrimSpace(instructions)})
		}
		return render(critiqueStep, d, report)
	}
	runner := taskdag.New(e.Service.Repo, tr.MaxParallel, e.TaskDispatcher(Call{Point: pipeline.Point{Step: tr.Step}, Role: tr.Role, Template: tr.Template,
		TemplateSHA256: tr.Templates.Digest(tr.Template)}, tr.Titles, renderTask, l.left.retry))
	records, err := pipeline.Records(at.events)
	if err != nil {
		return nil, taskdag.Plan{}, err
	}
	runner.Gate = e.Gate(tr, critic, lastCritique(records), renderCritique, renderFix)
	runner.Halt = func() error { return e.Halt(ctx) }
	plan := taskdag.Plan{Manifest: tr.Manifest, Head: at.head, Branch: at.branch, WorkRef: WorkRef(e.ID), Outputs: l.outputs,
		FastGate: tr.Manifest.CommitGate(), Amend: at.amend, Record: func(evs ...taskdag.Event) error { return l.record(ctx, evs...) },
		Between: tr.Between, Finished: e.finished(ctx, l.left, records), Collect: tr.Collect,
		Message: func(u taskdag.Unit) string { return e.unitMessage(tr, u, l.numbers, l.phase) }}
	return runner, plan, nil
}

// end records how the run that err ended ended (a dag.run event, and the
// escalation at the cost cap), and leaves what a completed run leaves; a
// collector waiting for its jobs records nothing.
func (l *taskLog) end(ctx context.Context, at taskRunAt, res TaskRunResult, err error) (TaskRunResult, error) {
	e, tr := l.e, l.tr
	var deadlock *manifest.Deadlock
	var escalated *taskdag.Escalated
	var drafts []pipeline.Draft
	switch {
	case errors.As(err, &deadlock):
		res.Status, res.Reason = "failed", deadlock.Error()
	case errors.As(err, &escalated):
		res.Status, res.Reason = "escalated", escalated.Error()
	case errors.As(err, &res.Budget):
		res.Status, res.Reason = "escalated", res.Budget.Error()
		drafts = []pipeline.Draft{pipeline.CostCapEscalation("in the task run", res.Budget.Error(), res.Budget.Suggestion())}
	case errors.As(err, &res.Critique):
		res.Status, res.Reason = "failed", res.Critique.Error()
	case errors.As(err, &res.NotReady):
		// A collector waits for the level's jobs: the run goes on.
		res.Status, res.Reason = string(manifest.RunInProgress), res.NotReady.Error()
		return res, e.dropWork(ctx, res.Head)
	case err != nil:
		return res, err
	default:
		res.Status = "completed"
	}
	for _, t := range tr.Manifest.Tasks {
		if t.Status == manifest.Failed {
			res.Failed = append(res.Failed, t.ID)
		}
	}
	if len(res.Failed) > 0 && res.Status == "completed" {
		res.Status, res.Reason = "failed", fmt.Sprintf("%d of %d tasks failed: %s", len(res.Failed), len(tr.Manifest.Tasks), strings.Join(res.Failed, ", "))
	}
	if err := e.dropWork(ctx, res.Head); err != nil {
		return res, err
	}
	drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeDAGRun, Data: pipeline.DAGRunData{Status: res.Status, Reason: res.Reason}})
	if err := e.Append(ctx, drafts...); err != nil {
		return res, err
	}
	tr.Manifest.Status = manifest.RunStatus(res.Status)
	l.saw()
	if res.Status != string(manifest.RunCompleted) {
		return res, nil // what it leaves stays, for the run to go on
	}
	return res, e.leave(ctx, at.branch, res.Backup, at.start)
}

// keepBackup makes sure a resumed run's backup branch is there: one
// that is gone (git crucible clean removes it: its commit is on the
// branch) is made again at start, where the run began, as the run made
// it; a run whose start the chain does not say (an earlier git-crucible's)
// cannot, and is refused.
func (e *Engine) keepBackup(ctx context.Context, backup, start string) error {
	repo := e.Service.Repo
	b, err := repo.ReadRef(backup)
	switch {
	case err != nil || b != "":
		return err
	case start == "":
		return fmt.Errorf("the run's backup branch %s is gone: it is the way back to where the run began; recreate it from the reflog before going on", strings.TrimPrefix(backup, "refs/heads/"))
	}
	err = repo.UpdateRefs(ctx, "git crucible run: backup before the run, made again", gitext.RefUpdate{Name: backup, New: start})
	if errors.Is(err, gitext.ErrRefChanged) {
		return nil // made meanwhile
	}
	return err
}

// leave removes what a completed run leaves, once its end is recorded:
// the slots' worktrees (their work is on the branch) and the backup
// branch when the run made it: it still points at start, where the run
// began (compare-and-swap), and start is on the branch, so that nothing
// is lost; the chain's dag.run names it and start. A backup that was
// there before the run, at another commit, is not the run's, and stays.
func (e *Engine) leave(ctx context.Context, branch, backup, start string) error {
	repo := e.Service.Repo
	pool := taskdag.Slots(repo)
	slots, err := pool.Slots()
	if err != nil {
		return err
	}
	for _, n := range slots {
		if err := pool.Remove(ctx, n); err != nil {
			return err
		}
	}
	if err := pool.Prune(ctx); err != nil {
		return err
	}
	b, err := repo.ReadRef(backup)
	if err != nil || b == "" || start == "" || b != start {
		return err
	}
	head, err := repo.ReadRef(branch)
	if err != nil {
		return err
	}
	if on, err := repo.IsAncestor(ctx, start, head); err != nil || !on {
		return err
	}
	err = repo.UpdateRefs(ctx, "git crucible run: completed, its backup is on the branch", gitext.RefUpdate{Name: backup, Old: start})
	if errors.Is(err, gitext.ErrRefChanged) {
		return nil // moved meanwhile: no longer the run's
	}
	return err
}

// dropWork deletes the run's work ref (ours) once head, the branch, holds
// what it held; before the run's end is recorded, so that a kill between
// the two leaves nothing behind that a run already done would not clear.
func (e *Engine) dropWork(ctx context.Context, head string) error {
	repo := e.Service.Repo
	w, err := repo.ReadRef(WorkRef(e.ID))
	if err != nil || w == "" {
		return err
	}
	if in, err := repo.IsAncestor(ctx, w, head); err != nil || !in {
		return err // a level not on the branch: the ref keeps it
	}
	return repo.UpdateRefs(ctx, "git crucible run: done", gitext.RefUpdate{Name: WorkRef(e.ID), Old: w})
}

// runDone says whether the chain has m's run completed, every task with it.
func runDone(m *manifest.Manifest) bool {
	if m.Status != manifest.RunCompleted {
		return false
	}
	for _, t := range m.Tasks {
		if t.Status != manifest.Completed {
			return false
		}
	}
	return true
}

// phase is the pipeline's current phase: what its task commits' trailers
// and provenance notes say, as the hooks would for a commit made now.
func (e *Engine) phase(ctx context.Context) (int, error) {
	h, err := e.Service.Store.Head(ctx, e.ID)
	if err != nil {
		return 0, err
	}
	g, err := pipeline.GatesOf(h.State)
	if err != nil {
		return 0, err
	}
	return int(g.Ledger.Current()), nil
}

// begin makes the backup branch (kept if it exists: an earlier run's
// snapshot is never overwritten) and records the run's start.
func (e *Engine) begin(ctx context.Context, tr TaskRun, branch, head, backup string) error {
	repo := e.Service.Repo
	if b, err := repo.ReadRef(backup); err != nil {
		return err
	} else if b == "" {
		if err := repo.UpdateRefs(ctx, "git crucible run: backup before the run", gitext.RefUpdate{Name: backup, New: head}); err != nil {
			return err
		}
	}
	return e.Append(ctx, pipeline.Draft{Type: pipeline.TypeDAGRun, Data: pipeline.DAGRunData{Status: "in-progress",
		Manifest: tr.Path, Branch: strings.TrimPrefix(branch, "refs/heads/"), Backup: backup, Start: head,
		MaxParallel: tr.MaxParallel, Tasks: len(tr.Manifest.Tasks)}})
}

// taskDraft is a task run's event as the chain records it.
func taskDraft(ev taskdag.Event) pipeline.Draft {
	if ev.Task == "" {
		return pipeline.Draft{Type: pipeline.TypeDAGLevel,
			Data: pipeline.DAGLevelData{Level: ev.Level, Boundary: ev.Boundary, Head: ev.Head, Round: ev.Round}}
	}
	return pipeline.Draft{Type: pipeline.TypeDAGTask, Data: pipeline.DAGTaskData{Task: ev.Task,
		Status: string(ev.Status), Level: ev.Level, Commit: ev.CommitSHA, Reason: ev.Reason, Worktree: ev.Worktree,
		Source: ev.Source, Round: ev.Round, Fix: ev.Fix}}
}

// replayTaskRun applies a chain's task run events to m and returns the
// run's first dag.run (nil when the run has not begun).
func replayTaskRun(events []pipeline.Event, m *manifest.Manifest, amend *taskdag.Amendments) (*pipeline.DAGRunData, error) {
	var began *pipeline.DAGRunData
	for _, ev := range events {
		switch ev.Type {
		case pipeline.TypeDAGRun:
			var d pipeline.DAGRunData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			if began == nil {
				began = &d
				m.BackupBranch = strings.TrimPrefix(d.Backup, "refs/heads/")
			}
			m.Status = manifest.RunStatus(d.Status)
		case pipeline.TypeDAGTask:
			var d pipeline.DAGTaskData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			if m.Task(d.Task) == nil {
				return nil, fmt.Errorf("the chain's task run has a task %q the manifest does not: it is another run's", d.Task)
			}
			ev := taskdag.Event{Task: d.Task, Status: manifest.TaskStatus(d.Status), CommitSHA: d.Commit, Level: d.Level,
				Source: d.Source, Round: d.Round, Fix: d.Fix, Reason: d.Reason}
			if d.Job != "" {
				ev.CommitSHA = "" // a CI job's task commit, not yet the branch's
			}
			if err := taskdag.Apply(m, ev); err != nil {
				return nil, err
			}
			amend.Apply(ev)
		case pipeline.TypeDAGLevel:
			var d pipeline.DAGLevelData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			ev := taskdag.Event{Level: d.Level, Boundary: d.Boundary, Head: d.Head, Round: d.Round}
			if err := taskdag.Apply(m, ev); err != nil {
				return nil, err
			}
			amend.Apply(ev)
		}
	}
	return began, nil
}

// taskOutputs are the reports the tasks' completed dispatches at step
// (or their fixes) left, the newest of each task's: what downstream tasks
// receive.
func (e *Engine) taskOutputs(ctx context.Context, events []pipeline.Event, step string) (map[string][]byte, error) {
	records, err := pipeline.Records(events)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, r := range slices.Backward(records) {
		if r.Point.Step != step && r.Point.Step != fixStep || r.Point.Task == "" || r.Status != "completed" || r.Output == "" {
			continue
		}
		if _, ok := out[r.Point.Task]; ok {
			continue
		}
		b, err := e.Service.ReadKept(ctx, e.ID, r.Output)
		if err != nil {
			return nil, err
		}
		out[r.Point.Task] = b
	}
	return out, nil
}

// unitMessage is a commit unit's message, as the manifest's
// message-source says: a task's plan.md objective (objective, the
// default) or its report's notes (notes). A unit of one task says its
// text, first line as the subject; one of several tasks (grouped, single)
// names them and says each one's text. The pipeline's trailers end it,
// a Crucible-Task for each task.
func (e *Engine) unitMessage(tr TaskRun, u taskdag.Unit, number map[string]int, phase int) string {
	var b strings.Builder
	ids := u.Tasks()
	text := func(r taskdag.Result) string { return taskText(tr, e.Service.Repo.WorkTree, r) }
	switch first := text(u.Results[0]); {
	case len(ids) == 1 && first != "":
		subject, body, _ := strings.Cut(first, "\n")
		b.WriteString(subject + "\n")
		if body = strings.TrimSpace(body); body != "" {
			b.WriteString("\n" + body + "\n")
		}
	case len(ids) == 1:
		fmt.Fprintf(&b, "Task %s of %s\n", ids[0], orTaskRun(tr.Manifest.Goal))
	default:
		fmt.Fprintf(&b, "Tasks %s of %s\n", strings.Join(ids, ", "), orTaskRun(tr.Manifest.Goal))
		for _, r := range u.Results {
			if t := text(r); t != "" {
				fmt.Fprintf(&b, "\n%s: %s\n", r.ID, t)
			}
		}
	}
	b.WriteString("\n")
	for i, id := range ids {
		trailers := enforce.CommitTrailers(e.ID, phase, enforce.Agent{Task: number[id], Role: tr.Role})
		if i > 0 {
			trailers = trailers[2:] // the pipeline and phase once
		}
		for _, t := range trailers {
			fmt.Fprintf(&b, "%s: %s\n", t.Key, t.Value)
		}
	}
	return b.String()
}

// taskText is what a task's commit message says of it: its title when
// tr gives one (a plan's task), else per the manifest's message-source:
// its plan.md's objective, or its report's notes; "" when it has none.
// top is the work tree's top.
func taskText(tr TaskRun, top string, r taskdag.Result) string {
	if title := tr.Titles[r.ID]; title != "" {
		return taskdag.CommitSubject(title, r.ID)
	}
	if tr.Manifest.Commits.MessageSource == "notes" {
		t, err := report.ParseTask(r.Report)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(t.Notes)
	}
	if tr.Path == "" {
		return ""
	}
	plan, err := os.ReadFile(manifest.PlanPath(filepath.Join(top, tr.Path), r.ID))
	if err != nil {
		return ""
	}
	return manifest.PlanObjective(plan)
}

func orTaskRun(goal string) string {
	if goal = strings.TrimSpace(goal); goal == "" {
		return "the task run"
	}
	return pipeline.LedgerGoal(goal)
}

// TaskRunState sets m's run and task statuses as the chain's events say
// (the file's own are cleared first): where a task run of m stands,
// nothing recorded. git crucible run --matrix plans from it.
func TaskRunState(events []pipeline.Event, m *manifest.Manifest) error {
	m.ClearState()
	_, err := replayTaskRun(events, m, &taskdag.Amendments{})
	return err
}

// taskPrompts are a task run's prompt makers: data is a dispatch's prompt
// data, render renders a template with it, renderTask a task's prompt.
func (e *Engine) taskPrompts(tr TaskRun) (
	data func(step, role string, t *manifest.Task, format string) prompt.Data,
	render func(template string, d prompt.Data, report string) (Prompt, error),
	renderTask func(job taskdag.Job, report string) (Prompt, error),
) {
	data = func(step, role string, t *manifest.Task, format string) prompt.Data {
		d := prompt.Data{Goal: tr.Manifest.Goal, Mode: "feature", Pipeline: e.ID, Phase: int(ledger.Execute), PhaseName: "Execute",
			Step: step, Role: role, TestCommand: tr.Test,
			Inputs: map[string]string{}, Report: prompt.Report{Format: format}}
		if t != nil {
			d.Task = &report.PlanTask{ID: t.ID, Title: t.ID, DependsOn: t.DependsOn, Files: t.Files, FastGate: tr.Manifest.Validation.FastGate}
		}
		if tr.Path != "" {
			d.Inputs["manifest"] = tr.Path
		}
		return d
	}
	// A prompt that does not render fails its dispatch, which is never
	// recorded: an agent is not sent an error message for a prompt.
	render = func(template string, d prompt.Data, report string) (Prompt, error) {
		d.Report.Path = report
		text, err := tr.Templates.Render(template, d)
		if err != nil {
			return Prompt{}, fmt.Errorf("the %s prompt: %w", template, err)
		}
		return Prompt{Text: []byte(text), Commands: prompt.Commands(d.TestCommand, d.Task)}, nil
	}
	renderTask = func(job taskdag.Job, report string) (Prompt, error) {
		d := data(tr.Step, tr.Role, &job.Task, prompt.ReportTask)
		if tr.Prompt != nil {
			d = tr.Prompt(job)
		}
		d.Upstream = job.UpstreamContext()
		return render(tr.Template, d, report)
	}
	return data, render, renderTask
}
