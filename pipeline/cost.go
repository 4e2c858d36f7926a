package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/refs"
)

// Cost is what a pipeline's dispatches cost: the tokens and price their
// agents' clients reported (Usage), and for the dispatches whose agent
// reported nothing (a command agent, an import, one still in flight) an
// estimate by size, characters / 4, as crucible's metrics make it. A price
// is never estimated: only what a client gave is summed.
type Cost struct {
	CostLine
	// Clients are the reported dispatches by client (claude, codex, ...).
	Clients map[string]ClientCost `json:"clients"`
	// The same by phase ("1" to "4"), by role, and by task (a plan's task
	// id, or a task DAG's): a dispatch without a task is in none of them.
	ByPhase map[string]CostLine `json:"by_phase"`
	ByRole  map[string]CostLine `json:"by_role"`
	ByTask  map[string]CostLine `json:"by_task"`
}

// CostLine is the cost of some of a pipeline's dispatches.
type CostLine struct {
	Dispatches int `json:"dispatches"`
	// Reported dispatches are those whose client reported usage; Priced,
	// of those, the ones it gave a price for. CostUSD sums those prices:
	// it is the cost of Priced dispatches, not of all of them.
	Reported            int     `json:"reported"`
	Priced              int     `json:"priced"`
	CostUSD             float64 `json:"cost_usd"`
	InputTokens         int64   `json:"input_tokens"`
	OutputTokens        int64   `json:"output_tokens"`
	CacheReadTokens     int64   `json:"cache_read_tokens"`
	CacheCreationTokens int64   `json:"cache_creation_tokens"`
	// Estimated dispatches reported nothing: their tokens are estimated
	// from the size of their prompt and output (characters / 4).
	Estimated       int `json:"estimated"`
	EstInputChars   int `json:"est_input_chars"`
	EstOutputChars  int `json:"est_output_chars"`
	EstInputTokens  int `json:"est_input_tokens"`
	EstOutputTokens int `json:"est_output_tokens"`
}

