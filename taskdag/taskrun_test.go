package taskdag

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// repo makes a repository whose one commit holds base.txt.
func repo(t testing.TB, format string) (*gitext.Repo, string) {
	t.Helper()
	gittest.Hermetic(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main", "--object-format="+format)
	if err := os.WriteFile(filepath.Join(dir, "base.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "base")
	gittest.Chdir(t, dir)
	r, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, gittest.Git(t, dir, "rev-parse", "HEAD")
}

const completed = "status: completed\nfiles-modified: []\ndeviations: []\n"

// writer is an agent that writes each of its task's files (their name as
// content) and reports report.
func writer(report string) Dispatcher {
	return func(_ context.Context, job Job, workdir string) ([]byte, error) {
		for _, f := range job.Task.Files {
			if err := os.WriteFile(filepath.Join(workdir, f), []byte(f+"\n"), 0o644); err != nil {
				return nil, err
			}
		}
		return []byte(report), nil
	}
}

func jobs(specs ...string) []Job {
	var out []Job
	for _, s := range specs {
		id, files, _ := strings.Cut(s, ":")
		var fs []string
		if files != "" {
			fs = strings.Split(files, ",")
		}
		out = append(out, Job{Task: manifest.Task{ID: id, Files: fs}})
	}
	return out
}

func TestRunLevelParallelIsolated(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			r, base := repo(t, format)
			var running, peak atomic.Int32
			var mu sync.Mutex
			seen := map[string]string{}
			runner := New(r, 2, func(ctx context.Context, job Job, workdir string) ([]byte, error) {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				// Each task sees the base alone, whatever the others write.
				entries, _ := os.ReadDir(workdir)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				mu.Lock()
				seen[job.Task.ID] = strings.Join(names, " ")
				mu.Unlock()
				// Wait (bounded) for a second agent: a fixed 50 ms let a
				// loaded machine set up the second slot after the first
				// agent had finished, and the test failed.
				for deadline := time.Now().Add(10 * time.Second); peak.Load() < 2 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				return writer(completed)(ctx, job, workdir)
			})
			res, err := runner.RunLevel(context.Background(), base, jobs("a:a.txt", "b:b.txt", "c:c.txt,base.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if peak.Load() != 2 {
				t.Fatalf("%d agents at once, want 2", peak.Load())
			}
			for _, id := range []string{"a", "b", "c"} {
				if seen[id] != ".git base.txt" {
					t.Fatalf("task %s saw %q", id, seen[id])
				}
			}
			want := map[string][]string{"a": {"a.txt"}, "b": {"b.txt"}, "c": {"base.txt", "c.txt"}}
			for _, got := range res {
				if !got.Passed || got.Reason != "" || !reflect.DeepEqual(got.Changed, want[got.ID]) || got.Slot < 1 || got.Slot > 2 {
					t.Fatalf("result %+v", got)
				}
				// The task's tree holds its own work and nothing else.
				files := gittest.Git(t, ".", "ls-tree", "-r", "--name-only", got.Tree)
				wantFiles := map[string]string{"a": "a.txt\nbase.txt", "b": "b.txt\nbase.txt", "c": "base.txt\nc.txt"}[got.ID]
				if files != wantFiles {
					t.Fatalf("tree of %s holds %q", got.ID, files)
				}
			}
			// The slots are reused: no third worktree.
			if got := strings.Count(gittest.Git(t, ".", "worktree", "list"), "\n") + 1; got != 3 {
				t.Fatalf("%d worktrees, want the repository's and 2 slots", got)
			}
		})
	}
}

func TestRunLevelCleansSlot(t *testing.T) {
	r, base := repo(t, "sha1")
	runner := New(r, 1, writer(completed))
	first, err := runner.RunLevel(context.Background(), base, jobs("a:junk.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// A later level in the same slot starts from its base, clean.
	runner.Dispatch = func(_ context.Context, job Job, workdir string) ([]byte, error) {
		if _, err := os.Stat(filepath.Join(workdir, "junk.txt")); !errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("junk.txt left over")
		}
		return []byte(completed), nil
	}
	second, err := runner.RunLevel(context.Background(), base, jobs("b"))
	if err != nil {
		t.Fatal(err)
	}
	if !first[0].Passed || !second[0].Passed || second[0].Slot != first[0].Slot || second[0].Changed != nil {
		t.Fatalf("first %+v, second %+v", first[0], second[0])
	}
}

// TestRunLevelTidySlot: a slot whose last task's snapshot staged what its
// agent left is not cleaned before the next, and its next task starts
// from the base alone all the same; after a task that changed a
// .gitignore (a file it made ignored is not staged) or another git's use
// of the slot, it is cleaned.
func TestRunLevelTidySlot(t *testing.T) {
	r, base := repo(t, "sha1")
	slot := Slots(r).Path(1)
	runner := New(r, 1, nil)
	for _, c := range []struct {
		name  string
		agent func(dir string) error
		after func()
	}{
		{"made a file", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "made.txt"), []byte("x\n"), 0o644)
		}, nil},
		{"made one ignored", func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("hidden.txt\n"), 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "hidden.txt"), []byte("x\n"), 0o644)
		}, nil},
		{"another git used the slot", func(string) error { return nil }, func() {
			gittest.Git(t, slot, "checkout", "-q", "--detach", base)
			if err := os.WriteFile(filepath.Join(slot, "stray.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		runner.Dispatch = func(_ context.Context, _ Job, dir string) ([]byte, error) { return []byte(completed), c.agent(dir) }
		if _, err := runner.RunLevel(context.Background(), base, jobs("dirty")); err != nil {
			t.Fatal(err)
		}
		if c.after != nil {
			c.after()
		}
		runner.Dispatch = func(_ context.Context, _ Job, dir string) ([]byte, error) {
			entries, err := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if got := strings.Join(names, " "); got != ".git base.txt" {
				return nil, errors.Join(err, errors.New("the slot holds "+got))
			}
			return []byte(completed), nil
		}
		res, err := runner.RunLevel(context.Background(), base, jobs("next"))
		if err != nil || !res[0].Passed || res[0].Changed != nil {
			t.Fatalf("%s: the next task: %+v, %v", c.name, res, err)
		}
	}
}

func TestContract(t *testing.T) {
	r, base := repo(t, "sha1")
	for _, tc := range []struct {
		name   string
		jobs   []Job
		report string
		err    error
		want   []string // "id: reason" or "id: ok"
	}{
		{"no report", jobs("a:a.txt"), "", nil, []string{"a: no output.yaml: the agent wrote no report"}},
		{"failed", jobs("a:a.txt"), "status: failed\nerror: |\n  it broke\n  badly\n", nil, []string{"a: the agent reported failed: it broke"}},
		{"no deviations key", jobs("a:a.txt"), "status: completed\n", nil,
			[]string{`a: output.yaml: report: line 1: no deviations: a completed report lists them ("deviations: []" when there were none)`}},
		{"dispatch error", jobs("a:a.txt"), completed, errors.New("agent crashed"), []string{"a: agent crashed"}},
		{"outside the plan", jobs("a:a.txt"), "status: completed\nfiles-modified: [a.txt, other.txt]\ndeviations: []\n", nil,
			[]string{"a: modified other.txt outside its plan without reporting a deviation"}},
		{"outside the plan, reported", jobs("a:a.txt"),
			"status: completed\nfiles-modified: [a.txt, other.txt]\ndeviations:\n  - {type: files_not_in_plan, description: needed other.txt}\n", nil,
			[]string{"a: ok"}},
		{"evidence missing", jobs("a:a.txt"), "status: completed\nverification-summary: {level: automated, evidence-files: [a.txt, log.txt]}\ndeviations: []\n", nil,
			[]string{"a: evidence file log.txt is not in the work tree"}},
		{"evidence outside", jobs("a:a.txt"), "status: completed\nverification-summary: {level: automated, evidence-files: [../../../../../../etc/passwd]}\ndeviations: []\n", nil,
			[]string{"a: evidence file ../../../../../../etc/passwd is not in the work tree"}},
		{"evidence a link", jobs("a:a.txt"), "status: completed\nverification-summary: {level: automated, evidence-files: [link.txt]}\ndeviations: []\n", nil,
			[]string{"a: evidence file link.txt is not in the work tree"}},
		{"no plan files", jobs("a"), completed, nil, []string{"a: ok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runner := New(r, 2, func(ctx context.Context, job Job, workdir string) ([]byte, error) {
				if _, err := writer("")(ctx, job, workdir); err != nil {
					return nil, err
				}
				if strings.Contains(tc.report, "other.txt") {
					os.WriteFile(filepath.Join(workdir, "other.txt"), nil, 0o644)
				}
				if strings.Contains(tc.report, "link.txt") {
					os.Symlink("/etc/passwd", filepath.Join(workdir, "link.txt"))
				}
				if tc.report == "" {
					return nil, tc.err
				}
				return []byte(tc.report), tc.err
			})
			res, err := runner.RunLevel(context.Background(), base, tc.jobs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res {
				if r.Passed != (r.Reason == "") {
					t.Fatalf("passed %v with reason %q", r.Passed, r.Reason)
				}
				reason := r.Reason
				if r.Passed {
					reason = "ok"
				}
				got = append(got, r.ID+": "+reason)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("results\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// Two tasks of a level that change one file, without reporting it, both
// fail; one that did not touch it passes.
func TestSharedFileFailsBoth(t *testing.T) {
	r, base := repo(t, "sha1")
	runner := New(r, 3, func(ctx context.Context, job Job, workdir string) ([]byte, error) {
		if job.Task.ID != "c" {
			os.WriteFile(filepath.Join(workdir, "base.txt"), []byte(job.Task.ID), 0o644)
		}
		return []byte(completed), nil
	})
	res, err := runner.RunLevel(context.Background(), base, jobs("a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{res[0].Reason, res[1].Reason, res[2].Reason}
	want := []string{"modified base.txt, which b also modified, without both reporting it",
		"modified base.txt, which a also modified, without both reporting it", ""}
	if !reflect.DeepEqual(got, want) || !res[2].Passed {
		t.Fatalf("reasons %q, want %q", got, want)
	}
}

func TestRunLevelCancelled(t *testing.T) {
	r, base := repo(t, "sha1")
	ctx, cancel := context.WithCancel(context.Background())
	runner := New(r, 1, func(ctx context.Context, job Job, workdir string) ([]byte, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if _, err := runner.RunLevel(ctx, base, jobs("a", "b")); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want cancelled", err)
	}
}

func TestUpstreamContext(t *testing.T) {
	if got := (Job{}).UpstreamContext(); got != "" {
		t.Fatalf("no upstream: %q", got)
	}
	j := Job{Upstream: []Upstream{{ID: "1a", Output: []byte("status: completed\nnotes: |\n  ```go\n  x\n  ```\n")}, {ID: "1b"}}}
	want := "## Upstream context\n\n### Output of task 1a\n\n````yaml\nstatus: completed\nnotes: |\n  ```go\n  x\n  ```\n````\n" +
		"\n### Output of task 1b\n\n(no output was kept)\n"
	if got := j.UpstreamContext(); got != want {
		t.Fatalf("context\n%s\nwant\n%s", got, want)
	}
}

// TestRunLevelRefusesForgedIndex: an agent that writes its slot's index by
// hand to stage a path git refuses to check out (here d/.git/x, which git
// add -A keeps once the index holds it) gets no tree of it: the level
// stops with the path named.
func TestRunLevelRefusesForgedIndex(t *testing.T) {
	r, base := repo(t, "sha1")
	runner := New(r, 1, func(ctx context.Context, job Job, workdir string) ([]byte, error) {
		for _, p := range []string{"d/xgit/x", "d/.git/x"} {
			if err := os.MkdirAll(filepath.Join(workdir, filepath.Dir(p)), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(workdir, p), []byte("x\n"), 0o644); err != nil {
				return nil, err
			}
		}
		gittest.Git(t, workdir, "add", "d/xgit/x")
		index := gittest.Git(t, workdir, "rev-parse", "--path-format=absolute", "--git-path", "index")
		data, err := os.ReadFile(index)
		if err != nil {
			return nil, err
		}
		body := bytes.Replace(data[:len(data)-20], []byte("d/xgit/x"), []byte("d/.git/x"), 1)
		sum := sha1.Sum(body)
		return []byte(completed), os.WriteFile(index, append(body, sum[:]...), 0o644)
	})
	_, err := runner.RunLevel(context.Background(), base, jobs("a"))
	var refused *gitext.RefusedPathError
	if !errors.As(err, &refused) || refused.Path != "d/.git/x" {
		t.Fatalf("RunLevel: %v, want d/.git/x refused", err)
	}
}
