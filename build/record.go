package build

import (
	"context"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/spec"
)

// Record is a dispatch as the chain shows it.
type Record struct {
	Seq      int
	Role     string
	Template string
	// TemplateSHA256 is its template text's digest, "" when not recorded.
	TemplateSHA256 string
	Point          spec.Point
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

// Records reads the engine's dispatches from a chain's events, in seq
// order. Dispatches the engine did not start (a hook's, an import's) are
// there too, with no step.
func Records(events []pipeline.Event) ([]Record, error) {
	var out []Record
	index := map[int]int{}
	for _, ev := range events {
		switch ev.Type {
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			index[d.Seq] = len(out)
			out = append(out, startRecord(d))
		case pipeline.TypeDispatchFinish:
			var d pipeline.DispatchFinish
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			if i, ok := index[d.Seq]; ok {
				out[i].settle(d)
			}
		}
	}
	return out, nil
}

// startRecord is the record of a dispatch as its start shows it.
func startRecord(d pipeline.DispatchStart) Record {
	return Record{Seq: d.Seq, Role: d.Role, Template: d.Template, TemplateSHA256: d.TemplateSHA256, RetryOf: d.RetryOf,
		Title: d.TaskTitle, Point: spec.Point{Phase: d.Phase, Step: d.Step, Task: d.TaskID, Round: d.Round}}
}

// settle adds what the dispatch's finish shows.
func (r *Record) settle(d pipeline.DispatchFinish) {
	r.Status, r.Summary, r.Failure, r.Recovered, r.Output = d.Status, d.Summary, d.Failure, d.Recovered, d.Output
}

// Dispatches returns the pipeline's dispatches, in seq order.
func (e *Engine) Dispatches(ctx context.Context) ([]Record, error) {
	events, err := e.events(ctx)
	if err != nil {
		return nil, err
	}
	return Records(events)
}
