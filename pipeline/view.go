package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
)

// View is what status and metrics show, kept up to date by every event so
// that neither replays the chain. Everything in it stays bounded: by five
// recent events, ten decisions, the tasks of one plan, the agents in flight.
type View struct {
	Recent  []RecentEvent  `json:"recent,omitempty"` // newest first
	Health  Health         `json:"health"`
	Journal Journal        `json:"journal"`
	Metrics Metrics        `json:"metrics"`
	Tasks   []TaskProgress `json:"tasks,omitempty"` // by task number
	// Checkpoints counts the pipeline's checkpoints; Last is the newest.
	Checkpoints    int             `json:"checkpoints,omitempty"`
	LastCheckpoint *CheckpointSeen `json:"last_checkpoint,omitempty"`
	DAG            *DAGView        `json:"dag,omitempty"` // a task run's, when there is one
	// Baseline is the known-failing baseline, when the build began on one.
	Baseline *BaselineView `json:"baseline,omitempty"`
}

// CheckpointSeen is the newest checkpoint, as status shows it.
type CheckpointSeen struct {
	Reason string `json:"reason"`
	Time   string `json:"time"`
	ID     string `json:"id"`
}

// RecentEvent is a line of status's "Recent Events".
type RecentEvent struct {
	Time string `json:"time"`
	Text string `json:"text"`
}

const maxRecent, maxDecisions = 5, 10

// Health levels, which only worsen within a phase.
const (
	Green  = "GREEN"
	Yellow = "YELLOW"
	Red    = "RED"
)

var healthRank = lazy.Value[map[string]int]{New: func() map[string]int {
	return map[string]int{"": 0, Green: 0, Yellow: 1, Red: 2}
}}

// Health is the seed's one-way GREEN -> YELLOW -> RED machine, reset to
// GREEN when a later phase begins, a failed one begins again, or the
// phase passes or completes: it follows the current state.
type Health struct {
	Level  string       `json:"level"`
	Phase  ledger.Phase `json:"phase,omitempty"`
	Reason string       `json:"reason,omitempty"`
	Action string       `json:"action,omitempty"` // the suggested action when not GREEN
}

// Journal is the compression state: cumulative decisions (the oldest folded
// into one line past ten), active constraints and next steps.
type Journal struct {
	Decisions   []JournalDecision `json:"decisions,omitempty"`
	Total       int               `json:"total"`
	Constraints []string          `json:"constraints,omitempty"`
	NextSteps   []string          `json:"next_steps,omitempty"`
}

// JournalDecision is one decision-journal entry, or several folded into one
// (From < To) when the list outgrew ten.
type JournalDecision struct {
	From         int    `json:"from"`
	To           int    `json:"to"`
	Type         string `json:"type"`
	Choice       string `json:"choice"`
	Reason       string `json:"reason"`
	Alternatives string `json:"alternatives,omitempty"`
	Time         string `json:"time,omitempty"`
}

// Metrics are the run's totals, built up event by event.
type Metrics struct {
	ByRole      map[string]int `json:"by_role,omitempty"`
	ByTier      map[string]int `json:"by_tier,omitempty"`
	InputChars  int            `json:"input_chars"`
	OutputChars int            `json:"output_chars"`
	FirstStart  string         `json:"first_start,omitempty"`
	LastFinish  string         `json:"last_finish,omitempty"`
	// Active work time is the union of dispatch intervals. Closed is the
	// part no future interval can overlap; Open keeps the intervals that
	// still might (they end after the earliest in-flight start).
	ActiveClosedS int            `json:"active_closed_s"`
	Open          [][2]int64     `json:"open,omitempty"`          // unix seconds, disjoint, sorted
	GateRounds    map[string]int `json:"gate_rounds,omitempty"`   // by phase: rounds of the newest verdict
	Verdicts      map[string]int `json:"verdicts,omitempty"`      // by phase: verdicts recorded
	ReviewRounds  map[string]int `json:"review_rounds,omitempty"` // by "phase/task": reviewer dispatches
	Failed        map[string]int `json:"failed,omitempty"`        // by "role/task": failed finishes, for retries
}

