package runpage

import (
	"bytes"
	"html/template"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/pipeline"
)

// CSP is the page's Content-Security-Policy: nothing is loaded, nothing
// runs; only its own inline style.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// Sections are the ids of the page's sections, in order.
var Sections = []string{"overview", "timeline", "gates", "cost", "tasks", "replay", "journal"}

type page struct {
	*Model
	CSP      string
	Timeline TimelineBox
	Charts   []ChartBox // by loop
	Graph    GraphBox
	Sections []sectionLink
}

type sectionLink struct{ Name, Title string }

var sectionTitles = []string{"Overview", "Timeline", "Gates", "Cost", "Tasks", "Replay comparison", "Handoffs and decisions"}

// costTable is a cost table's heading and rows, for the costrows template.
type costTable struct {
	Name string
	Rows []CostRow
}

// funcs are the template's functions.
func funcs() template.FuncMap {
	return template.FuncMap{
		"usd":     pipeline.USD,
		"tokens":  func(n int64) string { return pipeline.Thousands(n) },
		"itokens": func(n int) string { return pipeline.Thousands(int64(n)) },
		"dur":     seconds,
		"short":   short,
		"chart":   func(p page, i int) ChartBox { return p.Charts[i] },
		"plus":    func(a, b int) int { return a + b },
		"deref":   func(p *int) int { return *p },
		"plusf":   func(a float64, b float64) float64 { return a + b },
		"tok":     token,
		"table":   func(name string, rows []CostRow) costTable { return costTable{name, rows} },
		"rows": func(name string, l pipeline.CostLine) costTable {
			return costTable{name, []CostRow{{Key: name, Cost: l}}}
		},
	}
}

// tmpl is the page's template, parsed on first use: not at init, since
// every command of the binary links this package.
var tmpl = lazy.Value[*template.Template]{New: func() *template.Template {
	return template.Must(template.New("page").Funcs(funcs()).Parse(pageTemplate))
}}

