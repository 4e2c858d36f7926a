package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/spec"
)

// walker is one walk's view of the chain, reloaded after every step.
type walker struct {
	e     *Engine
	opts  WalkOptions
	sp    *spec.Spec
	state *pipeline.State
	steps map[spec.Point]pipeline.StepData
	recs  []Record
	// exports are the report exports so far, the newest report's value of
	// each key (exportSeq: the dispatch it came from), read from the kept
	// reports of dispatches as they finish: the chain is their only source.
	exports   map[string]any
	exportSeq map[string]int
	read      map[int]bool // dispatches whose reports were read
	handedOff map[ledger.Phase]bool
	events    []pipeline.Event
	tip       string // the chain commit events was read up to
	// live are the events the run stands on: events less what replays
	// replaced (pipeline.Live).
	live []pipeline.Event
	// replay is the session of the newest replay, "" when none; replaced
	// are the dispatches replays ran again, the newest by where it ran.
	replay   string
	replaced map[replayedAt]int
	// taskNumbers is each plan task's 1-based position in the plan's
	// order: CRUCIBLE_TASK of its commits.
	taskNumbers map[string]int
	// waiting are the manual dispatches Recover left waiting, by seq.
	waiting map[int]Outcome
}

// refresh reloads the chain: state, step events, dispatches, exports.
func (w *walker) refresh(ctx context.Context) error {
	st, _, err := w.e.Service.Load(ctx, w.e.ID)
	if err != nil {
		return err
	}
	if err := w.loadEvents(ctx); err != nil {
		return err
	}
	events, replaced, err := pipeline.Live(w.events)
	if err != nil {
		return err
	}
	w.live, w.replaced = events, map[replayedAt]int{}
	for _, d := range replaced {
		w.replaced[replayedAt{spec.Point{Phase: d.Phase, Step: d.Step, Task: d.TaskID, Round: d.Round}, d.Role}] = d.Seq
	}
	if w.steps, err = StepsOf(events); err != nil {
		return err
	}
	recs, err := Records(events)
	if err != nil {
		return err
	}
	w.handedOff = map[ledger.Phase]bool{}
	for _, ev := range events {
		switch ev.Type {
		case pipeline.TypeHandoff:
			var d pipeline.HandoffData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return err
			}
			w.handedOff[d.From] = true
		case pipeline.TypeReplay:
			var d pipeline.ReplayData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return err
			}
			w.replay = d.Session
		}
	}
	if err := w.readExports(ctx, recs); err != nil {
		return err
	}
	w.state, w.recs = st, recs
	return nil
}

// loadEvents brings w.events up to the chain's tip, reading only the
// commits since the tip it read last (a whole chain costs a read per
// commit, and the walk reloads after every step), or the whole chain when
// that tip is no longer on it.
func (w *walker) loadEvents(ctx context.Context) error {
	var commits [][]pipeline.Event
	tip, found := "", false
	err := w.e.Service.Store.EventLog(ctx, w.e.ID, func(commit string, blob []byte) (bool, error) {
		if tip == "" {
			tip = commit
		}
		if commit == w.tip {
			found = true
			return false, nil
		}
		events, err := pipeline.DecodeEvents(blob)
		if err != nil {
			return false, fmt.Errorf("commit %s: %w", commit, err)
		}
		commits = append(commits, events)
		return true, nil
	})
	if err != nil {
		return err
	}
	if !found {
		w.events = nil
	}
	// As ChainEvents: the commits were visited newest first.
	for i := len(commits) - 1; i >= 0; i-- {
		w.events = append(w.events, commits[i]...)
	}
	w.tip = tip
	return nil
}

// readExports merges the exports of the task reports completed since it
// last ran: a report of a later dispatch carrying a key supersedes it.
func (w *walker) readExports(ctx context.Context, recs []Record) error {
	if w.exports == nil {
		w.exports, w.exportSeq, w.read = map[string]any{}, map[string]int{}, map[int]bool{}
	}
	for _, r := range recs {
		if !r.Finished() || w.read[r.Seq] {
			continue
		}
		w.read[r.Seq] = true
		if r.Status != "completed" || r.Output == "" || !w.taskReport(r) {
			continue
		}
		b, err := w.e.Service.ReadKept(ctx, w.e.ID, r.Output)
		if err != nil {
			return err
		}
		t, err := report.ParseTask(b)
		if err != nil {
			continue // a report the walk refused when it ran: it exports nothing
		}
		for k, v := range t.Exports {
			if r.Seq > w.exportSeq[k] {
				w.exports[k], w.exportSeq[k] = v, r.Seq
			}
		}
	}
	return nil
}

// taskReport reports whether dispatch r writes a task report: a dispatch
// step's agent, or a gate's or loop's fixer.
func (w *walker) taskReport(r Record) bool {
	l, ok := w.sp.Find(r.Point.Step)
	if !ok {
		return false
	}
	return l.Step.Kind == spec.Dispatch || l.Step.Rounds() && r.Role == l.Step.Fixer && r.Point.Round > 0 && r.Role != l.Step.Role
}

