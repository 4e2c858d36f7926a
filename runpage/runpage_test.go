package runpage

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestPageStructure renders the fixture and checks the page against its
// model: every section, one bar per dispatch, one point per round, the
// lanes, the edges, nothing loaded and nothing run.
func TestPageStructure(t *testing.T) {
	f := newFixture(t, 0, "")
	m, page := f.page(t)
	html := string(page)
	for _, id := range Sections {
		if !strings.Contains(html, `<section id="`+id+`">`) {
			t.Errorf("no section %q", id)
		}
	}
	if got, want := strings.Count(html, `<rect class="bar `), m.Pipeline.Dispatches; got != want || want != 13 {
		t.Errorf("%d bars, want %d (13 dispatches)", got, want)
	}
	rounds := 0
	for _, l := range m.Gates.Loops {
		rounds += len(l.Rounds)
	}
	if got := strings.Count(html, `<circle class="pt"`); got != rounds || rounds != 6 {
		t.Errorf("%d points, want %d (6 rounds: 3 + 2 + 1)", got, rounds)
	}
	loops := fmt.Sprint(m.Gates.Loops[0].Session, m.Gates.Loops[0].Verdict, len(m.Gates.Loops[0].Rounds))
	if loops != f.id+"PASS3" {
		t.Errorf("first loop: %s", loops)
	}
	if l := m.Gates.Loops[1]; l.Verdict != "SUSTAINED_REGRESSION" || l.Task != "2" || l.Rounds[1].Score != 4 {
		t.Errorf("task review loop: %+v", l)
	}
	// The two implementers at once are on two lanes; the retry's bar says so.
	lanes := map[string]bool{}
	for _, l := range m.Timeline.Lanes {
		lanes[l.Name()] = true
	}
	if !lanes["implementer"] || !lanes["implementer #2"] {
		t.Errorf("lanes: %v", lanes)
	}
	for _, want := range []string{`class="bar s-interrupted recovered"`, `class="bar s-completed retry"`, `class="bar s-completed mutated"`,
		`class="mark m-escalation"`, `class="mark m-approval"`, `class="mark m-replay"`, `class="mark m-phase"`, `class="edge"`} {
		if !strings.Contains(html, want) {
			t.Errorf("no %s", want)
		}
	}
	if got := strings.Count(html, `class="edge"`); got != 2 {
		t.Errorf("%d edges, want 2", got)
	}
	if len(m.Cost.Preserved) != 1 || m.Cost.Preserved[0].Session != "replay-1" {
		t.Errorf("preserved: %+v", m.Cost.Preserved)
	}
	if m.Cost.Total.Dispatches != 13 {
		t.Errorf("cost: %d dispatches", m.Cost.Total.Dispatches)
	}
	checkInert(t, html)
}

