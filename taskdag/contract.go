package taskdag

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// check applies the seed's output contract to a task that ran: a report
// that parses (status and deviations present), saying completed, whose
// evidence files exist in its work tree, and no file changed outside its
// plan without a deviation reported. A task whose plan lists no files
// has nothing to hold its changes to.
func check(t manifest.Task, data []byte, changed []string, workdir string) (passed bool, reason string) {
	return checkWith(t, data, changed, func(f string) bool { return inWorkTree(workdir, f) })
}

// checkWith is check, with exists saying whether an evidence file is in
// the task's work.
func checkWith(t manifest.Task, data []byte, changed []string, exists func(string) bool) (passed bool, reason string) {
	if data == nil {
		return false, "no output.yaml: the agent wrote no report"
	}
	rep, err := report.ParseTask(data)
	if err != nil {
		return false, "output.yaml: " + err.Error()
	}
	if rep.Status != report.Completed {
		return false, "the agent reported failed: " + firstLine(rep.Error)
	}
	for _, f := range rep.Verification.EvidenceFiles {
		if !exists(f) {
			return false, fmt.Sprintf("evidence file %s is not in the work tree", f)
		}
	}
	if outside := unreported(t, rep, changed); len(outside) > 0 {
		return false, fmt.Sprintf("modified %s outside its plan without reporting a deviation", strings.Join(outside, ", "))
	}
	return true, ""
}

// inWorkTree reports whether the agent's path f names a file inside
// workdir that is not a symbolic link: os.Root refuses a path, or a link
// on the way, that leads out of it.
func inWorkTree(workdir, f string) bool {
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return false
	}
	defer root.Close()
	fi, err := root.Lstat(filepath.FromSlash(f))
	return err == nil && fi.Mode()&os.ModeSymlink == 0
}

// unreported lists the files the task changed or says it modified that
// its plan does not name and no deviation covers.
func unreported(t manifest.Task, rep report.Task, changed []string) []string {
	if len(t.Files) == 0 {
		return nil
	}
	plan := map[string]bool{}
	for _, f := range t.Files {
		plan[manifest.CleanPath(f)] = true
	}
	var out []string
	for _, f := range append(append([]string(nil), changed...), rep.FilesModified...) {
		f = manifest.CleanPath(f)
		if !plan[f] && !reported(rep.Deviations, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// reported says whether a deviation covers file: one of the seed's
// files_not_in_plan type, or one that names the file.
func reported(devs []report.Deviation, file string) bool {
	for _, d := range devs {
		if d.Type == "files_not_in_plan" || strings.Contains(d.Description, file) || strings.Contains(d.Justification, file) {
			return true
		}
	}
	return false
}

// failShared fails the tasks of a level that changed the same file when
// any of them did not report it, as the seed says: their changes would
// clash at the fan-in.
func failShared(results []Result, jobs []Job) {
	owners := map[string][]int{}
	for i, r := range results {
		for _, f := range r.Changed {
			owners[f] = append(owners[f], i)
		}
	}
	files := make([]string, 0, len(owners))
	for f := range owners {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		idx := owners[f]
		if len(idx) < 2 || allReported(results, jobs, idx, f) {
			continue
		}
		for _, i := range idx {
			if results[i].Passed {
				results[i].Passed = false
				results[i].Reason = fmt.Sprintf("modified %s, which %s also modified, without both reporting it", f, others(results, idx, i))
			}
		}
	}
}

func allReported(results []Result, jobs []Job, idx []int, file string) bool {
	for _, i := range idx {
		rep, err := report.ParseTask(results[i].Report)
		if err != nil || !reported(rep.Deviations, file) && !slices.Contains(cleanAll(jobs[i].Task.Files), file) {
			return false
		}
	}
	return true
}

func cleanAll(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = manifest.CleanPath(f)
	}
	return out
}

func others(results []Result, idx []int, self int) string {
	var ids []string
	for _, i := range idx {
		if i != self {
			ids = append(ids, results[i].ID)
		}
	}
	return strings.Join(ids, ", ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return "no error given"
	}
	return s
}
