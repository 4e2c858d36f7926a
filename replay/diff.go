package replay

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// Session is one run of a pipeline: the original (named by the pipeline's
// id) or a replay, with the events it recorded.
type Session struct {
	Name      string       `json:"name"`
	From      ledger.Phase `json:"from"`
	Mutations []string     `json:"mutations"`
	// Final is the branch's commit the run ended with: the next replay's
	// Head, "" for the newest run (the branch's tip).
	Final  string `json:"final,omitempty"`
	events []pipeline.Event
}

// Sessions splits a chain's events into its runs: the original up to the
// first replay, then each replay up to the next.
func Sessions(id string, events []pipeline.Event) ([]Session, error) {
	out := []Session{{Name: id, From: ledger.Design}}
	for _, e := range events {
		if e.Type == pipeline.TypeReplay {
			var d pipeline.ReplayData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return nil, err
			}
			out[len(out)-1].Final = d.Head
			out = append(out, Session{Name: d.Session, From: d.From, Mutations: d.Mutations})
		}
		out[len(out)-1].events = append(out[len(out)-1].events, e)
	}
	return out, nil
}

// Side is a session's part of a comparison.
type Side struct {
	Session    Session                  `json:"session"`
	Dispatches []pipeline.ManifestEntry `json:"-"`
	GateRounds int                      `json:"gate_rounds"`
	Seconds    int                      `json:"seconds"`
	Acceptance string                   `json:"acceptance"` // PASS, FAIL, or "-" when not run
}

// Pair is a dispatch of one session and its counterpart in the other
// (nil when it has none), with how their outputs differ.
type Pair struct {
	A     *pipeline.ManifestEntry `json:"a"`
	B     *pipeline.ManifestEntry `json:"b"`
	Delta string                  `json:"delta"`
}

// Diff is the seed's Replay Diff of two sessions, over the phases both ran.
type Diff struct {
	A, B  Side
	From  ledger.Phase
	Pairs []Pair
	// Files, Insertions, Deletions are the artifact diff's shortstat;
	// Range names the commits compared.
	Files, Insertions, Deletions int
	Range                        string
}

// Compare builds the Replay Diff of sessions a and b of a chain: their
// dispatches of the phases from the later start on, paired by replay_of
// (followed through replays between them), their outputs compared line by
// line (read gives a kept output). The artifact diff is the caller's.
func Compare(id string, events []pipeline.Event, sp *pipespec.Spec, a, b string, read func(path string) ([]byte, error)) (*Diff, error) {
	sessions, err := Sessions(id, events)
	if err != nil {
		return nil, err
	}
	find := func(name string) (*Session, error) {
		for i := range sessions {
			if sessions[i].Name == name {
				return &sessions[i], nil
			}
		}
		names := make([]string, len(sessions))
		for i, s := range sessions {
			names[i] = s.Name
		}
		return nil, &OverrideError{Msg: fmt.Sprintf("pipeline %s has no session %q (its sessions: %s)", id, name, strings.Join(names, ", "))}
	}
	sa, err := find(a)
	if err != nil {
		return nil, err
	}
	sb, err := find(b)
	if err != nil {
		return nil, err
	}
	entries, err := pipeline.ManifestOf(events)
	if err != nil {
		return nil, err
	}
	recs, err := pipeline.Records(events)
	if err != nil {
		return nil, err
	}
	step := map[int]string{}
	for _, r := range recs {
		step[r.Seq] = r.Point.Step
	}
	d := &Diff{From: max(sa.From, sb.From)}
	d.A, d.B = Side{Session: *sa}, Side{Session: *sb}
	bySeq := map[int]*pipeline.ManifestEntry{}
	for i := range entries {
		m := &entries[i]
		bySeq[m.Seq] = m
		if phase, _ := phaseOf(m); phase < d.From {
			continue
		}
		for _, side := range []*Side{&d.A, &d.B} {
			if sessionOf(m, id) == side.Session.Name {
				side.add(m, sp, step[m.Seq])
			}
		}
	}
	d.A.Acceptance, d.B.Acceptance = acceptance(sa.events), acceptance(sb.events)
	// Pair each of b's dispatches with the one of a it replays.
	paired := map[int]bool{}
	for _, mb := range d.B.Dispatches {
		var ma *pipeline.ManifestEntry
		for of := mb.ReplayOf; of != nil && bySeq[*of] != nil; of = bySeq[*of].ReplayOf {
			if sessionOf(bySeq[*of], id) == a {
				ma = bySeq[*of]
				break
			}
		}
		p := Pair{A: ma, B: &mb}
		if ma != nil {
			paired[ma.Seq] = true
			if p.Delta, err = outputDelta(ma, &mb, read); err != nil {
				return nil, err
			}
		}
		d.Pairs = append(d.Pairs, p)
	}
	for i := range d.A.Dispatches {
		if ma := d.A.Dispatches[i]; !paired[ma.Seq] {
			d.Pairs = append(d.Pairs, Pair{A: &ma})
		}
	}
	return d, nil
}

