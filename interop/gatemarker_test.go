package interop

import (
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/rounds"
)

func TestMarker(t *testing.T) {
	g := rounds.New(0)
	for _, r := range []rounds.Counts{{Fatal: 1, Significant: 2}, {Significant: 2, Minor: 1}, {Minor: 3}} {
		g.Record(r)
	}
	m := GateMarker(g)
	want := Marker{Version: 2, Verdict: "PASS", Rounds: 3, FinalScore: 0, MaxScore: 5,
		Reason: "Round 3 found no Fatal or Significant issue.", ScoreTrajectory: []string{"5", "2", "0"},
		SeverityHistogram: []byte(`{"Fatal":0,"Significant":0,"Minor":3}`)}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("marker\n  %#v\nwant\n  %#v", m, want)
	}

	// With what the engine adds, it is a marker crucible's reader takes.
	m.Phase, m.PipelineID = ledger.Design, "build-20261124-200000"
	m.ArtifactHash = strings.Repeat("ab", 32)
	text := string(RenderMarker(m))
	back, err := ParseMarker([]byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if back.Verdict != "PASS" || back.MaxScore != 5 || !reflect.DeepEqual(back.ScoreTrajectory, []string{"5", "2", "0"}) {
		t.Fatalf("read back %#v", back)
	}
	if !strings.Contains(text, "ScoreTrajectory: 5,2,0\n") {
		t.Fatalf("trajectory line missing:\n%s", text)
	}

	if m := GateMarker(rounds.New(0)); m.Verdict != "" || m.Rounds != 0 || m.ScoreTrajectory != nil || m.SeverityHistogram != nil {
		t.Fatalf("marker of a gate with no round: %#v", m)
	}
}

func TestVerdictsAreCrucibles(t *testing.T) {
	for _, v := range []string{rounds.VerdictPass, rounds.VerdictStagnation, rounds.VerdictRegression, rounds.VerdictBreaker, rounds.VerdictArchitectural} {
		if !ValidVerdict(v) {
			t.Errorf("%s is not a verdict crucible's marker knows", v)
		}
	}
}
