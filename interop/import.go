package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
//
// The report comes back with an error only when it says why: a manifest
// without a valid line (ErrNoManifest), a ledger in the hook tests' shape
// that cannot name the pipeline (*OtherLedgerError).
func Import(ctx context.Context, svc *pipeline.Service, dir, pipelineID string) (*ImportReport, error) {
	r := &ImportReport{Problems: []string{}, Files: []string{}, Inferred: []ledger.Phase{}}
	skip := skips{dir: dir, r: r}
	// Every file is read, and refused if it must be, before anything is written.
	lines, err := readManifest(dir, skip)
	if errors.Is(err, ErrNoManifest) {
		return r, err
	} else if err != nil {
		return nil, err
	}
	docs, err := readDocuments(dir, skip)
	if err != nil {
		return nil, err
	}
	id, err := choosePipeline(dir, pipelineID, docs, skip)
	if err != nil {
		return r, err
	}
	if err := readMarkerDir(dir, id, docs, skip); err != nil {
		return nil, err
	}
	st, create, err := loadPipeline(ctx, svc, id)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	var exported func() (map[string][]byte, error) // nil: a new pipeline exports nothing
	if !create {
		exported = func() (map[string][]byte, error) { return Export(ctx, svc, id, abs) }
	}
	n, err := whatIsNew(dir, lines, docs, st.Import, DecisionsFile(id), exported)
	if err != nil {
		return nil, err
	}
	r.Pipeline, r.Lines, r.Decisions, r.Files = id, len(n.lines), len(n.decisions), append(r.Files, n.files...)
	if r.Nothing() {
		return r, nil
	}
	kept, err := readDispatchFiles(dir, n.lines, docs.listed)
	if err != nil {
		return nil, err
	}
	started, first, last := runSpan(docs.gates, docs.active, docs.handoffs, n.lines, kept.sent)

	// Written from here on.
	if create {
		if id, st, err = startImported(ctx, svc, id, dir, docs, started); err != nil {
			return nil, err
		}
		r.Pipeline, r.Created = id, true
	}
	change, outputs, inferred, err := importChange(svc.Repo, n, docs, kept)
	if err != nil {
		return nil, err
	}
	change.Drafts = append(change.Drafts, importRecord(abs, lines, docs, n.files, first, last))
	if err := appendImport(ctx, svc, id, st.Import.ManifestLines, change); err != nil {
		return nil, err
	}
	r.Outputs, r.Inferred = outputs, inferred
	return r, nil
}

// choosePipeline is the pipeline an import of dir goes into: pipelineID,
// else the ledger's PipelineID, else .pipeline-active's, else the one the
// directory's name gives; "" for a new one. A ledger of another pipeline is
// skipped (taken out of d): replay would refuse it, after the new pipeline
// was made. A ledger in the hook tests' shape is skipped too, or refuses
// the import when nothing names the pipeline: a made-up id would make a
// second pipeline of the same run when the user imports again with
// --pipeline.
func choosePipeline(dir, pipelineID string, d *importDocs, skip skips) (string, error) {
	id := pipelineID
	switch {
	case id != "":
	case d.gates != nil && d.gates.PipelineID != "":
		id = d.gates.PipelineID
	case d.active.PipelineID != "":
		id = d.active.PipelineID
	default:
		id = IDFromDir(dir)
	}
	if d.gates != nil && (d.gates.PipelineID == "" || id != d.gates.PipelineID) {
		msg := fmt.Sprintf("the ledger is for pipeline %s, not %s", d.gates.PipelineID, id)
		if d.gates.PipelineID == "" {
			msg = "the ledger names no PipelineID"
		}
		skip.at("build-gate-ledger.md", 0, msg)
		d.gates = nil
		delete(d.files, "build-gate-ledger.md")
	}
	if d.other != nil {
		if id == "" {
			return "", d.other
		}
		skip.note(d.other.Error())
	}
	return id, nil
}

// loadPipeline is pipeline id's state, and whether the import creates it:
// when id is "" or names no pipeline yet.
func loadPipeline(ctx context.Context, svc *pipeline.Service, id string) (*pipeline.State, bool, error) {
	if id == "" {
		return &pipeline.State{}, true, nil
	}
	if err := refs.ValidateID(id); err != nil {
		return nil, false, err
	}
	st, _, err := svc.Load(ctx, id)
	if errors.Is(err, refs.ErrNoPipeline) {
		return &pipeline.State{}, true, nil
	}
	return st, false, err
}