func phaseOf(m *pipeline.ManifestEntry) (ledger.Phase, bool) {
	var n int
	_, err := fmt.Sscanf(m.Phase, "%d", &n)
	return ledger.Phase(n), err == nil
}

// sessionOf is the session a dispatch ran in: its replay_session, else the
// original's.
func sessionOf(m *pipeline.ManifestEntry, id string) string {
	if m.ReplaySession != nil && *m.ReplaySession != "" {
		return *m.ReplaySession
	}
	return id
}

// add counts dispatch m on the side: a gate's judge is a gate round.
func (s *Side) add(m *pipeline.ManifestEntry, sp *pipespec.Spec, stepID string) {
	s.Dispatches = append(s.Dispatches, *m)
	if m.DurationS != nil {
		s.Seconds += *m.DurationS
	}
	if l, ok := sp.Find(stepID); ok && l.Step.Kind == pipespec.Gate && m.Role == l.Step.Role ||
		stepID == "" && (m.Role == "red-team" || m.Role == "quality-gate") {
		s.GateRounds++
	}
}

// acceptance is how a session's acceptance tests last ended.
func acceptance(events []pipeline.Event) string {
	out := "-"
	for _, e := range events {
		if e.Type != pipeline.TypeStep {
			continue
		}
		var d pipeline.StepData
		if pipeline.DecodeData(e, &d) == nil && d.Step == "acceptance-green" {
			out = "FAIL"
			if d.Status == pipeline.StepDone {
				out = "PASS"
			}
		}
	}
	return out
}

// outputDelta compares two dispatches' kept outputs line by line.
func outputDelta(a, b *pipeline.ManifestEntry, read func(string) ([]byte, error)) (string, error) {
	if a.Output == "" || b.Output == "" {
		return "no output to compare", nil
	}
	ta, err := read(a.Output)
	if err != nil {
		return "", err
	}
	tb, err := read(b.Output)
	if err != nil {
		return "", err
	}
	if bytes.Equal(ta, tb) {
		return "same output", nil
	}
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(string(ta), string(tb))
	added, removed := 0, 0
	for _, df := range dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines) {
		n := strings.Count(df.Text, "\n")
		switch df.Type {
		case diffmatchpatch.DiffInsert:
			added += n
		case diffmatchpatch.DiffDelete:
			removed += n
		}
	}
	return fmt.Sprintf("output +%d/-%d lines", added, removed), nil
}

