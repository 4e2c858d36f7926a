package taskdag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

const gated = `validation: {fast-gate: "! grep -q uses-1b 1a.txt || test -f 1b.txt"}
tasks:
  - {id: 1a, type: feature, agent: general, files: [1a.txt]}
  - {id: 1b, type: feature, agent: general, files: [1b.txt]}
  - {id: 2a, type: feature, agent: general, files: [2a.txt], depends-on: [1a, 1b]}
`

// gateRun is a run of the gated manifest whose critic and fixer a test
// scripts; it counts what ran.
type gateRun struct {
	t      *testing.T
	critic func(rv Review, dir string) (string, error) // the report
	fixer  func(f FixJob, dir string) string           // what the fix writes to the task's file
	mu     sync.Mutex
	ran    map[string]int // task agents, fixes ("fix 1b") and critiques ("critique 1/0")
	fixes  []FixJob
}

func (g *gateRun) count(what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ran[what]++
}

func (g *gateRun) runner(r *Runner) *Runner {
	r.Gate = &Gate{
		Critic: func(ctx context.Context, rv Review, dir string) ([]byte, error) {
			g.count(fmt.Sprintf("critique %d/%d", rv.Level, rv.Round))
			rep, err := g.critic(rv, dir)
			if rep == "" {
				return nil, err
			}
			return []byte(rep), err
		},
		Fix: func(ctx context.Context, f FixJob, dir string) ([]byte, error) {
			g.count("fix " + f.Task.ID)
			g.fixes = append(g.fixes, f)
			content := g.fixer(f, dir)
			if err := os.WriteFile(filepath.Join(dir, f.Task.Files[0]), []byte(content+"\n"), 0o644); err != nil {
				return nil, err
			}
			return []byte(completed), nil
		},
	}
	return r
}