// TaskProgress is a row of status's "Task Progress": a task's newest dispatch.
type TaskProgress struct {
	Task     int    `json:"task"`
	Title    string `json:"title,omitempty"` // the plan's, when its dispatches carry it
	Role     string `json:"role"`
	Tier     string `json:"tier,omitempty"`
	Status   string `json:"status"`
	Seq      int    `json:"seq"`
	Started  string `json:"started"`
	Finished string `json:"finished,omitempty"`
}

// ActiveS is the active work time so far: merged intervals, not summed.
func (m *Metrics) ActiveS() int {
	total := m.ActiveClosedS
	for _, iv := range m.Open {
		total += int(iv[1] - iv[0])
	}
	return total
}

func unix(t string) int64 {
	v, err := time.Parse(time.RFC3339, t)
	if err != nil {
		return 0
	}
	return v.Unix()
}

// observe updates the view after event e, whose payload Apply decoded
// into p, was applied to s (prev is the state before it). It copies every
// slice and map it changes: Apply's copy of the state is shallow, and the
// state before must stay as it was.
func (s *State) observe(prev *State, e Event, p any) {
	v := &s.View
	v.Recent = append([]RecentEvent{{Time: e.Time, Text: describe(e.Type, p)}}, v.Recent[:min(len(v.Recent), maxRecent-1)]...)
	m := &v.Metrics
	switch d := p.(type) {
	case *StartData:
		v.Health = Health{Level: Green}
	case *ReplayData:
		v.Health = Health{Level: Green, Phase: d.From} // a resume starts afresh
	case *LedgerData:
		switch e.Type {
		case LedgerType(ledger.Begin):
			// A later phase, or a failed one begun again (a redo), starts afresh.
			if d.Phase > v.Health.Phase || prev.Gates.Ledger.Entry(d.Phase).Status == ledger.Fail {
				v.Health = Health{Level: Green, Phase: d.Phase}
			}
		case LedgerType(ledger.PassGate), LedgerType(ledger.CompletePhase):
			// The phase is done: what troubled it is settled.
			if d.Phase >= v.Health.Phase {
				v.Health = Health{Level: Green, Phase: d.Phase}
			}
		case LedgerType(ledger.FailPhase):
			v.worsen(Red, fmt.Sprintf("Phase %d failed: %s", d.Phase, ReasonOrNone(d.Reason)),
				fmt.Sprintf("Re-work Phase %d (git crucible ledger begin %d) or escalate to the user.", d.Phase, d.Phase))
		}
	case *VerdictData:
		key := strconv.Itoa(int(d.Phase))
		m.GateRounds, m.Verdicts = cloneSet(m.GateRounds, key, d.Rounds), cloneAdd(m.Verdicts, key, 1)
		switch {
		case d.Verdict == "STAGNATION":
			v.worsen(Red, fmt.Sprintf("stagnation in the Phase %d gate", d.Phase),
				"The gate stopped improving. Review the findings with the user before another round.")
		case d.Verdict != "PASS" && d.Verdict != "FAIL":
			v.worsen(Red, fmt.Sprintf("escalation pending: Phase %d gate %s", d.Phase, d.Verdict),
				"Escalate to the user: the gate cannot settle this alone.")
		case d.Rounds >= 5:
			v.worsen(Yellow, fmt.Sprintf("quality gate round %d on Phase %d", d.Rounds, d.Phase),
				"The gate is taking many rounds. Check recent events for recurring findings.")
		}
	case *DAGRunData, *DAGTaskData:
		v.observeDAG(p)
	case *BaselineData:
		v.Baseline = &BaselineView{Command: d.Command, Failing: len(d.Failing)}
	case *StepData:
		if d.Baseline && d.Status == StepDone && v.Baseline != nil && !slices.Contains(v.Baseline.Steps, d.where()) {
			b := *v.Baseline
			b.Steps = append(slices.Clip(b.Steps), d.where())
			v.Baseline = &b
		}
	case *CheckpointData:
		v.Checkpoints++
		v.LastCheckpoint = &CheckpointSeen{Reason: d.Reason, Time: e.Time, ID: d.ID}
	case *DecisionData:
		at := d.DecidedAt(e)
		v.Journal = v.Journal.add(JournalDecision{Type: d.Type, Choice: d.Choice, Reason: d.Reason,
			Alternatives: d.Alternatives, Time: at})
		if d.Type == DecisionBudget && StoppedAtCostCap(s) {
			v.Health = Health{Level: Green, Phase: v.Health.Phase} // the cap was raised: the escalation is settled
		}
		if d.Type == "escalation" {
			action := d.Suggestion
			if action == "" { // recorded before escalations carried one
				action = "Wait for the user's decision on the escalation."
			}
			v.worsen(Red, "escalation pending: "+d.Choice, action)
		}
	case *importedDispatch:
		line := d.line
		if line.Seq > prev.Dispatch.Last {
			m.ByRole = cloneAdd(m.ByRole, line.Role, 1)
			if line.ModelTier != nil {
				m.ByTier = cloneAdd(m.ByTier, *line.ModelTier, 1)
			}
			m.InputChars += d.data.InputChars(line)
		}
		if line.Status != "dispatched" {
			m.OutputChars += d.data.OutputSize(line)
		}
	case *ImportFilesData:
		// What the files recorded bounds the wall clock: the run began at
		// First, before any dispatch the import knows the time of.
		if d.First != "" && (m.FirstStart == "" || unix(d.First) < unix(m.FirstStart)) {
			m.FirstStart = d.First
		}
		if d.Last != "" && unix(d.Last) > unix(m.LastFinish) {
			m.LastFinish = d.Last
		}
	case *ImportVerdictData:
		key := strconv.Itoa(int(d.Phase))
		m.GateRounds, m.Verdicts = cloneSet(m.GateRounds, key, d.Rounds), cloneAdd(m.Verdicts, key, 1)
	case *HandoffData: // written or imported
		// The seed: the compression state takes the handoff's constraints,
		// and its inputs become the next steps.
		v.Journal.Constraints = append([]string(nil), d.Constraints...)
		v.Journal.NextSteps = nil
		for _, in := range d.Inputs {
			v.Journal.NextSteps = append(v.Journal.NextSteps, in.Name+": "+in.Value)
		}
	case *DispatchStart:
		m.ByRole = cloneAdd(m.ByRole, d.Role, 1)
		if d.ModelTier != "" {
			m.ByTier = cloneAdd(m.ByTier, d.ModelTier, 1)
		}
		m.InputChars += d.InputChars
		if m.FirstStart == "" {
			m.FirstStart = e.Time
		}
		task := "-"
		if d.Task != nil {
			task = strconv.Itoa(*d.Task)
			v.setTask(TaskProgress{Task: *d.Task, Title: v.taskTitle(*d.Task, d.TaskTitle), Role: d.Role, Tier: d.ModelTier,
				Status: "dispatched", Seq: d.Seq, Started: e.Time})
		}
		switch {
		case d.ReplayOf != nil:
			v.worsen(Yellow, fmt.Sprintf("retry in progress: dispatch %d replays %d", d.Seq, *d.ReplayOf),
				"An agent is being retried. Watch whether the retry succeeds.")
		case m.Failed[d.Role+"/"+task] > 0:
			v.worsen(Yellow, fmt.Sprintf("retry in progress: %s on task %s after a failure", d.Role, task),
				"An agent is being retried. Watch whether the retry succeeds.")
		}
		if strings.Contains(d.Role, "review") {
			key := fmt.Sprintf("%d/%s", d.Phase, task)
			m.ReviewRounds = cloneAdd(m.ReviewRounds, key, 1)
			if n := m.ReviewRounds[key]; n >= 3 {
				v.worsen(Yellow, fmt.Sprintf("review loop round %d on task %s", n, task),
					fmt.Sprintf("Review is looping on task %s. Check recent events for recurring findings.", task))
			}
		}
	case *DispatchFinish:
		started := prev.Dispatch.InFlight[strconv.Itoa(d.Seq)].Started
		m.OutputChars += d.OutputChars
		m.LastFinish = e.Time
		m.addInterval(unix(started), unix(e.Time), s.earliestInFlight(e.Time))
		for i := range v.Tasks {
			if v.Tasks[i].Seq == d.Seq {
				t := v.Tasks[i]
				t.Status, t.Finished = d.Status, e.Time
				v.setTask(t)
				if d.Status == "failed" || d.Status == "error" {
					m.Failed = cloneAdd(m.Failed, t.Role+"/"+strconv.Itoa(t.Task), 1)
				}
			}
		}
	}
}

