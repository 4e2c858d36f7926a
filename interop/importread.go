package interop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// maxImportFile bounds what import reads of any one file: crucible's files
// are kilobytes, a hostile directory could offer anything.
const maxImportFile = 64 << 20

// ErrOutside refuses a file that is not a regular file named directly inside
// the imported directory: a symbolic link (to ~/.ssh/id_rsa, say) would
// otherwise be read, stored in the chain and pushed.
var ErrOutside = errors.New("import reads only regular files inside the directory")

// readInside reads dir/name without following a symbolic link at name and
// only when name stays inside dir. A missing file is os.ErrNotExist; the
// content of a refused file is never read.
func readInside(dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	if !filepath.IsLocal(name) || filepath.Base(name) != name {
		return nil, fmt.Errorf("%q is outside %s: %w", name, dir, ErrOutside)
	}
	return fsutil.ReadRegular(path, maxImportFile, ErrOutside)
}

// The names of the files import looks for beside the manifest besides the
// snapshots; DecisionsGlob is the third.
const (
	handoffGlob = "handoff-*-to-*.md"
	markerGlob  = "gate-verdict-*.md"
)

// skips records in an import's report what it skips, each as
// "<file>:<line>: <message>" with the file under dir.
type skips struct {
	dir string
	r   *ImportReport
}

func (s skips) at(name string, line int, msg string) {
	s.note(fmt.Sprintf("%s:%d: %s", filepath.Join(s.dir, name), line, msg))
}

// file records a file's fault at the line its "line N: " prefix names, else
// at line 0.
func (s skips) file(name string, err error) {
	var line int
	msg := err.Error()
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
		_, msg, _ = strings.Cut(msg, ": ")
	}
	s.at(name, line, msg)
}

// note records a message that names its file itself.
func (s skips) note(msg string) { s.r.Problems = append(s.r.Problems, msg) }

// readManifest reads and parses dir's manifest.jsonl, its malformed lines
// skipped: a missing directory or manifest is a *DirError, a manifest
// without one valid line ErrNoManifest.
func readManifest(dir string, skip skips) ([]ManifestLine, error) {
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
	lines, faults := ParseManifest(raw)
	for _, p := range faults {
		skip.at("manifest.jsonl", p.Line, p.Msg)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.jsonl"), ErrNoManifest)
	}
	return lines, nil
}

// importDocs is what an import read beside the manifest, each file parsed; a
// file with a fault is skipped and left out of all of them.
type importDocs struct {
	files     map[string][]byte // name to content, kept as they came
	gates     *ledger.Ledger    // build-gate-ledger.md
	other     *OtherLedgerError // a build-gate-ledger.md in the hook tests' shape
	active    Active            // .pipeline-active
	handoffs  map[string]Handoff
	verdicts  map[string]Marker
	decisions []Decision      // every journal's, in the directory's order
	listed    map[string]bool // every name in the directory
}

// readDocuments reads the files beside dir's manifest: the snapshots, then
// the handoffs, the verdict markers and the decision journals. A file that
// is not a regular file inside dir refuses the import (ErrOutside).
func readDocuments(dir string, skip skips) (*importDocs, error) {
	d := &importDocs{files: map[string][]byte{}, handoffs: map[string]Handoff{}, verdicts: map[string]Marker{}}
	if err := d.readSnapshots(dir, skip); err != nil {
		return nil, err
	}
	// The names are matched, not the path: dir may hold glob characters.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	d.listed = make(map[string]bool, len(entries))
	for _, e := range entries {
		d.listed[e.Name()] = true
	}
	for _, pattern := range []string{handoffGlob, markerGlob, DecisionsGlob} {
		for _, e := range entries {
			if ok, _ := filepath.Match(pattern, e.Name()); ok {
				if err := d.readMatching(dir, pattern, e.Name(), skip); err != nil {
					return nil, err
				}
			}
		}
	}
	return d, nil
}

