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

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
)

// ImportReport says what an import did.
type ImportReport struct {
	Pipeline string   `json:"pipeline"`
	Created  bool     `json:"created"`
	Lines    int      `json:"manifest_lines"` // new manifest lines taken
	Files    []string `json:"files"`          // other files taken
	Problems []string `json:"problems"`       // "file:line: message", skipped
}

// Nothing reports an import that found nothing new.
func (r *ImportReport) Nothing() bool { return r.Lines == 0 && len(r.Files) == 0 }

// ErrNoManifest refuses a directory without one valid manifest line.
var ErrNoManifest = errors.New("no valid manifest.jsonl line")

// snapshots are files kept as they are, for export to give back.
var snapshots = []string{"build-gate-ledger.md", "pipeline-status.md", ".pipeline-active", "checkpoint-manifest.md"}

// Import reads a crucible scratch or dispatch directory into a pipeline:
// pipelineID, else the ledger's PipelineID, else .pipeline-active's, else
// the one the directory's name gives (IDFromDir), else a new one. What was
// imported before (same file content, manifest lines already taken) is not
// taken again. Malformed lines and files are reported and skipped; a file
// that is not a regular file directly inside dir (a symbolic link, a
// dispatch file named "../x") refuses the whole import (ErrOutside) before
// anything is written.
func Import(ctx context.Context, svc *pipeline.Service, dir, pipelineID string) (*ImportReport, error) {
	r := &ImportReport{Problems: []string{}, Files: []string{}}
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
	raw, err := readInside(dir, "manifest.jsonl")
	if err != nil {
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
			}
		case "pipeline-status.md":
			_, perr = ParseStatus(b)
		case ".pipeline-active":
			active, perr = ParseActive(b)
		case "checkpoint-manifest.md":
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
	// The names are matched, not the path: dir may hold glob characters.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, pattern := range []string{"handoff-*-to-*.md", "gate-verdict-*.md"} {
		for _, e := range entries {
			name := e.Name()
			if ok, _ := filepath.Match(pattern, name); !ok {
				continue
			}
			b, err := readInside(dir, name)
			if err != nil {
				return nil, err
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
	st := &pipeline.State{}
	create := id == ""
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
	if done > len(lines) || done > 0 && digestLines(lines[:done]) != st.Import.ManifestDigest {
		return nil, fmt.Errorf("%s: lines already imported have changed since (the manifest is append-only)", filepath.Join(dir, "manifest.jsonl"))
	}
	fresh := lines[done:]
	digests := map[string]string{}
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d := digest(docs[name]); st.Import.Files[name] != d {
			digests[name] = d
			r.Files = append(r.Files, name)
		}
	}
	r.Lines = len(fresh)
	if r.Nothing() {
		r.Pipeline = id
		return r, nil
	}
	// Every file is read, and refused if it must be, before anything is written.
	prompts := map[int][]byte{}
	for _, l := range fresh {
		if _, seen := prompts[l.Seq]; seen || l.File == "" {
			continue
		}
		b, err := readInside(dir, l.File)
		if errors.Is(err, os.ErrNotExist) || err == nil && pipeline.CheckName("dispatch file", l.File) != nil {
			continue
		} else if err != nil {
			return nil, err
		}
		prompts[l.Seq] = b
	}

	if create {
		o := pipeline.StartOptions{ID: id, Goal: importGoal(gates, handoffs, docs, dir), Mode: "feature", Beside: true}
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
	promptPaths := map[int]string{}
	for _, l := range fresh {
		b, ok := prompts[l.Seq]
		if _, seen := promptPaths[l.Seq]; seen || !ok {
			continue
		}
		oid, err := svc.Repo.WriteObject("blob", b)
		if err != nil {
			return nil, err
		}
		path := fmt.Sprintf("dispatch/%04d/%s", l.Seq/100, l.File)
		change.Blobs[path], promptPaths[l.Seq] = oid, path
	}
	for _, name := range r.Files {
		switch {
		case name == "build-gate-ledger.md":
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
		change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportDispatch,
			Data: pipeline.ImportDispatchData{Line: string(l.Raw), Prompt: promptPaths[l.Seq]}})
		delete(promptPaths, l.Seq) // the first line for a seq carries its file
	}
	abs, _ := filepath.Abs(dir)
	change.Drafts = append(change.Drafts, pipeline.Draft{Type: pipeline.TypeImportFiles, Data: pipeline.ImportFilesData{
		Dir: abs, Files: digests, ManifestLines: len(lines), ManifestDigest: digestLines(lines)}})
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
