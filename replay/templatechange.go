package replay

import "sort"

// TemplateChange is a template a replay renders from other text than the
// run it replaces did.
type TemplateChange struct {
	Template string `json:"template"`
	Seq      int    `json:"seq"` // the replaced run's last dispatch rendered from it
	Was      string `json:"was"` // sha256 of the text then
	Now      string `json:"now"` // and now; "" when the template is gone
}

// ChangedTemplates compares the template digests the dispatches to redo
// recorded (each template's last) with digest's now, leaving out the
// templates a mutation swaps on purpose and the dispatches that recorded
// none (runs from before digests were recorded, imports): of those
// nothing is known, so nothing is said. Sorted by template.
func ChangedTemplates(redo []Dispatch, digest func(name string) string, mutated map[string]string) []TemplateChange {
	last := map[string]Dispatch{}
	for _, d := range redo {
		if d.TemplateSHA256 != "" && mutated[d.Template] == "" {
			last[d.Template] = d
		}
	}
	var out []TemplateChange
	for name, d := range last {
		if now := digest(name); now != d.TemplateSHA256 {
			out = append(out, TemplateChange{Template: name, Seq: d.Seq, Was: d.TemplateSHA256, Now: now})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Template < out[j].Template })
	return out
}
