package pipeline

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

func startedDispatch(t *testing.T) *State {
	st := started(t)
	if _, err := st.Apply(ev(t, st, TypeDispatchStart, DispatchStart{Seq: 1, Role: "plan-writer", Phase: 2, Template: "plan-writer",
		Prompt: DispatchPath(1, "plan-writer", false)})); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestDispatchState(t *testing.T) {
	st := startedDispatch(t)
	if st.Dispatch.Last != 1 || len(st.Dispatch.InFlight) != 1 || st.Dispatch.InFlight["1"].Template != "plan-writer" {
		t.Fatalf("after start: %+v", st.Dispatch)
	}
	if _, err := st.Apply(ev(t, st, TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "completed",
		Output: DispatchPath(1, "plan-writer", true)})); err != nil {
		t.Fatal(err)
	}
	if st.Dispatch.InFlight != nil || st.Dispatch.Finished != 1 {
		t.Fatalf("after finish: %+v", st.Dispatch)
	}
	if got := DispatchPath(1234, "t", true); got != "dispatch/0012/1234-t.output.md" {
		t.Fatalf("DispatchPath = %q", got)
	}
}

// TestDispatchRefusals: every out-of-place dispatch event is refused and
// leaves the state (its in-flight map included) as it was.
func TestDispatchRefusals(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		data any
		want string
	}{
		{"seq not next", TypeDispatchStart, DispatchStart{Seq: 3, Role: "r", Phase: 1, Template: "t"}, "dispatch seq 3 is not the next one (2)"},
		{"no role", TypeDispatchStart, DispatchStart{Seq: 2, Phase: 1, Template: "t"}, "dispatch 2 needs a role"},
		{"bad template digest", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", TemplateSHA256: "ABC"}, `dispatch 2: template_sha256 "ABC" is not a sha256 in hex`},
		{"bad template", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "../t"}, `invalid template "../t"`},
		{"bad phase", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 5, Template: "t"}, "dispatch 2: invalid phase 5"},
		{"prompt elsewhere", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", Prompt: "x.md"}, `prompt kept at "x.md"`},
		{"finish unknown", TypeDispatchFinish, DispatchFinish{Seq: 7, Status: "failed"}, "no dispatch 7 was started"},
		{"bad status", TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "done"}, `invalid status "done"`},
		{"wrong duration", TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "failed", DurationS: 5}, "duration 5 s does not match"},
		{"output elsewhere", TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "failed", Output: "o.md"}, `output kept at "o.md"`},
		{"parent not yet made", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", ParentSeq: intp(2)},
			"dispatch 2: parent dispatch 2 is not an earlier one"},
		{"parent zero", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", ParentSeq: intp(0)},
			"dispatch 2: parent dispatch 0 is not an earlier one"},
		{"bad agent type", TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "completed", AgentType: "../x"},
			`dispatch 1: invalid agent type "../x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := startedDispatch(t)
			before := string(st.Encode())
			inflight := st.Dispatch.InFlight
			_, err := st.Apply(ev(t, st, c.typ, c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if string(st.Encode()) != before || len(inflight) != 1 {
				t.Fatal("a refused event changed the state")
			}
		})
	}
	st := startedDispatch(t)
	// A subagent of dispatch 1, in flight or not.
	if _, err := st.Apply(ev(t, st, TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", ParentSeq: intp(1)})); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(ev(t, st, TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "failed"})); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(ev(t, st, TypeDispatchStart, DispatchStart{Seq: 3, Role: "r", Phase: 1, Template: "t", ParentSeq: intp(1)})); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(ev(t, st, TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "failed"})); err == nil || err.Error() != "dispatch 1 is already finished" {
		t.Fatalf("second finish: %v", err)
	}
}

func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     int
	}{
		{"2026-11-22T10:00:00Z", "2026-11-22T10:01:23Z", 83},
		{"2026-11-22T10:00:00Z", "2026-11-22T09:00:00Z", 0},
		{"garbage", "2026-11-22T10:00:00Z", 0},
	} {
		if got := Seconds(c.from, c.to); got != c.want {
			t.Errorf("Seconds(%s, %s) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}

// openService is a service on a fresh repository with no commits.
func openService(t *testing.T) *Service {
	t.Helper()
	gittest.Hermetic(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q")
	t.Chdir(dir)
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := Open(repo)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReconstructDispatch: a dispatch recorded from its end alone takes
// the next seq, starts and finishes in one commit with no duration, keeps
// prompt and output, and is marked reconstructed in the manifest.
func TestReconstructDispatch(t *testing.T) {
	s := openService(t)
	ctx := context.Background()
	st, _, err := s.Start(ctx, StartOptions{Goal: "g", Mode: "feature", ID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := s.Repo.EmptyTree(); st.Baseline != want {
		t.Fatalf("baseline on an unborn branch %q, want the empty tree %s", st.Baseline, want)
	}
	if _, err := s.StartDispatch(ctx, "p1", DispatchRequest{Role: "planner", Phase: 1}); err != nil {
		t.Fatal(err)
	}
	d, err := s.ReconstructDispatch(ctx, "p1", DispatchRequest{Role: "plan-writer", Phase: 2, Template: "plan-writer",
		Prompt: []byte("plan it"), ToolUseID: "toolu_1"}, FinishRequest{Status: "completed", Summary: "done", Output: []byte("the plan")})
	if err != nil {
		t.Fatal(err)
	}
	want := DispatchFinish{Seq: 2, Status: "completed", OutputChars: 8, Output: DispatchPath(2, "plan-writer", true), Summary: "done"}
	if !reflect.DeepEqual(*d, want) {
		t.Fatalf("finish %+v, want %+v", *d, want)
	}
	m, err := s.Manifest(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m[0].Reconstructed || !m[1].Reconstructed || m[1].Status != "completed" || *m[1].DurationS != 0 ||
		m[1].Role != "plan-writer" || m[1].Phase != "2" || m[1].InputChars != 7 {
		t.Fatalf("manifest %+v", m)
	}
	for path, text := range map[string]string{m[1].Prompt: "plan it", m[1].Output: "the plan"} {
		if b, err := s.ReadKept(ctx, "p1", path); err != nil || string(b) != text {
			t.Errorf("kept %s: %q, %v", path, b, err)
		}
	}
	st, _, err = s.Load(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Dispatch.Last != 2 || len(st.Dispatch.InFlight) != 1 || st.Dispatch.Finished != 1 || st.Seq != 4 {
		t.Fatalf("state %+v, %d events", st.Dispatch, st.Seq)
	}
	if got := st.View.Recent[1].Text; got != "dispatch 2: plan-writer (reconstructed)" {
		t.Fatalf("recent event %q", got)
	}
	if _, err := s.ReconstructDispatch(ctx, "p1", DispatchRequest{Role: "r", Template: "../x"}, FinishRequest{Status: "completed"}); err == nil {
		t.Fatal("a bad template was accepted")
	}
}
