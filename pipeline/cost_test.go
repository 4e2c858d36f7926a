package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

func usd(v float64) *float64 { return &v }

// costEvent is an event of type typ carrying data, as Add reads it.
func costEvent(t *testing.T, typ string, data any) Event {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return Event{Type: typ, Data: b}
}

func start(t *testing.T, seq int, phase ledger.Phase, role, task string, chars int) Event {
	return costEvent(t, TypeDispatchStart, DispatchStart{Seq: seq, Role: role, Phase: phase, Template: role, TaskID: task, InputChars: chars})
}

func finish(t *testing.T, seq, chars int, u *Usage) Event {
	return costEvent(t, TypeDispatchFinish, DispatchFinish{Seq: seq, Status: "completed", OutputChars: chars, Usage: u})
}

func TestCostOf(t *testing.T) {
	claude := func(in, out int64, cost float64) *Usage {
		return &Usage{Client: "claude", InputTokens: in, OutputTokens: out, CacheReadTokens: 10, CostUSD: usd(cost)}
	}
	codex := &Usage{Client: "codex", InputTokens: 500, OutputTokens: 50, CacheReadTokens: 100}
	task1 := 1
	cases := []struct {
		name    string
		events  func(t *testing.T) []Event
		total   CostLine
		phase   map[string]CostLine
		role    map[string]CostLine
		task    map[string]CostLine
		clients map[string]ClientCost
		summary string
		tokens  string
	}{
		{
			name:    "nothing dispatched",
			events:  func(t *testing.T) []Event { return nil },
			phase:   map[string]CostLine{},
			role:    map[string]CostLine{},
			task:    map[string]CostLine{},
			clients: map[string]ClientCost{},
			summary: "unknown",
		},
		{
			name: "no usage: all estimated by size, output once finished",
			events: func(t *testing.T) []Event {
				return []Event{start(t, 1, 1, "design-writer", "", 400), finish(t, 1, 801, nil), start(t, 2, 1, "red-team", "", 100)}
			},
			total: CostLine{Dispatches: 2, Estimated: 2, EstInputChars: 500, EstOutputChars: 801, EstInputTokens: 125, EstOutputTokens: 200},
			phase: map[string]CostLine{"1": {Dispatches: 2, Estimated: 2, EstInputChars: 500, EstOutputChars: 801, EstInputTokens: 125, EstOutputTokens: 200}},
			role: map[string]CostLine{
				"design-writer": {Dispatches: 1, Estimated: 1, EstInputChars: 400, EstOutputChars: 801, EstInputTokens: 100, EstOutputTokens: 200},
				"red-team":      {Dispatches: 1, Estimated: 1, EstInputChars: 100, EstInputTokens: 25},
			},
			task:    map[string]CostLine{},
			clients: map[string]ClientCost{},
			summary: "unknown (2 of 2 dispatches estimated by size)",
			tokens:  "~125 in, ~200 out estimated by size",
		},
		{
			name: "reported usage replaces the estimate; prices summed exactly",
			events: func(t *testing.T) []Event {
				return []Event{
					start(t, 1, 1, "design-writer", "", 400), finish(t, 1, 800, claude(100, 20, 0.1)),
					start(t, 2, 1, "red-team", "", 400), finish(t, 2, 80, claude(200, 30, 0.2)),
					start(t, 3, 3, "implementer", "1", 40), finish(t, 3, 8, nil),
				}
			},
			total: CostLine{Dispatches: 3, Reported: 2, Priced: 2, CostUSD: 0.3, InputTokens: 300, OutputTokens: 50, CacheReadTokens: 20,
				Estimated: 1, EstInputChars: 40, EstOutputChars: 8, EstInputTokens: 10, EstOutputTokens: 2},
			phase: map[string]CostLine{
				"1": {Dispatches: 2, Reported: 2, Priced: 2, CostUSD: 0.3, InputTokens: 300, OutputTokens: 50, CacheReadTokens: 20},
				"3": {Dispatches: 1, Estimated: 1, EstInputChars: 40, EstOutputChars: 8, EstInputTokens: 10, EstOutputTokens: 2},
			},
			role: map[string]CostLine{
				"design-writer": {Dispatches: 1, Reported: 1, Priced: 1, CostUSD: 0.1, InputTokens: 100, OutputTokens: 20, CacheReadTokens: 10},
				"red-team":      {Dispatches: 1, Reported: 1, Priced: 1, CostUSD: 0.2, InputTokens: 200, OutputTokens: 30, CacheReadTokens: 10},
				"implementer":   {Dispatches: 1, Estimated: 1, EstInputChars: 40, EstOutputChars: 8, EstInputTokens: 10, EstOutputTokens: 2},
			},
			task:    map[string]CostLine{"1": {Dispatches: 1, Estimated: 1, EstInputChars: 40, EstOutputChars: 8, EstInputTokens: 10, EstOutputTokens: 2}},
			clients: map[string]ClientCost{"claude": {Dispatches: 2, Priced: 2, CostUSD: 0.3, InputTokens: 300, OutputTokens: 50}},
			summary: "$0.30 (claude, 2 of 3 dispatches; 1 estimated by size)",
			tokens:  "300 in (+20 cache read), 50 out reported; ~10 in, ~2 out estimated by size",
		},
		{
			name: "codex gives tokens, never a price; a task DAG's task ids",
			events: func(t *testing.T) []Event {
				return []Event{
					start(t, 1, 3, "implementer", "1a-upper", 40), finish(t, 1, 0, codex),
					start(t, 2, 3, "implementer", "1b-lower", 40), finish(t, 2, 0, claude(1000, 100, 0.004)),
					start(t, 3, 3, "critique", "", 40), finish(t, 3, 0, codex),
				}
			},
			total: CostLine{Dispatches: 3, Reported: 3, Priced: 1, CostUSD: 0.004, InputTokens: 2000, OutputTokens: 200, CacheReadTokens: 210},
			phase: map[string]CostLine{"3": {Dispatches: 3, Reported: 3, Priced: 1, CostUSD: 0.004, InputTokens: 2000, OutputTokens: 200, CacheReadTokens: 210}},
			role: map[string]CostLine{
				"implementer": {Dispatches: 2, Reported: 2, Priced: 1, CostUSD: 0.004, InputTokens: 1500, OutputTokens: 150, CacheReadTokens: 110},
				"critique":    {Dispatches: 1, Reported: 1, InputTokens: 500, OutputTokens: 50, CacheReadTokens: 100},
			},
			task: map[string]CostLine{
				"1a-upper": {Dispatches: 1, Reported: 1, InputTokens: 500, OutputTokens: 50, CacheReadTokens: 100},
				"1b-lower": {Dispatches: 1, Reported: 1, Priced: 1, CostUSD: 0.004, InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 10},
			},
			clients: map[string]ClientCost{
				"claude": {Dispatches: 1, Priced: 1, CostUSD: 0.004, InputTokens: 1000, OutputTokens: 100},
				"codex":  {Dispatches: 2, InputTokens: 1000, OutputTokens: 100},
			},
			summary: "$0.0040 (claude, 1 of 3 dispatches; codex gave tokens but no price for 2)",
			tokens:  "2,000 in (+210 cache read), 200 out reported",
		},
		{
			name: "only codex: the cost is unknown, never a price made up",
			events: func(t *testing.T) []Event {
				return []Event{start(t, 1, 2, "plan-writer", "", 40), finish(t, 1, 0, codex), start(t, 2, 2, "reviewer", "", 4)}
			},
			total: CostLine{Dispatches: 2, Reported: 1, InputTokens: 500, OutputTokens: 50, CacheReadTokens: 100, Estimated: 1, EstInputChars: 4, EstInputTokens: 1},
			phase: map[string]CostLine{"2": {Dispatches: 2, Reported: 1, InputTokens: 500, OutputTokens: 50, CacheReadTokens: 100, Estimated: 1, EstInputChars: 4, EstInputTokens: 1}},
			role: map[string]CostLine{
				"plan-writer": {Dispatches: 1, Reported: 1, InputTokens: 500, OutputTokens: 50, CacheReadTokens: 100},
				"reviewer":    {Dispatches: 1, Estimated: 1, EstInputChars: 4, EstInputTokens: 1},
			},
			task:    map[string]CostLine{},
			clients: map[string]ClientCost{"codex": {Dispatches: 1, InputTokens: 500, OutputTokens: 50}},
			summary: "unknown (codex gave tokens but no price for 1 of 2 dispatches; 1 estimated by size)",
			tokens:  "500 in (+100 cache read), 50 out reported; ~1 in, ~0 out estimated by size",
		},
		{
			name: "two priced clients; a crucible task number; a hook's dispatch",
			events: func(t *testing.T) []Event {
				hook := costEvent(t, TypeDispatchStart, DispatchStart{Seq: 2, Role: "reviewer", Phase: 3, Template: "reviewer", Task: &task1})
				return []Event{
					start(t, 1, 3, "implementer", "1", 0), finish(t, 1, 0, claude(10, 1, 1.25)),
					hook, finish(t, 2, 0, &Usage{Client: "claude-code", InputTokens: 5, OutputTokens: 1, CostUSD: usd(0.75)}),
				}
			},
			total: CostLine{Dispatches: 2, Reported: 2, Priced: 2, CostUSD: 2, InputTokens: 15, OutputTokens: 2, CacheReadTokens: 10},
			phase: map[string]CostLine{"3": {Dispatches: 2, Reported: 2, Priced: 2, CostUSD: 2, InputTokens: 15, OutputTokens: 2, CacheReadTokens: 10}},
			role: map[string]CostLine{
				"implementer": {Dispatches: 1, Reported: 1, Priced: 1, CostUSD: 1.25, InputTokens: 10, OutputTokens: 1, CacheReadTokens: 10},
				"reviewer":    {Dispatches: 1, Reported: 1, Priced: 1, CostUSD: 0.75, InputTokens: 5, OutputTokens: 1},
			},
			task: map[string]CostLine{"1": {Dispatches: 2, Reported: 2, Priced: 2, CostUSD: 2, InputTokens: 15, OutputTokens: 2, CacheReadTokens: 10}},
			clients: map[string]ClientCost{
				"claude":      {Dispatches: 1, Priced: 1, CostUSD: 1.25, InputTokens: 10, OutputTokens: 1},
				"claude-code": {Dispatches: 1, Priced: 1, CostUSD: 0.75, InputTokens: 5, OutputTokens: 1},
			},
			summary: "$2.00 (claude 1 + claude-code 1: 2 of 2 dispatches)",
			tokens:  "15 in (+10 cache read), 2 out reported",
		},
		{
			name: "imported lines: a seq counted once, each final line's output",
			events: func(t *testing.T) []Event {
				return []Event{
					costEvent(t, TypeImportDispatch, ImportDispatchData{Line: `{"seq":1,"role":"plan-writer","phase":"2","task":null,"status":"dispatched","input_chars":400}`}),
					costEvent(t, TypeImportDispatch, ImportDispatchData{Line: `{"seq":1,"role":"plan-writer","phase":"2","task":null,"status":"completed","input_chars":400,"output_chars":80}`}),
					costEvent(t, TypeImportDispatch, ImportDispatchData{Line: `{"seq":2,"role":"implementer","phase":"3","task":2,"status":"completed","input_chars":4,"output_chars":4}`}),
				}
			},
			total: CostLine{Dispatches: 2, Estimated: 2, EstInputChars: 404, EstOutputChars: 84, EstInputTokens: 101, EstOutputTokens: 21},
			phase: map[string]CostLine{
				"2": {Dispatches: 1, Estimated: 1, EstInputChars: 400, EstOutputChars: 80, EstInputTokens: 100, EstOutputTokens: 20},
				"3": {Dispatches: 1, Estimated: 1, EstInputChars: 4, EstOutputChars: 4, EstInputTokens: 1, EstOutputTokens: 1},
			},
			role: map[string]CostLine{
				"plan-writer": {Dispatches: 1, Estimated: 1, EstInputChars: 400, EstOutputChars: 80, EstInputTokens: 100, EstOutputTokens: 20},
				"implementer": {Dispatches: 1, Estimated: 1, EstInputChars: 4, EstOutputChars: 4, EstInputTokens: 1, EstOutputTokens: 1},
			},
			task:    map[string]CostLine{"2": {Dispatches: 1, Estimated: 1, EstInputChars: 4, EstOutputChars: 4, EstInputTokens: 1, EstOutputTokens: 1}},
			clients: map[string]ClientCost{},
			summary: "unknown (2 of 2 dispatches estimated by size)",
			tokens:  "~101 in, ~21 out estimated by size",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := CostOf(tc.events(t))
			if err != nil {
				t.Fatal(err)
			}
			if c.CostLine != tc.total {
				t.Errorf("total\n got %+v\nwant %+v", c.CostLine, tc.total)
			}
			for _, x := range []struct {
				what      string
				got, want map[string]CostLine
			}{{"by phase", c.ByPhase, tc.phase}, {"by role", c.ByRole, tc.role}, {"by task", c.ByTask, tc.task}} {
				if !reflect.DeepEqual(x.got, x.want) {
					t.Errorf("%s\n got %+v\nwant %+v", x.what, x.got, x.want)
				}
			}
			if !reflect.DeepEqual(c.Clients, tc.clients) {
				t.Errorf("clients\n got %+v\nwant %+v", c.Clients, tc.clients)
			}
			if got := c.Summary(); got != tc.summary {
				t.Errorf("summary\n got %q\nwant %q", got, tc.summary)
			}
			if got := c.Tokens(); got != tc.tokens {
				t.Errorf("tokens\n got %q\nwant %q", got, tc.tokens)
			}
		})
	}
}