func newGateRun(t *testing.T) (*gateRun, *Runner, Plan, *recorder) {
	r, base := repo(t, "sha1")
	m, err := manifest.Parse("dispatch.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	g := &gateRun{t: t, ran: map[string]int{}}
	runner := g.runner(New(r, 2, func(ctx context.Context, job Job, dir string) ([]byte, error) {
		g.count(job.Task.ID)
		return writer(completed)(ctx, job, dir)
	}))
	rec := &recorder{m: m}
	plan := Plan{Manifest: m, Head: base, Branch: "refs/heads/main", WorkRef: "refs/crucible/work/test", Outputs: map[string][]byte{},
		FastGate: m.Validation.FastGate, Record: rec.record, Message: func(u Unit) string { return "task " + strings.Join(u.Tasks(), " ") + "\n" }}
	return g, runner, plan, rec
}

func needsWork(task, what string) string {
	return fmt.Sprintf("verdict: needs-work\nissues:\n  - {task-id: %s, severity: blocking, file: %s.txt, description: %q}\n", task, task, what)
}

const accepted = "verdict: accepted\nissues: []\n"

// read is a file of the slot the critic works in.
func read(dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return strings.TrimSpace(string(b))
}

const (
	level1     = "1a dispatched\n1b dispatched\n1a committed\n1b committed\nlevel 1\n"
	level2     = "2a dispatched\n2a committed\nlevel 2\n2a completed"
	rebuilt1   = "1a committed\n1b committed\nlevel 1 round 1\n"
	completed1 = "1a completed\n1b completed\n"
)

func TestGate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		critic func(rv Review, dir string) (string, error)
		fixer  func(f FixJob, dir string) string
		want   string // the events
		files  string // 1a.txt and 1b.txt at the end
		err    string
		noGate bool // the manifest gives no command to check rebuilt commits with
	}{{
		name: "needs-work fixed in one round",
		critic: func(rv Review, dir string) (string, error) {
			if rv.Level == 1 && read(dir, "1b.txt") != "fixed" {
				return needsWork("1b", "1b.txt must say fixed"), nil
			}
			return accepted, nil
		},
		fixer: func(FixJob, string) string { return "fixed" },
		want:  level1 + "1b fixing critique 1\n1b fixed 1\n" + rebuilt1 + completed1 + level2,
		files: "1a.txt fixed",
	}, {
		// A critique that did not judge never accepts: the run stops, the
		// level committed on the work ref, the branch where it was.
		name:   "a crashed critique stops the run",
		critic: func(Review, string) (string, error) { return "", errors.New("dispatch 3 failed: exit status 3") },
		want:   strings.TrimSuffix(level1, "\n"),
		files:  " missing",
		err:    "level 1: its critique did not judge, so the level is not accepted: dispatch 3 failed: exit status 3",
	}, {
		name: "a garbage critique stops the run",
		critic: func(rv Review, dir string) (string, error) {
			if rv.Level == 1 {
				return "verdict: [", nil
			}
			return accepted, nil
		},
		want:  strings.TrimSuffix(level1, "\n"),
		files: " missing",
		err:   "level 1: its critique did not judge, so the level is not accepted: report: line 1: did not find expected node content",
	}, {
		name:   "a critique with no report stops the run",
		critic: func(rv Review, dir string) (string, error) { return "", nil },
		want:   strings.TrimSuffix(level1, "\n"),
		files:  " missing",
		err:    "level 1: its critique did not judge, so the level is not accepted: it wrote no report",
	}, {
		name: "a critique of an amendment round that did not judge stops the run",
		critic: func(rv Review, dir string) (string, error) {
			if rv.Round == 0 {
				return needsWork("1b", "1b.txt must say fixed"), nil
			}
			return "", errors.New("dispatch 5 error: interrupted: timed out after 10m0s")
		},
		fixer: func(FixJob, string) string { return "fixed" },
		want:  level1 + "1b fixing critique 1\n1b fixed 1\n" + strings.TrimSuffix(rebuilt1, "\n"),
		files: " missing",
		err:   "level 1: its critique did not judge, so the level is not accepted: dispatch 5 error: interrupted: timed out after 10m0s",
	}, {
		// The cost cap stopped the critique before it started: the run
		// halts (the engine records the escalation), nothing accepted.
		name:   "a critique halted before it started stops the run",
		critic: func(Review, string) (string, error) { return "", fmt.Errorf("cost cap: %w", ErrHalted) },
		want:   strings.TrimSuffix(level1, "\n"),
		files:  " missing",
		err:    "cost cap: " + ErrHalted.Error(),
	}, {
		name: "a critique's changes are discarded with a warning",
		critic: func(rv Review, dir string) (string, error) {
			if rv.Level == 1 {
				os.WriteFile(filepath.Join(dir, "1a.txt"), []byte("critic\n"), 0o644)
				os.WriteFile(filepath.Join(dir, "junk.txt"), []byte("junk\n"), 0o644)
			}
			return accepted, nil
		},
		want: level1 + "1a completed (the critique changed 1a.txt, junk.txt: discarded)\n" +
			"1b completed (the critique changed 1a.txt, junk.txt: discarded)\n" + level2,
		files: "1a.txt 1b.txt",
	}, {
		name:   "a rebuilt commit failing the fast gate goes back to fixing",
		critic: regressCritic,
		fixer:  regressFixer,
		want: level1 + "1a fixing critique 1\n1a fixed 1\n" + rebuilt1 +
			"1a fixing verification 2\n1a fixed 2\n1a committed\n1b committed\nlevel 1 round 2\n" + completed1 + level2,
		files: "standalone 1b.txt",
	}, {
		name:   "round 4 escalates",
		critic: func(rv Review, dir string) (string, error) { return needsWork("1a", "still wrong"), nil },
		fixer:  func(f FixJob, _ string) string { return fmt.Sprintf("try %d", f.Round) },
		want: level1 + "1a fixing critique 1\n1a fixed 1\n" + rebuilt1 +
			"1a fixing critique 2\n1a fixed 2\n1a committed\n1b committed\nlevel 1 round 2\n" +
			"1a fixing critique 3\n1a fixed 3\n1a committed\n1b committed\nlevel 1 round 3",
		files: " missing",
		err:   "level 1: amendment round 4 would start (tasks 1a still need work): the run escalates",
	}, {
		name: "round 3 accepted with a warning",
		critic: func(rv Review, dir string) (string, error) {
			if rv.Level == 1 && rv.Round < 3 {
				return needsWork("1a", "still wrong"), nil
			}
			return accepted, nil
		},
		fixer: func(f FixJob, _ string) string { return fmt.Sprintf("try %d", f.Round) },
		want: level1 + "1a fixing critique 1\n1a fixed 1\n" + rebuilt1 +
			"1a fixing critique 2\n1a fixed 2\n1a committed\n1b committed\nlevel 1 round 2\n" +
			"1a fixing critique 3\n1a fixed 3\n1a committed\n1b committed\nlevel 1 round 3\n" +
			"1a completed (amendment round 3: one more and the run escalates)\n1b completed\n" + level2,
		files: "try 3 1b.txt",
	}, {
		name: "a rebuilt level with no gate to check its commits stops",
		critic: func(rv Review, dir string) (string, error) {
			return needsWork("1b", "1b.txt must say fixed"), nil
		},
		fixer:  func(FixJob, string) string { return "fixed" },
		noGate: true,
		want:   level1 + "1b fixing critique 1\n1b fixed 1\n" + strings.TrimSuffix(rebuilt1, "\n"),
		files:  " missing",
		err:    ErrNoCommitGate.Error(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g, runner, plan, rec := newGateRun(t)
			g.critic, g.fixer = tc.critic, tc.fixer
			if tc.noGate {
				plan.FastGate = ""
			}
			_, err := runner.Run(context.Background(), plan)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := rec.lines(); got != tc.want {
				t.Fatalf("events\n%s\nwant\n%s", got, tc.want)
			}
			if got := read(".", "1a.txt") + " " + or(read(".", "1b.txt"), "missing"); got != tc.files {
				t.Fatalf("files %q, want %q", got, tc.files)
			}
			if st := gittest.Git(t, ".", "status", "--porcelain"); st != "" {
				t.Fatalf("the work tree is not clean:\n%s", st)
			}
			for _, id := range []string{"1a", "1b"} {
				if g.ran[id] != 1 {
					t.Fatalf("task %s ran %d times", id, g.ran[id])
				}
			}
			if tc.err != "" {
				return
			}
			// Each task's commit is its own, its message kept through the rebuild.
			log := gittest.Git(t, ".", "log", "--format=%s", "--name-only", "--reverse", plan.Head+"..HEAD")
			if log != "task 1a\n\n1a.txt\ntask 1b\n\n1b.txt\ntask 2a\n\n2a.txt" {
				t.Fatalf("log:\n%s", log)
			}
		})
	}
}