// done reports whether the step at p is done.
func (w *walker) done(p spec.Point) bool {
	p.Round = 0
	return w.steps[p].Status == pipeline.StepDone
}

// at lists the dispatches recorded at p's step and task, every round.
func (w *walker) at(p spec.Point) []Record {
	var out []Record
	for _, r := range w.recs {
		if r.Point.Phase == p.Phase && r.Point.Step == p.Step && r.Point.Task == p.Task {
			out = append(out, r)
		}
	}
	return out
}

// artifactPath is the work-tree path of file artifact name, "" when it
// is not one (an export, or unknown).
func (w *walker) artifactPath(name string) string {
	if name == "design" && w.opts.Design != "" {
		return w.opts.Design
	}
	if p := w.sp.Producer(name); p != nil {
		return p.Outputs[name]
	}
	return ""
}

// inputs maps each input of st to a path or an export's value.
func (w *walker) inputs(ctx context.Context, st *spec.Step, task *report.PlanTask) (map[string]string, error) {
	in := map[string]string{}
	for _, name := range st.Inputs {
		if name == spec.Diff {
			path, err := w.diff(ctx, st, task)
			if err != nil {
				return nil, err
			}
			in[name] = path
			continue
		}
		if path := w.artifactPath(name); path != "" {
			in[name] = path
			continue
		}
		if v, ok := w.exports[name]; ok {
			in[name] = exportText(v)
		}
	}
	return in, nil
}

// exportText is an export's value as a prompt shows it: a string as it
// is, anything else as YAML.
func exportText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// diff writes the change under review for st to a file of the engine's
// and returns its path: in a task, the change since the task began (its
// pre-task checkpoint's HEAD); elsewhere the pipeline's since its baseline.
func (w *walker) diff(ctx context.Context, st *spec.Step, task *report.PlanTask) (string, error) {
	base := w.state.Baseline
	name := st.ID
	if task != nil {
		name += "-" + task.ID
		if h := w.taskBase(task.ID); h != "" {
			base = h
		}
	}
	args := []string{"diff", "--no-color", "--no-ext-diff"}
	if base != "" {
		args = append(args, base)
	}
	out, err := w.e.Service.Repo.Git(ctx, args...)
	if err != nil {
		return "", err
	}
	path := filepath.Join(w.e.runs(), "diff", name+".patch")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, out, 0o644)
}

// replayedAt is where a dispatch ran: its point and role.
type replayedAt struct {
	p    spec.Point
	role string
}

// replayOf is the dispatch a replay replaced at p for role, nil when none:
// a new dispatch there is its replay.
func (w *walker) replayOf(p spec.Point, role string) *int {
	if seq, ok := w.replaced[replayedAt{p, role}]; ok {
		return &seq
	}
	return nil
}

// taskBase is HEAD when task's first checkpoint was taken, "" when unknown.
func (w *walker) taskBase(task string) string {
	for _, ev := range w.live {
		if ev.Type != pipeline.TypeStep {
			continue
		}
		var d pipeline.StepData
		if pipeline.DecodeData(ev, &d) == nil && d.Task == task && strings.HasPrefix(d.Result, headPrefix) {
			return strings.TrimPrefix(d.Result, headPrefix)
		}
	}
	return ""
}

// headPrefix starts a task checkpoint's step result: the HEAD it was
// taken at, where the task's diff starts.
const headPrefix = "head "

// handoff is what the handoff out of phase from carries forward.
func (w *walker) handoff(from ledger.Phase) pipeline.HandoffData {
	d := pipeline.HandoffData{From: from, To: from + 1, Path: pipeline.HandoffPath(from)}
	for _, loc := range w.sp.Walk() {
		if loc.Phase > from {
			break
		}
		for _, name := range sortedKeys(loc.Step.Outputs) {
			d.Inputs = append(d.Inputs, pipeline.HandoffInput{Name: name, Value: w.artifactPath(name)})
		}
		for _, name := range loc.Step.Exports {
			if v, ok := w.exports[name]; ok && name != "tasks" {
				d.Inputs = append(d.Inputs, pipeline.HandoffInput{Name: name, Value: exportText(v)})
			}
		}
	}
	for _, j := range w.state.View.Journal.Decisions {
		if j.Type == "approval" || j.Type == "escalation" {
			d.Decisions = append(d.Decisions, pipeline.HandoffDecision{Text: j.Type + ": " + j.Choice, Reason: j.Reason})
		}
	}
	d.Constraints = []string{"Goal: " + pipeline.LedgerGoal(w.state.Goal)}
	if w.opts.Test != "" {
		d.Constraints = append(d.Constraints, "The project's tests must pass: "+w.opts.Test)
	}
	return d
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var interopHandoff pipeline.HandoffRenderer = interop.RenderHandoff

// yamlReport is a task report carrying v as its exports.tasks: the one
// shape report.Task.Plan reads task lists from.
func yamlReport(name string, v any) ([]byte, error) {
	b, err := yaml.Marshal(map[string]any{"status": "completed", "deviations": []string{}, "exports": map[string]any{"tasks": v}})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", name, err)
	}
	return b, nil
}

// oneLine is s on one line, as the ledger holds reasons.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
