package pipeline

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// TasksDir holds, from state format 2 on, each task's entries of the
// state: its row of Task Progress, its review rounds and failures, its
// status in a task run. state.json keeps what does not grow with the plan,
// so an append renders and writes only the files of the tasks it changed;
// in format 1 state.json held them all, rendered again at every append.
const TasksDir = "tasks"

// taskFile is a file of TasksDir: the entries of the tasks it holds, as
// the state has them.
type taskFile struct {
	Tasks        []TaskProgress    `json:"tasks,omitempty"`         // View.Tasks', by task number
	ReviewRounds map[string]int    `json:"review_rounds,omitempty"` // Metrics.ReviewRounds'
	Failed       map[string]int    `json:"failed,omitempty"`        // Metrics.Failed'
	DAG          map[string]string `json:"dag,omitempty"`           // View.DAG.Statuses'
}

// fileID is a file of TasksDir: n/100 for the tasks numbered n, as
// dispatch/ buckets seqs; -1 - h for the tasks named otherwise (a
// manifest's ids), h the name's hash modulo 64; noFile for the entries of
// no task ("-"), which stay in state.json. No file grows with the plan.
type fileID int

const noFile fileID = math.MinInt

// fileOf is the file holding task's entries.
func fileOf(task string) fileID {
	if task == "-" || task == "" {
		return noFile
	}
	if n, ok := number(task); ok {
		return fileID(n / 100)
	}
	h := fnv.New32a()
	h.Write([]byte(task))
	return fileID(-1 - int(h.Sum32()%64))
}

// number is task's number when it is one: digits, nine at most.
func number(task string) (int, bool) {
	n := 0
	for i := 0; i < len(task); i++ {
		if task[i] < '0' || task[i] > '9' || i == 9 {
			return 0, false
		}
		n = 10*n + int(task[i]-'0')
	}
	return n, true
}

// name is the file's name in TasksDir: 0003.json, or x2a.json for a hash.
func (f fileID) name() string {
	if f < 0 {
		return fmt.Sprintf("x%02x.json", -1-int(f))
	}
	return fmt.Sprintf("%04d.json", int(f))
}

// taskOfKey is the task a key of Metrics.ReviewRounds ("phase/task") or
// Metrics.Failed ("role/task") counts for.
func taskOfKey(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }

// rowFile is the file holding a Task Progress row.
func rowFile(t TaskProgress) fileID {
	if t.Task >= 0 {
		return fileID(t.Task / 100)
	}
	return fileOf(strconv.Itoa(t.Task))
}

// keyFile is the file holding an entry of ReviewRounds or Failed.
func keyFile(key string) fileID { return fileOf(taskOfKey(key)) }

// withoutTasks is s as state.json holds it from format 2 on: without the
// entries its task files hold. s is left as it was.
func withoutTasks(s *State) State {
	c := *s
	c.View.Tasks = nil
	c.View.Metrics.ReviewRounds = entriesIn(s.View.Metrics.ReviewRounds, keyFile, noFile)
	c.View.Metrics.Failed = entriesIn(s.View.Metrics.Failed, keyFile, noFile)
	if d := s.View.DAG; d != nil {
		dag := *d
		dag.Statuses = entriesIn(d.Statuses, fileOf, noFile)
		c.View.DAG = &dag
	}
	return c
}

// taskFileIn gathers the entries of s that file holds; nil when none.
func taskFileIn(s *State, file fileID) *taskFile {
	f := &taskFile{}
	for _, t := range s.View.Tasks {
		if rowFile(t) == file {
			f.Tasks = append(f.Tasks, t)
		}
	}
	f.ReviewRounds = entriesIn(s.View.Metrics.ReviewRounds, keyFile, file)
	f.Failed = entriesIn(s.View.Metrics.Failed, keyFile, file)
	if d := s.View.DAG; d != nil {
		f.DAG = entriesIn(d.Statuses, fileOf, file)
	}
	if f.Tasks == nil && f.ReviewRounds == nil && f.Failed == nil && f.DAG == nil {
		return nil
	}
	return f
}

// entriesIn is the entries of m that file holds (noFile: state.json);
// nil when none.
func entriesIn[V any](m map[string]V, of func(string) fileID, file fileID) map[string]V {
	var out map[string]V
	for k, v := range m {
		if of(k) == file {
			if out == nil {
				out = map[string]V{}
			}
			out[k] = v
		}
	}
	return out
}