// ReasonOrNone is reason, or "(no reason given)" when there is none: a
// message never ends on an empty reason.
func ReasonOrNone(reason string) string {
	if strings.TrimSpace(reason) == "" {
		return "(no reason given)"
	}
	return reason
}

// worsen moves health towards RED, never back.
func (v *View) worsen(level, reason, action string) {
	if healthRank.Get()[level] > healthRank.Get()[v.Health.Level] {
		v.Health.Level, v.Health.Reason, v.Health.Action = level, reason, action
	}
}

// taskTitle is title, or task's title so far when a dispatch gives none.
func (v *View) taskTitle(task int, title string) string {
	for _, x := range v.Tasks {
		if x.Task == task && title == "" {
			return x.Title
		}
	}
	return title
}

// Label is what the task is listed as: its title, else its last dispatch's role.
func (t TaskProgress) Label() string {
	if t.Title != "" {
		return t.Title
	}
	return t.Role
}

func (v *View) setTask(t TaskProgress) {
	tasks := make([]TaskProgress, 0, len(v.Tasks)+1)
	placed := false
	for _, x := range v.Tasks {
		switch {
		case x.Task == t.Task:
			tasks, placed = append(tasks, t), true
		case x.Task > t.Task && !placed:
			tasks, placed = append(tasks, t, x), true
		default:
			tasks = append(tasks, x)
		}
	}
	if !placed {
		tasks = append(tasks, t)
	}
	v.Tasks = tasks
}

