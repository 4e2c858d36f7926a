package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/refs"
)

func TestFileOf(t *testing.T) {
	for task, want := range map[string]string{
		"0": "0000.json", "7": "0000.json", "007": "0000.json", "99": "0000.json", "100": "0001.json",
		"123456789": "1234567.json",
		// Not numbers: by the hash of the name.
		"1234567890": "x04.json", "t1": "x16.json", "auth-api": "x12.json", "-5": "x37.json",
	} {
		if got := fileOf(task).name(); got != want {
			t.Errorf("fileOf(%q) is %q, want %q", task, got, want)
		}
	}
	for _, none := range []string{"-", "", "3/-", "implementer/-"} {
		if got := keyFile(none); got != noFile {
			t.Errorf("keyFile(%q) = %v, want none", none, got)
		}
	}
	if got := keyFile("3/150").name(); got != "0001.json" {
		t.Errorf("keyFile(3/150) is %q", got)
	}
	if got := rowFile(TaskProgress{Task: -5}).name(); got != "x37.json" {
		t.Errorf("rowFile(-5) is %q", got)
	}
}

// tasksState is a state with entries of every kind for tasks numbered and
// named, and for no task.
func tasksState(t *testing.T) *State {
	st := started(t)
	const at = "2026-11-22T10:00:00Z"
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 1, Role: "implementer", Phase: ledger.Execute, Task: intp(1), Template: "i", TaskTitle: "one"})
	apply(t, st, at, TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "failed"})
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 2, Role: "reviewer", Phase: ledger.Execute, Task: intp(150), Template: "r"})
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 3, Role: "reviewer", Phase: ledger.Execute, Template: "r"})
	apply(t, st, at, TypeDAGRun, DAGRunData{Status: "in-progress", Tasks: 2})
	apply(t, st, at, TypeDAGTask, DAGTaskData{Task: "1", Status: "dispatched", Level: 1})
	apply(t, st, at, TypeDAGTask, DAGTaskData{Task: "auth", Status: "failed", Level: 1})
	return st
}

// taskFiles renders every task file of st, by name.
func taskFiles(st *State) map[string][]byte {
	var e stateEncoder
	files := map[string][]byte{}
	for _, file := range changedTaskFiles(nil, st) {
		files[file.name()] = bytes.Clone(e.render(taskFileIn(st, file)))
	}
	return files
}

// TestTaskFilesRoundTrip: a state in format 2 is state.json without its
// tasks' entries plus its task files, and decoding both gives it back, as
// format 1's state.json alone does.
func TestTaskFilesRoundTrip(t *testing.T) {
	st := tasksState(t)
	files := taskFiles(st)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	if want := []fileID{fileOf("auth"), 0, 1}; !reflect.DeepEqual(changedTaskFiles(nil, st), want) {
		t.Fatalf("files %q, want %v", names, want)
	}
	small := string(st.Encode())
	for _, gone := range []string{`"tasks": [`, `"3/150"`, `"implementer/1"`, `"auth"`, `"statuses"`} {
		if strings.Contains(small, gone) {
			t.Errorf("state.json in format 2 holds %s:\n%s", gone, small)
		}
	}
	if !strings.Contains(small, `"3/-": 1`) {
		t.Errorf("state.json in format 2 lost the review round of no task:\n%s", small)
	}
	back, err := DecodeState(st.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if err := back.addTaskFiles(files); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", back.View, st.View)
	}
	one := *st
	one.Format = 1
	old, err := DecodeState(one.Encode())
	if err != nil {
		t.Fatal(err)
	}
	old.Format = StateFormat
	if !reflect.DeepEqual(old, st) {
		t.Fatalf("format 1 decoded\n%+v\nwant\n%+v", old.View, st.View)
	}
}

