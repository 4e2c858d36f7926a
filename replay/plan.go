package replay

import (
	"bytes"
	"fmt"
	"strings"
)

// Plan is what a replay would do: the seed's "Replay Plan".
type Plan struct {
	Source    *Source  `json:"source"`
	Resume    *Resume  `json:"resume"`
	Mutations []string `json:"mutations"` // "orig -> repl"
}

// Markdown renders the plan in crucible's "Replay Plan (dry-run)" format.
func (p *Plan) Markdown() []byte {
	var b bytes.Buffer
	src, r := p.Source, p.Resume
	started := src.Started
	if started == "" {
		started = "unknown"
	}
	fmt.Fprintf(&b, "# Replay Plan (dry-run)\n\n")
	fmt.Fprintf(&b, "**Source:** %s\n", src.Path)
	fmt.Fprintf(&b, "**Original pipeline:** %s | Session: %s | Started: %s\n", src.Skill, src.Pipeline, started)
	if r.Crash.Phase == 0 {
		fmt.Fprintf(&b, "**Crashed at:** none, %s\n", r.Crash.Context)
	} else {
		fmt.Fprintf(&b, "**Crashed at:** Phase %d, %s\n", r.Crash.Phase, r.Crash.Context)
	}
	if r.Phase == 0 {
		fmt.Fprintf(&b, "**Resume point:** none (every phase is complete and verified)\n")
		return b.Bytes()
	}
	fmt.Fprintf(&b, "**Resume point:** Phase %d boundary (%s)\n", r.Phase, p.checkpoint())
	if r.Phase > 1 {
		fmt.Fprintf(&b, "**Work preserved:** %s (phases 1 through %d)\n", Duration(r.Preserved), r.Phase-1)
	} else {
		fmt.Fprintf(&b, "**Work preserved:** none (Phase 1 starts over)\n")
	}
	fmt.Fprintf(&b, "\n## Dispatches to skip (verified complete)\n\n")
	fmt.Fprintf(&b, "| Seq | Role | Phase | Summary |\n|-----|------|-------|---------|\n")
	for _, d := range r.Skip {
		fmt.Fprintf(&b, "| %d | %s | %d | %s |\n", d.Seq, cell(d.Role), d.Phase, cell(d.Summary))
	}
	fmt.Fprintf(&b, "\n## Dispatches to re-execute\n\n")
	fmt.Fprintf(&b, "| Seq | Role | Phase | Original Status | Template |\n|-----|------|-------|-----------------|----------|\n")
	for _, d := range r.Redo {
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %s |\n", d.Seq, cell(d.Role), d.Phase, d.Status, cell(p.template(d.Template)))
	}
	if len(p.Mutations) > 0 {
		fmt.Fprintf(&b, "\n## Template Mutations\n\n")
		for _, m := range p.Mutations {
			fmt.Fprintf(&b, "- %s\n", m)
		}
	}
	return b.Bytes()
}

// checkpoint describes the resume point's checkpoint.
func (p *Plan) checkpoint() string {
	r := p.Resume
	switch {
	case r.Boundary.Checkpoint == "":
		return r.Boundary.Reason + ", no checkpoint recorded: the current tree"
	case r.Gone:
		return fmt.Sprintf("%s, checkpoint %s gone: the current tree", r.Boundary.Reason, short(r.Boundary.Checkpoint))
	}
	return fmt.Sprintf("%s, checkpoint %s", r.Boundary.Reason, short(r.Boundary.Checkpoint))
}

// template is a template as a re-execution would dispatch it: mutated
// when a mutation names it.
func (p *Plan) template(t string) string {
	for _, m := range p.Mutations {
		if orig, repl, ok := strings.Cut(m, " -> "); ok && strings.TrimSuffix(orig, ".md") == t {
			return t + " -> " + strings.TrimSuffix(repl, ".md")
		}
	}
	return t
}

func short(id string) string { return id[:min(12, len(id))] }

// cell is s as one cell of a markdown table: one line, pipes escaped.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// Duration is seconds as people read it: "1h 5m", "12m 30s", "45s".
func Duration(s int) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}
