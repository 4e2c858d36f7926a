package runpage

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The timeline's geometry, in the SVG's user units.
const (
	LabelWidth = 170 // the lanes' names
	PlotWidth  = 960 // the bars' area
	LaneHeight = 18
	LaneGap    = 4
	AxisHeight = 22
	MinBar     = 3 // the narrowest bar: an instant dispatch stays visible
)

// TimelineBox is the timeline drawn: lanes, one bar per dispatch, marks.
type TimelineBox struct {
	Width, Height float64
	Lanes         []LaneBox
	Bars          []BarBox
	Marks         []MarkBox
	Ticks         []Tick
}

// LaneBox is a lane's label and band.
type LaneBox struct {
	Y    float64
	Name string
}

// BarBox is a dispatch's bar.
type BarBox struct {
	X, Y, W, H float64
	Seq        int
	Class      string
	Title      string
}

// MarkBox is a vertical mark across the lanes.
type MarkBox struct {
	X, Y1, Y2 float64
	Class     string
	Title     string
}

// Tick is a label of the axis.
type Tick struct {
	X      float64
	Label  string
	Anchor string // start, middle, end: the ends' labels stay inside
}

// Axis places a point of the chain on the x axis: half by its rank among
// the chain's events, half by its time, so that order always shows (an
// instant dispatch, events of the same second) and long dispatches look
// long. With no time elapsed, the rank alone.
type Axis struct {
	MaxRank int
	T0      int64
	Span    int64
}

// X is where rank at time t is drawn, from 0 to PlotWidth.
func (a Axis) X(rank int, t int64) float64 {
	r := 0.0
	if a.MaxRank > 0 {
		r = float64(min(max(rank, 0), a.MaxRank)) / float64(a.MaxRank)
	}
	if a.Span <= 0 {
		return round1(r * PlotWidth)
	}
	f := float64(min(max(t-a.T0, 0), a.Span)) / float64(a.Span)
	return round1((r*0.5 + f*0.5) * PlotWidth)
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// LayoutTimeline draws t.
func LayoutTimeline(t Timeline) TimelineBox {
	a := Axis{MaxRank: max(t.Events-1, 0), T0: unix(t.Start)}
	if end := unix(t.End); end > a.T0 {
		a.Span = end - a.T0
	}
	laneY := func(i int) float64 { return float64(AxisHeight + i*(LaneHeight+LaneGap)) }
	box := TimelineBox{Width: LabelWidth + PlotWidth + 10, Height: laneY(len(t.Lanes)) + 4}
	for i, l := range t.Lanes {
		box.Lanes = append(box.Lanes, LaneBox{Y: laneY(i), Name: l.Name()})
	}
	for _, b := range t.Bars {
		end := unix(b.Finished)
		if end == 0 {
			end = a.T0 + a.Span
		}
		x1, x2 := a.X(b.StartRank, unix(b.Started)), a.X(b.EndRank, end)
		w := max(round1(x2-x1), MinBar)
		box.Bars = append(box.Bars, BarBox{X: LabelWidth + x1, Y: laneY(b.Lane) + 1, W: w, H: LaneHeight - 2,
			Seq: b.Seq, Class: barClass(b), Title: barTitle(b)})
	}
	for _, m := range t.Marks {
		box.Marks = append(box.Marks, MarkBox{X: LabelWidth + a.X(m.Rank, unix(m.Time)), Y1: AxisHeight - 6, Y2: box.Height,
			Class: "mark m-" + token(m.Kind), Title: m.Time + " " + m.Label})
	}
	last := ""
	for i := 0; i <= 4; i++ {
		rank := a.MaxRank * i / 4
		at := a.T0 + a.Span*int64(i)/4
		label := fmt.Sprintf("event %d", rank+1)
		if a.Span > 0 {
			label = time.Unix(at, 0).UTC().Format("15:04:05")
		}
		if label == last && i < 4 {
			continue // the same second: one label says it
		}
		last = label
		anchor := map[int]string{0: "start", 4: "end"}[i]
		if anchor == "" {
			anchor = "middle"
		}
		box.Ticks = append(box.Ticks, Tick{X: LabelWidth + a.X(rank, at), Label: label, Anchor: anchor})
	}
	return box
}

// token keeps the letters, digits and '-' of s: a class name from data.
func token(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, strings.ToLower(s))
}

func barClass(b Bar) string {
	c := "bar s-" + token(b.Status)
	if b.RetryOf != nil {
		c += " retry"
	}
	if b.Recovered != "" {
		c += " recovered"
	}
	if b.Mutation != "" {
		c += " mutated"
	}
	return c
}

func barTitle(b Bar) string {
	var s strings.Builder
	fmt.Fprintf(&s, "#%d %s · Phase %d", b.Seq, b.Role, b.Phase)
	if b.Step != "" {
		fmt.Fprintf(&s, " · %s", b.Step)
	}
	if b.Task != "" {
		fmt.Fprintf(&s, " · task %s", b.Task)
	}
	if b.Round > 0 {
		fmt.Fprintf(&s, " · round %d", b.Round)
	}
	fmt.Fprintf(&s, " · %s · %s · %s", b.Status, seconds(b.DurationS), b.Session)
	if b.RetryOf != nil {
		fmt.Fprintf(&s, " · retry of #%d", *b.RetryOf)
		if b.Retry != "" {
			fmt.Fprintf(&s, " (%s)", b.Retry)
		}
	}
	if b.Recovered != "" {
		fmt.Fprintf(&s, " · settled by a resume: %s", b.Recovered)
	}
	if b.Mutation != "" {
		fmt.Fprintf(&s, " · mutation %s", b.Mutation)
	}
	if b.Summary != "" {
		fmt.Fprintf(&s, " · %s", b.Summary)
	}
	return s.String()
}