// news is what of a directory a pipeline does not hold yet.
type news struct {
	lines     []ManifestLine // the manifest's lines after those taken
	files     []string       // the files beside it with new content, sorted
	decisions []Decision     // the journals' entries not recorded yet
}

// whatIsNew is what of a directory (its manifest's lines, the documents d
// beside it) is new to a pipeline: not taken by an import before (rec, the
// pipeline's record of its imports), nor what the pipeline would export now
// (exported, whose journal is the file of that name; nil for a new
// pipeline). exported is called only when the record is not enough, as it
// reads every kept file. The lines taken before may only have had lines
// appended since.
func whatIsNew(dir string, lines []ManifestLine, d *importDocs, rec pipeline.Imports, journal string,
	exported func() (map[string][]byte, error)) (news, error) {
	done := rec.ManifestLines
	taken := done <= len(lines) && (done == 0 || digestLines(lines[:done]) == rec.ManifestDigest)
	changed := make([]string, 0, len(d.files))
	for name, b := range d.files {
		if rec.Files[name] != digest(b) {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	var ours map[string][]byte
	if exported != nil && (!taken || done < len(lines) || len(changed) > 0 || len(d.decisions) > 0) {
		var err error
		if ours, err = exported(); err != nil {
			return news{}, err
		}
	}
	if known := bytes.SplitAfter(ours["manifest.jsonl"], []byte("\n")); len(known) > 1 && startsWith(lines, known[:len(known)-1]) {
		done = len(known) - 1
	} else if !taken {
		return news{}, fmt.Errorf("%s: lines already imported have changed since (the manifest is append-only)", filepath.Join(dir, "manifest.jsonl"))
	}
	n := news{lines: lines[done:], decisions: newDecisions(d.decisions, ours[journal])}
	for _, name := range changed {
		if mine, ok := ours[name]; !ok || !bytes.Equal(mine, d.files[name]) {
			n.files = append(n.files, name)
		}
	}
	return n, nil
}

// startImported starts the pipeline an import creates, id or a new id when
// "", with the goal and mode the documents say, started when the run was;
// it returns the id and the pipeline's state.
func startImported(ctx context.Context, svc *pipeline.Service, id, dir string, d *importDocs, started string) (string, *pipeline.State, error) {
	o := pipeline.StartOptions{ID: id, Goal: importGoal(d, dir), Mode: "feature", Beside: true, Started: started}
	if d.gates != nil && (d.gates.Mode == "feature" || d.gates.Mode == "refactor") {
		o.Mode = d.gates.Mode
	}
	if o.ID == "" {
		t, err := gitext.Now()
		if err != nil {
			return "", nil, err
		}
		if o.ID, err = refs.NewID(t); err != nil {
			return "", nil, err
		}
	}
	st, _, err := svc.Start(ctx, o)
	return o.ID, st, err
}

// importChange is the append of what is new, n: an event for each new file
// beside the manifest, each new line and each new decision, the dispatch
// files and outputs the lines name written as blobs first. It returns how
// many outputs it keeps and the phases it imports INFERRED.
func importChange(repo *gitext.Repo, n news, d *importDocs, kept dispatchFiles) (*pipeline.Change, int, []ledger.Phase, error) {
	change := &pipeline.Change{Files: map[string][]byte{}, Blobs: map[string]string{}}
	paths, err := keepDispatchFiles(repo, n.lines, kept, change.Blobs)
	if err != nil {
		return nil, 0, nil, err
	}
	outputs := len(paths.outputs)
	inferred := addFileEvents(change, n.files, d)
	addDispatchEvents(change, n.lines, kept, paths)
	for _, dec := range n.decisions {
		change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{
			Type: dec.Type, Choice: dec.Choice, Reason: dec.Reason, Alternatives: dec.Alternatives, Time: dec.Time}})
	}
	return change, outputs, inferred, nil
}

// keptPaths is where the chain keeps each seq's dispatch file and output.
type keptPaths struct {
	prompts map[int]string
	outputs map[int]string
}

// keepDispatchFiles writes each seq's dispatch file and output as a blob,
// into blobs at the path the seq's first line gives. They are written one
// at a time, before the commit.
func keepDispatchFiles(repo *gitext.Repo, lines []ManifestLine, f dispatchFiles, blobs map[string]string) (keptPaths, error) {
	p := keptPaths{prompts: map[int]string{}, outputs: map[int]string{}}
	keep := func(files map[int][]byte, paths map[int]string, seq int, path string) error {
		b, ok := files[seq]
		if _, seen := paths[seq]; seen || !ok {
			return nil
		}
		oid, err := repo.WriteObject("blob", b)
		if err != nil {
			return err
		}
		blobs[path], paths[seq] = oid, path
		return nil
	}
	for _, l := range lines {
		if err := keep(f.prompts, p.prompts, l.Seq, fmt.Sprintf("dispatch/%04d/%s", l.Seq/100, l.File)); err != nil {
			return p, err
		}
		if err := keep(f.outputs, p.outputs, l.Seq, pipeline.ImportedOutputPath(l.Seq, l.File)); err != nil {
			return p, err
		}
	}
	return p, nil
}

