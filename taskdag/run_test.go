package taskdag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

const threeLevels = `validation: {fast-gate: go vet ./...}
tasks:
  - {id: 1a, type: feature, agent: general, files: [1a.txt]}
  - {id: 1b, type: feature, agent: general, files: [1b.txt]}
  - {id: 1c, type: feature, agent: general, files: [1c.txt]}
  - {id: 2a, type: feature, agent: general, files: [2a.txt], depends-on: [1a, 1b], receives: [1a]}
  - {id: 2b, type: feature, agent: general, files: [2b.txt], depends-on: [1c]}
  - {id: 3a, type: feature, agent: general, files: [3a.txt], depends-on: [2a, 2b]}
  - {id: 3b, type: feature, agent: general, files: [3b.txt], depends-on: [1b]}
  - {id: 3c, agent: explore, depends-on: [2b]}
`

// recorder applies events to the manifest and keeps them as lines.
type recorder struct {
	m      *manifest.Manifest
	mu     sync.Mutex
	events []string
	kept   []Event // as recorded, for a resume to replay
	// fail is the record that fails, with its batch, as a kill there
	// would: a line, with "#n" its nth time ("1a committed#2").
	fail string
	seen map[string]int
}

func (rec *recorder) record(es ...Event) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.seen == nil {
		rec.seen = map[string]int{}
	}
	var lines []string
	for _, e := range es {
		line := e.Task + " " + string(e.Status)
		switch {
		case e.Task == "" && e.Round > 0:
			line = fmt.Sprintf("level %d round %d", e.Level, e.Round)
		case e.Task == "":
			line = fmt.Sprintf("level %d", e.Level)
		case e.Status == manifest.Fixing && e.Fix != "":
			line = fmt.Sprintf("%s fixed %d", e.Task, e.Round)
		case e.Status == manifest.Fixing:
			line = fmt.Sprintf("%s fixing %s %d", e.Task, e.Source, e.Round)
		case e.Status == manifest.Completed && e.Reason != "":
			line += " (" + e.Reason + ")"
		}
		rec.seen[line]++
		if line == rec.fail || fmt.Sprintf("%s#%d", line, rec.seen[line]) == rec.fail {
			return errors.New("killed")
		}
		lines = append(lines, line)
	}
	rec.events = append(rec.events, lines...)
	rec.kept = append(rec.kept, es...)
	for _, e := range es {
		if err := Apply(rec.m, e); err != nil {
			return err
		}
	}
	return nil
}

// ran notes that task's agent started, among the events.
func (rec *recorder) ran(task string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.events = append(rec.events, task+" ran")
}

// lines are the events recorded, the dispatches of a level (which the
// tasks record from their goroutines, in any order) sorted.
func (rec *recorder) lines() string {
	out := slices.Clone(rec.events)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasSuffix(out[j], " dispatched") {
			j++
		}
		slices.Sort(out[i:j])
		i = max(j, i+1)
	}
	return strings.Join(out, "\n")
}

