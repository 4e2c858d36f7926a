package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// ManifestName is crucible's dispatch manifest.
const ManifestName = "manifest.jsonl"

// maxSourceFile bounds what is read of a crucible file, as import bounds
// it: they are kilobytes, a device or a hostile directory could offer
// anything.
const maxSourceFile = 64 << 20

// readBeside reads crucible's file name beside a manifest in dir: a regular
// file, never through a symbolic link.
func readBeside(dir, name string) ([]byte, error) {
	return fsutil.ReadRegular(filepath.Join(dir, name), maxSourceFile, interop.ErrOutside)
}

// NoManifestError is a source path where no manifest is found.
type NoManifestError struct{ Path string }

func (e *NoManifestError) Error() string {
	return fmt.Sprintf("no %s at '%s' (nor in its crucible-dispatch-*/ or dispatch-*/ directories)", ManifestName, e.Path)
}

// MalformedError is a manifest with lines replay cannot read: it resumes
// from no manifest it cannot read whole, for a lost line may be the one
// saying a dispatch is in flight.
type MalformedError struct {
	Path  string
	Lines []*interop.ManifestError
}

func (e *MalformedError) Error() string {
	l := e.Lines[0]
	more := ""
	if len(e.Lines) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Lines)-1)
	}
	return fmt.Sprintf("%s:%d: %s%s", e.Path, l.Line, l.Msg, more)
}

// Locate finds the manifest a source path names, in crucible's order: the
// file itself; manifest.jsonl in the directory; in its crucible-dispatch-*
// or dispatch-* directories; in the dispatch directory its
// .pipeline-active names.
func Locate(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", &NoManifestError{Path: path}
	}
	if !fi.IsDir() {
		return path, nil
	}
	if isFile(filepath.Join(path, ManifestName)) {
		return filepath.Join(path, ManifestName), nil
	}
	for _, pattern := range []string{"crucible-dispatch-*", "dispatch-*"} {
		dirs, _ := filepath.Glob(filepath.Join(globQuote(path), pattern, ManifestName))
		if len(dirs) > 0 {
			return dirs[len(dirs)-1], nil // the newest session: names sort by time
		}
	}
	if b, err := readBeside(path, ".pipeline-active"); err == nil {
		if a, err := interop.ParseActive(b); err == nil && a.DispatchDir != "" {
			dir := a.DispatchDir
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(path, dir)
			}
			if m := filepath.Join(dir, ManifestName); isFile(m) {
				return m, nil
			}
		}
	}
	return "", &NoManifestError{Path: path}
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// globQuote escapes glob characters in a literal path.
func globQuote(path string) string {
	var out []rune
	for _, c := range path {
		if c == '*' || c == '?' || c == '[' || c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return string(out)
}

// crucibleBoundaries are the checkpoint reasons crucible's build skill
// takes at each phase's start (its replay skill's table).
var crucibleBoundaries = lazy.Value[map[ledger.Phase]string]{New: func() map[ledger.Phase]string {
	return map[ledger.Phase]string{2: "pre-design-gate", 3: "pre-wave-1", 4: "pre-code-review"}
}}

// FromManifest reads a crucible manifest and the files beside it
// (.pipeline-active, build-gate-ledger.md, checkpoint-manifest.md, the
// dispatch outputs) without importing anything. The manifest, which the
// user names, is read as fsutil.ReadFile reads (a device, a FIFO, a
// directory refused before any read); the files beside it only when
// regular.
func FromManifest(path string) (*Source, error) {
	raw, err := fsutil.ReadFile(path, maxSourceFile)
	if err != nil {
		return nil, err
	}
	lines, problems := interop.ParseManifest(raw)
	if len(problems) > 0 {
		return nil, &MalformedError{Path: path, Lines: problems}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: %w", path, interop.ErrNoManifest)
	}
	dir := filepath.Dir(path)
	src := &Source{Path: path, Pipeline: interop.IDFromDir(dir), Skill: SkillBuild,
		Boundaries: map[ledger.Phase]Boundary{}, Replaced: map[int]bool{}}
	if b, err := readBeside(dir, ".pipeline-active"); err == nil {
		if a, err := interop.ParseActive(b); err == nil {
			src.Pipeline, src.Started, src.Branch, src.Baseline = first(a.PipelineID, src.Pipeline), a.StartTime, a.Branch, a.BaselineSHA
			src.Skill = first(a.Skill, src.Skill)
		}
	}
	if b, err := readBeside(dir, "build-gate-ledger.md"); err == nil {
		if l, err := ledger.Parse(b); err == nil {
			src.Ledger = &l
			src.Pipeline, src.Started = first(l.PipelineID, src.Pipeline), first(src.Started, l.Run)
		}
	}
	for p, reason := range crucibleBoundaries.Get() {
		src.Boundaries[p] = Boundary{Reason: reason}
	}
	if b, err := readBeside(dir, "checkpoint-manifest.md"); err == nil {
		rows, _ := interop.ParseCheckpoints(b)
		for _, r := range rows { // newest last: a retried wave's latest wins
			for p, reason := range crucibleBoundaries.Get() {
				if r.Reason == reason {
					src.Boundaries[p] = Boundary{Reason: reason, Checkpoint: r.Hash, Time: r.Timestamp}
				}
			}
		}
	}
	for _, l := range interop.Latest(lines) {
		n, err := strconv.Atoi(l.Phase)
		if err != nil || !ledger.Phase(n).Valid() {
			return nil, &MalformedError{Path: path, Lines: []*interop.ManifestError{{Line: lineOf(lines, l), Msg: fmt.Sprintf("phase %q is not 1 to 4", l.Phase)}}}
		}
		d := Dispatch{Seq: l.Seq, Role: l.Role, Phase: ledger.Phase(n), Status: l.Status, Template: templateOf(l)}
		if l.Task != nil {
			d.Task = strconv.Itoa(*l.Task)
		}
		d.Summary, d.Time, d.Session = deref(l.Summary), deref(l.Timestamp), deref(l.ReplaySession)
		if l.DurationS != nil {
			d.Duration = *l.DurationS
		}
		if l.File != "" {
			d.Output = isFile(filepath.Join(dir, pipeline.OutputName(l.File)))
		}
		src.Dispatches = append(src.Dispatches, d)
	}
	if src.Started == "" && len(src.Dispatches) > 0 {
		src.Started = src.Dispatches[0].Time
	}
	return src, nil
}

// lineOf is the 1-based line of l among lines (0 when not found).
func lineOf(lines []interop.ManifestLine, l interop.ManifestLine) int {
	for i := range lines {
		if lines[i].Seq == l.Seq && string(lines[i].Raw) == string(l.Raw) {
			return i + 1
		}
	}
	return 0
}

// templateOf is a line's template: git-crucible's field, else the name its
// dispatch file gives (<seq>-<template>.md), else its role.
func templateOf(l interop.ManifestLine) string {
	if l.Template != nil {
		return *l.Template
	}
	prefix := strconv.Itoa(l.Seq) + "-"
	if name := l.File; len(name) > len(prefix)+3 && name[:len(prefix)] == prefix && filepath.Ext(name) == ".md" {
		return name[len(prefix) : len(name)-3]
	}
	return l.Role
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ErrNoDispatch is a --from-seq naming no dispatch of the source.
var ErrNoDispatch = errors.New("no such dispatch")