// addFileEvents adds to change each of the files names beside the manifest,
// kept, with its event when it has one: the ledger (each PASS without its
// marker imported INFERRED: those phases are returned), a handoff, a
// verdict marker. The others are kept for export to give back.
func addFileEvents(change *pipeline.Change, names []string, d *importDocs) []ledger.Phase {
	inferred := []ledger.Phase{}
	for _, name := range names {
		switch {
		case name == "build-gate-ledger.md":
			inferred = inferUnverified(d.gates, d.verdicts)
			change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportLedger, Data: pipeline.ImportLedgerData{Ledger: *d.gates}})
			change.Files[pipeline.ImportPath(name)] = d.files[name]
		case d.handoffs[name].From != 0:
			h := d.handoffs[name].Data()
			change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportHandoff, Data: h})
			change.Files[h.Path] = d.files[name]
		case d.verdicts[name].Verdict != "":
			m := d.verdicts[name]
			change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportVerdict, Data: pipeline.ImportVerdictData{
				Name: name, Path: pipeline.ImportPath(name), Phase: m.Phase, Rounds: m.Rounds}})
			change.Files[pipeline.ImportPath(name)] = d.files[name]
		default:
			change.Files[pipeline.ImportPath(name)] = d.files[name]
		}
	}
	return inferred
}

// addDispatchEvents adds to change an event for each manifest line, the
// first line of a seq naming its kept dispatch file, its first final line
// its output (p is used up).
func addDispatchEvents(change *pipeline.Change, lines []ManifestLine, f dispatchFiles, p keptPaths) {
	for _, l := range lines {
		d := pipeline.ImportDispatchData{Line: string(l.Raw), Prompt: p.prompts[l.Seq]}
		if d.Prompt != "" {
			d.PromptChars = utf8.RuneCount(f.prompts[l.Seq])
		}
		if l.Timestamp == nil { // crucible's lines have none: the dispatch file's header tells
			if t, ok := lineTime(l, f.sent[l.Seq]); ok {
				d.Time = formatTime(t)
			}
		}
		delete(p.prompts, l.Seq)
		if l.Status != "dispatched" {
			d.Output = p.outputs[l.Seq]
			if d.Output != "" {
				d.OutputChars = utf8.RuneCount(f.outputs[l.Seq])
			}
			delete(p.outputs, l.Seq)
		}
		change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportDispatch, Data: d})
	}
}

// importRecord is the import's record of itself, last in its append: all
// of the manifest, the digests of the new files, the span of the run. The
// next import takes only what is new after it.
func importRecord(dir string, lines []ManifestLine, d *importDocs, names []string, first, last string) pipeline.Draft {
	digests := map[string]string{}
	for _, name := range names {
		digests[name] = digest(d.files[name])
	}
	return pipeline.Draft{Type: pipeline.TypeImportFiles, Data: pipeline.ImportFilesData{
		Dir: dir, Files: digests, ManifestLines: len(lines), ManifestDigest: digestLines(lines), First: first, Last: last}}
}

// appendImport appends change to pipeline id, read with seen manifest lines
// imported, unless another import appended since: both would take the same
// new lines.
func appendImport(ctx context.Context, svc *pipeline.Service, id string, seen int, change *pipeline.Change) error {
	_, _, err := svc.Update(ctx, id, func(cur *pipeline.State, _ string) (*pipeline.Change, error) {
		if cur.Import.ManifestLines != seen {
			return nil, errors.New("another import of this pipeline ran at the same time; run this one again")
		}
		return change, nil
	})
	return err
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

// importGoal is the goal a new pipeline takes from what directory dir says.
func importGoal(d *importDocs, dir string) string {
	if d.gates != nil && strings.TrimSpace(d.gates.Goal) != "" {
		return d.gates.Goal
	}
	if b, ok := d.files["pipeline-status.md"]; ok {
		if s, err := ParseStatus(b); err == nil && strings.TrimSpace(s.Compression.Goal) != "" {
			return s.Compression.Goal
		}
	}
	for _, h := range d.handoffs {
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
