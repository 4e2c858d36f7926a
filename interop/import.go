package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
)

// ImportReport says what an import did.
type ImportReport struct {
	Pipeline  string   `json:"pipeline"`
	Created   bool     `json:"created"`
	Lines     int      `json:"manifest_lines"` // new manifest lines taken
	Files     []string `json:"files"`          // other files taken
	Outputs   int      `json:"outputs"`        // dispatch outputs taken
	Decisions int      `json:"decisions"`      // decision-journal lines taken
	Problems  []string `json:"problems"`       // "file:line: message", skipped
	// Inferred is the phases the ledger says PASS without a PASS marker of
	// the pipeline and phase: imported INFERRED.
	Inferred []ledger.Phase `json:"inferred"`
}

// InferredReason is the Reason of a phase imported INFERRED.
const InferredReason = "imported as PASS without a PASS gate-verdict marker"

// Nothing reports an import that found nothing new.
func (r *ImportReport) Nothing() bool {
	return r.Lines == 0 && len(r.Files) == 0 && r.Decisions == 0
}

// ErrNoManifest refuses a directory without one valid manifest line.
var ErrNoManifest = errors.New("no valid manifest.jsonl line")

// DirError is an import directory that is missing, is not a directory, or
// holds no manifest.jsonl.
type DirError struct {
	Dir        string
	NoManifest bool // the directory is there, its manifest.jsonl is not
	NotDir     bool
}

func (e *DirError) Error() string {
	switch {
	case e.NoManifest:
		return fmt.Sprintf("no manifest.jsonl in '%s'", e.Dir)
	case e.NotDir:
		return fmt.Sprintf("'%s' is not a directory", e.Dir)
	}
	return fmt.Sprintf("'%s' does not exist", e.Dir)
}

// OtherLedgerError is a build-gate-ledger.md in another shape than the
// skills write: "pipeline-id: <id>" lines, as crucible's hook tests write.
// It refuses an import only when nothing else names the pipeline.
type OtherLedgerError struct {
	Path string
	ID   string // what its pipeline-id line says, when that is a valid id
}

func (e *OtherLedgerError) Error() string {
	return fmt.Sprintf("%s is not a build gate ledger: its \"pipeline-id:\" lines are the shape crucible's hook tests write, not the skills' \"PipelineID:\"", e.Path)
}

// hookLedgerID reads the pipeline-id line of a ledger in the hook tests'
// shape; ok is false for any other file.
func hookLedgerID(b []byte) (id string, ok bool) {
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(strings.TrimSpace(line), "pipeline-id:"); found {
			if id = strings.TrimSpace(v); refs.ValidateID(id) != nil {
				id = ""
			}
			return id, true
		}
	}
	return "", false
}

// snapshots are files kept as they are, for export to give back.
var snapshots = []string{"build-gate-ledger.md", "pipeline-status.md", ".pipeline-active", checkpointList}

const checkpointList = "checkpoint-manifest.md"