// regressCritic sends 1a back once; regressFixer's first fix makes 1a.txt
// use 1b's file, which 1a's own commit does not have (the fast gate
// fails there), its second stands alone.
func regressCritic(rv Review, dir string) (string, error) {
	if rv.Level == 1 && rv.Round == 0 {
		return needsWork("1a", "1a.txt must use 1b"), nil
	}
	return accepted, nil
}

func regressFixer(f FixJob, _ string) string {
	if f.Source == SourceVerification {
		return "standalone"
	}
	return "uses-1b"
}

// resume makes plan a new process's: the manifest and the amendments
// replayed from the events rec kept, as the build engine does; the
// recorder it returns records the resumed run.
func resume(t *testing.T, rec *recorder, plan *Plan) *recorder {
	t.Helper()
	m, err := manifest.Parse("dispatch.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	amend := &Amendments{}
	for _, e := range rec.kept {
		if err := Apply(m, e); err != nil {
			t.Fatal(err)
		}
		amend.Apply(e)
	}
	resumed := &recorder{m: m}
	plan.Manifest, plan.Amend, plan.Record = m, amend, resumed.record
	return resumed
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// TestGateFixIssues: a fix agent is given the critique's issues, or the
// fast gate's failure.
func TestGateFixIssues(t *testing.T) {
	g, runner, plan, _ := newGateRun(t)
	g.critic, g.fixer = regressCritic, regressFixer
	if _, err := runner.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if len(g.fixes) != 2 || g.fixes[0].Issues[0].Description != "1a.txt must use 1b" || g.fixes[0].Issues[0].File != "1a.txt" ||
		!strings.HasPrefix(g.fixes[1].Issues[0].Description, "the fast gate `! grep -q uses-1b 1a.txt || test -f 1b.txt` fails at the rebuilt commit ") {
		t.Fatalf("fixes: %+v", g.fixes)
	}
}

// TestGateResume kills a run at each step of an amendment round and
// resumes it from the events recorded, as the build engine does: it
// converges, no task agent runs again, and the fix is never lost.
func TestGateResume(t *testing.T) {
	for _, tc := range []struct {
		kill  string
		fixes int // fix agents run in all
	}{
		{"1b fixing critique 1", 1},
		{"1b fixed 1", 2}, // the fix ran; not recorded, it runs again
		{"1a committed#2", 1},
		{"1b committed#2", 1},
		{"level 1 round 1", 1},
		{"1a completed", 1},
		{"1b completed", 1},
	} {
		t.Run(tc.kill, func(t *testing.T) {
			g, runner, plan, rec := newGateRun(t)
			g.critic = func(rv Review, dir string) (string, error) {
				if rv.Level == 1 && read(dir, "1b.txt") != "fixed" {
					return needsWork("1b", "1b.txt must say fixed"), nil
				}
				return accepted, nil
			}
			g.fixer = func(FixJob, string) string { return "fixed" }
			rec.fail = tc.kill
			if _, err := runner.Run(context.Background(), plan); err == nil || err.Error() != "killed" {
				t.Fatalf("error %v, want killed", err)
			}
			// What only the events name is gone unless a ref holds it.
			gittest.Git(t, ".", "reflog", "expire", "--expire=now", "--all")
			gittest.Git(t, ".", "gc", "-q", "--prune=now")
			// A new process: the manifest and the amendments from the events.
			resume(t, rec, &plan)
			m := plan.Manifest
			plan.Head = gittest.Git(t, ".", "rev-parse", "main")
			plan.Outputs = map[string][]byte{}
			final, err := runner.Run(context.Background(), plan)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range m.Tasks {
				if task.Status != manifest.Completed {
					t.Fatalf("task %s %s", task.ID, task.Status)
				}
			}
			if final != gittest.Git(t, ".", "rev-parse", "HEAD") || read(".", "1b.txt") != "fixed" ||
				gittest.Git(t, ".", "status", "--porcelain") != "" {
				t.Fatal("the branch, or the work tree, does not hold the fix")
			}
			log := gittest.Git(t, ".", "log", "--format=%s", "--name-only", "--reverse", "main~3..main")
			if log != "task 1a\n\n1a.txt\ntask 1b\n\n1b.txt\ntask 2a\n\n2a.txt" {
				t.Fatalf("log:\n%s", log)
			}
			for _, id := range []string{"1a", "1b", "2a"} {
				if g.ran[id] != 1 {
					t.Fatalf("task %s ran %d times", id, g.ran[id])
				}
			}
			if g.ran["fix 1b"] != tc.fixes {
				t.Fatalf("%d fixes, want %d", g.ran["fix 1b"], tc.fixes)
			}
		})
	}
}

// TestGateResumeChecks: a run killed after a rebuilt level was recorded,
// its fast gate failing there, checks the rebuilt commits again when it
// resumes instead of taking them to the critique.
func TestGateResumeChecks(t *testing.T) {
	g, runner, plan, rec := newGateRun(t)
	g.critic, g.fixer = regressCritic, regressFixer
	rec.fail = "1a fixing verification 2"
	if _, err := runner.Run(context.Background(), plan); err == nil || err.Error() != "killed" {
		t.Fatalf("error %v, want killed", err)
	}
	resumed := resume(t, rec, &plan)
	if _, err := runner.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	want := "1a fixing verification 2\n1a fixed 2\n1a committed\n1b committed\nlevel 1 round 2\n" + completed1 + level2
	if got := resumed.lines(); got != want || read(".", "1a.txt") != "standalone" {
		t.Fatalf("1a.txt %q, events\n%s\nwant\n%s", read(".", "1a.txt"), got, want)
	}
}

// TestGateCritiqueRetried: a run stopped by a critique that did not judge
// goes on, when run again, with the critique of the same level and round,
// and accepts the level only once it has judged; no task runs again.
func TestGateCritiqueRetried(t *testing.T) {
	g, runner, plan, rec := newGateRun(t)
	tries := 0
	g.critic = func(rv Review, dir string) (string, error) {
		if rv.Level == 1 {
			tries++
			if tries == 1 {
				return "verdict: [", nil
			}
		}
		return accepted, nil
	}
	_, err := runner.Run(context.Background(), plan)
	var ce *CritiqueError
	if !errors.As(err, &ce) || ce.Level != 1 || ce.Round != 0 {
		t.Fatalf("error %v, want level 1's critique", err)
	}
	if head := gittest.Git(t, ".", "rev-parse", "main"); head != plan.Head {
		t.Fatal("the branch moved past a level its critique did not judge")
	}
	if rec.m.Task("1a").Status != manifest.Committed || rec.m.Task("1b").Status != manifest.Committed {
		t.Fatalf("tasks %s, %s: want committed, waiting for the critique", rec.m.Task("1a").Status, rec.m.Task("1b").Status)
	}
	resumed := resume(t, rec, &plan)
	if _, err := runner.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if got, want := resumed.lines(), completed1+level2; got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if g.ran["critique 1/0"] != 2 || g.ran["1a"] != 1 || g.ran["1b"] != 1 {
		t.Fatalf("ran %v: want level 1's critique twice, each task once", g.ran)
	}
}