// Render draws m as one self-contained HTML page.
func Render(m *Model) ([]byte, error) {
	p := page{Model: m, CSP: CSP, Timeline: LayoutTimeline(m.Timeline), Graph: LayoutGraph(m.Tasks.Tasks, m.Tasks.Edges)}
	for i, id := range Sections {
		p.Sections = append(p.Sections, sectionLink{id, sectionTitles[i]})
	}
	for _, l := range m.Gates.Loops {
		p.Charts = append(p.Charts, LayoutChart(l.Rounds))
	}
	var b bytes.Buffer
	if err := tmpl.Get().Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Pipeline {{.Pipeline.ID}} — git crucible report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:0 12px 40px;color:#1d2330;background:#fafbfc}
main{max-width:1240px;margin:0 auto}
h1{font-size:20px;margin:18px 0 4px;word-break:break-all}
h2{font-size:17px;margin:0 0 8px;border-bottom:1px solid #d8dde6;padding-bottom:4px}
h3{font-size:14px;margin:14px 0 6px}
section{background:#fff;border:1px solid #d8dde6;border-radius:6px;padding:12px 14px;margin:14px 0;min-height:40px}
nav{margin:8px 0;display:flex;flex-wrap:wrap;gap:4px 12px}
nav a{color:#2a5bd7;text-decoration:none}
.goal{color:#4a5263;margin:0 0 6px;overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;margin:4px 0 8px;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #e1e5ec;padding:3px 7px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f1f4f8;font-weight:600;overflow-wrap:normal;white-space:nowrap}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.est{color:#8a5a00}
.muted{color:#6b7385}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.kv dt{color:#6b7385}
dl.kv dd{margin:0;overflow-wrap:anywhere}
details{margin:4px 0}
summary{cursor:pointer}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:8px;border-radius:4px;font-size:12px;max-height:480px;overflow:auto}
svg{display:block;max-width:100%;height:auto}
svg.timeline{min-width:720px}svg.dag{max-width:none}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
.lane{fill:#f4f6f9}
.bar{stroke:#0000;stroke-width:1}
.s-completed{fill:#3a9d5d}.s-failed{fill:#d64545}.s-error{fill:#e07b39}.s-skipped{fill:#a0a7b4}
.s-interrupted{fill:#8e5bd0}.s-running,.s-dispatched{fill:#3b82f6}.s-pending{fill:#cfd5de}.s-committed{fill:#6fbf8a}.s-fixing{fill:#e0b339}
.bar.retry{stroke:#111;stroke-dasharray:3 2}
.bar.recovered{stroke:#8e5bd0;stroke-width:2}
.bar.mutated{stroke:#d97706;stroke-width:2}
.mark{stroke-width:1.5}
.m-phase{stroke:#1d2330;stroke-dasharray:4 3}.m-approval{stroke:#0e7490}.m-escalation{stroke:#d64545;stroke-width:2.5}
.m-replay{stroke:#d97706;stroke-width:2.5}.m-resume{stroke:#8e5bd0;stroke-dasharray:2 2}
.axis{stroke:#c4cad5}
.legend span{display:inline-block;margin:0 10px 4px 0;font-size:12px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:-1px;border-radius:2px}
.l-completed{background:#3a9d5d}.l-failed{background:#d64545}.l-error{background:#e07b39}.l-skipped{background:#a0a7b4}.l-interrupted{background:#8e5bd0}.l-running{background:#3b82f6}
.chart .grid{stroke:#e1e5ec}
.chart polyline{fill:none;stroke:#2a5bd7;stroke-width:2}
.chart .pt{fill:#2a5bd7}
.loops{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:10px}
.loop{border:1px solid #e1e5ec;border-radius:5px;padding:8px}
.sev-fatal{color:#b42318;font-weight:600}.sev-significant{color:#b54708}.sev-minor{color:#6b7385}.sev-architectural{color:#7a2ed1;font-weight:600}
.node rect{stroke:#1d2330;stroke-width:.5}
.node text{font-size:11px}
.edge{stroke:#6b7385;stroke-width:1.2;fill:none}.arrow{fill:#6b7385}
.pass{color:#2f7d4a;font-weight:600}.fail{color:#b42318;font-weight:600}.skip{color:#6b7385}
.side{display:grid;grid-template-columns:1fr 1fr;gap:10px}
@media (max-width:600px){.side{grid-template-columns:1fr}body{padding:0 6px 30px}section{padding:10px 8px}}
</style>
</head>
<body>
<main>
<header>
<h1>Pipeline {{.Pipeline.ID}}</h1>
<p class="goal">{{.Pipeline.Goal}}</p>
<nav>{{range $.Sections}}<a href="#{{.Name}}">{{.Title}}</a>{{end}}</nav>
</header>

<section id="overview">
<h2>Overview</h2>
<dl class="kv">
<dt>Condition</dt><dd>{{.Pipeline.Condition}} — Phase {{.Pipeline.Phase}}</dd>
<dt>Health</dt><dd>{{.Pipeline.Health}}{{if .Pipeline.Reason}} — {{.Pipeline.Reason}}{{end}}</dd>
<dt>Mode</dt><dd>{{.Pipeline.Mode}}</dd>
<dt>Branch</dt><dd>{{.Pipeline.Branch}}</dd>
<dt>Created</dt><dd>{{.Pipeline.Created}}</dd>
<dt>Chain</dt><dd>{{.Pipeline.Events}} events, {{.Pipeline.Dispatches}} dispatches</dd>
<dt>Runs</dt><dd>{{range $i, $s := .Sessions}}{{if $i}}; {{end}}{{$s.Name}} (from Phase {{$s.From}}{{range $s.Mutations}}, {{.}}{{end}}){{end}}</dd>
<dt>Cost</dt><dd>{{.Cost.Summary}}</dd>
<dt>Report made</dt><dd>{{.Generated}}</dd>
</dl>
</section>

<section id="timeline">
<h2>Timeline</h2>
{{if .Timeline.Bars}}
<p class="legend"><span><i class="l-completed"></i>completed</span><span><i class="l-failed"></i>failed</span><span><i class="l-error"></i>error</span><span><i class="l-interrupted"></i>interrupted / killed</span><span><i class="l-skipped"></i>skipped</span><span><i class="l-running"></i>in flight</span><span>dashed outline: retry</span><span>marks: phase (dashed), approval, escalation (red), replay (orange), resume (purple)</span></p>
<div class="scroll">
<svg class="timeline" viewBox="0 0 {{.Timeline.Width}} {{.Timeline.Height}}" width="{{.Timeline.Width}}" role="img" aria-label="dispatches by role over the chain">
{{range .Timeline.Ticks}}<line class="axis" x1="{{.X}}" y1="14" x2="{{.X}}" y2="{{$.Timeline.Height}}"/><text x="{{.X}}" y="11" text-anchor="{{.Anchor}}">{{.Label}}</text>
{{end}}{{range .Timeline.Lanes}}<rect class="lane" x="0" y="{{.Y}}" width="{{$.Timeline.Width}}" height="18"/><text x="4" y="{{plusf .Y 13}}">{{.Name}}</text>
{{end}}{{range .Timeline.Bars}}<rect class="{{.Class}}" data-seq="{{.Seq}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Timeline.Marks}}<line class="{{.Class}}" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}"><title>{{.Title}}</title></line>
{{end}}</svg>
</div>
<details><summary>Phases: wall time</summary>
<table><tr><th>Phase</th><th>Dispatches</th><th>First start</th><th>Last end</th><th>Wall time</th></tr>
{{range .Model.Timeline.Phases}}<tr><td>{{.Phase}} {{.Name}}</td><td class="n">{{.Dispatches}}</td><td>{{.Start}}</td><td>{{.End}}</td><td class="n">{{dur .WallS}}</td></tr>
{{end}}</table></details>
<details><summary>Marks ({{len .Model.Timeline.Marks}})</summary>
<table><tr><th>Time</th><th>Kind</th><th>What</th></tr>
{{range .Model.Timeline.Marks}}<tr><td>{{.Time}}</td><td>{{.Kind}}</td><td>{{.Label}}</td></tr>
{{end}}</table></details>
<details><summary>Dispatches ({{len .Model.Timeline.Bars}})</summary>
<div class="scroll"><table><tr><th>#</th><th>Run</th><th>Role</th><th>Phase</th><th>Step</th><th>Task</th><th>Round</th><th>Status</th><th>Time</th><th>Summary</th></tr>
{{range .Model.Timeline.Bars}}<tr><td class="n">{{.Seq}}</td><td>{{.Session}}</td><td>{{.Role}}</td><td class="n">{{.Phase}}</td><td>{{.Step}}</td><td>{{.Task}}</td><td class="n">{{if .Round}}{{.Round}}{{end}}</td><td>{{.Status}}{{if .RetryOf}} (retry of {{deref .RetryOf}}){{end}}{{if .Recovered}} ({{.Recovered}}){{end}}</td><td class="n">{{dur .DurationS}}</td><td>{{.Summary}}</td></tr>
{{end}}</table></div></details>
{{else}}<p class="muted">No dispatch recorded.</p>{{end}}
</section>

<section id="gates">
<h2>Gates</h2>
<div class="scroll"><table><tr><th>Phase</th><th>Ledger</th><th>Gate</th><th>Reason</th></tr>
{{range .Gates.Ledger}}<tr><td>{{.Phase}} {{.Name}}</td><td>{{.Status}}</td><td>{{.Gate}}{{if .Acknowledged}} (acknowledged){{end}}</td><td>{{.Reason}}</td></tr>
{{end}}</table></div>
{{if .Gates.Verdicts}}<h3>Verdicts</h3>
<table><tr><th>Time</th><th>Phase</th><th>Verdict</th><th>Rounds</th><th>Score</th></tr>
{{range .Gates.Verdicts}}<tr><td>{{.Time}}</td><td class="n">{{.Phase}}</td><td>{{.Verdict}}</td><td class="n">{{.Rounds}}</td><td class="n">{{.Score}}</td></tr>
{{end}}</table>{{end}}
<h3>Rounds</h3>
{{if .Gates.Loops}}<div class="loops">
{{range $i, $l := .Gates.Loops}}{{$c := chart $ $i}}<div class="loop">
<strong>Phase {{$l.Phase}} · {{$l.Step}}{{if $l.Task}} · task {{$l.Task}}{{end}}</strong> <span class="muted">{{$l.Session}}</span><br>
verdict: {{if $l.Verdict}}{{$l.Verdict}}{{else}}<span class="muted">none yet</span>{{end}}
<svg class="chart" viewBox="0 0 240 90" width="240" role="img" aria-label="score per round">
<line class="grid" x1="14" y1="76" x2="226" y2="76"/><line class="grid" x1="14" y1="14" x2="226" y2="14"/>
<text x="2" y="12">{{$c.Max}}</text><text x="2" y="80">0</text>
<polyline points="{{$c.Line}}"/>
{{range $c.Points}}<circle class="pt" cx="{{.X}}" cy="{{.Y}}" r="4"><title>{{.Title}}</title></circle>
{{end}}</svg>
<table><tr><th>Round</th><th>#</th><th>Fatal</th><th>Significant</th><th>Minor</th><th>Score</th></tr>
{{range $l.Rounds}}<tr><td class="n">{{.Round}}</td><td class="n">{{.Seq}}</td><td class="n">{{.Fatal}}</td><td class="n">{{.Significant}}</td><td class="n">{{.Minor}}</td><td class="n">{{.Score}}</td></tr>
{{end}}</table>
{{range $l.Rounds}}{{if or .Findings .Unread}}<details><summary>Round {{.Round}}: {{len .Findings}} finding{{if ne (len .Findings) 1}}s{{end}}{{if .More}} (and {{.More}} more){{end}}</summary>
{{if .Unread}}<p class="muted">{{.Unread}}</p>{{end}}<ul>
{{range .Findings}}<li><span class="sev-{{tok .Severity}}">{{.Severity}}</span> {{.Title}}{{if .File}} <span class="muted">({{.File}})</span>{{end}}</li>
{{end}}</ul></details>{{end}}{{end}}
</div>
{{end}}</div>{{else}}<p class="muted">No gate or review round recorded.</p>{{end}}
<details><summary>Ledger transitions ({{len .Gates.Transitions}})</summary>
<table><tr><th>Time</th><th>Action</th><th>Phase</th><th>Reason</th><th>Confirmation</th></tr>
{{range .Gates.Transitions}}<tr><td>{{.Time}}</td><td>{{.Kind}}</td><td class="n">{{.Phase}}</td><td>{{.Reason}}</td><td>{{.Confirm}}</td></tr>
{{end}}</table></details>
</section>

<section id="cost">
<h2>Cost</h2>
<p>{{.Cost.Summary}}. <span class="est">Tokens marked ~ are estimates by size (characters / 4); a price is never estimated.</span></p>
{{define "costrows"}}<div class="scroll"><table><tr><th>{{.Name}}</th><th>Dispatches</th><th>USD</th><th>Tokens in</th><th>Tokens out</th><th>Estimated</th><th>~ in</th><th>~ out</th></tr>
{{range .Rows}}<tr><td>{{.Key}}</td><td class="n">{{.Cost.Dispatches}}</td><td class="n">{{if .Cost.Priced}}{{usd .Cost.CostUSD}}{{else}}<span class="muted">unknown</span>{{end}}</td><td class="n">{{tokens .Cost.InputTokens}}</td><td class="n">{{tokens .Cost.OutputTokens}}</td><td class="n">{{.Cost.Estimated}}</td><td class="n est">~{{itokens .Cost.EstInputTokens}}</td><td class="n est">~{{itokens .Cost.EstOutputTokens}}</td></tr>
{{end}}</table></div>{{end}}
{{template "costrows" (rows "Total" .Cost.Total)}}
<h3>By phase</h3>{{template "costrows" (table "Phase" .Cost.ByPhase)}}
<h3>By role</h3>{{template "costrows" (table "Role" .Cost.ByRole)}}
<h3>By task</h3>{{if .Cost.ByTask}}{{template "costrows" (table "Task" .Cost.ByTask)}}{{else}}<p class="muted">No dispatch of a task.</p>{{end}}
<h3>Wall time by phase</h3>
<table><tr><th>Phase</th><th>Wall time</th></tr>{{range .Model.Timeline.Phases}}<tr><td>{{.Phase}} {{.Name}}</td><td class="n">{{dur .WallS}}</td></tr>{{end}}</table>
{{if .Cost.Preserved}}<h3>Work a replay preserved</h3>
<table><tr><th>Replay</th><th>From phase</th><th>Dispatches kept</th><th>Their time</th><th>Their USD</th><th>~ tokens</th></tr>
{{range .Cost.Preserved}}<tr><td>{{.Session}}</td><td class="n">{{.From}}</td><td class="n">{{.Dispatches}}</td><td class="n">{{dur .Seconds}}</td><td class="n">{{usd .CostUSD}}</td><td class="n est">~{{itokens .Estimated}}</td></tr>
{{end}}</table>{{end}}
</section>

<section id="tasks">
<h2>Tasks</h2>
{{if .Tasks.Tasks}}{{if .Tasks.Run}}<p>Task run: {{.Tasks.Run}}</p>{{end}}
<div class="scroll">
<svg class="dag" viewBox="0 0 {{.Graph.Width}} {{.Graph.Height}}" width="{{.Graph.Width}}" role="img" aria-label="the task graph">
{{range .Graph.Edges}}<line class="edge" x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}"/><polygon class="arrow" points="{{.Arrow}}"/>
{{end}}{{range .Graph.Nodes}}<g class="node"><rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="160" height="30" rx="4"/><text x="{{plusf .X 6}}" y="{{plusf .Y 19}}">{{.Label}}</text><title>{{.Title}}</title></g>
{{end}}</svg></div>
<table><tr><th>Task</th><th>Level</th><th>Status</th><th>Commit</th><th>Title</th></tr>
{{range .Tasks.Tasks}}<tr><td>{{.ID}}</td><td class="n">{{.Level}}</td><td>{{.Status}}</td><td>{{short .Commit}}</td><td>{{.Title}}</td></tr>
{{end}}</table>{{else}}<p class="muted">No task recorded.</p>{{end}}
<h3>Commits</h3>
{{if .Tasks.Commits}}<div class="scroll"><table><tr><th>Commit</th><th>Task</th><th>Subject</th><th>Fast gate</th><th>Trailers</th></tr>
{{range .Tasks.Commits}}<tr><td>{{short .Hash}}</td><td>{{.Task}}</td><td>{{.Subject}}</td><td>{{with .FastGate}}<span class="{{tok .Status}}">{{.Status}}</span> (exit {{.Exit}}, {{.DurationMS}} ms){{else}}<span class="muted">not run</span>{{end}}</td><td>{{range .Trailers}}{{.Key}}: {{.Value}}<br>{{end}}</td></tr>
{{end}}</table></div>{{else}}<p class="muted">No commit names this pipeline on its branch.</p>{{end}}
</section>

<section id="replay">
<h2>Replay comparison</h2>
{{if .Replays}}{{range .Replays}}<h3>{{.Original}} vs {{.Replay}} (from Phase {{.From}})</h3>
{{if .Mutations}}<p>Mutations: {{range $i, $m := .Mutations}}{{if $i}}, {{end}}{{$m}}{{end}}</p>{{end}}
<table><tr><th></th><th>{{.Original}}</th><th>{{.Replay}}</th></tr>
<tr><td>Dispatches</td><td class="n">{{.A.Dispatches}}</td><td class="n">{{.B.Dispatches}}</td></tr>
<tr><td>Gate rounds</td><td class="n">{{.A.GateRounds}}</td><td class="n">{{.B.GateRounds}}</td></tr>
<tr><td>Findings</td><td class="n">{{.A.Findings}}</td><td class="n">{{.B.Findings}}</td></tr>
<tr><td>Time</td><td class="n">{{dur .A.Seconds}}</td><td class="n">{{dur .B.Seconds}}</td></tr>
<tr><td>USD</td><td class="n">{{usd .A.CostUSD}}</td><td class="n">{{usd .B.CostUSD}}</td></tr>
<tr><td>~ tokens (estimated)</td><td class="n est">~{{itokens .A.EstTokens}}</td><td class="n est">~{{itokens .B.EstTokens}}</td></tr>
<tr><td>Acceptance</td><td>{{.A.Acceptance}}</td><td>{{.B.Acceptance}}</td></tr>
</table>
<p>Artifact diff{{if .Range}} ({{.Range}}){{end}}: {{.Files}} files changed, +{{.Insertions}} −{{.Deletions}}</p>
<details><summary>Dispatches paired ({{len .Pairs}})</summary>
<table><tr><th>Dispatch</th><th>Role</th><th>{{.Original}}</th><th>{{.Replay}}</th><th>Output</th></tr>
{{range .Pairs}}<tr><td>{{if .A}}{{deref .A}}{{else}}-{{end}} → {{if .B}}{{deref .B}}{{else}}-{{end}}</td><td>{{.Role}}</td><td>{{.StatA}}</td><td>{{.StatB}}</td><td>{{.Delta}}</td></tr>
{{end}}</table></details>
{{end}}{{else}}<p class="muted">No replay with a mutation.</p>{{end}}
</section>

<section id="journal">
<h2>Handoffs and decisions</h2>
<h3>Decision journal ({{len .Decisions}})</h3>
{{if .Decisions}}<details><summary>Decisions</summary>
<div class="scroll"><table><tr><th>Time</th><th>Type</th><th>Choice</th><th>Reason</th><th>Alternatives</th></tr>
{{range .Decisions}}<tr><td>{{.Time}}</td><td>{{.Type}}</td><td>{{.Choice}}</td><td>{{.Reason}}{{if .Suggestion}}<br><em>{{.Suggestion}}</em>{{end}}</td><td>{{.Alternatives}}</td></tr>
{{end}}</table></div></details>{{else}}<p class="muted">No decision recorded.</p>{{end}}
<h3>Handoffs ({{len .Handoffs}})</h3>
{{range .Handoffs}}<details><summary>Phase {{.From}} → {{.To}} ({{.Time}})</summary>
{{if .Decisions}}<p>Decisions carried:</p><ul>{{range .Decisions}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Constraints}}<p>Constraints:</p><ul>{{range .Constraints}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Document}}<pre>{{.Document}}</pre>{{end}}
</details>
{{else}}<p class="muted">No handoff recorded.</p>{{end}}
</section>
</main>
</body>
</html>
`
