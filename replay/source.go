// Package replay resumes a crashed pipeline from its last verified phase
// boundary, or replays a finished one from a boundary: it reads the
// pipeline (a chain, or a crucible manifest), finds where to resume
// (Detect), and says what a replay would do (Plan). The build engine does
// the re-execution; this package never prints.
package replay

import (
	"context"
	"fmt"
	"strconv"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/refs"
)

// Dispatch is one dispatch as the source's last entry for its seq shows it.
type Dispatch struct {
	Seq      int          `json:"seq"`
	Role     string       `json:"role"`
	Template string       `json:"template"`
	Phase    ledger.Phase `json:"phase"`
	Task     string       `json:"task,omitempty"`
	Step     string       `json:"step,omitempty"` // the engine's spec step; "" elsewhere
	Round    int          `json:"round,omitempty"`
	Status   string       `json:"status"` // dispatched (in flight) | completed | failed | skipped | error
	Summary  string       `json:"summary,omitempty"`
	Time     string       `json:"time,omitempty"` // when its last entry was written
	Duration int          `json:"duration_s"`
	RetryOf  *int         `json:"retry_of,omitempty"`
	Output   bool         `json:"output"` // its output is kept
	Session  string       `json:"replay_session,omitempty"`
	// TemplateSHA256 is the digest of the template text it was rendered
	// from, "" when not recorded (runs before it was, imports).
	TemplateSHA256 string `json:"-"`
}

// Settled reports whether the dispatch reached an end that lets its phase close.
func (d *Dispatch) Settled() bool { return d.Status == "completed" || d.Status == "skipped" }

// Boundary is a phase's start as the source recorded it: the checkpoint
// its first checkpoint step took (or stood on, when nothing had changed).
type Boundary struct {
	Reason     string `json:"reason"`
	Checkpoint string `json:"checkpoint,omitempty"` // "" when none was recorded
	Time       string `json:"time,omitempty"`
}

// Source is a pipeline as replay reads it: the run it would resume, the
// dispatches a replay replaced left out.
type Source struct {
	Path     string `json:"path"` // what was read: the pipeline's ref, or a manifest
	Pipeline string `json:"pipeline"`
	Skill    string `json:"skill"`
	Started  string `json:"started,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	// Dispatches in seq order.
	Dispatches []Dispatch `json:"dispatches"`
	// Steps are the engine's step events (each point's last), nil when the
	// pipeline has none: then its ledger, else its later dispatches, say
	// whether a phase closed.
	Steps  map[pipeline.Point]pipeline.StepData `json:"-"`
	Ledger *ledger.Ledger                       `json:"-"`
	// Boundaries by phase, where known.
	Boundaries map[ledger.Phase]Boundary `json:"boundaries"`
	// Replays is how many replays the pipeline had: crucible's resume_count.
	Replays int `json:"resume_count"`
	// Replaced are the dispatches earlier replays ran again, by seq.
	Replaced map[int]bool `json:"-"`
}

// SkillBuild is the skill git-crucible's engine runs.
const SkillBuild = "build"

// FromChain reads pipeline id's chain: its live run (pipeline.Live).
func FromChain(ctx context.Context, svc *pipeline.Service, id string, sp *pipespec.Spec) (*Source, error) {
	st, _, err := svc.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	events, err := svc.ChainEvents(ctx, id)
	if err != nil {
		return nil, err
	}
	return FromEvents(st, events, sp)
}

// FromEvents is FromChain of a state and its chain's events, oldest first.
func FromEvents(st *pipeline.State, events []pipeline.Event, sp *pipespec.Spec) (*Source, error) {
	live, replaced, err := pipeline.Live(events)
	if err != nil {
		return nil, err
	}
	src := &Source{Path: refs.PipelineRef(st.ID), Pipeline: st.ID, Skill: SkillBuild, Started: st.Created,
		Branch: st.Branch, Baseline: st.Baseline, Ledger: &st.Gates.Ledger, Replays: st.Counters[pipeline.TypeReplay],
		Boundaries: map[ledger.Phase]Boundary{}, Replaced: map[int]bool{}}
	for _, d := range replaced {
		src.Replaced[d.Seq] = true
	}
	entries, err := pipeline.ManifestOf(live)
	if err != nil {
		return nil, err
	}
	recs, err := pipeline.Records(live)
	if err != nil {
		return nil, err
	}
	engine := make(map[int]pipeline.Record, len(recs))
	for _, r := range recs {
		engine[r.Seq] = r
	}
	src.Dispatches = make([]Dispatch, 0, len(entries))
	for _, m := range entries {
		d, err := fromEntry(m)
		if err != nil {
			return nil, err
		}
		if r, ok := engine[m.Seq]; ok {
			d.Task, d.Step, d.Round, d.RetryOf, d.TemplateSHA256 = r.Point.Task, r.Point.Step, r.Point.Round, r.RetryOf, r.TemplateSHA256
		}
		src.Dispatches = append(src.Dispatches, d)
	}
	if src.Steps, err = pipeline.StepsOf(live); err != nil {
		return nil, err
	}
	if len(src.Steps) == 0 {
		src.Steps = nil
	}
	if err := src.boundaries(live, sp); err != nil {
		return nil, err
	}
	return src, nil
}

// fromEntry is a manifest entry as a Dispatch.
func fromEntry(m pipeline.ManifestEntry) (Dispatch, error) {
	n, err := strconv.Atoi(m.Phase)
	if err != nil || !ledger.Phase(n).Valid() {
		return Dispatch{}, fmt.Errorf("dispatch %d: phase %q is not 1 to 4", m.Seq, m.Phase)
	}
	d := Dispatch{Seq: m.Seq, Role: m.Role, Template: m.Template, Phase: ledger.Phase(n), Status: m.Status,
		Time: m.Timestamp, Output: m.Output != ""}
	if m.Task != nil {
		d.Task = strconv.Itoa(*m.Task)
	}
	if m.Summary != nil {
		d.Summary = *m.Summary
	}
	if m.DurationS != nil {
		d.Duration = *m.DurationS
	}
	if m.ReplaySession != nil {
		d.Session = *m.ReplaySession
	}
	return d, nil
}

// boundaries maps each phase's first checkpoint step to the checkpoint it
// took: the newest recorded up to the step's last done event (a step that
// found nothing changed records no checkpoint and stands on the one before).
func (src *Source) boundaries(live []pipeline.Event, sp *pipespec.Spec) error {
	first := map[string]ledger.Phase{}
	for _, ph := range sp.Phases {
		for _, st := range ph.Steps {
			if st.Kind == pipespec.Checkpoint {
				first[st.ID] = ph.Number
				src.Boundaries[ph.Number] = Boundary{Reason: st.CheckpointName("")}
				break
			}
		}
	}
	var last *pipeline.CheckpointData
	var lastTime string
	for _, e := range live {
		switch e.Type {
		case pipeline.TypeCheckpoint:
			var d pipeline.CheckpointData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			last, lastTime = &d, e.Time
		case pipeline.TypeStep:
			var d pipeline.StepData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			if p, ok := first[d.Step]; ok && p == d.Phase && d.Task == "" && d.Status == pipeline.StepDone && last != nil {
				b := src.Boundaries[p]
				b.Checkpoint, b.Time = last.ID, lastTime
				src.Boundaries[p] = b
			}
		}
	}
	return nil
}

// Find is dispatch seq, nil when the source has none.
func (src *Source) Find(seq int) *Dispatch {
	for i := range src.Dispatches {
		if src.Dispatches[i].Seq == seq {
			return &src.Dispatches[i]
		}
	}
	return nil
}
