package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/refs"
	"github.com/git-crucible/git-crucible/report"
)

// walker is one walk's view of the chain, brought up to date after every
// step.
type walker struct {
	e     *Engine
	opts  WalkOptions
	sp    *pipespec.Spec
	state *pipeline.State
	view  *chainView
	tip   string // the chain commit view was brought up to
	// exports are the report exports so far, the newest report's value of
	// each key (exportFrom: the dispatch it came from), read from the kept
	// reports of dispatches as they finish: the chain is their only source.
	exports    map[string]any
	exportFrom map[string]pipeline.Record
	// taskNumbers is each plan task's 1-based position in the plan's
	// order: CRUCIBLE_TASK of its commits.
	taskNumbers map[string]int
	// waiting are the manual dispatches Recover left waiting, by seq.
	waiting map[int]Outcome
	// wt is the walk's hold on the work tree.
	wt *workTree
	// at is the step the walk is at.
	at pipeline.Point
}

// keptInMemory bounds the events.jsonl blobs a refresh holds while it
// walks back to the commit it read last: past it, a commit's is read
// again when its turn comes, so that a first read of a long chain holds
// commit ids, not the chain.
const keptInMemory = 1 << 20

// refresh brings the walk up to the chain's tip: the state, and the view
// and exports past the events of the commits since the tip it read last
// (the whole chain when that tip is no longer on it), oldest first, as
// ChainEvents orders them.
func (w *walker) refresh(ctx context.Context) error {
	st, _, err := w.e.Service.Load(ctx, w.e.ID)
	if err != nil {
		return err
	}
	type pending struct {
		commit string
		blob   []byte // nil when it is to be read again
	}
	var commits []pending
	tip, found, kept := "", false, 0
	err = w.e.Service.Store.EventLog(ctx, w.e.ID, func(commit string, blob []byte) (bool, error) {
		if tip == "" {
			tip = commit
		}
		if commit == w.tip {
			found = true
			return false, nil
		}
		if kept += len(blob); kept > keptInMemory {
			blob = nil
		}
		commits = append(commits, pending{commit, blob})
		return true, nil
	})
	if err != nil {
		return err
	}
	if !found || w.view == nil {
		w.view, w.exports, w.exportFrom = newChainView(), map[string]any{}, map[string]pipeline.Record{}
	}
	r, err := w.e.Service.Store.Objects(ctx)
	if err != nil {
		return err
	}
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		if c.blob == nil {
			if c.blob, err = r.ReadKind(c.commit+":"+refs.EventsFile, "blob"); err != nil {
				return err
			}
		}
		events, err := pipeline.DecodeEvents(c.blob)
		if err != nil {
			return fmt.Errorf("commit %s: %w", c.commit, err)
		}
		commits[i].blob = nil
		for _, ev := range events {
			if err := w.view.add(ev); err != nil {
				return err
			}
		}
		if err := w.readExports(r, tip); err != nil {
			return err
		}
	}
	if w.view.replayed {
		if tip, err = w.rebuild(ctx, r); err != nil {
			return err
		}
	}
	w.state, w.tip = st, tip
	return nil
}

// rebuild makes the view again from the whole chain, of the part the run
// stands on (pipeline.Live): a replay replaces what came before it. It
// returns the tip it read up to.
func (w *walker) rebuild(ctx context.Context, r *gitext.ObjectReader) (string, error) {
	events, tip, err := w.e.Service.ChainEventsAt(ctx, w.e.ID)
	if err != nil {
		return "", err
	}
	live, replaced, err := pipeline.Live(events)
	if err != nil {
		return "", err
	}
	w.view, w.exports, w.exportFrom = newChainView(), map[string]any{}, map[string]pipeline.Record{}
	w.view.replaced = map[replayedAt]int{}
	for _, d := range replaced {
		w.view.replaced[replayedAt{pipeline.Point{Phase: d.Phase, Step: d.Step, Task: d.TaskID, Round: d.Round}, d.Role}] = d.Seq
	}
	for _, ev := range live {
		if err := w.view.add(ev); err != nil {
			return "", err
		}
	}
	w.view.replayed = false
	return tip, w.readExports(r, tip)
}

// readExports merges the exports of the task reports completed since it
// last ran, read from the chain's tree at tip: a report of a later
// dispatch carrying a key supersedes it.
func (w *walker) readExports(r *gitext.ObjectReader, tip string) error {
	for _, rec := range w.view.takeFinished() {
		if rec.Status != "completed" || rec.Output == "" || !w.taskReport(rec) {
			continue
		}
		b, err := r.ReadKind(tip+":"+rec.Output, "blob")
		if err != nil {
			return err
		}
		t, err := report.ParseTask(b)
		if err != nil {
			continue // a report the walk refused when it ran: it exports nothing
		}
		for k, v := range t.Exports {
			if rec.Seq <= w.exportFrom[k].Seq {
				continue
			}
			w.exportFrom[k] = rec
			if k == planExport && !w.takesInput(k) {
				delete(w.exports, k)
			} else {
				w.exports[k] = v
			}
		}
	}
	return nil
}

// planExport is the export of a plan's task list, which the handoff leaves
// out and the tasks step reads again from its report (walker.plan): its
// value is kept only for a step taking it as an input, as it grows with
// the plan (0.4 MB of YAML values at 1,000 tasks).
const planExport = "tasks"

// takesInput reports whether a step of the spec takes input name.
func (w *walker) takesInput(name string) bool {
	for _, l := range w.sp.Walk() {
		if slices.Contains(l.Step.Inputs, name) {
			return true
		}
	}
	return false
}

// taskReport reports whether dispatch r writes a task report: a dispatch
// step's agent, or a gate's or loop's fixer.
func (w *walker) taskReport(r pipeline.Record) bool {
	l, ok := w.sp.Find(r.Point.Step)
	if !ok {
		return false
	}
	return l.Step.Kind == pipespec.Dispatch || l.Step.Rounds() && r.Role == l.Step.Fixer && r.Point.Round > 0 && r.Role != l.Step.Role
}

// done reports whether the step at p is done.
func (w *walker) done(p pipeline.Point) bool { return w.stepStatus(p) == pipeline.StepDone }

// stepStatus is how the step at p (its round ignored) last ended, "" when
// it has not.
func (w *walker) stepStatus(p pipeline.Point) string { return w.view.stepStatus(p) }

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
func (w *walker) inputs(ctx context.Context, st *pipespec.Step, task *report.PlanTask) (map[string]string, error) {
	in := map[string]string{}
	for _, name := range st.Inputs {
		if name == pipespec.Diff {
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
func (w *walker) diff(ctx context.Context, st *pipespec.Step, task *report.PlanTask) (string, error) {
	base := w.state.Baseline
	name := st.ID
	if task != nil {
		name += "-" + task.ID
		if h := w.view.taskBase[task.ID]; h != "" {
			base = h
		}
	}
	out, err := w.e.Service.Repo.WorkTreePatch(ctx, base)
	if err != nil {
		return "", err
	}
	path := filepath.Join(w.e.runs(), "diff", name+".patch")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, out, 0o644)
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
			if v, ok := w.exports[name]; ok && name != planExport {
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

// oneLine is s on one line, as the ledger holds reasons.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