func TestRunThreeLevels(t *testing.T) {
	r, base := repo(t, "sha1")
	m, err := manifest.Parse("dispatch.yaml", []byte(threeLevels))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	received := map[string]string{}
	runs := map[string]int{}
	runner := New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
		mu.Lock()
		runs[job.Task.ID]++
		var ups []string
		for _, u := range job.Upstream {
			ups = append(ups, u.ID+"="+strings.TrimSpace(string(u.Output)))
		}
		received[job.Task.ID] = strings.Join(ups, ",")
		mu.Unlock()
		// Each task sees its dependencies' work.
		for _, d := range job.Task.DependsOn {
			if _, err := os.Stat(filepath.Join(dir, d+".txt")); err != nil && d != "3c" {
				return nil, fmt.Errorf("%s does not see %s's work", job.Task.ID, d)
			}
		}
		if _, err := writer("")(ctx, job, dir); err != nil {
			return nil, err
		}
		return []byte(completed + "notes: from " + job.Task.ID + "\n"), nil
	})
	rec := &recorder{m: m, fail: "3a completed"}
	outputs := map[string][]byte{}
	plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", WorkRef: "refs/crucible/work/test",
		Outputs: outputs, Record: rec.record, Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), ",") + "\n" }}
	// The first run is killed as it records 3a completed, the branch moved.
	if _, err := runner.Run(context.Background(), plan); err == nil || err.Error() != "killed" {
		t.Fatalf("error %v, want killed", err)
	}
	// The branch, the work ref and the work tree hold level 3's last commit.
	head := gittest.Git(t, ".", "rev-parse", "HEAD")
	if head != m.LevelHeads[3] || gittest.Git(t, ".", "rev-parse", "refs/crucible/work/test") != head {
		t.Fatal("the branch or the work ref is not at level 3's last commit")
	}
	if st := gittest.Git(t, ".", "status", "--porcelain"); st != "" {
		t.Fatalf("the work tree did not follow the branch:\n%s", st)
	}
	plan.Head = head
	rec.fail = ""
	final, err := runner.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"1a dispatched", "1b dispatched", "1c dispatched",
		"1a committed", "1b committed", "1c committed", "level 1", "1a completed", "1b completed", "1c completed",
		"2a dispatched", "2b dispatched", "3b dispatched",
		"2a committed", "2b committed", "3b committed", "level 2", "2a completed", "2b completed", "3b completed",
		"3a dispatched", "3c dispatched", "3a committed", "3c committed", "level 3",
		// killed at 3a completed; resumed: both are in the branch.
		"3a completed", "3c completed",
	}, "\n")
	if got := rec.lines(); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if gittest.Git(t, ".", "rev-parse", "HEAD") != final {
		t.Fatal("the branch is not at the run's last commit")
	}
	if got := gittest.Git(t, ".", "log", "--format=%s", "--reverse", base+".."+final); got != "task 1a\ntask 1b\ntask 1c\ntask 2a\ntask 2b\ntask 3b\ntask 3a" {
		t.Fatalf("log:\n%s", got)
	}
	for id, n := range runs {
		if n != 1 {
			t.Fatalf("task %s ran %d times", id, n)
		}
	}
	if received["2a"] != "1a=status: completed\nfiles-modified: []\ndeviations: []\nnotes: from 1a" || received["3a"] == "" {
		t.Fatalf("upstream: %q", received)
	}
}

func TestRunDeadlockAndSettle(t *testing.T) {
	r, base := repo(t, "sha1")
	m, err := manifest.Parse("dispatch.yaml", []byte(`validation: {fast-gate: go vet ./...}
tasks:
  - {id: a, type: feature, agent: general, status: committed, commit-sha: `+base+`}
  - {id: b, type: feature, agent: general, status: committed, commit-sha: 0123456789012345678901234567890123456789}
  - {id: c, type: feature, agent: general, status: dispatched}
  - {id: d, type: feature, agent: general, depends-on: [c]}
  - {id: e, type: feature, agent: general, depends-on: [a, b]}
`))
	if err != nil {
		t.Fatal(err)
	}
	runner := New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
		if job.Task.ID == "c" {
			return []byte("status: failed\nerror: cannot\n"), nil
		}
		return []byte(completed), nil
	})
	rec := &recorder{m: m}
	_, err = runner.Run(context.Background(), Plan{Manifest: m, Head: base, Outputs: map[string][]byte{}, Record: rec.record,
		Message: func(u Unit) string { return strings.Join(u.Tasks(), ",") }})
	var d *manifest.Deadlock
	if !errors.As(err, &d) || err.Error() != "deadlock: 1 task can never run: d waits on c (failed)" {
		t.Fatalf("error %v, want a deadlock", err)
	}
	// a's commit is in HEAD: completed; b's is not: it runs again, as does c, left dispatched.
	// b and e change nothing: committed without a commit, and no level.
	want := "a completed\nb pending\nc pending\nb dispatched\nc dispatched\nc failed\nb committed\nb completed\n" +
		"e dispatched\ne committed\ne completed"
	if got := rec.lines(); got != want {
		t.Fatalf("events\n%s", got)
	}
}

