package interop

import (
	"encoding/json"

	"github.com/git-crucible/git-crucible/rounds"
)

// GateMarker is g's verdict marker (version 2) as far as the gate knows
// it: Verdict, Reason, Rounds, FinalScore, MaxScore, ScoreTrajectory and
// the last round's Severity-Histogram. The engine adds Phase, PipelineID,
// ArtifactHash, Timestamp and RunID. Before the gate is done, Verdict and
// Reason are empty.
func GateMarker(g *rounds.Gate) Marker {
	rounds := g.Rounds()
	m := Marker{Version: 2, Rounds: len(rounds)}
	if final, ok := g.Final(); ok {
		m.Verdict, m.Reason = final.Verdict, final.Reason
	}
	for _, c := range rounds {
		m.MaxScore = max(m.MaxScore, c.Score())
	}
	if n := len(rounds); n > 0 {
		last := rounds[n-1]
		m.FinalScore = last.Score()
		m.ScoreTrajectory = g.Trajectory()
		// Field names as crucible's markers write them.
		h, _ := json.Marshal(struct{ Fatal, Significant, Minor int }{last.Fatal, last.Significant, last.Minor})
		m.SeverityHistogram = h
	}
	return m
}