// seconds is a duration in words: 0s, 42s, 3m 5s, 1h 2m.
func seconds(s int) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
}

// The score chart's geometry.
const (
	ChartWidth  = 240
	ChartHeight = 90
	ChartPad    = 14
)

// ChartBox is a loop's score trajectory: a point per round.
type ChartBox struct {
	Points []PointBox
	Line   string // the polyline's points
	Max    int
}

// PointBox is a round's point.
type PointBox struct {
	X, Y  float64
	Title string
}

// LayoutChart draws the score of each round, the first at the left.
func LayoutChart(rounds []Round) ChartBox {
	c := ChartBox{Max: 1}
	for _, r := range rounds {
		c.Max = max(c.Max, r.Score)
	}
	w, h := float64(ChartWidth-2*ChartPad), float64(ChartHeight-2*ChartPad)
	var line []string
	for i, r := range rounds {
		x := float64(ChartPad)
		if len(rounds) > 1 {
			x += w * float64(i) / float64(len(rounds)-1)
		} else {
			x += w / 2
		}
		y := float64(ChartPad) + h - h*float64(r.Score)/float64(c.Max)
		p := PointBox{X: round1(x), Y: round1(y), Title: fmt.Sprintf("round %d: score %d (%d Fatal, %d Significant, %d Minor)", r.Round, r.Score, r.Fatal, r.Significant, r.Minor)}
		c.Points = append(c.Points, p)
		line = append(line, fmt.Sprintf("%g,%g", p.X, p.Y))
	}
	c.Line = strings.Join(line, " ")
	return c
}

// The task graph's geometry.
const (
	NodeWidth  = 160
	NodeHeight = 30
	ColumnGap  = 50
	RowGap     = 12
	GraphPad   = 10
)

// GraphBox is the task DAG: a column per level, an arrow per dependency.
type GraphBox struct {
	Width, Height float64
	Nodes         []NodeBox
	Edges         []EdgeBox
}

// NodeBox is a task.
type NodeBox struct {
	X, Y  float64
	ID    string
	Label string
	Class string
	Title string
}

// EdgeBox is a dependency, from the right of its task to the left of the
// task that depends on it.
type EdgeBox struct {
	X1, Y1, X2, Y2 float64
	Arrow          string // the arrowhead's polygon, its tip at X2,Y2
}

// arrowhead is the points of an arrow's head of size n at (x2, y2), coming
// from (x1, y1).
func arrowhead(x1, y1, x2, y2, n float64) string {
	dx, dy := x2-x1, y2-y1
	l := math.Hypot(dx, dy)
	if l == 0 {
		return ""
	}
	ux, uy := dx/l, dy/l
	bx, by := x2-ux*n, y2-uy*n // the base's middle
	px, py := -uy*n/2, ux*n/2  // half the base, across
	return fmt.Sprintf("%g,%g %g,%g %g,%g", round1(x2), round1(y2), round1(bx+px), round1(by+py), round1(bx-px), round1(by-py))
}

// LayoutGraph places tasks by level (columns, from 1) in the order given.
func LayoutGraph(tasks []TaskNode, edges [][2]string) GraphBox {
	g := GraphBox{}
	rows := map[int]int{}
	at := map[string]NodeBox{}
	levels := 0
	for _, t := range tasks {
		lv := max(t.Level, 1)
		levels = max(levels, lv)
		x := float64(GraphPad + (lv-1)*(NodeWidth+ColumnGap))
		y := float64(GraphPad + rows[lv]*(NodeHeight+RowGap))
		rows[lv]++
		label := t.ID
		if len([]rune(label)) > 22 {
			label = string([]rune(label)[:21]) + "…"
		}
		title := t.ID + ": " + t.Status
		if t.Title != "" {
			title += " — " + t.Title
		}
		if t.Commit != "" {
			title += " · " + short(t.Commit)
		}
		n := NodeBox{X: x, Y: y, ID: t.ID, Label: label, Class: "node s-" + token(t.Status), Title: title}
		g.Nodes = append(g.Nodes, n)
		at[t.ID] = n
	}
	most := 0
	for _, n := range rows {
		most = max(most, n)
	}
	g.Width = float64(2*GraphPad + levels*NodeWidth + max(levels-1, 0)*ColumnGap)
	g.Height = float64(2*GraphPad + most*NodeHeight + max(most-1, 0)*RowGap)
	for _, e := range edges {
		from, ok1 := at[e[0]]
		to, ok2 := at[e[1]]
		if !ok1 || !ok2 {
			continue
		}
		e := EdgeBox{X1: from.X + NodeWidth, Y1: from.Y + NodeHeight/2, X2: to.X, Y2: to.Y + NodeHeight/2}
		e.Arrow = arrowhead(e.X1, e.Y1, e.X2, e.Y2, 7)
		g.Edges = append(g.Edges, e)
	}
	return g
}

func short(h string) string { return h[:min(len(h), 12)] }
