// Package results is verify-commits' results as its notes and local
// index hold them, apart from the store: lean enough for the hook binary,
// whose pre-push reads the index to know which trees passed.
package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SkipExit is the exit status by which a gate says a commit cannot be
// tested, as for git bisect run.
const SkipExit = 125

// Status is a gate's verdict on a tree.
type Status string

// The verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// StatusOf is the verdict of a gate's exit status.
func StatusOf(exit int) Status {
	switch exit {
	case 0:
		return Pass
	case SkipExit:
		return Skip
	}
	return Fail
}

// Result is one run of a gate (Spec) on a tree.
type Result struct {
	Tree     string
	Spec     string
	Status   Status
	Exit     int
	Time     time.Time // when it finished, to the second
	Duration time.Duration
}

// lineTag starts every result line; a later format takes another tag.
const lineTag = "gate1"

// Line is r as a note line: "gate1 <spec> <status> <exit> <unix time> <ms>".
func (r Result) Line() string {
	return fmt.Sprintf("%s %s %s %d %d %d", lineTag, r.Spec, r.Status, r.Exit, r.Time.Unix(), r.Duration.Milliseconds())
}

// ParseLine reads a note line of tree's note. Lines of another format are
// errors the caller may skip: a newer writer may add some.
func ParseLine(tree, line string) (Result, error) {
	f := strings.Split(line, " ")
	if len(f) != 6 || f[0] != lineTag {
		return Result{}, fmt.Errorf("not a gate result: %q", line)
	}
	r := Result{Tree: tree, Spec: f[1], Status: Status(f[2])}
	if len(r.Spec) != 32 || strings.Trim(r.Spec, "0123456789abcdef") != "" {
		return Result{}, fmt.Errorf("bad gate spec %q", f[1])
	}
	exit, err1 := strconv.Atoi(f[3])
	unix, err2 := strconv.ParseInt(f[4], 10, 64)
	ms, err3 := strconv.ParseInt(f[5], 10, 64)
	canonical := strconv.Itoa(exit) == f[3] && strconv.FormatInt(unix, 10) == f[4] && strconv.FormatInt(ms, 10) == f[5]
	if err := errors.Join(err1, err2, err3); err != nil || !canonical || exit < 0 || exit > 255 || unix < 0 || ms < 0 || ms > 1<<40 {
		return Result{}, fmt.Errorf("bad numbers in gate result %q", line)
	}
	if StatusOf(exit) != r.Status {
		return Result{}, fmt.Errorf("gate result %q: exit %d is no %s", line, exit, r.Status)
	}
	r.Exit, r.Time, r.Duration = exit, time.Unix(unix, 0).UTC(), time.Duration(ms)*time.Millisecond
	return r, nil
}

// Latest is the newest result for spec in a note on tree, and whether
// there is one: the latest by time, and of results in the same second the
// last line (a result is appended after those it follows). Lines that are
// no result are skipped.
func Latest(tree, spec string, note []byte) (Result, bool) {
	var last Result
	found := false
	for _, line := range strings.Split(string(note), "\n") {
		if r, err := ParseLine(tree, line); err == nil && r.Spec == spec && (!found || !r.Time.Before(last.Time)) {
			last, found = r, true
		}
	}
	return last, found
}

// IndexDir is where the local index is under a repository's crucible
// dir: a file per gate spec.
func IndexDir(crucibleDir string) string { return filepath.Join(crucibleDir, "gates", "index") }

// Newest reads the local index in dir (every gate's file, "<tree>
// <result line>" lines) and returns the newest result of each of trees it
// holds, whatever the gate: the verdict of the last gate run on it. It
// runs nothing and starts no git.
func Newest(dir string, trees []string) (map[string]Result, error) {
	want := map[string]bool{}
	for _, t := range trees {
		want[t] = true
	}
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Result{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]Result{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			tree, rest, _ := strings.Cut(line, " ")
			if !want[tree] {
				continue
			}
			if r, err := ParseLine(tree, rest); err == nil && r.Spec == f.Name() && !r.Time.Before(out[tree].Time) {
				out[tree] = r
			}
		}
	}
	return out, nil
}