// changedTaskFiles are the task files whose entries differ between
// before and after, sorted: all of after's when before kept its entries
// in state.json (format 1, or no state yet). It compares, without
// rendering: what an append renders and writes is only what it changed.
func changedTaskFiles(before, after *State) []fileID {
	changed := map[fileID]bool{}
	if before == nil || before.Format < 2 {
		before = &State{}
	}
	// Both lists are by task number (setTask keeps them so).
	a, b := before.View.Tasks, after.View.Tasks
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].Task < b[0].Task: // gone: never, as Apply goes
			changed[rowFile(a[0])], a = true, a[1:]
		case len(a) == 0 || b[0].Task < a[0].Task:
			changed[rowFile(b[0])], b = true, b[1:]
		default:
			if a[0] != b[0] {
				changed[rowFile(b[0])] = true
			}
			a, b = a[1:], b[1:]
		}
	}
	diffEntries(changed, before.View.Metrics.ReviewRounds, after.View.Metrics.ReviewRounds, keyFile)
	diffEntries(changed, before.View.Metrics.Failed, after.View.Metrics.Failed, keyFile)
	var was, is map[string]string
	if before.View.DAG != nil {
		was = before.View.DAG.Statuses
	}
	if after.View.DAG != nil {
		is = after.View.DAG.Statuses
	}
	diffEntries(changed, was, is, fileOf)
	delete(changed, noFile)
	return slices.Sorted(maps.Keys(changed))
}

// diffEntries adds to changed the files of the entries that differ
// between a and b.
func diffEntries[V comparable](changed map[fileID]bool, a, b map[string]V, file func(string) fileID) {
	for k, v := range b {
		if old, ok := a[k]; !ok || old != v {
			changed[file(k)] = true
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			changed[file(k)] = true
		}
	}
}

// addTaskFiles puts back into s, as DecodeState left it from a format 2
// state.json, the entries of its task files (by name).
func (s *State) addTaskFiles(files map[string][]byte) error {
	v := &s.View
	for _, name := range slices.Sorted(maps.Keys(files)) {
		var f taskFile
		if err := strictUnmarshal(files[name], &f); err != nil {
			return fmt.Errorf("%s/%s: %w", TasksDir, name, err)
		}
		if slices.ContainsFunc(f.Tasks, func(t TaskProgress) bool { return rowFile(t).name() != name }) ||
			misplaced(f.ReviewRounds, keyFile, name) || misplaced(f.Failed, keyFile, name) || misplaced(f.DAG, fileOf, name) {
			return fmt.Errorf("%s/%s holds the entries of a task it does not hold", TasksDir, name)
		}
		v.Tasks = append(v.Tasks, f.Tasks...)
		v.Metrics.ReviewRounds = addEntries(v.Metrics.ReviewRounds, f.ReviewRounds)
		v.Metrics.Failed = addEntries(v.Metrics.Failed, f.Failed)
		if len(f.DAG) > 0 {
			if v.DAG == nil {
				return fmt.Errorf("%s/%s holds task run statuses, but state.json has no task run", TasksDir, name)
			}
			v.DAG.Statuses = addEntries(v.DAG.Statuses, f.DAG)
		}
	}
	slices.SortFunc(v.Tasks, func(a, b TaskProgress) int { return a.Task - b.Task })
	return nil
}

// misplaced reports whether m has an entry that the file named name does
// not hold.
func misplaced[V any](m map[string]V, of func(string) fileID, name string) bool {
	for k := range m {
		if f := of(k); f == noFile || f.name() != name {
			return true
		}
	}
	return false
}

// addEntries is m with the entries of add.
func addEntries[V any](m, add map[string]V) map[string]V {
	if len(add) == 0 {
		return m
	}
	if m == nil {
		m = make(map[string]V, len(add))
	}
	maps.Copy(m, add)
	return m
}

// taskFilesTree is the id of the tree of TasksDir holding blobs (file
// name -> blob id), "" when it holds none: the directory is then absent.
func taskFilesTree(repo *gitext.Repo, blobs map[string]string) (string, error) {
	if len(blobs) == 0 {
		return "", nil
	}
	entries := make([]gitext.TreeEntry, 0, len(blobs))
	for name, oid := range blobs {
		entries = append(entries, gitext.TreeEntry{Mode: "100644", Name: name, OID: oid})
	}
	data, err := gitext.EncodeTree(entries)
	if err != nil {
		return "", err
	}
	return repo.HashObject("tree", data), nil
}