// readSnapshots reads the snapshots there are in dir into d.
func (d *importDocs) readSnapshots(dir string, skip skips) error {
	for _, name := range snapshots {
		b, err := readInside(dir, name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		var perr error
		switch name {
		case "build-gate-ledger.md":
			var l ledger.Ledger
			if l, perr = ledger.Parse(b); perr == nil {
				d.gates = &l
			} else if id, ok := hookLedgerID(b); ok {
				d.other = &OtherLedgerError{Path: filepath.Join(dir, name), ID: id}
				continue
			}
		case "pipeline-status.md":
			_, perr = ParseStatus(b)
		case ".pipeline-active":
			d.active, perr = ParseActive(b)
		case checkpointList:
			if _, ps := ParseCheckpoints(b); len(ps) > 0 {
				perr = ps[0]
			}
		}
		if perr != nil {
			skip.file(name, perr)
			continue
		}
		d.files[name] = b
	}
	return nil
}

// readMatching reads file name of dir, which pattern matched, into d.
func (d *importDocs) readMatching(dir, pattern, name string, skip skips) error {
	b, err := readInside(dir, name)
	if err != nil {
		return err
	}
	var perr error
	switch pattern {
	case DecisionsGlob:
		ds, ps := ParseDecisions(b)
		for _, p := range ps {
			skip.at(name, p.Line, p.Msg)
		}
		d.decisions = append(d.decisions, ds...)
		return nil
	case handoffGlob:
		var h Handoff
		if h, perr = parseHandoffFile(name, b); perr == nil {
			d.handoffs[name] = h
		}
	default:
		var m Marker
		if m, perr = parseMarkerFile(name, b); perr == nil {
			d.verdicts[name] = m
		}
	}
	if perr != nil {
		skip.file(name, perr)
		return nil
	}
	d.files[name] = b
	return nil
}

// parseHandoffFile parses handoff file name, which must hold the handoff
// its name says.
func parseHandoffFile(name string, b []byte) (Handoff, error) {
	h, err := ParseHandoff(b)
	if err == nil && name != fmt.Sprintf("handoff-%d-to-%d.md", h.From, h.To) {
		err = fmt.Errorf("holds the handoff %d to %d", h.From, h.To)
	}
	return h, err
}

// parseMarkerFile parses verdict marker file name, whose name the chain
// must be able to keep.
func parseMarkerFile(name string, b []byte) (Marker, error) {
	if err := pipeline.CheckName("marker file", name); err != nil {
		return Marker{}, err
	}
	return ParseMarker(b)
}

// readMarkerDir reads the verdict markers for pipeline id in dir's
// quality-gate/ into d, under their names, but for a name read beside the
// ledger already. A quality-gate that is not a directory is reported; a
// marker that is not a regular file refuses the import.
func readMarkerDir(dir, id string, d *importDocs, skip skips) error {
	sub := filepath.Join(dir, MarkerDir)
	if fi, err := os.Lstat(sub); err != nil || id == "" {
		return nil
	} else if !fi.IsDir() {
		skip.file(MarkerDir, errors.New("not a directory: the verdict markers in it are not read"))
		return nil
	}
	entries, err := os.ReadDir(sub)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if ok, _ := filepath.Match(markerGlob, name); !ok || d.files[name] != nil {
			continue
		}
		b, err := readInside(sub, name)
		if err != nil {
			return err
		}
		m, perr := parseMarkerFile(name, b)
		if perr != nil {
			skip.file(filepath.Join(MarkerDir, name), perr)
			continue
		}
		if m.PipelineID == id {
			d.files[name], d.verdicts[name] = b, m
		}
	}
	return nil
}

// dispatchFiles is what the dispatch files that manifest lines name hold,
// by seq.
type dispatchFiles struct {
	prompts map[int][]byte
	outputs map[int][]byte
	sent    map[int]string // the Timestamp of each dispatch file's header
}

// readDispatchFiles reads, for each seq of lines, the first dispatch file
// its lines name that is there, and the output of its first final line
// that listed (the directory's names) holds. A name outside dir refuses the
// import; a missing file, or one whose name the chain cannot keep, is left
// out.
func readDispatchFiles(dir string, lines []ManifestLine, listed map[string]bool) (dispatchFiles, error) {
	f := dispatchFiles{prompts: map[int][]byte{}, outputs: map[int][]byte{}, sent: map[int]string{}}
	for _, l := range lines {
		if l.File == "" {
			continue
		}
		if _, seen := f.prompts[l.Seq]; !seen {
			b, err := readDispatchFile(dir, l.File)
			if err != nil {
				return f, err
			}
			if b != nil {
				f.prompts[l.Seq] = b
				if df, err := ParseDispatchFile(b); err == nil && df.Timestamp != "" {
					f.sent[l.Seq] = df.Timestamp
				}
			}
		}
		// Outputs are git-crucible's own addition, rare in a crucible
		// directory: the listing says whether to look, not a failed open.
		if _, seen := f.outputs[l.Seq]; !seen && l.Status != "dispatched" && listed[pipeline.OutputName(l.File)] {
			b, err := readDispatchFile(dir, pipeline.OutputName(l.File))
			if err != nil {
				return f, err
			}
			if b != nil {
				f.outputs[l.Seq] = b
			}
		}
	}
	return f, nil
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
