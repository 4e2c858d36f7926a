package interop

import (
	"fmt"
	"strconv"
	"time"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/pipeline"
)

// StatusOf is the pipeline as crucible's pipeline-status.md shows it, at
// time now (the Elapsed line).
func StatusOf(st *pipeline.State, now string) Status {
	v := &st.View
	doc := Status{
		Updated: st.Updated, Started: st.Created, Skill: "build",
		Phase:  fmt.Sprintf("%d — %s", st.Phase, st.Phase.Name()),
		Health: v.Health.Level, Elapsed: Duration(pipeline.Elapsed(st, now)),
	}
	if doc.Health == "" {
		doc.Health = pipeline.Green
	}
	if doc.Health != pipeline.Green {
		doc.SuggestedAction = v.Health.Action
	}
	for _, r := range v.Recent {
		doc.RecentEvents = append(doc.RecentEvents, StatusEvent{Time: Clock(r.Time), Text: r.Text})
	}
	for _, t := range v.Tasks {
		end, suffix := t.Finished, ""
		if end == "" {
			end, suffix = now, "+"
		}
		doc.Tasks = append(doc.Tasks, StatusTask{N: strconv.Itoa(t.Task), Task: t.Label(), Tier: orDash(t.Tier),
			Status: taskStatus(t.Status), Duration: Duration(pipeline.Seconds(t.Started, end)) + suffix})
	}
	for _, g := range pipeline.GateStates(st) {
		doc.QualityGates = append(doc.QualityGates, gateTitles.Get()[g.Name]+": "+gateLine(g))
	}
	if c := v.LastCheckpoint; c != nil {
		doc.Checkpoints = []string{fmt.Sprintf("Last checkpoint: %s (%s)", c.Reason, clockSeconds(c.Time)),
			fmt.Sprintf("Total checkpoints: %d", v.Checkpoints)}
	}
	j := v.Journal
	doc.Compression = Compression{Goal: st.Goal, Constraints: j.Constraints, NextSteps: j.NextSteps}
	for _, d := range j.Decisions {
		line := fmt.Sprintf("[%s] %s", d.ID(), d.Choice)
		if d.Reason != "" {
			line += ": " + d.Reason
		}
		doc.Compression.KeyDecisions = append(doc.Compression.KeyDecisions, line)
	}
	return doc
}

// gateTitles are the quality gates' names in crucible's status file.
var gateTitles = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{"design": "Design", "plan": "Plan", "impl": "Code"}
}}

// gateLine says where a quality gate stands, in crucible's words.
func gateLine(g pipeline.GateState) string {
	switch g.State {
	case pipeline.GatePassed:
		switch g.Rounds {
		case 0:
			return "PASSED"
		case 1:
			return "PASSED (1 round)"
		}
		return fmt.Sprintf("PASSED (%d rounds)", g.Rounds)
	case pipeline.GateSkipped:
		return "SKIPPED (acknowledged)"
	case pipeline.GateUnacked:
		return "SKIPPED (not acknowledged)"
	case pipeline.GateNotReached:
		return "not yet reached"
	}
	return g.State
}

func taskStatus(s string) string {
	switch s {
	case "dispatched":
		return "IN PROGRESS"
	case "completed":
		return "DONE"
	}
	return map[string]string{"failed": "FAILED", "skipped": "SKIPPED", "error": "ERROR"}[s]
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// Duration formats seconds as crucible does: 2h 47m, 12m, 40s.
func Duration(s int) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%dm", s/60)
	}
	return fmt.Sprintf("%ds", s)
}

// clockSeconds is the HH:MM:SS (UTC) of an event time.
func clockSeconds(t string) string {
	if v, err := time.Parse(time.RFC3339, t); err == nil {
		return v.UTC().Format("15:04:05")
	}
	return t
}

// Clock is the HH:MM (UTC) of an event time.
func Clock(t string) string {
	if v, err := time.Parse(time.RFC3339, t); err == nil {
		return v.UTC().Format("15:04")
	}
	return t
}
