package pipeline

import (
	"reflect"
	"testing"
)

func TestImportedLine(t *testing.T) {
	three, tier := 3, "opus"
	cases := []struct {
		line string
		want ImportedDispatch
		err  string
	}{
		{`{"seq":1,"role":"r","status":"dispatched"}`, ImportedDispatch{Seq: 1, Role: "r", Status: "dispatched"}, ""},
		{`{"seq":2,"role":"r","status":"failed","phase":3,"task":3,"model_tier":"opus","summary":null,"x":[1]}`,
			ImportedDispatch{Seq: 2, Role: "r", Status: "failed", Phase: "3", Task: &three, ModelTier: &tier}, ""},
		{`{"seq":2,"role":"r","status":"completed","phase":"2a"}`, ImportedDispatch{Seq: 2, Role: "r", Status: "completed", Phase: "2a"}, ""},
		{`{"Seq":2,"role":"r","status":"completed"}`, ImportedDispatch{}, "imported manifest line: invalid seq 0"},
		{`{"seq":0,"role":"r","status":"completed"}`, ImportedDispatch{}, "imported manifest line: invalid seq 0"},
		{`{"seq":1,"role":"r","status":"done"}`, ImportedDispatch{}, `imported manifest line: invalid status "done"`},
		{`{"seq":1,"role":"","status":"error"}`, ImportedDispatch{}, "imported manifest line: no role"},
		{`{"seq":"1","role":"r","status":"error"}`, ImportedDispatch{}, `imported manifest line: invalid seq "1"`},
		{`{"seq":1,"role":"r","status":"error","phase":1.5}`, ImportedDispatch{}, "imported manifest line: invalid phase 1.5"},
		{`{"seq":1,"role":"r","status":"error","task":"3"}`, ImportedDispatch{}, `imported manifest line: invalid task "3"`},
		{`[1]`, ImportedDispatch{}, "imported manifest line: not a JSON object"},
		{"{\"seq\":1,\n\"role\":\"r\",\"status\":\"error\"}", ImportedDispatch{}, "an imported manifest line holds a line break"},
	}
	for _, c := range cases {
		got, err := ImportedLine(c.line)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
}