// checkInert fails on anything that would run or load.
func checkInert(t *testing.T, html string) {
	t.Helper()
	if !strings.Contains(html, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src data:">`) {
		t.Error("no CSP meta tag")
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)<img`), regexp.MustCompile(`(?i)<[a-z][^<>]*\ssrc=`),
		regexp.MustCompile(`(?i)href="(https?:|//)`), regexp.MustCompile(`(?i)<a href="http`), regexp.MustCompile(`(?i)<[a-z][^<>]*\son[a-z]+=`),
		regexp.MustCompile(`(?i)<link`), regexp.MustCompile(`(?i)@import`), regexp.MustCompile(`(?i)url\(`),
	} {
		if loc := bad.FindStringIndex(html); loc != nil {
			t.Errorf("the page has %q: %q", bad, html[max(loc[0]-80, 0):min(loc[1]+80, len(html))])
		}
	}
	if strings.Count(html, "</svg>") != strings.Count(html, "<svg ") {
		t.Errorf("%d <svg> but %d </svg>", strings.Count(html, "<svg "), strings.Count(html, "</svg>"))
	}
}

// TestHostileText: an agent's <script>, </svg> and a 1 MB title stay text,
// bounded, in the page and in the model.
func TestHostileText(t *testing.T) {
	// 1 MB (the agent's report stays under report.MaxSize, 1 MiB).
	big := strings.Repeat("A", 1_000_000-len("<script>zzend</script>")) + "<script>zzend</script>"
	f := newFixture(t, 0, big)
	m, page := f.page(t)
	html := string(page)
	checkInert(t, html)
	if !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the agent's <script> is not shown escaped")
	}
	if !strings.Contains(html, "&lt;/svg&gt;&lt;img src=&#34;http://example.invalid/x.png&#34;&gt;") {
		t.Error("the agent's </svg> is not shown escaped")
	}
	if strings.Contains(html, "zzend") {
		t.Error("the 1 MB title was not cut")
	}
	title := m.Gates.Loops[0].Rounds[0].Findings[0].Title
	if len(title) > MaxText+40 || !strings.HasSuffix(title, fmt.Sprintf(" … [%d bytes more]", len(big)-MaxText)) {
		t.Errorf("title of %d bytes ends %q", len(title), title[max(len(title)-40, 0):])
	}
	if len(page) > 400<<10 {
		t.Errorf("the page is %d bytes: the title was not bounded", len(page))
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 200<<10 {
		t.Errorf("the model is %d bytes", len(b))
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 10, "0123456789"},
		{"0123456789ab", 10, "0123456789 … [2 bytes more]"},
		{"ééé", 3, "é … [4 bytes more]"}, // not in the middle of a rune
		{"a\xffb", 10, "a\uFFFDb"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestAssignSlots(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []Interval
		want []int
	}{
		{"serial", []Interval{{"a", 0, 1}, {"a", 2, 3}, {"a", 4, 5}}, []int{1, 1, 1}},
		{"two at once", []Interval{{"a", 0, 5}, {"a", 1, 3}, {"a", 4, 6}}, []int{1, 2, 2}},
		{"roles apart", []Interval{{"a", 0, 5}, {"b", 1, 3}}, []int{1, 1}},
		{"touching ends share no lane", []Interval{{"a", 0, 2}, {"a", 2, 3}}, []int{1, 2}},
		{"three at once", []Interval{{"a", 0, 9}, {"a", 1, 9}, {"a", 2, 9}, {"a", 10, 11}}, []int{1, 2, 3, 1}},
		{"out of order", []Interval{{"a", 4, 6}, {"a", 0, 5}}, []int{2, 1}},
	} {
		if got := AssignSlots(c.in); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAxis(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Axis
		rank int
		t    int64
		want float64
	}{
		{"no time: rank alone, start", Axis{MaxRank: 10}, 0, 0, 0},
		{"no time: rank alone, middle", Axis{MaxRank: 10}, 5, 0, PlotWidth / 2},
		{"no time: rank alone, end", Axis{MaxRank: 10}, 10, 0, PlotWidth},
		{"half rank, half time", Axis{MaxRank: 10, T0: 100, Span: 100}, 10, 100, PlotWidth / 2},
		{"time alone moves it", Axis{MaxRank: 10, T0: 100, Span: 100}, 0, 200, PlotWidth / 2},
		{"both ends", Axis{MaxRank: 10, T0: 100, Span: 100}, 10, 200, PlotWidth},
		{"clamped", Axis{MaxRank: 10, T0: 100, Span: 100}, 20, 900, PlotWidth},
		{"one event", Axis{}, 0, 0, 0},
	} {
		if got := c.a.X(c.rank, c.t); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLayoutTimeline(t *testing.T) {
	tl := Timeline{Events: 5, Start: "2030-01-01T00:00:00Z", End: "2030-01-01T00:00:10Z",
		Lanes: []Lane{{"red-team", 1}, {"red-team", 2}},
		Bars: []Bar{
			{Seq: 1, Lane: 0, Status: "completed", Started: "2030-01-01T00:00:00Z", Finished: "2030-01-01T00:00:10Z", StartRank: 0, EndRank: 4},
			{Seq: 2, Lane: 1, Status: "failed", Started: "2030-01-01T00:00:05Z", Finished: "2030-01-01T00:00:05Z", StartRank: 2, EndRank: 2},
		},
		Marks: []Mark{{Kind: "phase", Rank: 2, Time: "2030-01-01T00:00:05Z"}}}
	box := LayoutTimeline(tl)
	want := []BarBox{
		{X: LabelWidth, Y: AxisHeight + 1, W: PlotWidth, H: LaneHeight - 2},
		{X: LabelWidth + PlotWidth/2, Y: AxisHeight + LaneHeight + LaneGap + 1, W: MinBar, H: LaneHeight - 2},
	}
	for i, w := range want {
		g := box.Bars[i]
		if g.X != w.X || g.Y != w.Y || g.W != w.W || g.H != w.H {
			t.Errorf("bar %d: %v,%v %vx%v, want %v,%v %vx%v", i, g.X, g.Y, g.W, g.H, w.X, w.Y, w.W, w.H)
		}
	}
	if box.Bars[1].Class != "bar s-failed" {
		t.Errorf("class %q", box.Bars[1].Class)
	}
	if m := box.Marks[0]; m.X != LabelWidth+PlotWidth/2 || m.Class != "mark m-phase" {
		t.Errorf("mark %+v", m)
	}
	if box.Height != float64(AxisHeight+2*(LaneHeight+LaneGap)+4) || len(box.Lanes) != 2 || box.Lanes[1].Name != "red-team #2" {
		t.Errorf("height %v, lanes %+v", box.Height, box.Lanes)
	}
}

func TestLayoutChart(t *testing.T) {
	for _, c := range []struct {
		name   string
		scores []int
		want   string
	}{
		{"one round sits in the middle", []int{0}, "120,76"},
		{"falling to zero", []int{4, 1, 0}, "14,14 120,60.5 226,76"},
		{"flat", []int{2, 2}, "14,14 226,14"},
	} {
		var rounds []Round
		for i, s := range c.scores {
			rounds = append(rounds, Round{Round: i + 1, Score: s})
		}
		got := LayoutChart(rounds)
		if got.Line != c.want || len(got.Points) != len(c.scores) {
			t.Errorf("%s: %q (%d points), want %q", c.name, got.Line, len(got.Points), c.want)
		}
	}
}

func TestLayoutGraph(t *testing.T) {
	g := LayoutGraph([]TaskNode{{ID: "1a", Level: 1}, {ID: "1b", Level: 1}, {ID: "2", Level: 2}},
		[][2]string{{"1a", "2"}, {"1b", "2"}, {"2", "nosuch"}})
	if len(g.Nodes) != 3 || len(g.Edges) != 2 {
		t.Fatalf("%d nodes, %d edges", len(g.Nodes), len(g.Edges))
	}
	if n := g.Nodes[1]; n.X != GraphPad || n.Y != GraphPad+NodeHeight+RowGap {
		t.Errorf("1b at %v,%v", n.X, n.Y)
	}
	if n := g.Nodes[2]; n.X != GraphPad+NodeWidth+ColumnGap || n.Y != GraphPad {
		t.Errorf("2 at %v,%v", n.X, n.Y)
	}
	if e := g.Edges[1]; e != (EdgeBox{X1: GraphPad + NodeWidth, Y1: GraphPad + NodeHeight + RowGap + NodeHeight/2, X2: GraphPad + NodeWidth + ColumnGap, Y2: GraphPad + NodeHeight/2,
		Arrow: "220,25 216.9,32.2 212.4,26.8"}) {
		t.Errorf("edge %+v", e)
	}
	// Straight right: the head's base is 7 back, 3.5 either side.
	if got := arrowhead(0, 10, 100, 10, 7); got != "100,10 93,13.5 93,6.5" {
		t.Errorf("arrowhead %q", got)
	}
	if got := arrowhead(5, 5, 5, 5, 7); got != "" {
		t.Errorf("arrowhead of nothing %q", got)
	}
	if g.Width != 2*GraphPad+2*NodeWidth+ColumnGap || g.Height != 2*GraphPad+2*NodeHeight+RowGap {
		t.Errorf("%vx%v", g.Width, g.Height)
	}
}

// TestPreserved: a replay keeps the phases before its boundary as the
// newest run before it left them, not the runs that one replaced.
func TestPreserved(t *testing.T) {
	var events []pipeline.Event
	add := func(typ string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, pipeline.Event{Seq: int64(len(events) + 1), Time: "2030-01-01T00:00:00Z", Type: typ, Data: b})
	}
	seq := 0
	dispatch := func(p ledger.Phase, session string) {
		seq++
		add(pipeline.TypeDispatchStart, pipeline.DispatchStart{Seq: seq, Role: "r", Phase: p, Template: "r", ReplaySession: session, InputChars: 400})
		add(pipeline.TypeDispatchFinish, pipeline.DispatchFinish{Seq: seq, Status: "completed", DurationS: 10})
	}
	dispatch(1, "")
	dispatch(2, "")
	dispatch(3, "")
	add(pipeline.TypeReplay, pipeline.ReplayData{Session: "replay-1", From: 1})
	dispatch(1, "replay-1")
	dispatch(2, "replay-1")
	dispatch(3, "replay-1")
	add(pipeline.TypeReplay, pipeline.ReplayData{Session: "replay-2", From: 3})
	dispatch(3, "replay-2")
	m, err := Build(Input{ID: "p", State: &pipeline.State{ID: "p"}, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(m.Cost.Preserved)
	if want := "[{replay-1 1 0 0 0 0} {replay-2 3 2 20 0 200}]"; got != want {
		t.Errorf("preserved %s, want %s", got, want)
	}
	if len(m.Sessions) != 3 || m.Timeline.Bars[6].Session != "replay-2" {
		t.Errorf("sessions %v", m.Sessions)
	}
}
