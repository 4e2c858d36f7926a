package taskrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/dag"
	"github.com/git-crucible/git-crucible/internal/gittest"
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
	m      *dag.Manifest
	mu     sync.Mutex
	events []string
	fail   string // "task status": the record that fails, as a kill there would
}

func (rec *recorder) record(e Event) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if e.Task == "" {
		rec.events = append(rec.events, fmt.Sprintf("level %d boundary", e.Level))
		return nil
	}
	line := e.Task + " " + string(e.Status)
	if line == rec.fail {
		return errors.New("killed")
	}
	rec.events = append(rec.events, line)
	return rec.m.SetStatus(e.Task, e.Status, e.CommitSHA)
}

func TestRunThreeLevels(t *testing.T) {
	r, base := repo(t, "sha1")
	m, err := dag.Parse("dispatch.yaml", []byte(threeLevels))
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
	rec := &recorder{m: m, fail: "3a dispatched"}
	outputs := map[string][]byte{}
	plan := Plan{Manifest: m, Head: base, Outputs: outputs, Record: rec.record,
		Message: func(r Result) string { return "task " + r.ID + "\n" }}
	// The first run is killed as it records 3a's dispatch.
	if _, err := runner.Run(context.Background(), plan); err == nil || err.Error() != "killed" {
		t.Fatalf("error %v, want killed", err)
	}
	head := gittest.Git(t, ".", "rev-parse", "HEAD") // the branch was not moved
	if head != base {
		t.Fatal("the run moved HEAD")
	}
	// The caller moves the branch as a level's commits are recorded: the
	// resumed run starts from level 2's last.
	plan.Head = m.Task("3b").CommitSHA
	rec.fail = ""
	final, err := runner.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"1a dispatched", "1b dispatched", "1c dispatched", "level 1 boundary",
		"1a committed", "1a completed", "1b committed", "1b completed", "1c committed", "1c completed",
		"2a dispatched", "2b dispatched", "3b dispatched", "level 2 boundary",
		"2a committed", "2a completed", "2b committed", "2b completed", "3b committed", "3b completed",
		// killed at 3a dispatched; resumed:
		"3a dispatched", "3c dispatched", "level 3 boundary", "3a committed", "3a completed", "3c committed", "3c completed",
	}, "\n")
	if got := strings.Join(rec.events, "\n"); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
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
	m, err := dag.Parse("dispatch.yaml", []byte(`validation: {fast-gate: go vet ./...}
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
		Message: func(r Result) string { return r.ID }})
	var d *dag.Deadlock
	if !errors.As(err, &d) || err.Error() != "deadlock: 1 task can never run: d waits on c (failed)" {
		t.Fatalf("error %v, want a deadlock", err)
	}
	// a's commit is in HEAD: completed; b's is not: it runs again, as does c, left dispatched.
	want := "a completed\nb pending\nc pending\nb dispatched\nc dispatched\nc failed\nlevel 1 boundary\nb committed\nb completed\n" +
		"e dispatched\nlevel 2 boundary\ne committed\ne completed"
	if got := strings.Join(rec.events, "\n"); got != want {
		t.Fatalf("events\n%s", got)
	}
}