func TestChangedTaskFiles(t *testing.T) {
	before := tasksState(t)
	after := *before
	apply(t, &after, "2026-11-22T10:00:00Z", TypeDispatchFinish, DispatchFinish{Seq: 2, Status: "completed"})
	named := after
	apply(t, &named, "2026-11-22T10:00:00Z", TypeDAGTask, DAGTaskData{Task: "auth", Status: "dispatched", Level: 1})
	notask := named
	apply(t, &notask, "2026-11-22T10:00:00Z", TypeDispatchFinish, DispatchFinish{Seq: 3, Status: "completed"})
	old := *before
	old.Format = 1
	for _, c := range []struct {
		name          string
		before, after *State
		want          []fileID
	}{
		{"nothing", before, before, nil},
		{"a row", before, &after, []fileID{1}},
		{"a task run's status", &after, &named, []fileID{fileOf("auth")}},
		{"no task's", &named, &notask, nil},
		{"from format 1", &old, &after, []fileID{fileOf("auth"), 0, 1}},
		{"from nothing", nil, before, []fileID{fileOf("auth"), 0, 1}},
	} {
		if got := changedTaskFiles(c.before, c.after); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAddTaskFilesRefuses(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"a row elsewhere":        {"0000.json": []byte(`{"tasks": [{"task": 150, "role": "r", "status": "dispatched", "seq": 1, "started": ""}]}`)},
		"a review round":         {"0001.json": []byte(`{"review_rounds": {"3/1": 1}}`)},
		"a task run's status":    {"0000.json": []byte(`{"dag": {"auth": "failed"}}`)},
		"an unknown field":       {"0000.json": []byte(`{"rows": []}`)},
		"no task run":            {"0000.json": []byte(`{"dag": {"1": "failed"}}`)},
		"not JSON":               {"0000.json": []byte(`[`)},
		"a status of no task":    {"0000.json": []byte(`{"dag": {"-": "failed"}}`)},
		"a failure of no task's": {"0000.json": []byte(`{"failed": {"implementer/-": 1}}`)},
	} {
		st := started(t)
		if err := st.addTaskFiles(files); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// appendFormat1 appends drafts as a git-crucible before state format 2
// did: state.json holds every task's entries, and the chain's format file
// says FormatV1.
func appendFormat1(t *testing.T, s *Service, id string, drafts ...Draft) {
	t.Helper()
	w, err := s.writer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Store.Append(t.Context(), id, w.identity(), func(h *refs.Head) (*refs.Batch, error) {
		st := &State{}
		if h.Commit != "" {
			if st, err = s.stateAt(t.Context(), h); err != nil {
				return nil, err
			}
		}
		b, _, err := s.batch(w, st, "2026-11-22T10:00:00Z", drafts)
		if err != nil {
			return nil, err
		}
		st.Format = 1
		for p := range b.Files {
			if strings.HasPrefix(p, TasksDir+"/") {
				delete(b.Files, p)
			}
		}
		b.Files[refs.StateFile] = st.Encode()
		b.Files[refs.FormatFile] = []byte(refs.FormatV1)
		return b, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFormat1ChainGoesOn: a chain an earlier git-crucible wrote (state
// format 1) loads and verifies as it is; the first append of this version
// writes format 2, with every task's file, and the whole chain verifies;
// a fresh reader loads the same state from either form.
func TestFormat1ChainGoesOn(t *testing.T) {
	s := openService(t)
	ctx := t.Context()
	appendFormat1(t, s, "p1", Draft{Type: TypeStart, Data: StartData{ID: "p1", Goal: "g", Mode: "feature", Branch: "main"}})
	for i, task := range []int{1, 150, 2} {
		appendFormat1(t, s, "p1", Draft{Type: TypeDispatchStart, Data: DispatchStart{Seq: i + 1, Role: "reviewer", Phase: ledger.Execute, Task: &task, Template: "r"}})
	}
	fresh := func() *State {
		t.Helper()
		other := Open(s.Repo)
		defer other.Close()
		os.RemoveAll(filepath.Join(s.Repo.CrucibleDir(), "cache"))
		st, _, err := other.Load(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	v1 := fresh()
	if v1.Format != 1 || len(v1.View.Tasks) != 3 || v1.View.Metrics.ReviewRounds["3/150"] != 1 {
		t.Fatalf("format 1 state: %+v", v1.View)
	}
	if problems, err := s.Verify(ctx, "p1"); err != nil || len(problems) > 0 {
		t.Fatalf("verify of format 1: %v, %v", problems, err)
	}
	if _, err := s.FinishDispatch(ctx, "p1", 2, FinishRequest{Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	dir := s.Repo.WorkTree
	ref := refs.PipelineRef("p1")
	if got := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", ref, TasksDir); got != "tasks/0000.json\ntasks/0001.json" {
		t.Fatalf("task files after the first append of format 2: %q", got)
	}
	for rev, want := range map[string]string{ref + "~1": refs.FormatV1, ref: refs.FormatV2} {
		if got := gittest.Git(t, dir, "show", rev+":"+refs.FormatFile); got+"\n" != want {
			t.Fatalf("%s: format %q", rev, got)
		}
	}
	kept, _, err := s.Load(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	v2 := fresh()
	if !reflect.DeepEqual(v2, kept) {
		t.Fatalf("format 2 read back\n%+v\nwritten\n%+v", v2.View, kept.View)
	}
	if len(v2.View.Tasks) != 3 || v2.View.Tasks[2].Status != "completed" || !reflect.DeepEqual(v2.View.Metrics.ReviewRounds, v1.View.Metrics.ReviewRounds) {
		t.Fatalf("format 2 state: %+v", v2.View)
	}
	if problems, err := s.Verify(ctx, "p1"); err != nil || len(problems) > 0 {
		t.Fatalf("verify of formats 1 then 2: %v, %v", problems, err)
	}
	// Another append touches only the file of its task.
	if _, err := s.FinishDispatch(ctx, "p1", 3, FinishRequest{Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "diff-tree", "-r", "--name-only", ref+"~1", ref); got != "events.jsonl\nstate.json\ntasks/0000.json" {
		t.Fatalf("the append changed %q", got)
	}
	if problems, err := s.Verify(ctx, "p1"); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v, %v", problems, err)
	}
}

// TestDerivedTaskFiles: verify judges a commit's task files by the id of
// their tree: right, absent, another file's content, a directory where
// format 1 has none; and after a commit in format 1 it renders them all.
func TestDerivedTaskFiles(t *testing.T) {
	repo := &gitext.Repo{Format: "sha1"}
	st := tasksState(t)
	blobs := map[string]string{}
	for name, b := range taskFiles(st) {
		blobs[name] = repo.HashObject("blob", b)
	}
	tree, err := taskFilesTree(repo, blobs)
	if err != nil {
		t.Fatal(err)
	}
	blobs["0000.json"] = blobs["0001.json"]
	wrong, _ := taskFilesTree(repo, blobs)
	old := *st
	old.Format = 1
	filesOf := func(st *State, tasks string) map[string]gitext.TreeEntry {
		files := map[string]gitext.TreeEntry{
			refs.StateFile: {Mode: "100644", Name: refs.StateFile, OID: repo.HashObject("blob", st.Encode())},
			LedgerFile:     {Mode: "100644", Name: LedgerFile, OID: repo.HashObject("blob", ledger.Render(&st.Gates.Ledger))},
		}
		if tasks != "" {
			files[TasksDir] = gitext.TreeEntry{Mode: "40000", Name: TasksDir, OID: tasks}
		}
		return files
	}
	d := newDerivedChecker("p", repo)
	for i, c := range []struct {
		st    *State
		tasks string
	}{{st, tree}, {st, ""}, {st, wrong}, {&old, tree}, {&old, ""}, {st, tree}} {
		d.check(fmt.Sprint(i), filesOf(c.st, c.tasks), c.st, 0)
	}
	got := commitMessages(d.merge(nil))
	want := []string{
		"1: tasks/ does not match what the events produce",
		"2: tasks/ does not match what the events produce",
		`3: unexpected entry "tasks" in the tree`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("problems:\n%q\nwant\n%q", got, want)
	}
}

// BenchmarkAppendRender is what an append renders of a state with n
// tasks in each format: the event applied, state.json, and in format 2
// the files of the tasks it changed. Compare tasks=1000 with tasks=10 in
// one run: format 1 grows with the plan, format 2 should not (but for
// Apply's copies of the rows, which are not rendered).
func BenchmarkAppendRender(b *testing.B) {
	for _, n := range []int{10, 1000} {
		st := &State{}
		add := func(typ string, data any) {
			e := Event{Seq: st.Seq + 1, Lamport: st.Lamport + 1, Time: "2026-11-22T10:00:00Z", Writer: "w-1", Type: typ}
			e.Data, _ = json.Marshal(data)
			if err := e.seal(); err != nil {
				b.Fatal(err)
			}
			if _, err := st.Apply(e); err != nil {
				b.Fatal(err)
			}
		}
		add(TypeStart, StartData{ID: "p1", Goal: "g", Mode: "feature"})
		for i := 1; i <= n; i++ {
			add(TypeDispatchStart, DispatchStart{Seq: i, Role: "reviewer", Phase: ledger.Execute, Task: intp(i), Template: "r", TaskTitle: fmt.Sprint("task ", i)})
			add(TypeDispatchFinish, DispatchFinish{Seq: i, Status: "completed"})
		}
		for _, format := range []int{1, 2} {
			b.Run(fmt.Sprintf("tasks=%d/format=%d", n, format), func(b *testing.B) {
				var enc stateEncoder
				data, _ := json.Marshal(DispatchStart{Seq: n + 1, Role: "reviewer", Phase: ledger.Execute, Task: intp(n / 2), Template: "r"})
				e := Event{Seq: st.Seq + 1, Lamport: st.Lamport + 1, Time: "2026-11-22T10:00:00Z", Writer: "w-1", Type: TypeDispatchStart, Data: data}
				if err := e.seal(); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					before, next := *st, *st
					before.Format, next.Format = format, format
					if _, err := next.Apply(e); err != nil {
						b.Fatal(err)
					}
					enc.encode(&next)
					if format == 2 {
						for _, f := range changedTaskFiles(&before, &next) {
							enc.render(taskFileIn(&next, f))
						}
					}
				}
			})
		}
	}
}
