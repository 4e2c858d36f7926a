package replay

import (
	"reflect"
	"testing"
)

func TestChangedTemplates(t *testing.T) {
	now := map[string]string{"implementer": "i2", "red-team": "r1", "reviewer": "v1"}
	redo := []Dispatch{
		{Seq: 4, Template: "implementer", TemplateSHA256: "i0"},
		{Seq: 5, Template: "implementer", TemplateSHA256: "i1"}, // the last one counts
		{Seq: 6, Template: "red-team", TemplateSHA256: "r1"},    // unchanged
		{Seq: 7, Template: "fixer"},                             // recorded none: nothing said
		{Seq: 8, Template: "reviewer", TemplateSHA256: "v0"},    // mutated on purpose
		{Seq: 9, Template: "planner", TemplateSHA256: "p0"},     // gone
	}
	got := ChangedTemplates(redo, func(name string) string { return now[name] }, map[string]string{"reviewer": "reviewer.md -> b.md"})
	want := []TemplateChange{
		{Template: "implementer", Seq: 5, Was: "i1", Now: "i2"},
		{Template: "planner", Seq: 9, Was: "p0", Now: ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ChangedTemplates =\n%+v\nwant\n%+v", got, want)
	}
	if got := ChangedTemplates(redo[2:4], func(name string) string { return now[name] }, nil); got != nil {
		t.Fatalf("nothing changed: %+v", got)
	}
}
