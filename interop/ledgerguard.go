package interop

// The gate-ledger guard: what crucible's gate-ledger-guard hook does, for a
// Claude Code PreToolUse of Write or Edit. A write of build-gate-ledger.md
// that gives a phase a PASS it did not have needs a PASS verdict marker of
// the same pipeline and phase in quality-gate/ beside the ledger, as
// crucible's quality gate writes them. It reads files and writes none, and
// needs no repository: crucible's users have only the markdown.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
)

// LedgerFile is the name of the file the guard guards, matched as the end
// of the written path, whatever its case (a case-insensitive file system
// writes the same file).
const LedgerFile = "build-gate-ledger.md"

// MarkerDir is the directory beside the ledger that holds crucible's
// gate-verdict-<run-id>.md markers.
const MarkerDir = "quality-gate"

// FileWrite is a Write or Edit tool call Claude Code is about to make.
type FileWrite struct {
	Tool string // "Write" or "Edit"
	Path string // tool_input.file_path, as given
	Cwd  string // the payload's cwd, "" when it has none

	Content string // Write: the whole new file

	// Edit: Old replaced by New, once or, with ReplaceAll, everywhere.
	Old, New   string
	ReplaceAll bool
}

// ParseFileWrite reads the payload of a PreToolUse of Write or Edit, in
// Claude Code's shape (hook_event_name, tool_name, tool_input) or in the
// older one crucible's guard also reads (tool, input; no event name). ok is
// false for anything else: invalid JSON, another event or tool, a call
// without a file_path string. Claude Code checks a call's input against
// the tool's schema before it runs it, so a content, old_string or
// new_string that is not a string reads as "".
func ParseFileWrite(data []byte) (w FileWrite, ok bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return w, false
	}
	if event, _ := hookString(obj["hook_event_name"]); event != "" && event != HookPreToolUse {
		return w, false
	}
	w.Tool, _ = hookString(obj["tool_name"])
	if w.Tool == "" {
		w.Tool, _ = hookString(obj["tool"])
	}
	if w.Tool != "Write" && w.Tool != "Edit" {
		return w, false
	}
	var input map[string]json.RawMessage
	if json.Unmarshal(obj["tool_input"], &input) != nil || input == nil {
		if json.Unmarshal(obj["input"], &input) != nil || input == nil {
			return w, false
		}
	}
	if w.Path, ok = hookString(input["file_path"]); !ok || w.Path == "" {
		return w, false
	}
	w.Cwd, _ = hookString(obj["cwd"])
	w.Content, _ = hookString(input["content"])
	w.Old, _ = hookString(input["old_string"])
	w.New, _ = hookString(input["new_string"])
	w.ReplaceAll = hookBool(input["replace_all"])
	return w, true
}

// GuardError is a ledger write the guard blocks: why, and the path written.
type GuardError struct {
	Path string
	Msg  string
}

func (e *GuardError) Error() string { return e.Path + ": " + e.Msg }

// maxGuardRead bounds what the guard reads of the ledger and of each
// marker: both are a few hundred bytes.
const maxGuardRead = 1 << 20

var errGuardRead = errors.New("the guard reads only regular files")

// GuardLedgerWrite returns a *GuardError when w gives build-gate-ledger.md
// a PASS without a verdict for it, nil when the write may go on. home is
// what a leading "~" of the path stands for (crucible's guard expands it).
//
// The ledger as it would be after the write (an Edit applied to the file on
// disk as Claude Code applies it; when the file is not there, New is the
// file) is compared with the file as it is. A phase gains a PASS when more
// of its Status lines say PASS than did, or, when the PipelineID changed,
// when any does. Lines are read as a person reads them, not as a parser:
// headers "## Phase N" whatever their spacing and what follows the number,
// keys whatever their indentation, case and emphasis, a value with the word
// PASS in it. Each phase gaining a PASS is blocked when it is Phase 3 (it
// ends COMPLETE), is no phase at all, or has no PASS marker (ParseMarker)
// naming the ledger's PipelineID and that phase in quality-gate/; any PASS
// is blocked when the ledger names no PipelineID. A file on disk that
// cannot be read counts as empty, so every PASS in the write is new.
func GuardLedgerWrite(w FileWrite, home string) error {
	if !strings.HasSuffix(strings.ToLower(w.Path), LedgerFile) {
		return nil
	}
	path := w.Path
	if rest, ok := strings.CutPrefix(path, "~"); ok && (rest == "" || rest[0] == '/') && home != "" {
		path = home + rest
	}
	if !filepath.IsAbs(path) && w.Cwd != "" {
		path = filepath.Join(w.Cwd, path)
	}
	before, readErr := fsutil.ReadRegular(path, maxGuardRead, errGuardRead)
	if readErr != nil {
		before = nil
	}
	after := w.Content
	if w.Tool == "Edit" {
		var placed bool
		if after, placed = applyEdit(string(before), readErr == nil, w); !placed {
			// Claude Code refuses an edit whose old text is not in the
			// file; one that slips past this reading is judged on its own.
			if ledgerPasses(w.New).newSince(ledgerPasses(w.Old)) == nil {
				return nil
			}
			return &GuardError{Path: w.Path, Msg: "an edit that writes a PASS, whose old text the guard cannot find in the ledger; " +
				"edit the ledger with its exact text, after the quality gate passed"}
		}
	}
	now, was := ledgerPasses(after), ledgerPasses(string(before))
	gained := now.newSince(was)
	if len(gained) == 0 {
		return nil
	}
	if now.pipelineID == "" {
		return &GuardError{Path: w.Path, Msg: "a PASS in a ledger with no PipelineID line: no gate verdict can be matched to it"}
	}
	markers := passMarkers(filepath.Join(filepath.Dir(path), MarkerDir), now.pipelineID)
	for _, p := range gained {
		switch {
		case p == ledger.Execute:
			return &GuardError{Path: w.Path, Msg: "Phase 3 PASS: Phase 3 ends COMPLETE, not PASS"}
		case p == 0:
			return &GuardError{Path: w.Path, Msg: "a Status: PASS outside the four phase blocks (\"## Phase N: Name\")"}
		case !markers[p]:
			return &GuardError{Path: w.Path, Msg: fmt.Sprintf("Phase %d PASS with no gate verdict: no marker in %s says Verdict: PASS, Phase: %s, PipelineID: %s; "+
				"run the quality gate, which writes it, before the ledger says PASS",
				p, filepath.Join(filepath.Dir(w.Path), MarkerDir), PhaseName(p), now.pipelineID)}
		}
	}
	return nil
}

