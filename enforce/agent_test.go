package enforce

import (
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/notes"
)

func TestAgentFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want Agent
	}{
		{nil, Agent{}},
		{map[string]string{EnvTask: "3", EnvSeq: "12", EnvRole: " implementer \n"}, Agent{Task: 3, Seq: 12, Role: "implementer"}},
		{map[string]string{EnvTask: "3abc", EnvSeq: "0"}, Agent{}},
		{map[string]string{EnvTask: "-1", EnvSeq: "007"}, Agent{}},
		{map[string]string{EnvTask: " 4", EnvSeq: "+5"}, Agent{}},
		{map[string]string{EnvTask: "99999999999999999999"}, Agent{}},
	} {
		if got := AgentFromEnv(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.env, got, c.want)
		}
	}
}

func TestCommitTrailers(t *testing.T) {
	got := CommitTrailers("build-1", 3, Agent{Task: 2, Seq: 7, Role: "r"})
	want := []Trailer{{TrailerPipeline, "build-1"}, {TrailerPhase, "3"}, {TrailerTask, "2"}, {TrailerSeq, "7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
	got = CommitTrailers("build-1", 1, Agent{Seq: 4})
	want = []Trailer{{TrailerPipeline, "build-1"}, {TrailerPhase, "1"}, {TrailerSeq, "4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func TestProvenance(t *testing.T) {
	got := Provenance("build-1", 2, Agent{Task: 1, Seq: 5, Role: "implementer"}, "abc", "w1")
	want := notes.Provenance{Pipeline: "build-1", Phase: 2, Task: 1, Seq: 5, Role: "implementer", LedgerHead: "abc", Writer: "w1"}
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}