// ClientCost is what one client reported.
type ClientCost struct {
	Dispatches   int     `json:"dispatches"`
	Priced       int     `json:"priced"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

// A build or task run that reaches its cost cap stops with an escalation
// whose choice starts with CostCapReached; going on past it, under a
// higher cap, records a decision of type DecisionBudget, which ends the
// RED health the escalation began.
const (
	CostCapReached = "cost cap reached"
	DecisionBudget = "budget"
)

// CostCapEscalation is what a stop at the cost cap records with the stop
// itself (a step's end, a task run's): an escalation, which turns health
// RED with the hint (suggestion) as its action. at says where ("before
// design-gate"), reason why.
func CostCapEscalation(at, reason, suggestion string) Draft {
	return Draft{Type: TypeDecision, Data: DecisionData{Type: "escalation",
		Choice: CostCapReached + " " + at, Reason: reason, Suggestion: suggestion}}
}

// costCapHealth is the reason of the health a stop at the cost cap gives.
const costCapHealth = "escalation pending: " + CostCapReached

// StoppedAtCostCap reports whether st's pipeline stands stopped at its
// cost cap: its health is the RED of that escalation.
func StoppedAtCostCap(st *State) bool {
	h := st.View.Health
	return h.Level == Red && strings.HasPrefix(h.Reason, costCapHealth)
}

// USD is an amount of US dollars as the tool prints it: cents, or four
// decimals under a cent, so that a small cost is not shown as nothing.
func USD(v float64) string {
	if v > 0 && v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// Unpriced are the clients that reported tokens without a price for some
// dispatches, with how many: codex reports tokens only.
func (c *Cost) Unpriced() map[string]int {
	out := map[string]int{}
	for name, cl := range c.Clients {
		if n := cl.Dispatches - cl.Priced; n > 0 {
			out[name] = n
		}
	}
	return out
}

// Summary says in one line what the pipeline cost and how much of it is
// known: "$0.42 (claude, 12 of 14 dispatches; 2 estimated by size)". A
// client that gave tokens but no price is named as such; with no price
// at all the cost is "unknown".
func (c *Cost) Summary() string {
	var priced []string
	for _, name := range slices.Sorted(maps.Keys(c.Clients)) {
		if n := c.Clients[name].Priced; n > 0 {
			priced = append(priced, fmt.Sprintf("%s %d", name, n))
		}
	}
	var parts []string
	head := "unknown"
	switch {
	case len(priced) == 1:
		head = USD(c.CostUSD)
		name, _, _ := strings.Cut(priced[0], " ")
		parts = append(parts, fmt.Sprintf("%s, %d of %d dispatches", name, c.Priced, c.Dispatches))
	case len(priced) > 1:
		head = USD(c.CostUSD)
		parts = append(parts, fmt.Sprintf("%s: %d of %d dispatches", strings.Join(priced, " + "), c.Priced, c.Dispatches))
	}
	unpriced := c.Unpriced()
	for _, name := range slices.Sorted(maps.Keys(unpriced)) {
		s := fmt.Sprintf("%s gave tokens but no price for %d", name, unpriced[name])
		if len(priced) == 0 && len(parts) == 0 {
			s += fmt.Sprintf(" of %d dispatches", c.Dispatches)
		}
		parts = append(parts, s)
	}
	if c.Estimated > 0 {
		s := fmt.Sprintf("%d estimated by size", c.Estimated)
		if len(parts) == 0 {
			s = fmt.Sprintf("%d of %d dispatches estimated by size", c.Estimated, c.Dispatches)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return head
	}
	return head + " (" + strings.Join(parts, "; ") + ")"
}

// Tokens says in one line the tokens reported and those estimated:
// "12,345 in (+1,000 cache read, +200 cache write), 2,345 out reported;
// ~150 in, ~40 out estimated by size".
func (l *CostLine) Tokens() string {
	var parts []string
	if l.Reported > 0 {
		s := Thousands(l.InputTokens) + " in"
		var cache []string
		if l.CacheReadTokens > 0 {
			cache = append(cache, "+"+Thousands(l.CacheReadTokens)+" cache read")
		}
		if l.CacheCreationTokens > 0 {
			cache = append(cache, "+"+Thousands(l.CacheCreationTokens)+" cache write")
		}
		if len(cache) > 0 {
			s += " (" + strings.Join(cache, ", ") + ")"
		}
		parts = append(parts, s+", "+Thousands(l.OutputTokens)+" out reported")
	}
	if l.Estimated > 0 {
		parts = append(parts, fmt.Sprintf("~%s in, ~%s out estimated by size", Thousands(int64(l.EstInputTokens)), Thousands(int64(l.EstOutputTokens))))
	}
	return strings.Join(parts, "; ")
}

// Thousands is n with commas between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// CostTally sums a chain's dispatches event by event (Add), so that the
// sum of a long chain is brought up to date from the events appended since
// rather than made again. It keeps the dispatches in flight, whose finish
// says whether their client reported usage. Its JSON is what Service.Cost
// caches.
type CostTally struct {
	Total   costAcc             `json:"total"`
	Clients map[string]costAcc  `json:"clients,omitempty"`
	ByPhase map[string]costAcc  `json:"by_phase,omitempty"`
	ByRole  map[string]costAcc  `json:"by_role,omitempty"`
	ByTask  map[string]costAcc  `json:"by_task,omitempty"`
	Open    map[string]costOpen `json:"open,omitempty"` // by seq: dispatches in flight
	Last    int                 `json:"last"`           // the highest dispatch seq seen
}

// costAcc is a CostLine as it is summed: the price in nano-dollars, so
// that a sum does not depend on the order it was made in.
type costAcc struct {
	Dispatches          int   `json:"n,omitempty"`
	Reported            int   `json:"reported,omitempty"`
	Priced              int   `json:"priced,omitempty"`
	NanoUSD             int64 `json:"nano_usd,omitempty"`
	InputTokens         int64 `json:"in,omitempty"`
	OutputTokens        int64 `json:"out,omitempty"`
	CacheReadTokens     int64 `json:"cache_read,omitempty"`
	CacheCreationTokens int64 `json:"cache_creation,omitempty"`
	Estimated           int   `json:"estimated,omitempty"`
	EstInputChars       int   `json:"est_in_chars,omitempty"`
	EstOutputChars      int   `json:"est_out_chars,omitempty"`
}

// costOpen is a dispatch in flight: where its cost goes, and the size of
// its prompt, estimated until its client reports.
type costOpen struct {
	Phase      string `json:"phase"`
	Role       string `json:"role"`
	Task       string `json:"task,omitempty"`
	InputChars int    `json:"input_chars"`
}

// NanoUSD is a price in nano-dollars, rounded.
func NanoUSD(usd float64) int64 {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return 0
	}
	return int64(math.Round(usd * 1e9))
}

// Add brings t past event e. Events that are not dispatches are ignored.
func (t *CostTally) Add(e Event) error {
	switch e.Type {
	case TypeDispatchStart:
		var d DispatchStart
		if err := DecodeData(e, &d); err != nil {
			return err
		}
		task := d.TaskID
		if task == "" && d.Task != nil {
			task = strconv.Itoa(*d.Task)
		}
		o := costOpen{Phase: strconv.Itoa(int(d.Phase)), Role: d.Role, Task: task, InputChars: d.InputChars}
		t.each(o, func(a *costAcc) { a.Dispatches++; a.Estimated++; a.EstInputChars += o.InputChars })
		if t.Open == nil {
			t.Open = map[string]costOpen{}
		}
		t.Open[strconv.Itoa(d.Seq)] = o
		t.Last = max(t.Last, d.Seq)
	case TypeDispatchFinish:
		var d DispatchFinish
		if err := DecodeData(e, &d); err != nil {
			return err
		}
		key := strconv.Itoa(d.Seq)
		o, ok := t.Open[key]
		if !ok {
			return nil // a finish whose start this tally has not seen (a merge of clones' chains): nothing to move
		}
		delete(t.Open, key)
		if len(t.Open) == 0 {
			t.Open = nil
		}
		u := d.Usage
		if u == nil {
			t.each(o, func(a *costAcc) { a.EstOutputChars += d.OutputChars })
			return nil
		}
		t.each(o, func(a *costAcc) { a.Estimated--; a.EstInputChars -= o.InputChars; a.addUsage(u) })
		if t.Clients == nil {
			t.Clients = map[string]costAcc{}
		}
		c := t.Clients[u.Client]
		c.Dispatches++
		c.addUsage(u)
		t.Clients[u.Client] = c
	case TypeImportDispatch:
		// As the view counts them: a line with a seq not seen before is a
		// dispatch; a final line's output is added.
		var d ImportDispatchData
		if err := DecodeData(e, &d); err != nil {
			return err
		}
		l, err := ImportedLine(d.Line)
		if err != nil {
			return err
		}
		o := costOpen{Phase: l.Phase, Role: l.Role}
		if l.Task != nil {
			o.Task = strconv.Itoa(*l.Task)
		}
		if l.Seq > t.Last {
			t.Last = l.Seq
			t.each(o, func(a *costAcc) {
				a.Dispatches++
				a.Estimated++
				a.EstInputChars += d.InputChars(l)
			})
		}
		if l.Status != "dispatched" {
			t.each(o, func(a *costAcc) { a.EstOutputChars += d.OutputSize(l) })
		}
	}
	return nil
}

// addUsage adds what a client reported.
func (a *costAcc) addUsage(u *Usage) {
	a.Reported++
	a.InputTokens += u.InputTokens
	a.OutputTokens += u.OutputTokens
	a.CacheReadTokens += u.CacheReadTokens
	a.CacheCreationTokens += u.CacheCreationTokens
	if u.CostUSD != nil {
		a.Priced++
		a.NanoUSD += NanoUSD(*u.CostUSD)
	}
}

// each applies f to the total and to the lines of o's phase, role and task.
func (t *CostTally) each(o costOpen, f func(*costAcc)) {
	f(&t.Total)
	add := func(m *map[string]costAcc, key string) {
		if key == "" {
			return
		}
		if *m == nil {
			*m = map[string]costAcc{}
		}
		a := (*m)[key]
		f(&a)
		(*m)[key] = a
	}
	add(&t.ByPhase, o.Phase)
	add(&t.ByRole, o.Role)
	add(&t.ByTask, o.Task)
}

// Cost is what t has summed.
func (t *CostTally) Cost() Cost {
	lines := func(m map[string]costAcc) map[string]CostLine {
		out := make(map[string]CostLine, len(m))
		for k, a := range m {
			out[k] = a.line()
		}
		return out
	}
	c := Cost{CostLine: t.Total.line(), Clients: map[string]ClientCost{},
		ByPhase: lines(t.ByPhase), ByRole: lines(t.ByRole), ByTask: lines(t.ByTask)}
	for k, a := range t.Clients {
		c.Clients[k] = ClientCost{Dispatches: a.Dispatches, Priced: a.Priced, CostUSD: float64(a.NanoUSD) / 1e9,
			InputTokens: a.InputTokens, OutputTokens: a.OutputTokens}
	}
	return c
}

func (a costAcc) line() CostLine {
	return CostLine{Dispatches: a.Dispatches, Reported: a.Reported, Priced: a.Priced, CostUSD: float64(a.NanoUSD) / 1e9,
		InputTokens: a.InputTokens, OutputTokens: a.OutputTokens, CacheReadTokens: a.CacheReadTokens,
		CacheCreationTokens: a.CacheCreationTokens, Estimated: a.Estimated, EstInputChars: a.EstInputChars,
		EstOutputChars: a.EstOutputChars, EstInputTokens: a.EstInputChars / 4, EstOutputTokens: a.EstOutputChars / 4}
}

// CostOf is the cost of a chain's events, oldest first.
func CostOf(events []Event) (Cost, error) {
	var t CostTally
	for _, e := range events {
		if err := t.Add(e); err != nil {
			return Cost{}, err
		}
	}
	return t.Cost(), nil
}

// costCache is the file Service.Cost keeps a pipeline's tally in.
type costCache struct {
	Format int       `json:"format"`
	Tip    string    `json:"tip"` // the chain commit the tally is up to
	Tally  CostTally `json:"tally"`
}

const costCacheFormat = 1

// Cost is what pipeline id's dispatches cost, from its whole chain. It
// keeps the sum in a local cache beside the refs (<id>.cost), and brings
// it up to date from the events appended since: status, metrics and an
// engine checking its cost cap before each dispatch read only what is
// new. A cache that does not name a commit of the chain's first-parent
// line is made again from the whole chain.
func (s *Service) Cost(ctx context.Context, id string) (Cost, error) {
	if err := refs.ValidateID(id); err != nil {
		return Cost{}, err
	}
	path := s.Store.CacheFile(id, "cost")
	var c costCache
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &c) != nil || c.Format != costCacheFormat || !s.Repo.ValidOID(c.Tip) {
		c = costCache{}
	}
	tip, blobs, found, err := s.Store.EventsSince(ctx, id, c.Tip)
	if err != nil {
		return Cost{}, err
	}
	if tip == c.Tip {
		return c.Tally.Cost(), nil
	}
	if !found {
		c = costCache{}
		var events []Event
		if events, tip, err = s.ChainEventsAt(ctx, id); err != nil {
			return Cost{}, err
		}
		for _, e := range events {
			if err := c.Tally.Add(e); err != nil {
				return Cost{}, err
			}
		}
	} else {
		for i := len(blobs) - 1; i >= 0; i-- {
			events, err := DecodeEvents(blobs[i])
			if err != nil {
				return Cost{}, err
			}
			for _, e := range events {
				if err := c.Tally.Add(e); err != nil {
					return Cost{}, err
				}
			}
		}
	}
	c.Format, c.Tip = costCacheFormat, tip
	if b, err := json.Marshal(c); err == nil {
		fsutil.WriteAtomic(path, b, 0o644) // best effort: a lost cache costs a read of the chain
	}
	return c.Tally.Cost(), nil
}