// applyEdit is the file after w, an Edit, as Claude Code makes it: Old
// replaced by New, in before (the file, when exists) or, in a file not
// there yet, New alone. placed is false when Old is not in the file.
func applyEdit(before string, exists bool, w FileWrite) (after string, placed bool) {
	if !exists {
		return w.New, true
	}
	if !strings.Contains(before, w.Old) {
		return "", false
	}
	n := 1
	if w.ReplaceAll {
		n = -1
	}
	return strings.Replace(before, w.Old, w.New, n), true
}

// passes is what a ledger's text says of PASS: how many Status lines say
// PASS in each phase (0: before any phase header, or under a header that
// names no phase), and the first PipelineID line's value.
type passes struct {
	phases     map[ledger.Phase]int
	pipelineID string
}

var (
	header      = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^#+`) }}
	phaseHeader = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(?i)^#+\s*phase\s*(\d+)`) }}
	// keyLine is a "Key: value" line, as a person reads one: list marks,
	// emphasis and white space around the key are not part of it.
	keyLine = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile("^[-+*`_\\s]*([A-Za-z]+)[*`_\\s]*:[*`_\\s]*(.*)$") }}
)

func ledgerPasses(text string) passes {
	r := passes{phases: map[ledger.Phase]int{}}
	phase := ledger.Phase(0)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if header.Get().MatchString(line) {
			phase = 0
			if m := phaseHeader.Get().FindStringSubmatch(line); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil && n <= int(ledger.Completion) {
					phase = ledger.Phase(n)
				}
			}
			continue
		}
		m := keyLine.Get().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch key := strings.ToLower(m[1]); {
		case key == "pipelineid" && r.pipelineID == "":
			r.pipelineID = strings.TrimSpace(m[2])
		case key == "status" && saysPass(m[2]):
			r.phases[phase]++
		}
	}
	return r
}

// saysPass reports whether a status value has the word PASS in it, in any
// case: "PASS", "PASS (verified)", "~~FAIL~~ pass".
func saysPass(value string) bool {
	words := strings.FieldsFunc(value, func(c rune) bool {
		return !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	})
	for _, w := range words {
		if strings.EqualFold(w, "PASS") {
			return true
		}
	}
	return false
}

// newSince is the phases with more PASS lines in r than in was, in order;
// every phase that passes in r when the PipelineID changed (a PASS of
// another run is not this run's).
func (r passes) newSince(was passes) []ledger.Phase {
	changed := was.pipelineID != "" && r.pipelineID != "" && was.pipelineID != r.pipelineID
	var out []ledger.Phase
	for p, n := range r.phases {
		if changed || n > was.phases[p] {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// passMarkers is the phases that a PASS marker in dir gives pipelineID.
// Markers that cannot be read or parsed count for nothing.
func passMarkers(dir, pipelineID string) map[ledger.Phase]bool {
	out := map[ledger.Phase]bool{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if ok, _ := filepath.Match(markerGlob, e.Name()); !ok {
			continue
		}
		b, err := fsutil.ReadRegular(filepath.Join(dir, e.Name()), maxGuardRead, errGuardRead)
		if err != nil {
			continue
		}
		if m, err := ParseMarker(b); err == nil && m.Verdict == "PASS" && m.PipelineID == pipelineID {
			out[m.Phase] = true
		}
	}
	return out
}
