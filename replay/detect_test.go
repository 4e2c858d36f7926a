package replay

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

func defaultSpec(t testing.TB) *pipespec.Spec {
	t.Helper()
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// engineRun is a source the engine left: the design gate (red team) in
// Phase 1, the plan in Phase 2, task 1's implementer (seq 3, committed)
// and reviewer in Phase 3, the code review in Phase 4; steps done through
// phase done, each boundary's checkpoint "cp<phase>".
func engineRun(sp *pipespec.Spec, done ledger.Phase) *Source {
	src := &Source{Path: "refs/crucible/pipelines/p1", Pipeline: "p1", Skill: SkillBuild, Branch: "main",
		Steps: map[pipeline.Point]pipeline.StepData{}, Boundaries: map[ledger.Phase]Boundary{}, Replaced: map[int]bool{},
		Dispatches: []Dispatch{
			{Seq: 1, Role: "red-team", Template: "red-team", Phase: 1, Step: "design-gate", Round: 1, Status: "completed", Output: true, Duration: 60, Summary: "report"},
			{Seq: 2, Role: "plan-writer", Template: "plan-writer", Phase: 2, Step: "plan", Status: "completed", Output: true, Duration: 90},
			{Seq: 3, Role: "implementer", Template: "implementer", Phase: 3, Task: "1", Step: "implement", Status: "completed", Output: true, Duration: 30},
			{Seq: 4, Role: "reviewer", Template: "code-reviewer", Phase: 3, Task: "1", Step: "task-review", Round: 1, Status: "completed", Output: true},
			{Seq: 5, Role: "reviewer", Template: "code-reviewer", Phase: 4, Step: "code-review", Round: 1, Status: "completed", Output: true},
		}}
	for _, ph := range sp.Phases {
		src.Boundaries[ph.Number] = Boundary{Reason: ph.Steps[0].Name, Checkpoint: "cp" + ph.Number.String()}
		if ph.Number > done {
			continue
		}
		for _, st := range ph.Steps {
			src.Steps[pipeline.Point{Phase: ph.Number, Step: st.ID}] = pipeline.StepData{Phase: ph.Number, Step: st.ID, Status: pipeline.StepDone}
		}
	}
	return src
}

func allEvidence() Evidence {
	return Evidence{Commits: map[int]bool{3: true}, Checkpoints: map[string]bool{"cp1": true, "cp2": true, "cp3": true, "cp4": true}, Branch: "main"}
}

func seqs(ds []Dispatch) []int {
	var out []int
	for _, d := range ds {
		out = append(out, d.Seq)
	}
	return out
}

func TestDetect(t *testing.T) {
	sp := defaultSpec(t)
	for _, tc := range []struct {
		name    string
		src     func() *Source
		ev      func(Evidence) Evidence
		opts    Options
		phase   ledger.Phase
		crash   string
		notes   []string
		skip    []int
		gone    bool
		wantErr string
	}{
		{name: "in flight in Phase 3", src: func() *Source {
			s := engineRun(sp, 2)
			s.Dispatches[3].Status = "dispatched"
			return s
		}, phase: 3, crash: "Phase 3: dispatch 4 (reviewer, task 1) was in flight (no final entry)", skip: []int{1, 2}},
		{name: "failed implementer", src: func() *Source {
			s := engineRun(sp, 2)
			s.Dispatches[2].Status, s.Dispatches[2].Summary = "failed", "the agent was killed by signal SIGKILL"
			s.Dispatches = s.Dispatches[:3]
			return s
		}, phase: 3, crash: "Phase 3: dispatch 3 (implementer, task 1) failed: the agent was killed by signal SIGKILL", skip: []int{1, 2}},
		{name: "a failed dispatch retried to completion settles", src: func() *Source {
			s := engineRun(sp, 4)
			s.Dispatches[0].Status = "error"
			retry := 1
			s.Dispatches = append(s.Dispatches, Dispatch{Seq: 6, Role: "red-team", Phase: 1, Step: "design-gate", Round: 1, Status: "completed", Output: true, RetryOf: &retry})
			return s
		}, phase: 0, crash: "none: no crash: every phase is complete"},
		{name: "stopped between dispatches", src: func() *Source { return engineRun(sp, 2) },
			phase: 3, crash: "Phase 3: step pre-execute not run", skip: []int{1, 2}},
		{name: "all done but not delivered goes to Phase 4", src: func() *Source {
			s := engineRun(sp, 3)
			s.Dispatches = s.Dispatches[:4]
			return s
		}, phase: 4, crash: "Phase 4: step pre-completion not run", skip: []int{1, 2, 3, 4}},
		{name: "implementer commit missing falls back to Phase 3", src: func() *Source { return engineRun(sp, 3) },
			ev: func(e Evidence) Evidence { e.Commits = map[int]bool{}; return e }, phase: 3,
			crash: "Phase 4: step pre-completion not run",
			notes: []string{"the Phase 4 boundary not verified: dispatch 3 (implementer, task 1) has no commit on branch main; falling back to the Phase 3 boundary"},
			skip:  []int{1, 2}},
		{name: "red-team output missing falls back boundary by boundary", src: func() *Source {
			s := engineRun(sp, 3)
			s.Dispatches[0].Output = false
			return s
		}, ev: func(e Evidence) Evidence { e.Commits = map[int]bool{}; return e }, phase: 1,
			crash: "Phase 4: step pre-completion not run",
			notes: []string{"the Phase 4 boundary not verified: dispatch 3 (implementer, task 1) has no commit on branch main; falling back to the Phase 3 boundary",
				"the Phase 3 boundary not verified: dispatch 1 (red-team) has no output kept; falling back to the Phase 1 boundary"}},
		{name: "finished pipeline", src: func() *Source { return engineRun(sp, 4) }, phase: 0, crash: "none: no crash: every phase is complete"},
		{name: "from-phase earlier warns", src: func() *Source { return engineRun(sp, 4) }, opts: Options{FromPhase: 2}, phase: 2,
			crash: "none: no crash: every phase is complete", skip: []int{1},
			notes: []string{"Phase 2 is earlier than the detected resume point (none: every phase is complete): verified work is done again"}},
		{name: "from-seq resumes at its phase's start", src: func() *Source { return engineRun(sp, 4) }, opts: Options{FromSeq: 4}, phase: 3,
			crash: "none: no crash: every phase is complete", skip: []int{1, 2},
			notes: []string{"dispatch 4 is in Phase 3: resuming at that phase's start",
				"Phase 3 is earlier than the detected resume point (none: every phase is complete): verified work is done again"}},
		{name: "unknown seq", src: func() *Source { return engineRun(sp, 4) }, opts: Options{FromSeq: 9},
			wantErr: "pipeline p1 has no dispatch 9 (its dispatches are 1 to 5)"},
		{name: "replaced seq", src: func() *Source {
			s := engineRun(sp, 4)
			s.Replaced[9] = true
			return s
		}, opts: Options{FromSeq: 9},
			wantErr: "dispatch 9 of pipeline p1 was run again by a replay: name one of the run replay resumes"},
		{name: "unknown phase", src: func() *Source { return engineRun(sp, 4) }, opts: Options{FromPhase: 5},
			wantErr: "there is no Phase 5: phases are 1 to 4"},
		{name: "pruned checkpoint falls back to the boundary before", src: func() *Source { return engineRun(sp, 2) },
			ev: func(e Evidence) Evidence { delete(e.Checkpoints, "cp3"); return e }, phase: 2,
			crash: "Phase 3: step pre-execute not run", skip: []int{1},
			notes: []string{"the Phase 3 boundary's checkpoint (pre-execute) is gone; falling back to the Phase 2 boundary (pre-plan)"}},
		{name: "no checkpoint left", src: func() *Source { return engineRun(sp, 2) },
			ev: func(e Evidence) Evidence { e.Checkpoints = map[string]bool{}; return e }, phase: 3, gone: true,
			crash: "Phase 3: step pre-execute not run", skip: []int{1, 2},
			notes: []string{"the Phase 3 boundary's checkpoint (pre-execute) is gone, and no earlier one is left"}},
		{name: "crucible manifest: the ledger closes phases", src: func() *Source {
			s := engineRun(sp, 0)
			s.Steps = nil
			for i := range s.Dispatches {
				s.Dispatches[i].Step = ""
			}
			l := ledger.New("p1", "", "", "")
			l.Ledger.Entry(1).Status, l.Ledger.Entry(2).Status, l.Ledger.Entry(3).Status = ledger.Pass, ledger.Pass, ledger.InProgress
			s.Ledger = &l.Ledger
			return s
		}, phase: 3, crash: "Phase 3: after dispatch 5, no dispatch in flight", skip: []int{1, 2}},
		{name: "crucible manifest without a ledger: later dispatches close phases", src: func() *Source {
			s := engineRun(sp, 0)
			s.Steps = nil
			for i := range s.Dispatches {
				s.Dispatches[i].Step = ""
			}
			return s
		}, phase: 4, crash: "Phase 4: after dispatch 5, no dispatch in flight", skip: []int{1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := allEvidence()
			if tc.ev != nil {
				ev = tc.ev(ev)
			}
			r, err := Detect(tc.src(), sp, ev, tc.opts)
			if tc.wantErr != "" {
				var oe *OverrideError
				if !errors.As(err, &oe) || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			crash := "Phase " + r.Crash.Phase.String() + ": " + r.Crash.Context
			if r.Crash.Phase == 0 {
				crash = "none: " + r.Crash.Context
			}
			if r.Phase != tc.phase || crash != tc.crash {
				t.Errorf("resume Phase %d, crash %q; want Phase %d, %q", r.Phase, crash, tc.phase, tc.crash)
			}
			if !slices.Equal(r.Notes, tc.notes) {
				t.Errorf("notes:\n%s\nwant\n%s", strings.Join(r.Notes, "\n"), strings.Join(tc.notes, "\n"))
			}
			if got := seqs(r.Skip); !slices.Equal(got, tc.skip) {
				t.Errorf("skip %v, want %v", got, tc.skip)
			}
			if r.Phase != 0 && len(r.Skip)+len(r.Redo) != len(tc.src().Dispatches) {
				t.Errorf("skip %d + redo %d dispatches, want all %d", len(r.Skip), len(r.Redo), len(tc.src().Dispatches))
			}
			if r.Gone != tc.gone {
				t.Errorf("gone = %v, want %v", r.Gone, tc.gone)
			}
		})
	}
}

// TestPlanMarkdown: the seed's Replay Plan, exactly.
func TestPlanMarkdown(t *testing.T) {
	sp := defaultSpec(t)
	src := engineRun(sp, 2)
	src.Started = "2026-11-24T10:00:00Z"
	src.Dispatches[2].Status, src.Dispatches[2].Summary = "failed", "killed | by SIGKILL"
	src.Dispatches = src.Dispatches[:3]
	r, err := Detect(src, sp, allEvidence(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := string((&Plan{Source: src, Resume: r, Mutations: []string{"implementer.md -> implementer-v2.md"}}).Markdown())
	want := `# Replay Plan (dry-run)

**Source:** refs/crucible/pipelines/p1
**Original pipeline:** build | Session: p1 | Started: 2026-11-24T10:00:00Z
**Crashed at:** Phase 3, dispatch 3 (implementer, task 1) failed: killed | by SIGKILL
**Resume point:** Phase 3 boundary (pre-execute, checkpoint cp3)
**Work preserved:** 2m 30s (phases 1 through 2)

## Dispatches to skip (verified complete)

| Seq | Role | Phase | Summary |
|-----|------|-------|---------|
| 1 | red-team | 1 | report |
| 2 | plan-writer | 2 | - |

## Dispatches to re-execute

| Seq | Role | Phase | Original Status | Template |
|-----|------|-------|-----------------|----------|
| 3 | implementer | 3 | failed | implementer -> implementer-v2 |

## Template Mutations

- implementer.md -> implementer-v2.md
`
	if got != want {
		t.Errorf("plan:\n%s\nwant\n%s", got, want)
	}
}

func TestDuration(t *testing.T) {
	for s, want := range map[int]string{0: "0s", 59: "59s", 150: "2m 30s", 3600: "1h 0m", 3725: "1h 2m"} {
		if got := Duration(s); got != want {
			t.Errorf("Duration(%d) = %q, want %q", s, got, want)
		}
	}
}