// A run killed after it recorded a level, before the branch or the work
// tree followed, finishes the move when it resumes and runs nothing again.
func TestRunFinishesMove(t *testing.T) {
	for _, tc := range []struct{ name, undo string }{
		{"branch", "--hard"},    // the branch still at the boundary
		{"work tree", "--soft"}, // the branch moved, the index and work tree not
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, base := repo(t, "sha1")
			m, err := manifest.Parse("dispatch.yaml", []byte("validation: {fast-gate: make}\ntasks:\n"+
				"  - {id: a, type: feature, agent: general, files: [a.txt]}\n  - {id: b, type: feature, agent: general, files: [b.txt]}\n"))
			if err != nil {
				t.Fatal(err)
			}
			runs := 0
			var mu sync.Mutex
			runner := New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
				mu.Lock()
				runs++
				mu.Unlock()
				return writer(completed)(ctx, job, dir)
			})
			rec := &recorder{m: m, fail: "a completed"}
			plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", Outputs: map[string][]byte{}, Record: rec.record,
				Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), ",") + "\n" }}
			if _, err := runner.Run(context.Background(), plan); err == nil {
				t.Fatal("not killed")
			}
			head := m.LevelHeads[1]
			gittest.Git(t, ".", "reset", "-q", tc.undo, base)
			plan.Head = base
			rec.fail = ""
			final, err := runner.Run(context.Background(), plan)
			if err != nil || final != head {
				t.Fatalf("run: %v, head %s want %s", err, final, head)
			}
			if runs != 2 || m.Task("a").Status != manifest.Completed || m.Task("b").Status != manifest.Completed {
				t.Fatalf("%d runs, a %s, b %s", runs, m.Task("a").Status, m.Task("b").Status)
			}
			if gittest.Git(t, ".", "rev-parse", "HEAD") != head || gittest.Git(t, ".", "status", "--porcelain") != "" {
				t.Fatalf("HEAD or the work tree is not at the level's head:\n%s", gittest.Git(t, ".", "status", "--porcelain"))
			}
		})
	}
}

// A run killed as it records any of a level's events resumes without
// running the agent of a task recorded committed: the tasks committed and
// the level that decides them are recorded at once.
func TestRunKilledAtARecord(t *testing.T) {
	for _, fail := range []string{"a dispatched", "a committed", "b committed", "level 1", "a completed", "b completed"} {
		t.Run(fail, func(t *testing.T) {
			r, base := repo(t, "sha1")
			m, err := manifest.Parse("dispatch.yaml", []byte("validation: {fast-gate: make}\ntasks:\n"+
				"  - {id: a, type: feature, agent: general, files: [a.txt]}\n  - {id: b, type: feature, agent: general, files: [b.txt]}\n"))
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{m: m, fail: fail}
			runner := New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
				rec.ran(job.Task.ID)
				return writer(completed)(ctx, job, dir)
			})
			plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", Outputs: map[string][]byte{}, Record: rec.record,
				Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), ",") + "\n" }}
			if _, err := runner.Run(context.Background(), plan); err == nil {
				t.Fatal("not killed")
			}
			plan.Head = gittest.Git(t, ".", "rev-parse", "HEAD")
			rec.fail = ""
			if _, err := runner.Run(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			committed := map[string]bool{}
			for _, l := range rec.events {
				task, what, _ := strings.Cut(l, " ")
				switch {
				case what == "committed":
					committed[task] = true
				case what == "ran" && committed[task]:
					t.Errorf("%s's agent ran after it was committed:\n%s", task, strings.Join(rec.events, "\n"))
				}
			}
			if m.Task("a").Status != manifest.Completed || m.Task("b").Status != manifest.Completed {
				t.Errorf("a %s, b %s", m.Task("a").Status, m.Task("b").Status)
			}
			if n := gittest.Git(t, ".", "rev-list", "--count", base+"..HEAD"); n != "2" {
				t.Errorf("%s commits on the branch, want one per task", n)
			}
		})
	}
}