// TestCostTallyResumes: a tally taken up from its JSON (Service.Cost's
// cache) in the middle of a chain, a dispatch in flight, ends where one
// tally of the whole chain does.
func TestCostTallyResumes(t *testing.T) {
	events := []Event{
		start(t, 1, 1, "design-writer", "", 400), finish(t, 1, 80, &Usage{Client: "claude", InputTokens: 7, CostUSD: usd(0.1)}),
		start(t, 2, 1, "red-team", "", 40), start(t, 3, 1, "red-team", "", 4),
		finish(t, 3, 8, nil), finish(t, 2, 8, &Usage{Client: "claude", InputTokens: 3, CostUSD: usd(0.2)}),
	}
	whole, err := CostOf(events)
	if err != nil {
		t.Fatal(err)
	}
	for cut := range events {
		var a CostTally
		for _, e := range events[:cut] {
			if err := a.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var resumed CostTally
		if err := json.Unmarshal(b, &resumed); err != nil {
			t.Fatal(err)
		}
		for _, e := range events[cut:] {
			if err := resumed.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		if got := resumed.Cost(); !reflect.DeepEqual(got, whole) {
			t.Errorf("cut at %d:\n got %+v\nwant %+v", cut, got, whole)
		}
	}
}

func TestUSDAndThousands(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "$0.00"}, {0.004, "$0.0040"}, {0.00001, "$0.0000"}, {0.01, "$0.01"}, {0.425, "$0.42"}, {12.5, "$12.50"}} {
		if got := USD(tc.v); got != tc.want {
			t.Errorf("USD(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-1234, "-1,234"}} {
		if got := Thousands(tc.n); got != tc.want {
			t.Errorf("Thousands(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestServiceCost: Service.Cost sums the chain, keeps the sum beside the
// refs and brings it up to date from what was appended since; a cache
// that is stale, damaged or of another chain is made again from the chain.
func TestServiceCost(t *testing.T) {
	s := openService(t)
	ctx := context.Background()
	if _, _, err := s.Start(ctx, StartOptions{Goal: "g", Mode: "feature", ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	dispatch := func(u *Usage) {
		t.Helper()
		seq, err := s.StartDispatch(ctx, "p1", DispatchRequest{Role: "red-team", Phase: 1, Prompt: []byte("12345678")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FinishDispatch(ctx, "p1", seq, FinishRequest{Status: "completed", Usage: u}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(dispatches, priced int, cost float64, estimated int) {
		t.Helper()
		c, err := s.Cost(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		if c.Dispatches != dispatches || c.Priced != priced || c.CostUSD != cost || c.Estimated != estimated {
			t.Fatalf("cost %+v, want %d dispatches, %d priced, $%v, %d estimated", c.CostLine, dispatches, priced, cost, estimated)
		}
	}
	want(0, 0, 0, 0)
	dispatch(&Usage{Client: "claude", CostUSD: usd(0.25)})
	want(1, 1, 0.25, 0)
	dispatch(nil)
	dispatch(&Usage{Client: "claude", CostUSD: usd(0.5)})
	want(3, 2, 0.75, 1)
	path := s.Store.CacheFile("p1", "cost")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no cache kept: %v", err)
	}
	var c costCache
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	// The cache is read, not the chain: what it says of the commits it
	// covers stands, and what came since is added to it.
	c.Tally.Total.NanoUSD += 1e9
	if b, err := json.Marshal(c); err != nil || os.WriteFile(path, b, 0o644) != nil {
		t.Fatal(err)
	}
	dispatch(nil)
	want(4, 2, 1.75, 2)
	// A cache that names a commit the chain does not hold is not trusted.
	c.Tip = strings.Repeat("1", len(c.Tip))
	if b, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want(4, 2, 0.75, 2)
	if err := os.WriteFile(path, []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	dispatch(&Usage{Client: "codex"})
	want(5, 2, 0.75, 2)
}
