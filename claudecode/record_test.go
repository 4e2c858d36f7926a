package claudecode

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/repotest"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/pipeline"
)

// recorder is a Recorder on a fresh repository with pipeline p1 active.
func recorder(t *testing.T) *Recorder {
	t.Helper()
	svc := pipeline.Open(repotest.Open(t))
	t.Cleanup(func() { svc.Close() })
	if _, _, err := svc.Start(t.Context(), pipeline.StartOptions{Goal: "g", Mode: "feature", ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	return &Recorder{Svc: svc}
}

func pre(id string, background bool) interop.HookEvent {
	return interop.HookEvent{Event: interop.HookPreToolUse, SessionID: "s1", ToolUseID: id, Prompt: "say hi",
		SubagentType: "general-purpose", Background: background}
}

func launch(id, agent string) interop.HookEvent {
	e := pre(id, true)
	e.Event, e.Status, e.Launched, e.AgentID = interop.HookPostToolUse, "async_launched", true, agent
	return e
}

func subagentStop(agent string, listed ...string) interop.HookEvent {
	return interop.HookEvent{Event: interop.HookSubagentStop, SessionID: "s1", AgentID: agent, AgentType: "general-purpose",
		Response: "said hi\nand more", BackgroundTasks: append([]string{}, listed...), Listed: true}
}

func stop(session string, listed ...string) interop.HookEvent {
	return interop.HookEvent{Event: interop.HookStop, SessionID: session, BackgroundTasks: append([]string{}, listed...), Listed: true}
}

func (r *Recorder) must(t *testing.T, e interop.HookEvent) *Outcome {
	t.Helper()
	o, err := r.Record(t.Context(), e)
	if err != nil {
		t.Fatalf("%s: %v", e.Event, err)
	}
	return o
}

// manifest is the pipeline's dispatches as "seq role status failure summary".
func (r *Recorder) manifest(t *testing.T) []string {
	t.Helper()
	m, err := r.Svc.Manifest(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range m {
		line := []string{d.Role, d.Status}
		if d.Background {
			line = append(line, "background")
		}
		if d.Failure != "" {
			line = append(line, d.Failure)
		}
		if d.Summary != nil {
			line = append(line, *d.Summary)
		}
		out = append(out, strings.Join(line, " | "))
	}
	return out
}

// kept is the agents kept, by file name.
func (r *Recorder) kept(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(r.agents().dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func check(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

// TestBackgroundAgentEnds: a background agent's dispatch stays in flight
// after its launch, and its SubagentStop finishes it, whichever of the two
// hooks ran first.
func TestBackgroundAgentEnds(t *testing.T) {
	for _, stopFirst := range []bool{false, true} {
		name := "launch, then stop"
		if stopFirst {
			name = "stop, then launch"
		}
		t.Run(name, func(t *testing.T) {
			r := recorder(t)
			o := r.must(t, pre("toolu_1", true))
			check(t, "start", [2]any{o.Action, o.Seq}, [2]any{Started, 1})
			if stopFirst {
				o = r.must(t, subagentStop("a1", "a1"))
				check(t, "early stop", o.Action, Noted)
				check(t, "kept", r.kept(t), []string{"a1.json"})
				check(t, "manifest", r.manifest(t), []string{"general-purpose | dispatched | background"})
				o = r.must(t, launch("toolu_1", "a1"))
				check(t, "launch after its stop", [2]any{o.Action, o.Seq}, [2]any{Finished, 1})
			} else {
				o = r.must(t, launch("toolu_1", "a1"))
				check(t, "launch", [3]any{o.Action, o.Seq, o.AgentID}, [3]any{Launched, 1, "a1"})
				check(t, "kept", r.kept(t), []string{"a1.json"})
				check(t, "manifest", r.manifest(t), []string{"general-purpose | dispatched | background"})
				o = r.must(t, stop("s1", "a1")) // the turn ends while it runs
				check(t, "stop while it runs", o.Action, Ignored)
				o = r.must(t, subagentStop("a1", "a1"))
				check(t, "stop", [3]any{o.Action, o.Pipeline, o.Seq}, [3]any{Finished, "p1", 1})
			}
			check(t, "manifest", r.manifest(t), []string{"general-purpose | completed | background | said hi"})
			check(t, "kept", r.kept(t), []string{})
			m, err := r.Svc.Manifest(t.Context(), "p1")
			if err != nil {
				t.Fatal(err)
			}
			check(t, "agent type", m[0].AgentType, "general-purpose")
			out, err := r.Svc.ReadKept(t.Context(), "p1", m[0].Output)
			check(t, "output", string(out), "said hi\nand more")
			check(t, "error", err, nil)
			// The last Stop settles nothing.
			check(t, "last stop", r.must(t, stop("s1")).Action, Ignored)
		})
	}
}

// TestBackgroundAgentDetached: a Stop that no longer lists a session's
// background agent, or the session's end, settles its dispatch detached;
// another session's agents, and a Stop that lists none (an older client),
// are left alone.
func TestBackgroundAgentDetached(t *testing.T) {
	r := recorder(t)
	for i, id := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		r.must(t, pre(id, true))
		e := launch(id, "a"+id[len(id)-1:])
		if i == 2 {
			e.SessionID = "s2"
		}
		r.must(t, e)
	}
	check(t, "kept", r.kept(t), []string{"a1.json", "a2.json", "a3.json"})
	check(t, "older client", r.must(t, interop.HookEvent{Event: interop.HookStop, SessionID: "s1"}).Action, Ignored)
	o := r.must(t, stop("s1", "a2"))
	check(t, "stop", o.Action, Settled)
	if len(o.Settled) != 1 || o.Settled[0].Seq != 1 || o.Settled[0].AgentID != "a1" || o.Settled[0].Finish.Failure != "detached" {
		t.Fatalf("settled %+v", o.Settled)
	}
	check(t, "kept", r.kept(t), []string{"a2.json", "a3.json"})
	o = r.must(t, interop.HookEvent{Event: interop.HookSessionEnd, SessionID: "s1", Reason: "prompt_input_exit"})
	check(t, "session end", [2]any{o.Action, len(o.Settled)}, [2]any{Settled, 1})
	check(t, "kept", r.kept(t), []string{"a3.json"})
	check(t, "manifest", r.manifest(t), []string{
		"general-purpose | error | background | detached | detached: Claude Code stopped this background agent, and no SubagentStop said it finished",
		"general-purpose | error | background | detached | detached: the session ended (prompt_input_exit) before this background agent's end was reported",
		"general-purpose | dispatched | background",
	})
}

// TestSubagentStopOfOthers: the SubagentStop of a foreground agent is
// ignored (its PostToolUse ends it) and keeps nothing; that of a kept
// agent whose dispatch was finished meanwhile only forgets it.
func TestSubagentStopOfOthers(t *testing.T) {
	r := recorder(t)
	r.must(t, pre("toolu_1", false))
	check(t, "foreground", r.must(t, subagentStop("f1")).Action, Ignored)
	if _, err := os.Lstat(r.agents().dir); !os.IsNotExist(err) {
		t.Fatalf("a foreground agent's stop made %s: %v", r.agents().dir, err)
	}
	r.must(t, pre("toolu_2", true))
	r.must(t, launch("toolu_2", "a2"))
	if _, err := r.Svc.FinishDispatch(t.Context(), "p1", 2, pipeline.FinishRequest{Status: "skipped"}); err != nil {
		t.Fatal(err)
	}
	o := r.must(t, subagentStop("a2", "a2"))
	check(t, "stop of a finished dispatch", o.Action, Ignored)
	check(t, "warnings", o.Warnings, []string{"dispatch 2 of pipeline p1, agent a2's, was already finished"})
	check(t, "kept", r.kept(t), []string{})
	check(t, "a name that cannot be a file's", r.must(t, subagentStop("../x", "../x")).Action, Ignored)
	check(t, "manifest", r.manifest(t), []string{"general-purpose | dispatched", "general-purpose | skipped | background"})
}

// TestLoneLaunch: a launch whose PreToolUse never came starts its dispatch,
// marked reconstructed, and waits for its agent like any other.
func TestLoneLaunch(t *testing.T) {
	r := recorder(t)
	o := r.must(t, launch("toolu_9", "a9"))
	check(t, "launch", [2]any{o.Action, o.Seq}, [2]any{Launched, 1})
	check(t, "warnings", o.Warnings, []string{"no PreToolUse was recorded for tool use toolu_9: dispatch 1 started from its PostToolUse, its agent running in the background"})
	m, err := r.Svc.Manifest(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "reconstructed, background, in flight", [3]any{m[0].Reconstructed, m[0].Background, m[0].Status}, [3]any{true, true, "dispatched"})
	r.must(t, subagentStop("a9", "a9"))
	check(t, "manifest", r.manifest(t), []string{"general-purpose | completed | background | said hi"})
}

// TestParent: calls made under an engine's dispatch are linked to it, when
// the pipeline has it.
func TestParent(t *testing.T) {
	r := recorder(t)
	r.must(t, pre("toolu_1", false))
	r.Pipeline, r.Parent = "p1", 1
	o := r.must(t, pre("toolu_2", false))
	check(t, "linked", o.Warnings, []string(nil))
	r.Parent = 7
	o = r.must(t, pre("toolu_3", false))
	check(t, "not linked", o.Warnings, []string{"pipeline p1 has no dispatch 7 (CRUCIBLE_SEQ): the call is recorded without a parent"})
	m, err := r.Svc.Manifest(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	var parents []any
	for _, d := range m {
		if d.ParentSeq == nil {
			parents = append(parents, nil)
		} else {
			parents = append(parents, *d.ParentSeq)
		}
	}
	check(t, "parents", parents, []any{nil, 1, nil})
}

// TestKeptFiles: a kept agent's file that is a symbolic link is not read.
func TestKeptFiles(t *testing.T) {
	r := recorder(t)
	a := r.agents()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(target, []byte(`{"agent_id":"a1","session_id":"s1","pipeline":"p1","seq":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, a.path("a1")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(t.Context(), subagentStop("a1", "a1")); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("a link was read: %v", err)
	}
	check(t, "nothing settled through a link", r.must(t, stop("s1")).Action, Ignored)
}
