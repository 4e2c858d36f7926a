package manifest

import (
	"reflect"
	"strings"
	"testing"
)

// manifest builds a manifest from "id:dep,dep:status" words.
func manifest(t *testing.T, spec string) *Manifest {
	t.Helper()
	var b strings.Builder
	b.WriteString(header)
	for _, line := range strings.Fields(spec) {
		parts := strings.Split(line+"::", ":")
		b.WriteString("  - {id: " + parts[0] + ", type: feature, agent: general, depends-on: [" + parts[1] + "]")
		if parts[2] != "" {
			b.WriteString(", status: " + parts[2])
		}
		if parts[2] == "fixing" {
			b.WriteString(", fixing-source: critique")
		}
		b.WriteString("}\n")
	}
	m, err := Parse("d.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want [][]string
	}{
		{"a", [][]string{{"a"}}},
		{"a b c", [][]string{{"a", "b", "c"}}},
		{"c:b b:a a", [][]string{{"a"}, {"b"}, {"c"}}},
		// A task's level is one past its deepest dependency, not its shallowest.
		{"a b:a c:b d:a,c e:a", [][]string{{"a"}, {"b", "e"}, {"c"}, {"d"}}},
		{"x:a,b a b y:x z:b", [][]string{{"a", "b"}, {"x", "z"}, {"y"}}},
	} {
		m := manifest(t, tc.spec)
		if got := m.Levels(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: levels %q, want %q", tc.spec, got, tc.want)
		}
		for lv, ids := range tc.want {
			for _, id := range ids {
				if m.Level(id) != lv+1 {
					t.Errorf("%s: Level(%s) = %d, want %d", tc.spec, id, m.Level(id), lv+1)
				}
			}
		}
	}
	if m := manifest(t, "a"); m.Level("nope") != 0 || m.Task("nope") != nil {
		t.Fatal("an unknown id has a level or a task")
	}
}

func TestReadyAndDeadlock(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		ready      string
		deadlock   string
	}{
		{"fresh", "a b c:a,b", "a b", ""},
		{"half done", "a::completed b c:a,b", "b", ""},
		{"running", "a::completed b::dispatched c:a,b", "", ""},
		{"committed awaits critique", "a::committed b:a", "", ""},
		{"fixing", "a::fixing b:a", "", ""},
		{"next level", "a::completed b::completed c:a,b", "c", ""},
		{"all done", "a::completed b:a:completed", "", ""},
		{"failed leaves others", "a::failed b c:a", "b", ""},
		{"failed blocks", "a::failed b::completed c:a,b d:c e:b", "e", ""},
		{"deadlock", "a::failed b::completed c:a,b d:c",
			"", "deadlock: 2 tasks can never run: c waits on a (failed); d waits on c (pending)"},
		{"deadlock, one task", "a::failed b:a", "", "deadlock: 1 task can never run: b waits on a (failed)"},
		{"only failures", "a::failed b::failed", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := manifest(t, tc.spec)
			if got := strings.Join(m.Ready(), " "); got != tc.ready {
				t.Fatalf("ready %q, want %q", got, tc.ready)
			}
			d := m.Deadlocked()
			switch {
			case tc.deadlock == "" && d != nil:
				t.Fatalf("deadlock %v, want none", d)
			case tc.deadlock != "" && (d == nil || d.Error() != tc.deadlock):
				t.Fatalf("deadlock %v\nwant     %s", d, tc.deadlock)
			}
		})
	}
}