// A run killed after its tasks' dispatches finished, before they were
// committed, takes each completed dispatch's work from its slot as the
// agent left it, running no agent again; when the work is gone, or the
// dispatch did not complete, the task is pending again with the reason,
// and runs again.
func TestRunTakesFinishedWork(t *testing.T) {
	for _, tc := range []struct {
		name  string
		left  func(t *testing.T, f *Finished) // how a's dispatch ended, and what happened to its slot since
		again string                          // why a runs again, "" when its work is taken
	}{
		{"taken", func(*testing.T, *Finished) {}, ""},
		{"slot gone", func(t *testing.T, f *Finished) { gittest.Git(t, ".", "worktree", "remove", "--force", f.Worktree) },
			"dispatch 1 completed, but its worktree SLOT is gone"},
		{"slot reused", func(_ *testing.T, f *Finished) { f.Reused = "c" },
			"dispatch 1 completed, but task c was dispatched in its worktree SLOT before its work was committed"},
		{"slot moved on", func(t *testing.T, f *Finished) {
			gittest.Git(t, f.Worktree, "checkout", "-q", "--detach", "HEAD~1")
		}, "dispatch 1 completed, but its worktree SLOT is not on the commit its level starts from, BASE"},
		{"failed", func(_ *testing.T, f *Finished) { f.Status, f.Summary = "failed", "the agent exited with status 2" },
			"dispatch 1 ended failed: the agent exited with status 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := repo(t, "sha1")
			gittest.Git(t, ".", "commit", "-q", "--allow-empty", "-m", "second")
			base := gittest.Git(t, ".", "rev-parse", "HEAD")
			m, err := manifest.Parse("dispatch.yaml", []byte("validation: {fast-gate: make}\ntasks:\n"+
				"  - {id: a, type: feature, agent: general, files: [a.txt]}\n  - {id: b, type: feature, agent: general, files: [b.txt]}\n"))
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{m: m, fail: "a committed"}
			runner := New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
				rec.ran(job.Task.ID)
				return writer(completed)(ctx, job, dir)
			})
			plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", Outputs: map[string][]byte{}, Record: rec.record,
				Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), ",") + "\n" }}
			if _, err := runner.Run(context.Background(), plan); err == nil {
				t.Fatal("not killed")
			}
			finished := map[string]*Finished{}
			for _, e := range rec.kept {
				if e.Status == manifest.Dispatched {
					seq := map[string]int{"a": 1, "b": 2}[e.Task]
					finished[e.Task] = &Finished{Seq: seq, Status: "completed", Report: []byte(completed), Worktree: e.Worktree}
				}
			}
			slot := finished["a"].Worktree
			tc.left(t, finished["a"])
			rec.fail, rec.events, rec.kept = "", nil, nil
			plan.Finished = func(task string) (*Finished, error) { return finished[task], nil }
			if _, err := runner.Run(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			var why, ran, wantWhy, wantRan []string
			for _, e := range rec.kept {
				if e.Status == manifest.Pending {
					why = append(why, e.Task+": "+e.Reason)
				}
			}
			for _, l := range rec.events {
				if strings.HasSuffix(l, " ran") {
					ran = append(ran, l)
				}
			}
			if tc.again != "" {
				wantWhy = []string{"a: " + strings.NewReplacer("SLOT", slot, "BASE", base).Replace(tc.again)}
				wantRan = []string{"a ran"}
			}
			if !slices.Equal(why, wantWhy) {
				t.Errorf("pending again: %q, want %q", why, wantWhy)
			}
			if !slices.Equal(ran, wantRan) {
				t.Errorf("agents run on resume: %q, want %q", ran, wantRan)
			}
			if m.Task("a").Status != manifest.Completed || m.Task("b").Status != manifest.Completed {
				t.Errorf("a %s, b %s", m.Task("a").Status, m.Task("b").Status)
			}
			if got := gittest.Git(t, ".", "log", "--format=%s", "--name-only", base+"..HEAD"); got != "task b\n\nb.txt\ntask a\n\na.txt" {
				t.Errorf("the branch's commits since the run began:\n%s", got)
			}
		})
	}
}

// Between runs before each level and once at the end, after the tasks
// before it completed; a commit it makes on the branch is where the next
// level starts, and its error ends the run.
func TestRunBetween(t *testing.T) {
	r, base := repo(t, "sha1")
	m, err := manifest.Parse("dispatch.yaml", []byte("validation: {fast-gate: make}\ntasks:\n"+
		"  - {id: a, type: feature, agent: general, files: [a.txt]}\n  - {id: b, type: feature, agent: general, files: [b.txt], depends-on: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	runner := New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
		if _, err := os.Stat(filepath.Join(dir, "fix.txt")); job.Task.ID == "b" && err != nil {
			return nil, errors.New("b does not see the fix made between the levels")
		}
		return writer(completed)(ctx, job, dir)
	})
	rec := &recorder{m: m}
	var calls []string
	plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", Outputs: map[string][]byte{}, Record: rec.record,
		Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), ",") + "\n" },
		Between: func(head string) (string, error) {
			calls = append(calls, fmt.Sprintf("a %s, b %s", m.Task("a").Status, m.Task("b").Status))
			if m.Task("a").Status != manifest.Completed || m.Task("b").Status != manifest.Pending {
				return head, nil
			}
			if head != gittest.Git(t, ".", "rev-parse", "HEAD") {
				return head, errors.New("Between is not given the branch's head")
			}
			if err := os.WriteFile("fix.txt", []byte("fix\n"), 0o644); err != nil {
				return head, err
			}
			gittest.Git(t, ".", "add", "fix.txt")
			gittest.Git(t, ".", "commit", "-q", "-m", "fix a")
			return gittest.Git(t, ".", "rev-parse", "HEAD"), nil
		}}
	final, err := runner.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a pending, b pending", "a completed, b pending", "a completed, b completed"}; !slices.Equal(calls, want) {
		t.Fatalf("Between saw %q, want %q", calls, want)
	}
	if got := gittest.Git(t, ".", "log", "--format=%s", "--reverse", base+".."+final); got != "task a\nfix a\ntask b" {
		t.Fatalf("log:\n%s", got)
	}
	plan.Between = func(head string) (string, error) { return head, errors.New("stop") }
	if _, err := runner.Run(context.Background(), plan); err == nil || err.Error() != "stop" {
		t.Fatalf("error %v, want Between's", err)
	}
}