// Import reads a crucible scratch or dispatch directory into a pipeline:
// pipelineID, else the ledger's PipelineID, else .pipeline-active's, else
// the one the directory's name gives (IDFromDir), else a new one. A new
// pipeline starts when the run did (runSpan). What the pipeline holds
// already is not taken again: what was imported before (same file content,
// manifest lines already taken), and what export writes for it now (a
// directory it exported is imported back as nothing new). Malformed lines
// and files are reported and skipped; a file that is not a regular file
// directly inside dir, or in its quality-gate/ (a symbolic link, a
// dispatch file named "../x") refuses the whole import (ErrOutside) before
// anything is written. A phase the ledger says PASS without a PASS marker
// of its pipeline and phase is imported INFERRED (inferUnverified).
func Import(ctx context.Context, svc *pipeline.Service, dir, pipelineID string) (*ImportReport, error) {
	r := &ImportReport{Problems: []string{}, Files: []string{}, Inferred: []ledger.Phase{}}
	problem := func(name string, line int, msg string) {
		r.Problems = append(r.Problems, fmt.Sprintf("%s:%d: %s", filepath.Join(dir, name), line, msg))
	}
	fileProblem := func(name string, err error) {
		var line int
		msg := err.Error()
		if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
			_, msg, _ = strings.Cut(msg, ": ")
		}
		problem(name, line, msg)
	}
	if fi, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, &DirError{Dir: dir}
	} else if err == nil && !fi.IsDir() {
		return nil, &DirError{Dir: dir, NotDir: true}
	}
	raw, err := readInside(dir, "manifest.jsonl")
	if errors.Is(err, os.ErrNotExist) {
		return nil, &DirError{Dir: dir, NoManifest: true}
	} else if err != nil {
		return nil, err
	}
	lines, problems := ParseManifest(raw)
	for _, p := range problems {
		problem("manifest.jsonl", p.Line, p.Msg)
	}
	if len(lines) == 0 {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.jsonl"), ErrNoManifest)
	}

	// The documents beside the manifest, read and checked before anything is written.
	docs := map[string][]byte{}
	var gates *ledger.Ledger
	var otherLedger *OtherLedgerError
	var active Active
	for _, name := range snapshots {
		b, err := readInside(dir, name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		var perr error
		switch name {
		case "build-gate-ledger.md":
			var l ledger.Ledger
			if l, perr = ledger.Parse(b); perr == nil {
				gates = &l
			} else if id, ok := hookLedgerID(b); ok {
				otherLedger = &OtherLedgerError{Path: filepath.Join(dir, name), ID: id}
				continue
			}
		case "pipeline-status.md":
			_, perr = ParseStatus(b)
		case ".pipeline-active":
			active, perr = ParseActive(b)
		case checkpointList:
			if _, ps := ParseCheckpoints(b); len(ps) > 0 {
				perr = ps[0]
			}
		}
		if perr != nil {
			fileProblem(name, perr)
			continue
		}
		docs[name] = b
	}
	handoffs := map[string]Handoff{}
	verdicts := map[string]Marker{}
	var decisions []Decision
	// The names are matched, not the path: dir may hold glob characters.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	listed := make(map[string]bool, len(entries))
	for _, e := range entries {
		listed[e.Name()] = true
	}
	for _, pattern := range []string{"handoff-*-to-*.md", "gate-verdict-*.md", DecisionsGlob} {
		for _, e := range entries {
			name := e.Name()
			if ok, _ := filepath.Match(pattern, name); !ok {
				continue
			}
			b, err := readInside(dir, name)
			if err != nil {
				return nil, err
			}
			if pattern == DecisionsGlob {
				ds, ps := ParseDecisions(b)
				for _, p := range ps {
					problem(name, p.Line, p.Msg)
				}
				decisions = append(decisions, ds...)
				continue
			}
			var perr error
			if strings.HasPrefix(name, "handoff-") {
				var h Handoff
				if h, perr = ParseHandoff(b); perr == nil {
					if name != fmt.Sprintf("handoff-%d-to-%d.md", h.From, h.To) {
						perr = fmt.Errorf("holds the handoff %d to %d", h.From, h.To)
					}
					handoffs[name] = h
				}
			} else if perr = pipeline.CheckName("marker file", name); perr == nil {
				var m Marker
				if m, perr = ParseMarker(b); perr == nil {
					verdicts[name] = m
				}
			}
			if perr != nil {
				delete(handoffs, name)
				fileProblem(name, perr)
				continue
			}
			docs[name] = b
		}
	}

	id := pipelineID
	switch {
	case id != "":
	case gates != nil && gates.PipelineID != "":
		id = gates.PipelineID
	case active.PipelineID != "":
		id = active.PipelineID
	default:
		id = IDFromDir(dir) // "" starts a new pipeline with a fresh id
	}
	if gates != nil && (gates.PipelineID == "" || id != gates.PipelineID) {
		// The ledger's gates are another pipeline's: replay would refuse
		// it, after the new pipeline was made. The rest is this one's.
		msg := fmt.Sprintf("the ledger is for pipeline %s, not %s", gates.PipelineID, id)
		if gates.PipelineID == "" {
			msg = "the ledger names no PipelineID"
		}
		problem("build-gate-ledger.md", 0, msg)
		gates = nil
		delete(docs, "build-gate-ledger.md")
	}
	if otherLedger != nil {
		if id == "" {
			// A made-up id would make a second pipeline of the same run
			// when the user imports again with --pipeline.
			return r, otherLedger
		}
		r.Problems = append(r.Problems, otherLedger.Error())
	}
	// And this pipeline's in quality-gate/, where crucible's quality gate
	// keeps every run's; export writes them beside the ledger.
	if err := readMarkerDir(dir, id, docs, verdicts, fileProblem); err != nil {
		return nil, err
	}
	st := &pipeline.State{}
	create := id == ""
	abs, _ := filepath.Abs(dir)
	if !create {
		if err := refs.ValidateID(id); err != nil {
			return nil, err
		}
		if st, _, err = svc.Load(ctx, id); errors.Is(err, refs.ErrNoPipeline) {
			st, create = &pipeline.State{}, true
		} else if err != nil {
			return nil, err
		}
	}

	// What is new since the last import.
	done := st.Import.ManifestLines
	taken := done <= len(lines) && (done == 0 || digestLines(lines[:done]) == st.Import.ManifestDigest)
	names := make([]string, 0, len(docs))
	for name := range docs {
		if st.Import.Files[name] != digest(docs[name]) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	// And what is new since the export this directory may hold: what the
	// pipeline would export now is not new either. Only looked at when the
	// import's own record is not enough, as it reads every kept file.
	var ours map[string][]byte
	if !create && (!taken || done < len(lines) || len(names) > 0 || len(decisions) > 0) {
		if ours, err = Export(ctx, svc, id, abs); err != nil {
			return nil, err
		}
	}
	if known := bytes.SplitAfter(ours["manifest.jsonl"], []byte("\n")); len(known) > 1 && startsWith(lines, known[:len(known)-1]) {
		done = len(known) - 1
	} else if !taken {
		return nil, fmt.Errorf("%s: lines already imported have changed since (the manifest is append-only)", filepath.Join(dir, "manifest.jsonl"))
	}
	fresh := lines[done:]
	digests := map[string]string{}
	for _, name := range names {
		if mine, ok := ours[name]; !ok || !bytes.Equal(mine, docs[name]) {
			digests[name] = digest(docs[name])
			r.Files = append(r.Files, name)
		}
	}
	decisions = newDecisions(decisions, ours[DecisionsFile(id)])
	r.Lines, r.Decisions = len(fresh), len(decisions)
	if r.Nothing() {
		r.Pipeline = id
		return r, nil
	}
	// Every file is read, and refused if it must be, before anything is written.
	prompts, outputs := map[int][]byte{}, map[int][]byte{}
	sent := map[int]string{} // the Timestamp of each dispatch file's header
	for _, l := range fresh {
		if _, seen := prompts[l.Seq]; !seen && l.File != "" {
			b, err := readDispatchFile(dir, l.File)
			if err != nil {
				return nil, err
			}
			if b != nil {
				prompts[l.Seq] = b
				if f, err := ParseDispatchFile(b); err == nil && f.Timestamp != "" {
					sent[l.Seq] = f.Timestamp
				}
			}
		}
		// Outputs are git-crucible's own addition, rare in a crucible
		// directory: the listing says whether to look, not a failed open.
		if _, seen := outputs[l.Seq]; !seen && l.File != "" && l.Status != "dispatched" && listed[pipeline.OutputName(l.File)] {
			b, err := readDispatchFile(dir, pipeline.OutputName(l.File))
			if err != nil {
				return nil, err
			}
			if b != nil {
				outputs[l.Seq] = b
			}
		}
	}
	started, first, last := runSpan(gates, active, handoffs, fresh, sent)

	if create {
		o := pipeline.StartOptions{ID: id, Goal: importGoal(gates, handoffs, docs, dir), Mode: "feature", Beside: true, Started: started}
		if gates != nil && (gates.Mode == "feature" || gates.Mode == "refactor") {
			o.Mode = gates.Mode
		}
		if o.ID == "" {
			t, err := gitext.Now()
			if err != nil {
				return nil, err
			}
			if id, err = refs.NewID(t); err != nil {
				return nil, err
			}
			o.ID = id
		}
		if st, _, err = svc.Start(ctx, o); err != nil {
			return nil, err
		}
		r.Created = true
	}
	r.Pipeline = id

	// Dispatch files are written one at a time, before the commit.
	change := &pipeline.Change{Files: map[string][]byte{}, Blobs: map[string]string{}}
	promptPaths, outputPaths := map[int]string{}, map[int]string{}
	for _, l := range fresh {
		for _, kept := range []struct {
			files map[int][]byte
			paths map[int]string
			path  string
		}{
			{prompts, promptPaths, fmt.Sprintf("dispatch/%04d/%s", l.Seq/100, l.File)},
			{outputs, outputPaths, pipeline.ImportedOutputPath(l.Seq, l.File)},
		} {
			b, ok := kept.files[l.Seq]
			if _, seen := kept.paths[l.Seq]; seen || !ok {
				continue
			}
			oid, err := svc.Repo.WriteObject("blob", b)
			if err != nil {
				return nil, err
			}
			change.Blobs[kept.path], kept.paths[l.Seq] = oid, kept.path
		}
	}
	r.Outputs = len(outputPaths)
	for _, name := range r.Files {
		switch {
		case name == "build-gate-ledger.md":
			r.Inferred = inferUnverified(gates, verdicts)
			change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportLedger, Data: pipeline.ImportLedgerData{Ledger: *gates}})
			change.Files[pipeline.ImportPath(name)] = docs[name]
		case handoffs[name].From != 0:
			d := handoffs[name].Data()
			change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportHandoff, Data: d})
			change.Files[d.Path] = docs[name]
		case verdicts[name].Verdict != "":
			m := verdicts[name]
			change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportVerdict, Data: pipeline.ImportVerdictData{
				Name: name, Path: pipeline.ImportPath(name), Phase: m.Phase, Rounds: m.Rounds}})
			change.Files[pipeline.ImportPath(name)] = docs[name]
		default:
			change.Files[pipeline.ImportPath(name)] = docs[name]
		}
	}
	for _, l := range fresh {
		d := pipeline.ImportDispatchData{Line: string(l.Raw), Prompt: promptPaths[l.Seq]}
		if d.Prompt != "" {
			d.PromptChars = utf8.RuneCount(prompts[l.Seq])
		}
		if l.Timestamp == nil { // crucible's lines have none: the dispatch file's header tells
			if t, ok := lineTime(l, sent[l.Seq]); ok {
				d.Time = formatTime(t)
			}
		}
		delete(promptPaths, l.Seq) // the first line for a seq carries its file
		if l.Status != "dispatched" {
			d.Output = outputPaths[l.Seq] // and its first final line the output
			if d.Output != "" {
				d.OutputChars = utf8.RuneCount(outputs[l.Seq])
			}
			delete(outputPaths, l.Seq)
		}
		change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportDispatch, Data: d})
	}
	for _, d := range decisions {
		change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{
			Type: d.Type, Choice: d.Choice, Reason: d.Reason, Alternatives: d.Alternatives, Time: d.Time}})
	}
	change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportFiles, Data: pipeline.ImportFilesData{
		Dir: abs, Files: digests, ManifestLines: len(lines), ManifestDigest: digestLines(lines), First: first, Last: last}})
	_, _, err = svc.Update(ctx, id, func(cur *pipeline.State, _ string) (*pipeline.Change, error) {
		if cur.Import.ManifestLines != st.Import.ManifestLines {
			return nil, errors.New("another import of this pipeline ran at the same time; run this one again")
		}
		return change, nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// readMarkerDir reads the verdict markers for pipeline id in dir's
// quality-gate/ into docs and verdicts, under their names, but for a name
// read beside the ledger already. A quality-gate that is not a directory
// is reported; a marker that is not a regular file refuses the import.
func readMarkerDir(dir, id string, docs map[string][]byte, verdicts map[string]Marker, fileProblem func(string, error)) error {
	sub := filepath.Join(dir, MarkerDir)
	if fi, err := os.Lstat(sub); err != nil || id == "" {
		return nil
	} else if !fi.IsDir() {
		fileProblem(MarkerDir, errors.New("not a directory: the verdict markers in it are not read"))
		return nil
	}
	entries, err := os.ReadDir(sub)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if ok, _ := filepath.Match("gate-verdict-*.md", name); !ok || docs[name] != nil {
			continue
		}
		b, err := readInside(sub, name)
		if err != nil {
			return err
		}
		m, perr := Marker{}, pipeline.CheckName("marker file", name)
		if perr == nil {
			m, perr = ParseMarker(b)
		}
		if perr != nil {
			fileProblem(filepath.Join(MarkerDir, name), perr)
			continue
		}
		if m.PipelineID == id {
			docs[name], verdicts[name] = b, m
		}
	}
	return nil
}

// inferUnverified makes INFERRED each phase l says PASS with no PASS marker
// among markers for l's pipeline and that phase: a ledger says what a
// model wrote in it, a marker what the quality gate found. It returns
// those phases.
func inferUnverified(l *ledger.Ledger, markers map[string]Marker) []ledger.Phase {
	inferred := []ledger.Phase{}
	for _, p := range ledger.Phases {
		e := l.Entry(p)
		if e.Status != ledger.Pass {
			continue
		}
		verified := false
		for _, m := range markers {
			verified = verified || m.Verdict == "PASS" && m.PipelineID == l.PipelineID && m.Phase == p
		}
		if !verified {
			e.Status, e.Reason = ledger.Inferred, InferredReason
			inferred = append(inferred, p)
		}
	}
	return inferred
}

// readDispatchFile reads a dispatch file or output that a manifest line
// names: nil when it is missing or its name is not one the chain can keep.
func readDispatchFile(dir, name string) ([]byte, error) {
	b, err := readInside(dir, name)
	if errors.Is(err, os.ErrNotExist) || err == nil && pipeline.CheckName("dispatch file", name) != nil {
		return nil, nil
	}
	return b, err
}

// startsWith reports whether the manifest's lines begin with known, each
// known line with its newline.
func startsWith(lines []ManifestLine, known [][]byte) bool {
	if len(known) > len(lines) {
		return false
	}
	for i, k := range known {
		if string(lines[i].Raw)+"\n" != string(k) {
			return false
		}
	}
	return true
}

// newDecisions is the journal's entries that the pipeline's own journal
// (as export renders it) does not hold yet, counted as a multiset: decisions
// carry their time, so one seen twice was recorded twice.
func newDecisions(all []Decision, ours []byte) []Decision {
	held := map[string]int{}
	for _, line := range bytes.SplitAfter(ours, []byte("\n")) {
		held[string(line)]++
	}
	var out []Decision
	for _, d := range all {
		if key := string(d.Render()); held[key] > 0 {
			held[key]--
			continue
		}
		out = append(out, d)
	}
	return out
}

// runSpan is when the imported run started, and the span the metrics' wall
// clock takes from the files; RFC 3339 in UTC, "" when none says. The start
// is the ledger's Run line, else .pipeline-active's start_time (both written
// when the run began), else the earliest time a dispatch was sent (a bound:
// the run began no later). The span runs from the start to the last time a
// dispatch records (lineTime), as the wall clock of dispatches recorded
// natively ends at the last finish; only when no dispatch says a time, to
// the last gate or handoff.
func runSpan(gates *ledger.Ledger, active Active, handoffs map[string]Handoff,
	lines []ManifestLine, sentAt map[int]string) (started, first, last string) {
	var lo, hi time.Time
	see := func(t time.Time) {
		if lo.IsZero() || t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	var sent time.Time // the earliest a dispatch was sent
	for _, l := range lines {
		if t, ok := lineTime(l, sentAt[l.Seq]); ok {
			see(t)
		}
		if l.Status != "dispatched" && l.Timestamp != nil {
			continue // a final line's own timestamp is when it finished
		}
		// Without the duration: when the dispatch was sent.
		t, ok := lineTime(ManifestLine{Timestamp: l.Timestamp, Status: "dispatched"}, sentAt[l.Seq])
		if ok && (sent.IsZero() || t.Before(sent)) {
			sent = t
		}
	}
	if hi.IsZero() {
		var recorded []string
		if gates != nil {
			recorded = append(recorded, gates.Run)
			for _, e := range gates.Phases {
				recorded = append(recorded, e.Gate)
			}
		}
		for _, h := range handoffs {
			recorded = append(recorded, h.Timestamp)
		}
		for _, s := range recorded {
			if t, ok := parseTime(s); ok {
				see(t)
			}
		}
	}
	start := sent
	for _, s := range []string{active.StartTime, ledgerRun(gates)} {
		if t, ok := parseTime(s); ok {
			start = t
		}
	}
	if start.IsZero() {
		return "", formatTime(lo), formatTime(hi)
	}
	see(start)
	return formatTime(start), formatTime(start), formatTime(hi)
}

// lineTime is the time a manifest line records: its own timestamp
// (git-crucible's), else sent, its dispatch file's Timestamp, plus the
// duration the line gives when it is a final line.
func lineTime(l ManifestLine, sent string) (time.Time, bool) {
	if t, ok := parseTime(ptrString(l.Timestamp)); ok {
		return t, true
	}
	t, ok := parseTime(sent)
	if !ok {
		return time.Time{}, false
	}
	if l.Status != "dispatched" && l.DurationS != nil {
		t = t.Add(time.Duration(*l.DurationS) * time.Second)
	}
	return t, true
}

// parseTime reads a time the skills wrote, as git reads a date (no zone
// meaning local time), in UTC.
func parseTime(s string) (time.Time, bool) {
	t, err := gitext.ParseDate(strings.TrimSpace(s))
	return t.UTC(), err == nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ledgerRun(l *ledger.Ledger) string {
	if l == nil {
		return ""
	}
	return l.Run
}

// importGoal is the goal a new pipeline takes from what the directory says.
func importGoal(gates *ledger.Ledger, handoffs map[string]Handoff, docs map[string][]byte, dir string) string {
	if gates != nil && strings.TrimSpace(gates.Goal) != "" {
		return gates.Goal
	}
	if b, ok := docs["pipeline-status.md"]; ok {
		if s, err := ParseStatus(b); err == nil && strings.TrimSpace(s.Compression.Goal) != "" {
			return s.Compression.Goal
		}
	}
	for _, h := range handoffs {
		if strings.TrimSpace(h.Goal) != "" {
			return h.Goal
		}
	}
	return "imported from " + dir
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func digestLines(lines []ManifestLine) string {
	var all bytes.Buffer
	for _, l := range lines {
		all.Write(l.Raw)
		all.WriteByte('\n')
	}
	return digest(all.Bytes())
}

// runDir is how crucible names a dispatch directory: crucible-dispatch-<session-id>.
const runDir = "crucible-dispatch-"

// IDFromDir is the pipeline id a directory's name gives, or "": the session
// id of a crucible-dispatch-<id> directory, or a name that is itself a
// pipeline id as git-crucible makes them (build-YYYYMMDD-HHMMSS...).
func IDFromDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	name := filepath.Base(abs)
	if id, ok := strings.CutPrefix(name, runDir); ok && refs.ValidateID(id) == nil {
		return id
	}
	if looksLikeRunID(name) && refs.ValidateID(name) == nil {
		return name
	}
	return ""
}

// looksLikeRunID: <skill>-YYYYMMDD-HHMMSS, then anything ("-1a2b3c").
func looksLikeRunID(name string) bool {
	skill, rest, ok := strings.Cut(name, "-")
	if !ok || skill == "" || len(rest) < 15 || rest[8] != '-' {
		return false
	}
	for _, c := range skill {
		ok = ok && c >= 'a' && c <= 'z'
	}
	for i, c := range rest[:15] {
		ok = ok && (i == 8 || c >= '0' && c <= '9')
	}
	return ok && (len(rest) == 15 || rest[15] == '-')
}