// Markdown renders the diff in crucible's "Replay Diff" format.
func (d *Diff) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Replay Diff: %s vs %s\n\n", d.A.Session.Name, d.B.Session.Name)
	if m := d.mutations(); len(m) > 0 {
		fmt.Fprintf(&b, "## Template Mutations\n\n")
		for _, s := range m {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "## Outcome Comparison (Phases %d to 4)\n\n", d.From)
	fmt.Fprintf(&b, "| Metric | Original | Replayed | Delta |\n|--------|----------|----------|-------|\n")
	fmt.Fprintf(&b, "| Total dispatches | %d | %d | %+d |\n", len(d.A.Dispatches), len(d.B.Dispatches), len(d.B.Dispatches)-len(d.A.Dispatches))
	fmt.Fprintf(&b, "| Quality gate rounds | %d | %d | %+d |\n", d.A.GateRounds, d.B.GateRounds, d.B.GateRounds-d.A.GateRounds)
	fmt.Fprintf(&b, "| Wall clock time | %s | %s | %+dm |\n", Duration(d.A.Seconds), Duration(d.B.Seconds), (d.B.Seconds-d.A.Seconds)/60)
	same := "="
	if d.A.Acceptance != d.B.Acceptance {
		same = "changed"
	}
	fmt.Fprintf(&b, "| Acceptance tests | %s | %s | %s |\n", d.A.Acceptance, d.B.Acceptance, same)
	fmt.Fprintf(&b, "\n## Per-Dispatch Comparison\n\n")
	fmt.Fprintf(&b, "| Seq | Role | Original Status | Replayed Status | Summary Delta |\n|-----|------|----------------|-----------------|---------------|\n")
	for _, p := range d.Pairs {
		switch {
		case p.A == nil:
			fmt.Fprintf(&b, "| - → %d | %s | - | %s | new in the replay |\n", p.B.Seq, cell(p.B.Role), p.B.Status)
		case p.B == nil:
			fmt.Fprintf(&b, "| %d → - | %s | %s | - | not run in the replay |\n", p.A.Seq, cell(p.A.Role), p.A.Status)
		default:
			fmt.Fprintf(&b, "| %d → %d | %s | %s | %s | %s |\n", p.A.Seq, p.B.Seq, cell(p.B.Role), p.A.Status, p.B.Status, cell(p.Delta))
		}
	}
	fmt.Fprintf(&b, "\n## Artifact Diff\n\n- git diff %s\n  %d files changed, +%d/-%d lines\n", d.Range, d.Files, d.Insertions, d.Deletions)
	return b.Bytes()
}

// mutations are those of the replayed session.
func (d *Diff) mutations() []string { return d.B.Session.Mutations }

// Signal is crucible's replay-diff signal, its keys in the seed's order.
type Signal struct {
	Type            string   `json:"type"`
	OriginalSession string   `json:"original_session"`
	ReplaySession   string   `json:"replay_session"`
	Mutations       []string `json:"mutations"`
	Metrics         struct {
		OriginalDispatches int `json:"original_dispatches"`
		ReplayedDispatches int `json:"replayed_dispatches"`
		OriginalGateRounds int `json:"original_gate_rounds"`
		ReplayedGateRounds int `json:"replayed_gate_rounds"`
		OriginalDurationM  int `json:"original_duration_m"`
		ReplayedDurationM  int `json:"replayed_duration_m"`
	} `json:"metrics"`
	Outcome struct {
		Original string `json:"original"`
		Replayed string `json:"replayed"`
	} `json:"outcome"`
	ArtifactDiff struct {
		FilesChanged int `json:"files_changed"`
		Insertions   int `json:"insertions"`
		Deletions    int `json:"deletions"`
	} `json:"artifact_diff"`
}

// Signal is the diff as crucible's replay-diff signal.
func (d *Diff) Signal() Signal {
	s := Signal{Type: "replay-diff", OriginalSession: d.A.Session.Name, ReplaySession: d.B.Session.Name, Mutations: d.mutations()}
	if s.Mutations == nil {
		s.Mutations = []string{}
	}
	m := &s.Metrics
	m.OriginalDispatches, m.ReplayedDispatches = len(d.A.Dispatches), len(d.B.Dispatches)
	m.OriginalGateRounds, m.ReplayedGateRounds = d.A.GateRounds, d.B.GateRounds
	m.OriginalDurationM, m.ReplayedDurationM = d.A.Seconds/60, d.B.Seconds/60
	s.Outcome.Original, s.Outcome.Replayed = d.A.Acceptance, d.B.Acceptance
	s.ArtifactDiff.FilesChanged, s.ArtifactDiff.Insertions, s.ArtifactDiff.Deletions = d.Files, d.Insertions, d.Deletions
	return s
}