// TestRunHalted: once Halt says no more dispatches, a level's tasks not
// started stay pending (one the engine refused after it was recorded
// dispatched is put back), those that ran are committed and completed,
// and the run stops with the halt; run again without it, it goes on
// with the pending task and never runs a task twice.
func TestRunHalted(t *testing.T) {
	const manifestText = `validation: {fast-gate: go vet ./...}
tasks:
  - {id: 1a, type: feature, agent: general, files: [1a.txt]}
  - {id: 1b, type: feature, agent: general, files: [1b.txt]}
  - {id: 1c, type: feature, agent: general, files: [1c.txt]}
  - {id: 2a, type: feature, agent: general, files: [2a.txt], depends-on: [1a]}
`
	for _, refusedBy := range []string{"halt", "dispatcher"} {
		t.Run(refusedBy, func(t *testing.T) {
			r, base := repo(t, "sha1")
			m, err := manifest.Parse("dispatch.yaml", []byte(manifestText))
			if err != nil {
				t.Fatal(err)
			}
			halted := fmt.Errorf("the cost cap: %w", ErrHalted)
			var mu sync.Mutex
			runs := map[string]int{}
			stop := false // once a task ran
			runner := New(r, 1, func(ctx context.Context, job Job, dir string) ([]byte, error) {
				mu.Lock()
				if stop && refusedBy == "dispatcher" {
					mu.Unlock()
					return nil, halted
				}
				runs[job.Task.ID]++
				stop = true
				mu.Unlock()
				return writer(completed)(ctx, job, dir)
			})
			runner.Halt = func() error {
				mu.Lock()
				defer mu.Unlock()
				if stop && refusedBy == "halt" {
					return halted
				}
				return nil
			}
			rec := &recorder{m: m}
			plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", WorkRef: "refs/crucible/work/test", Outputs: map[string][]byte{},
				Record: rec.record, Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), " ") + "\n" }}
			if _, err := runner.Run(context.Background(), plan); !errors.Is(err, halted) {
				t.Fatalf("error %v, want the halt", err)
			}
			want := "1a dispatched\n1a committed\nlevel 1\n1a completed"
			if refusedBy == "dispatcher" {
				want = "1a dispatched\n1b dispatched\n1c dispatched\n1b pending\n1c pending\n1a committed\nlevel 1\n1a completed"
			}
			if got := rec.lines(); got != want {
				t.Fatalf("events\n%s\nwant\n%s", got, want)
			}
			for id, st := range map[string]manifest.TaskStatus{"1a": manifest.Completed, "1b": manifest.Pending, "1c": manifest.Pending, "2a": manifest.Pending} {
				if got := m.Task(id).Status; got != st {
					t.Fatalf("task %s %s, want %s", id, got, st)
				}
			}
			if read(".", "1a.txt") != "1a.txt" || read(".", "1b.txt") != "" {
				t.Fatal("the branch does not hold 1a's work alone")
			}
			// Run again, no longer halted.
			mu.Lock()
			refusedBy = "none"
			mu.Unlock()
			plan.Head = gittest.Git(t, ".", "rev-parse", "main")
			if _, err := runner.Run(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			for _, task := range m.Tasks {
				if task.Status != manifest.Completed || runs[task.ID] != 1 {
					t.Fatalf("task %s %s, ran %d times", task.ID, task.Status, runs[task.ID])
				}
			}
		})
	}
}