// ID is the entry's crucible label: DEC-3, or DEC-1..DEC-4 when folded.
func (d JournalDecision) ID() string {
	if d.From == d.To {
		return fmt.Sprintf("DEC-%d", d.From)
	}
	return fmt.Sprintf("DEC-%d..DEC-%d", d.From, d.To)
}

// add records a decision, folding the two oldest into one line past ten.
func (j Journal) add(d JournalDecision) Journal {
	j.Total++
	d.From, d.To = j.Total, j.Total
	list := append(append([]JournalDecision(nil), j.Decisions...), d)
	if len(list) > maxDecisions {
		from, to := list[0].From, list[1].To
		folded := JournalDecision{From: from, To: to, Type: "folded",
			Choice: fmt.Sprintf("%d earlier decisions", to-from+1), Reason: "git crucible log shows them in full"}
		list = append([]JournalDecision{folded}, list[2:]...)
	}
	j.Decisions = list
	return j
}

// earliestInFlight is the earliest start among dispatches still in flight
// after this event, or now when none is.
func (s *State) earliestInFlight(now string) int64 {
	earliest := unix(now)
	for _, f := range s.Dispatch.InFlight {
		if t := unix(f.Started); t < earliest {
			earliest = t
		}
	}
	return earliest
}

// addInterval merges [start, end] into the open intervals, then closes the
// ones that end before horizon: no later interval can start before it.
func (m *Metrics) addInterval(start, end, horizon int64) {
	if end < start {
		end = start
	}
	var open [][2]int64
	merged := [2]int64{start, end}
	for _, iv := range m.Open {
		if iv[1] < merged[0] || iv[0] > merged[1] {
			open = append(open, iv)
			continue
		}
		merged = [2]int64{min(iv[0], merged[0]), max(iv[1], merged[1])}
	}
	open = append(open, merged)
	sortIntervals(open)
	m.Open = nil
	for _, iv := range open {
		if iv[1] < horizon {
			m.ActiveClosedS += int(iv[1] - iv[0])
		} else {
			m.Open = append(m.Open, iv)
		}
	}
}

func sortIntervals(ivs [][2]int64) {
	for i := 1; i < len(ivs); i++ {
		for j := i; j > 0 && ivs[j][0] < ivs[j-1][0]; j-- {
			ivs[j], ivs[j-1] = ivs[j-1], ivs[j]
		}
	}
}

func cloneAdd(m map[string]int, k string, n int) map[string]int {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]int{}
	}
	out[k] += n
	return out
}

func cloneSet(m map[string]int, k string, n int) map[string]int {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]int{}
	}
	out[k] = n
	return out
}
