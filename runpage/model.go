// Package runpage makes the report of a pipeline: one self-contained HTML
// page (git crucible report) from a view of its chain — events, state,
// cost, kept reports — and what the caller read from git (the pipeline's
// commits, the fast-gate cache, replay diffs). Build makes the Model the
// page is drawn from (what report --json prints); Render draws it with
// html/template, its charts as inline SVG. Nothing here runs git or
// prints: the command gathers, this package shapes.
//
// Every string an agent or a person wrote (titles, summaries, reasons,
// handoffs) is bounded (Clip) before it reaches the model and escaped by
// html/template when drawn: the page runs no script and loads nothing.
package runpage

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/replay"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/rounds"
)

// Bounds on what the page shows of text from agents and people.
const (
	MaxText     = 4 << 10  // a title, a summary, a reason
	MaxDocument = 64 << 10 // a handoff document
	MaxFindings = 200      // findings listed per round
)

// Input is what the page is made from.
type Input struct {
	ID     string
	State  *pipeline.State
	Events []pipeline.Event // the whole chain, oldest first
	Cost   pipeline.Cost    // as metrics --json has it
	Now    string           // RFC 3339: where dispatches in flight end
	// Read returns a file kept in the chain's tree (a dispatch's output, a
	// handoff); nil reads nothing.
	Read func(path string) ([]byte, error)
	// Commits are the pipeline's commits on its branch (those whose
	// Crucible-Pipeline trailer names it), oldest first.
	Commits []Commit
	// FastGates are verify-commits' results, by tree.
	FastGates map[string]FastGate
	// Deps are the task DAG's edges (task -> the tasks it depends on),
	// from its manifest when the caller could read it.
	Deps map[string][]string
	// Diffs are the Replay Diffs of each replay that swapped templates,
	// against the run before it (the caller adds the artifact diff).
	Diffs []*replay.Diff
	// Generated is when the page was made (RFC 3339).
	Generated string
}

// Commit is one of the pipeline's commits, as pipeline.Service.Commits
// reads them: the page shows them as read.
type Commit = pipeline.Commit

// Trailer is one trailer of a commit message.
type Trailer = pipeline.Trailer

// FastGate is a fast gate's cached result for a tree.
type FastGate struct {
	Status     string `json:"status"` // pass, fail, skip
	Exit       int    `json:"exit"`
	Time       string `json:"time"`
	DurationMS int64  `json:"duration_ms"`
}

// Model is what the page shows: report --json prints it.
type Model struct {
	Pipeline  Header      `json:"pipeline"`
	Timeline  Timeline    `json:"timeline"`
	Gates     GatesView   `json:"gates"`
	Cost      CostView    `json:"cost"`
	Tasks     TasksView   `json:"tasks"`
	Replays   []Replay    `json:"replays"`
	Decisions []Decision  `json:"decisions"`
	Handoffs  []Handoff   `json:"handoffs"`
	Generated string      `json:"generated"`
	Sessions  []SessionID `json:"sessions"`
}

// Header is the pipeline's identity and where it stands.
type Header struct {
	ID         string `json:"id"`
	Goal       string `json:"goal"`
	Mode       string `json:"mode"`
	Branch     string `json:"branch"`
	Created    string `json:"created"`
	Phase      int    `json:"phase"`
	Condition  string `json:"condition"`
	Health     string `json:"health"`
	Reason     string `json:"health_reason,omitempty"`
	Events     int    `json:"events"`
	Dispatches int    `json:"dispatches"`
}

// SessionID names a run of the pipeline: the original or replay-N.
type SessionID struct {
	Name      string   `json:"name"`
	From      int      `json:"from"`
	Mutations []string `json:"mutations"`
}

// Timeline is every dispatch as a bar on a lane, and the chain's marks.
type Timeline struct {
	Start  string  `json:"start"`
	End    string  `json:"end"`
	Events int     `json:"events"` // the chain's length: the axis's ranks
	Lanes  []Lane  `json:"lanes"`
	Bars   []Bar   `json:"bars"`
	Marks  []Mark  `json:"marks"`
	Phases []Phase `json:"phases"`
}

// Lane is a row of the timeline: a role, and a slot when its dispatches ran
// at once.
type Lane struct {
	Role string `json:"role"`
	Slot int    `json:"slot"` // from 1
}

// Name is the lane's label.
func (l Lane) Name() string {
	if l.Slot > 1 {
		return fmt.Sprintf("%s #%d", l.Role, l.Slot)
	}
	return l.Role
}

