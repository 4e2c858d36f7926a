package pipeline

import "github.com/git-crucible/git-crucible/ledger"

// Record is a dispatch as the chain shows it.
type Record struct {
	Seq      int
	Role     string
	Template string
	// TemplateSHA256 is its template text's digest, "" when not recorded.
	TemplateSHA256 string
	Point          Point
	RetryOf        *int
	Title          string // its task's title, as status lists it
	Status         string // "" while in flight
	Summary        string
	Failure        string
	Recovered      string
	Output         string // where its output is kept in the chain's tree, "" when none
}

// Finished reports whether the dispatch's finish is recorded: it never
// runs again.
func (r *Record) Finished() bool { return r.Status != "" }

// Records reads an engine's dispatches from a chain's events, in seq
// order. Dispatches the engine did not start (a hook's, an import's) are
// there too, with no step.
func Records(events []Event) ([]Record, error) {
	var out []Record
	index := map[int]int{}
	for _, ev := range events {
		switch ev.Type {
		case TypeDispatchStart:
			var d DispatchStart
			if err := DecodeData(ev, &d); err != nil {
				return nil, err
			}
			index[d.Seq] = len(out)
			out = append(out, d.Record())
		case TypeDispatchFinish:
			var d DispatchFinish
			if err := DecodeData(ev, &d); err != nil {
				return nil, err
			}
			if i, ok := index[d.Seq]; ok {
				out[i].Settle(d)
			}
		}
	}
	return out, nil
}

// Record is the record of a dispatch as its start shows it.
func (d DispatchStart) Record() Record {
	return Record{Seq: d.Seq, Role: d.Role, Template: d.Template, TemplateSHA256: d.TemplateSHA256, RetryOf: d.RetryOf,
		Title: d.TaskTitle, Point: Point{Phase: d.Phase, Step: d.Step, Task: d.TaskID, Round: d.Round}}
}

// Settle adds what the dispatch's finish shows.
func (r *Record) Settle(d DispatchFinish) {
	r.Status, r.Summary, r.Failure, r.Recovered, r.Output = d.Status, d.Summary, d.Failure, d.Recovered, d.Output
}

// Point is where a pipeline is, or resumes: a step of a phase, the task
// when the step runs per task, and the round of a gate or review loop.
type Point struct {
	Phase ledger.Phase `json:"phase"`
	Step  string       `json:"step"`
	Task  string       `json:"task,omitempty"`  // inside a tasks step's steps only
	Round int          `json:"round,omitempty"` // 1-based, gates and review loops only
}

// StepsOf is each point's last step event in a chain's events, keyed by
// the point without its round.
func StepsOf(events []Event) (map[Point]StepData, error) {
	steps := map[Point]StepData{}
	for _, ev := range events {
		if ev.Type != TypeStep {
			continue
		}
		var d StepData
		if err := DecodeData(ev, &d); err != nil {
			return nil, err
		}
		steps[Point{Phase: d.Phase, Step: d.Step, Task: d.Task}] = d
	}
	return steps, nil
}