// Bar is one dispatch.
type Bar struct {
	Seq       int    `json:"seq"`
	Lane      int    `json:"lane"` // index in Lanes
	Role      string `json:"role"`
	Phase     int    `json:"phase"`
	Step      string `json:"step,omitempty"`
	Task      string `json:"task,omitempty"`
	Round     int    `json:"round,omitempty"`
	Session   string `json:"session"`
	Status    string `json:"status"` // completed, failed, error, skipped, interrupted, running
	Started   string `json:"started"`
	Finished  string `json:"finished,omitempty"`
	DurationS int    `json:"duration_s"`
	StartRank int    `json:"start_rank"` // the start's place in the chain
	EndRank   int    `json:"end_rank"`
	RetryOf   *int   `json:"retry_of,omitempty"`
	Retry     string `json:"retry_reason,omitempty"`
	Recovered string `json:"recovered,omitempty"` // waited, adopted, interrupted: a resume settled it
	Mutation  string `json:"mutation,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Failure   string `json:"failure,omitempty"`
}

// Mark is a point of the chain the timeline marks: a phase boundary, an
// approval pause, an escalation, a replay, a resume.
type Mark struct {
	Kind  string `json:"kind"` // phase, approval, escalation, replay, resume
	Rank  int    `json:"rank"`
	Time  string `json:"time"`
	Label string `json:"label"`
}

// Phase is a phase's wall time on the timeline.
type Phase struct {
	Phase      int    `json:"phase"`
	Name       string `json:"name"`
	Dispatches int    `json:"dispatches"`
	Start      string `json:"start,omitempty"`
	End        string `json:"end,omitempty"`
	WallS      int    `json:"wall_s"`
}

// GatesView is the quality gates and review loops.
type GatesView struct {
	Ledger      []LedgerRow   `json:"ledger"`      // each phase's gate as status says it
	Transitions []Transition  `json:"transitions"` // every ledger event
	Loops       []Loop        `json:"loops"`       // each gate or review loop of each session
	Verdicts    []VerdictView `json:"verdicts"`    // gate.verdict events
}

// LedgerRow is a phase's gate now.
type LedgerRow struct {
	Phase        int    `json:"phase"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	Gate         string `json:"gate"` // PASS, USER_SKIP, SKIPPED, MISSING, ...
	Acknowledged bool   `json:"acknowledged,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

// Transition is a ledger event.
type Transition struct {
	Time    string `json:"time"`
	Kind    string `json:"kind"`
	Phase   int    `json:"phase"`
	Reason  string `json:"reason,omitempty"`
	Confirm string `json:"confirm,omitempty"`
}

// VerdictView is a recorded gate verdict.
type VerdictView struct {
	Time    string `json:"time"`
	Phase   int    `json:"phase"`
	Verdict string `json:"verdict"`
	Rounds  int    `json:"rounds,omitempty"`
	Score   int    `json:"score,omitempty"`
}

// Loop is one gate or review loop of one session: its rounds.
type Loop struct {
	Session string  `json:"session"`
	Phase   int     `json:"phase"`
	Step    string  `json:"step"`
	Task    string  `json:"task,omitempty"`
	Verdict string  `json:"verdict,omitempty"` // the step's result when it ended
	Rounds  []Round `json:"rounds"`
}

// Round is one round of a loop: its findings.
type Round struct {
	Round       int       `json:"round"`
	Seq         int       `json:"seq"`
	Fatal       int       `json:"fatal"`
	Significant int       `json:"significant"`
	Minor       int       `json:"minor"`
	Score       int       `json:"score"`
	Findings    []Finding `json:"findings"`
	More        int       `json:"more,omitempty"` // findings not listed
	Unread      string    `json:"unread,omitempty"`
}

// Finding is one finding's title.
type Finding struct {
	Severity string `json:"severity"`
	Title    string `json:"title"`
	File     string `json:"file,omitempty"`
}

// CostView is the cost of the pipeline.
type CostView struct {
	Total     pipeline.CostLine `json:"total"`
	Summary   string            `json:"summary"`
	ByPhase   []CostRow         `json:"by_phase"`
	ByRole    []CostRow         `json:"by_role"`
	ByTask    []CostRow         `json:"by_task"`
	Preserved []Preserved       `json:"preserved"` // work a replay kept
}

// CostRow is a line of a cost table.
type CostRow struct {
	Key  string            `json:"key"`
	Cost pipeline.CostLine `json:"cost"`
}

// Preserved is the work before a replay's phase that it did not run again.
type Preserved struct {
	Session    string  `json:"session"`
	From       int     `json:"from"`
	Dispatches int     `json:"dispatches"`
	Seconds    int     `json:"seconds"`
	CostUSD    float64 `json:"cost_usd"`
	Estimated  int     `json:"est_tokens"`
}

// TasksView is the task DAG, or a build's plan tasks.
type TasksView struct {
	Run     string       `json:"run,omitempty"` // the task run's status
	Tasks   []TaskNode   `json:"tasks"`
	Edges   [][2]string  `json:"edges"` // dependency -> task
	Commits []CommitView `json:"commits"`
}

// TaskNode is a task.
type TaskNode struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Level  int    `json:"level"`
	Status string `json:"status"`
	Commit string `json:"commit,omitempty"`
}

// CommitView is one of the pipeline's commits and its fast gate.
type CommitView struct {
	Commit
	Task     string    `json:"task,omitempty"`
	FastGate *FastGate `json:"fast_gate,omitempty"`
}

// Replay is a replay's comparison with the run before it.
type Replay struct {
	Original   string     `json:"original"`
	Replay     string     `json:"replay"`
	From       int        `json:"from"`
	Mutations  []string   `json:"mutations"`
	A          ReplaySide `json:"a"`
	B          ReplaySide `json:"b"`
	Pairs      []PairView `json:"pairs"`
	Files      int        `json:"files_changed"`
	Insertions int        `json:"insertions"`
	Deletions  int        `json:"deletions"`
	Range      string     `json:"range,omitempty"`
}

// ReplaySide is one run's side of a comparison.
type ReplaySide struct {
	Dispatches int     `json:"dispatches"`
	GateRounds int     `json:"gate_rounds"`
	Findings   int     `json:"findings"` // Fatal + Significant + Minor over its rounds
	Seconds    int     `json:"seconds"`
	CostUSD    float64 `json:"cost_usd"`
	EstTokens  int     `json:"est_tokens"`
	Acceptance string  `json:"acceptance"`
}

// PairView is a dispatch and its counterpart.
type PairView struct {
	A     *int   `json:"a"`
	B     *int   `json:"b"`
	Role  string `json:"role"`
	StatA string `json:"status_a,omitempty"`
	StatB string `json:"status_b,omitempty"`
	Delta string `json:"delta"`
}

// Decision is a decision-journal entry.
type Decision struct {
	Time         string `json:"time"`
	Type         string `json:"type"`
	Choice       string `json:"choice"`
	Reason       string `json:"reason,omitempty"`
	Alternatives string `json:"alternatives,omitempty"`
	Suggestion   string `json:"suggestion,omitempty"`
}

// Handoff is a phase handoff and its document.
type Handoff struct {
	Time        string   `json:"time"`
	From        int      `json:"from"`
	To          int      `json:"to"`
	Path        string   `json:"path"`
	Decisions   []string `json:"decisions"`
	Constraints []string `json:"constraints"`
	Document    string   `json:"document,omitempty"`
}

// Clip bounds s to n bytes at a rune boundary, a marker saying how much
// was cut; invalid UTF-8 is replaced so that the page stays valid.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !validStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … [%d bytes more]", len(s)-cut)
}

func validStart(b byte) bool { return b&0xC0 != 0x80 }

func clipText(s string) string { return Clip(s, MaxText) }

// Build makes the page's model from in.
func Build(in Input) (*Model, error) {
	if in.State == nil {
		return nil, fmt.Errorf("runpage: no state")
	}
	st := in.State
	m := &Model{Generated: in.Generated, Replays: []Replay{}, Decisions: []Decision{}, Handoffs: []Handoff{}}
	m.Pipeline = Header{ID: in.ID, Goal: clipText(st.Goal), Mode: st.Mode, Branch: clipText(st.Branch),
		Created: st.Created, Phase: int(st.Phase), Condition: st.Condition(), Health: orGreen(st.View.Health.Level),
		Reason: clipText(st.View.Health.Reason), Events: len(in.Events)}
	c := newChain(in)
	if err := c.read(); err != nil {
		return nil, err
	}
	m.Sessions = c.sessions
	m.Pipeline.Dispatches = len(c.bars)
	m.Timeline = c.timeline()
	m.Gates = c.gates()
	m.Cost = c.cost()
	m.Tasks = c.tasks()
	m.Replays = c.replays(m.Gates.Loops)
	m.Decisions = c.decisions
	m.Handoffs = c.handoffs
	return m, nil
}

func orGreen(level string) string {
	if level == "" {
		return pipeline.Green
	}
	return level
}

// chain is one pass over the events.
type chain struct {
	in        Input
	sessions  []SessionID
	bars      []Bar
	bySeq     map[int]int // seq -> index in bars
	usage     map[int]*pipeline.Usage
	chars     map[int][2]int // seq -> input, output chars
	outputs   map[int]string
	marks     []Mark
	steps     map[loopKey]string // a loop's step result
	verdicts  []VerdictView
	trans     []Transition
	decisions []Decision
	handoffs  []Handoff
	dagTasks  map[string]*TaskNode
	dagOrder  []string
	dagRun    string
	titles    map[string]string // task id -> title
	lastRank  int
	t0, t1    int64
}

type loopKey struct {
	session string
	phase   int
	step    string
	task    string
}

func newChain(in Input) *chain {
	return &chain{in: in, bySeq: map[int]int{}, usage: map[int]*pipeline.Usage{}, chars: map[int][2]int{},
		outputs: map[int]string{}, steps: map[loopKey]string{}, dagTasks: map[string]*TaskNode{}, titles: map[string]string{}}
}

func unix(t string) int64 {
	v, err := time.Parse(time.RFC3339, t)
	if err != nil {
		return 0
	}
	return v.Unix()
}

func (c *chain) read() error {
	session := c.in.ID
	c.sessions = []SessionID{{Name: session, From: 1, Mutations: []string{}}}
	c.t0, c.t1 = -1, 0
	seen := func(t string) {
		if u := unix(t); u > 0 {
			if c.t0 < 0 || u < c.t0 {
				c.t0 = u
			}
			c.t1 = max(c.t1, u)
		}
	}
	for rank, e := range c.in.Events {
		c.lastRank = rank
		seen(e.Time)
		switch {
		case e.Type == pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			s := session
			if d.ReplaySession != "" {
				s = d.ReplaySession
			}
			task := d.TaskID
			if task == "" && d.Task != nil {
				task = strconv.Itoa(*d.Task)
			}
			if task != "" && d.TaskTitle != "" {
				c.titles[task] = clipText(d.TaskTitle)
			}
			c.bySeq[d.Seq] = len(c.bars)
			c.bars = append(c.bars, Bar{Seq: d.Seq, Role: clipText(d.Role), Phase: int(d.Phase), Step: d.Step, Task: task,
				Round: d.Round, Session: s, Status: "running", Started: e.Time, StartRank: rank, EndRank: -1,
				RetryOf: d.RetryOf, Retry: clipText(d.RetryReason), Mutation: clipText(d.Mutation)})
			c.chars[d.Seq] = [2]int{d.InputChars, 0}
			if d.RetryOf != nil {
				c.marks = append(c.marks, Mark{Kind: "resume", Rank: rank, Time: e.Time,
					Label: fmt.Sprintf("dispatch %d retries %d", d.Seq, *d.RetryOf)})
			}
		case e.Type == pipeline.TypeDispatchFinish:
			var d pipeline.DispatchFinish
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			i, ok := c.bySeq[d.Seq]
			if !ok {
				continue
			}
			b := &c.bars[i]
			b.Status, b.Finished, b.EndRank, b.DurationS = d.Status, e.Time, rank, d.DurationS
			b.Recovered, b.Summary, b.Failure = d.Recovered, clipText(d.Summary), clipText(d.Failure)
			if d.Recovered == "interrupted" || d.Failure == "cancelled" || strings.HasPrefix(d.Summary, "interrupted") {
				b.Status = "interrupted"
			}
			if d.Recovered != "" {
				c.marks = append(c.marks, Mark{Kind: "resume", Rank: rank, Time: e.Time,
					Label: fmt.Sprintf("a resume settled dispatch %d: %s", d.Seq, d.Recovered)})
			}
			c.usage[d.Seq] = d.Usage
			ch := c.chars[d.Seq]
			c.chars[d.Seq] = [2]int{ch[0], d.OutputChars}
			c.outputs[d.Seq] = d.Output
		case e.Type == pipeline.TypeReplay:
			var d pipeline.ReplayData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			session = d.Session
			muts := []string{}
			for _, mu := range d.Mutations {
				muts = append(muts, clipText(mu))
			}
			c.sessions = append(c.sessions, SessionID{Name: d.Session, From: int(d.From), Mutations: muts})
			c.marks = append(c.marks, Mark{Kind: "replay", Rank: rank, Time: e.Time,
				Label: fmt.Sprintf("%s from Phase %d", d.Session, d.From)})
		case e.Type == pipeline.TypeStep:
			var d pipeline.StepData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			if d.Round > 0 || d.Result != "" {
				c.steps[loopKey{session, int(d.Phase), d.Step, d.Task}] = clipText(d.Result)
			}
			switch d.Status {
			case pipeline.StepWaiting:
				c.marks = append(c.marks, Mark{Kind: "approval", Rank: rank, Time: e.Time,
					Label: fmt.Sprintf("waiting for a person at %s", d.Step)})
			case pipeline.StepEscalated:
				c.marks = append(c.marks, Mark{Kind: "escalation", Rank: rank, Time: e.Time,
					Label: clipText(fmt.Sprintf("%s escalated: %s", d.Step, d.Result))})
			}
		case e.Type == pipeline.TypeVerdict:
			var d pipeline.VerdictData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			c.verdicts = append(c.verdicts, VerdictView{Time: e.Time, Phase: int(d.Phase), Verdict: clipText(d.Verdict), Rounds: d.Rounds, Score: d.Score})
		case e.Type == pipeline.TypeDecision:
			var d pipeline.DecisionData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			at := d.DecidedAt(e)
			c.decisions = append(c.decisions, Decision{Time: at, Type: clipText(d.Type), Choice: clipText(d.Choice),
				Reason: clipText(d.Reason), Alternatives: clipText(d.Alternatives), Suggestion: clipText(d.Suggestion)})
			if d.Type == rounds.JournalEscalation {
				c.marks = append(c.marks, Mark{Kind: "escalation", Rank: rank, Time: e.Time, Label: clipText(d.Choice)})
			}
		case e.Type == pipeline.TypeHandoff || e.Type == pipeline.TypeImportHandoff:
			var d pipeline.HandoffData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			h := Handoff{Time: e.Time, From: int(d.From), To: int(d.To), Path: clipText(d.Path), Decisions: []string{}, Constraints: []string{}}
			for _, x := range d.Decisions {
				s := x.Text
				if x.ID != "" {
					s = x.ID + ": " + s
				}
				if x.Reason != "" {
					s += " — " + x.Reason
				}
				h.Decisions = append(h.Decisions, clipText(s))
			}
			for _, x := range d.Constraints {
				h.Constraints = append(h.Constraints, clipText(x))
			}
			if c.in.Read != nil && d.Path != "" {
				if b, err := c.in.Read(d.Path); err == nil {
					h.Document = Clip(string(b), MaxDocument)
				}
			}
			c.handoffs = append(c.handoffs, h)
		case e.Type == pipeline.TypeDAGRun:
			var d pipeline.DAGRunData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			c.dagRun = d.Status
		case e.Type == pipeline.TypeDAGTask:
			var d pipeline.DAGTaskData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			t := c.dagTasks[d.Task]
			if t == nil {
				t = &TaskNode{ID: d.Task}
				c.dagTasks[d.Task] = t
				c.dagOrder = append(c.dagOrder, d.Task)
			}
			t.Status = d.Status
			if d.Level > 0 {
				t.Level = d.Level
			}
			if d.Commit != "" {
				t.Commit = d.Commit
			}
		case strings.HasPrefix(e.Type, "ledger."):
			var d pipeline.LedgerData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			kind := strings.TrimPrefix(e.Type, "ledger.")
			c.trans = append(c.trans, Transition{Time: e.Time, Kind: kind, Phase: int(d.Phase), Reason: clipText(d.Reason), Confirm: clipText(d.Confirm)})
			switch ledger.Kind(kind) {
			case ledger.Begin:
				c.marks = append(c.marks, Mark{Kind: "phase", Rank: rank, Time: e.Time, Label: fmt.Sprintf("Phase %d (%s) begins", d.Phase, d.Phase.Name())})
			case ledger.Skip:
				c.marks = append(c.marks, Mark{Kind: "approval", Rank: rank, Time: e.Time, Label: fmt.Sprintf("Phase %d gate skipped", d.Phase)})
			case ledger.Ack:
				c.marks = append(c.marks, Mark{Kind: "approval", Rank: rank, Time: e.Time, Label: fmt.Sprintf("Phase %d skip acknowledged", d.Phase)})
			}
		}
	}
	if c.t0 < 0 {
		c.t0 = 0
	}
	if now := unix(c.in.Now); now > c.t1 && c.inFlight() {
		c.t1 = now
	}
	return nil
}

func (c *chain) inFlight() bool {
	for _, b := range c.bars {
		if b.EndRank < 0 {
			return true
		}
	}
	return false
}

func (c *chain) timeline() Timeline {
	t := Timeline{Events: len(c.in.Events), Bars: c.bars, Marks: c.marks}
	if t.Bars == nil {
		t.Bars = []Bar{}
	}
	if t.Marks == nil {
		t.Marks = []Mark{}
	}
	if c.t1 > 0 {
		t.Start, t.End = time.Unix(c.t0, 0).UTC().Format(time.RFC3339), time.Unix(c.t1, 0).UTC().Format(time.RFC3339)
	}
	for i := range t.Bars {
		if t.Bars[i].EndRank < 0 {
			t.Bars[i].EndRank = c.lastRank
		}
	}
	ivs := make([]Interval, len(t.Bars))
	for i, b := range t.Bars {
		ivs[i] = Interval{Key: b.Role, Start: b.StartRank, End: b.EndRank}
	}
	slots := AssignSlots(ivs)
	lane := map[Lane]int{}
	for i := range t.Bars {
		l := Lane{Role: t.Bars[i].Role, Slot: slots[i]}
		n, ok := lane[l]
		if !ok {
			n = len(t.Lanes)
			lane[l] = n
			t.Lanes = append(t.Lanes, l)
		}
		t.Bars[i].Lane = n
	}
	if t.Lanes == nil {
		t.Lanes = []Lane{}
	}
	for _, p := range ledger.Phases {
		ph := Phase{Phase: int(p), Name: p.Name()}
		var s, e int64
		for _, b := range t.Bars {
			if b.Phase != int(p) {
				continue
			}
			ph.Dispatches++
			bs, be := unix(b.Started), unix(b.Finished)
			if be == 0 {
				be = c.t1
			}
			if s == 0 || bs < s {
				s = bs
			}
			e = max(e, be)
		}
		if ph.Dispatches > 0 {
			ph.Start, ph.End = time.Unix(s, 0).UTC().Format(time.RFC3339), time.Unix(e, 0).UTC().Format(time.RFC3339)
			ph.WallS = int(e - s)
		}
		t.Phases = append(t.Phases, ph)
	}
	return t
}

// Interval is a dispatch's span on the chain, for AssignSlots.
type Interval struct {
	Key        string // the lane's role
	Start, End int    // ranks, End >= Start
}

// AssignSlots gives each interval a slot from 1 within its key: the
// lowest whose previous interval ended before it starts, so that
// dispatches of a role that ran at once are drawn on lanes of their own.
func AssignSlots(ivs []Interval) []int {
	order := make([]int, len(ivs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ivs[order[a]].Start < ivs[order[b]].Start })
	ends := map[string][]int{} // key -> each slot's last end
	out := make([]int, len(ivs))
	for _, i := range order {
		iv := ivs[i]
		slots := ends[iv.Key]
		n := -1
		for s, end := range slots {
			if end < iv.Start {
				n = s
				break
			}
		}
		if n < 0 {
			n = len(slots)
			slots = append(slots, 0)
		}
		slots[n] = max(iv.End, iv.Start)
		ends[iv.Key] = slots
		out[i] = n + 1
	}
	return out
}

func (c *chain) gates() GatesView {
	g := GatesView{Transitions: c.trans, Verdicts: c.verdicts, Loops: []Loop{}}
	if g.Transitions == nil {
		g.Transitions = []Transition{}
	}
	if g.Verdicts == nil {
		g.Verdicts = []VerdictView{}
	}
	states := map[ledger.Phase]string{}
	for _, s := range pipeline.GateStates(c.in.State) {
		states[s.Phase] = s.State
	}
	for _, p := range ledger.Phases {
		e := c.in.State.Gates.Ledger.Entry(p)
		g.Ledger = append(g.Ledger, LedgerRow{Phase: int(p), Name: p.Name(), Status: string(e.Status), Gate: states[p],
			Acknowledged: e.Acknowledged, Reason: clipText(e.Reason)})
	}
	index := map[loopKey]int{}
	for _, b := range c.bars {
		if b.Round <= 0 || b.Step == "" {
			continue
		}
		k := loopKey{b.Session, b.Phase, b.Step, b.Task}
		r, ok := c.round(b)
		if !ok {
			continue // the fixer's dispatch of the round
		}
		i, seen := index[k]
		if !seen {
			i = len(g.Loops)
			index[k] = i
			g.Loops = append(g.Loops, Loop{Session: b.Session, Phase: b.Phase, Step: b.Step, Task: b.Task, Verdict: c.steps[k]})
		}
		g.Loops[i].Rounds = append(g.Loops[i].Rounds, r)
	}
	return g
}

// round reads a loop's round from the report its dispatch kept: false for
// a dispatch whose report holds no findings (the round's fixer).
func (c *chain) round(b Bar) (Round, bool) {
	r := Round{Round: b.Round, Seq: b.Seq, Findings: []Finding{}}
	path := c.outputs[b.Seq]
	if c.in.Read == nil || path == "" {
		if b.Status == "completed" {
			return r, false
		}
		r.Unread = "no report kept"
		return r, strings.HasPrefix(b.Role, "red-team") || strings.Contains(b.Role, "review")
	}
	data, err := c.in.Read(path)
	if err != nil {
		return r, false
	}
	f, err := report.ParseFindings(data)
	if err != nil {
		return r, false
	}
	counts := rounds.CountsOf(f)
	r.Fatal, r.Significant, r.Minor, r.Score = counts.Fatal, counts.Significant, counts.Minor, counts.Score()
	add := func(sev string, list []report.Finding) {
		for _, x := range list {
			if len(r.Findings) == MaxFindings {
				r.More++
				continue
			}
			r.Findings = append(r.Findings, Finding{Severity: sev, Title: clipText(x.Title), File: clipText(x.File)})
		}
	}
	add("architectural", f.Architectural)
	add("fatal", f.Fatal)
	add("significant", f.Significant)
	add("minor", f.Minor)
	return r, true
}

func (c *chain) cost() CostView {
	k := c.in.Cost
	v := CostView{Total: k.CostLine, Summary: k.Summary(), Preserved: []Preserved{}}
	rows := func(m map[string]pipeline.CostLine, less func(a, b string) int) []CostRow {
		keys := make([]string, 0, len(m))
		for key := range m {
			keys = append(keys, key)
		}
		slices.SortFunc(keys, less)
		out := make([]CostRow, 0, len(keys))
		for _, key := range keys {
			out = append(out, CostRow{Key: clipText(key), Cost: m[key]})
		}
		return out
	}
	v.ByPhase = rows(k.ByPhase, numeric)
	v.ByRole = rows(k.ByRole, strings.Compare)
	v.ByTask = rows(k.ByTask, numeric)
	for i, s := range c.sessions[1:] {
		p := Preserved{Session: s.Name, From: s.From}
		// The phases before its boundary as the newest run before it left
		// them: each phase's dispatches of the last session that ran it.
		owner := map[int]string{}
		for _, b := range c.bars {
			if b.Phase < s.From && c.sessionIndex(b.Session) <= i {
				owner[b.Phase] = b.Session
			}
		}
		for _, b := range c.bars {
			if b.Phase >= s.From || owner[b.Phase] != b.Session {
				continue
			}
			p.Dispatches++
			p.Seconds += b.DurationS
			if u := c.usage[b.Seq]; u != nil && u.CostUSD != nil {
				p.CostUSD += *u.CostUSD
			} else if u == nil {
				ch := c.chars[b.Seq]
				p.Estimated += (ch[0] + ch[1]) / 4
			}
		}
		v.Preserved = append(v.Preserved, p)
	}
	return v
}

func (c *chain) sessionIndex(name string) int {
	for i, s := range c.sessions {
		if s.Name == name {
			return i
		}
	}
	return 0
}

// numeric orders keys as numbers when both are, else as text.
func numeric(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x - y
	}
	if errA == nil {
		return -1
	}
	if errB == nil {
		return 1
	}
	return strings.Compare(a, b)
}

func (c *chain) tasks() TasksView {
	v := TasksView{Run: c.dagRun, Tasks: []TaskNode{}, Edges: [][2]string{}, Commits: []CommitView{}}
	byTask := map[string]string{} // task -> commit
	for _, cm := range c.in.Commits {
		cv := CommitView{Commit: cm}
		cv.Subject = clipText(cm.Subject)
		cv.Trailers = make([]Trailer, len(cm.Trailers))
		for i, t := range cm.Trailers {
			cv.Trailers[i] = Trailer{Key: clipText(t.Key), Value: clipText(t.Value)}
			if t.Key == "Crucible-Task" {
				cv.Task = clipText(t.Value)
				byTask[t.Value] = cm.Hash
			}
		}
		if r, ok := c.in.FastGates[cm.Tree]; ok {
			cv.FastGate = &r
		}
		v.Commits = append(v.Commits, cv)
	}
	if len(c.dagOrder) > 0 {
		for _, id := range c.dagOrder {
			t := *c.dagTasks[id]
			t.Title = c.titles[id]
			v.Tasks = append(v.Tasks, t)
		}
	} else {
		// A build's plan tasks, as its dispatches name them.
		idx := map[string]int{}
		for _, b := range c.bars {
			if b.Task == "" {
				continue
			}
			i, ok := idx[b.Task]
			if !ok {
				i = len(v.Tasks)
				idx[b.Task] = i
				v.Tasks = append(v.Tasks, TaskNode{ID: clipText(b.Task), Title: c.titles[b.Task], Commit: byTask[b.Task]})
			}
			v.Tasks[i].Status = b.Status
		}
	}
	deps := c.in.Deps
	if deps == nil && len(c.dagOrder) == 0 {
		deps = c.planDeps()
	}
	known := map[string]bool{}
	for _, t := range v.Tasks {
		known[t.ID] = true
	}
	for _, t := range v.Tasks {
		for _, dep := range deps[t.ID] {
			if known[dep] {
				v.Edges = append(v.Edges, [2]string{dep, t.ID})
			}
		}
	}
	// Levels: the run's, else the longest path from a task without deps.
	level := map[string]int{}
	var depth func(id string, guard int) int
	depth = func(id string, guard int) int {
		if l, ok := level[id]; ok {
			return l
		}
		if guard > len(v.Tasks) {
			return 1 // a cycle: the manifest's validation says so, not the page
		}
		l := 1
		for _, dep := range deps[id] {
			if known[dep] {
				l = max(l, depth(dep, guard+1)+1)
			}
		}
		level[id] = l
		return l
	}
	for i := range v.Tasks {
		if v.Tasks[i].Level == 0 {
			v.Tasks[i].Level = depth(v.Tasks[i].ID, 0)
		}
		if v.Tasks[i].Commit == "" {
			v.Tasks[i].Commit = byTask[v.Tasks[i].ID]
		}
	}
	return v
}

// planDeps are the dependencies of a build's plan tasks, from the newest
// Phase 2 report that holds a plan.
func (c *chain) planDeps() map[string][]string {
	if c.in.Read == nil {
		return nil
	}
	for i := len(c.bars) - 1; i >= 0; i-- {
		b := c.bars[i]
		if b.Phase != int(ledger.Plan) || b.Status != "completed" || c.outputs[b.Seq] == "" {
			continue
		}
		data, err := c.in.Read(c.outputs[b.Seq])
		if err != nil {
			continue
		}
		t, err := report.ParseTask(data)
		if err != nil {
			continue
		}
		p, err := t.Plan()
		if err != nil || len(p.Tasks()) == 0 {
			continue
		}
		deps := map[string][]string{}
		for _, pt := range p.Tasks() {
			deps[pt.ID] = pt.DependsOn
		}
		return deps
	}
	return nil
}

func (c *chain) replays(loops []Loop) []Replay {
	out := []Replay{}
	for _, d := range c.in.Diffs {
		r := Replay{Original: d.A.Session.Name, Replay: d.B.Session.Name, From: int(d.From), Mutations: []string{},
			Files: d.Files, Insertions: d.Insertions, Deletions: d.Deletions, Range: d.Range, Pairs: []PairView{}}
		for _, mu := range d.B.Session.Mutations {
			r.Mutations = append(r.Mutations, clipText(mu))
		}
		r.A, r.B = c.side(d.A, loops, d.From), c.side(d.B, loops, d.From)
		for _, p := range d.Pairs {
			pv := PairView{Delta: clipText(p.Delta)}
			if p.A != nil {
				pv.A, pv.Role, pv.StatA = &p.A.Seq, clipText(p.A.Role), p.A.Status
			}
			if p.B != nil {
				pv.B, pv.Role, pv.StatB = &p.B.Seq, clipText(p.B.Role), p.B.Status
			}
			r.Pairs = append(r.Pairs, pv)
		}
		out = append(out, r)
	}
	return out
}

func (c *chain) side(s replay.Side, loops []Loop, from ledger.Phase) ReplaySide {
	v := ReplaySide{Dispatches: len(s.Dispatches), GateRounds: s.GateRounds, Seconds: s.Seconds, Acceptance: s.Acceptance}
	for _, l := range loops {
		if l.Session != s.Session.Name || l.Phase < int(from) {
			continue
		}
		for _, r := range l.Rounds {
			v.Findings += r.Fatal + r.Significant + r.Minor
		}
	}
	for _, m := range s.Dispatches {
		if m.Usage != nil {
			if m.Usage.CostUSD != nil {
				v.CostUSD += *m.Usage.CostUSD
			}
			continue
		}
		out := 0
		if m.OutputChars != nil {
			out = *m.OutputChars
		}
		v.EstTokens += (m.InputChars + out) / 4
	}
	return v
}
