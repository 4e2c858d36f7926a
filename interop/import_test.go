package interop

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func TestRunSpan(t *testing.T) {
	dur := 300
	stamp := "2026-04-13T15:20:00Z"
	sent := map[int]string{1: "2026-04-13T14:40:00Z", 2: "2026-04-13T15:10:00Z"}
	lines := []ManifestLine{
		{Seq: 1, Status: "dispatched"},
		{Seq: 2, Status: "completed", DurationS: &dur}, // finished 15:15
	}
	gates := &ledger.Ledger{Run: "2026-04-13T14:00:00Z"}
	gates.Phases[0].Gate = "2026-04-13T16:00:00Z"
	active := Active{StartTime: "2026-04-13T13:55:00Z"}
	for _, tc := range []struct {
		name                 string
		gates                *ledger.Ledger
		active               Active
		lines                []ManifestLine
		sent                 map[int]string
		started, first, last string
	}{
		{"the ledger's Run first", gates, active, lines, sent,
			"2026-04-13T14:00:00Z", "2026-04-13T14:00:00Z", "2026-04-13T15:15:00Z"},
		{"then .pipeline-active", nil, active, lines, sent,
			"2026-04-13T13:55:00Z", "2026-04-13T13:55:00Z", "2026-04-13T15:15:00Z"},
		{"then the first dispatch sent", nil, Active{}, lines, sent,
			"2026-04-13T14:40:00Z", "2026-04-13T14:40:00Z", "2026-04-13T15:15:00Z"},
		{"a line's own timestamp counts, a final one's as its end", nil, Active{},
			[]ManifestLine{{Seq: 3, Status: "completed", Timestamp: &stamp, DurationS: &dur}}, nil,
			"", "2026-04-13T15:20:00Z", "2026-04-13T15:20:00Z"},
		{"no dispatch time: the last gate ends it", gates, Active{}, nil, nil,
			"2026-04-13T14:00:00Z", "2026-04-13T14:00:00Z", "2026-04-13T16:00:00Z"},
		{"nothing says", nil, Active{StartTime: "soon"}, lines, nil, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, first, last := runSpan(tc.gates, tc.active, nil, tc.lines, tc.sent)
			if started != tc.started || first != tc.first || last != tc.last {
				t.Fatalf("runSpan = %q, %q, %q; want %q, %q, %q", started, first, last, tc.started, tc.first, tc.last)
			}
		})
	}
}

// TestInferUnverified: import takes a ledger's PASS as verified only with a
// PASS marker of the ledger's pipeline and phase; the others are INFERRED.
func TestInferUnverified(t *testing.T) {
	const id = "build-20260413-140000"
	pass := func(p ledger.Phase) Marker { return Marker{Verdict: "PASS", Phase: p, PipelineID: id} }
	tests := []struct {
		name    string
		status  [4]ledger.Status
		markers []Marker
		want    []ledger.Phase
	}{
		{"no PASS", [4]ledger.Status{ledger.Skipped, ledger.InProgress, ledger.NotStarted, ledger.NotStarted}, nil, []ledger.Phase{}},
		{"each PASS with its marker", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.Complete, ledger.Pass},
			[]Marker{pass(ledger.Design), pass(ledger.Plan), pass(ledger.Completion)}, []ledger.Phase{}},
		{"no marker at all", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.Complete, ledger.InProgress}, nil,
			[]ledger.Phase{ledger.Design, ledger.Plan}},
		{"another pipeline's, another phase's, a FAIL", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.InProgress, ledger.NotStarted},
			[]Marker{{Verdict: "PASS", Phase: ledger.Design, PipelineID: "build-other"}, pass(ledger.Completion),
				{Verdict: "FAIL", Phase: ledger.Plan, PipelineID: id}},
			[]ledger.Phase{ledger.Design, ledger.Plan}},
		{"a Phase 3 PASS", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.Pass, ledger.NotStarted},
			[]Marker{pass(ledger.Design), pass(ledger.Plan)}, []ledger.Phase{ledger.Execute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ledger.Ledger{PipelineID: id}
			for i, s := range tt.status {
				l.Phases[i] = ledger.Entry{Status: s, Gate: "2026-04-13T14:30:00"}
			}
			markers := map[string]Marker{}
			for i, m := range tt.markers {
				markers[fmt.Sprintf("gate-verdict-%d.md", i)] = m
			}
			got := inferUnverified(&l, markers)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("inferred %v, want %v", got, tt.want)
			}
			for i, s := range tt.status {
				e, p := l.Phases[i], ledger.Phase(i+1)
				want := ledger.Entry{Status: s, Gate: "2026-04-13T14:30:00"}
				if slices.Contains(tt.want, p) {
					want.Status, want.Reason = ledger.Inferred, InferredReason
				}
				if e != want {
					t.Errorf("phase %d: %+v, want %+v", p, e, want)
				}
			}
		})
	}
}

// TestChoosePipeline: the pipeline an import goes into, and what it does
// with a ledger that names another or none.
func TestChoosePipeline(t *testing.T) {
	const named, ledgers, actives = "build-20260413-090000", "build-20260413-100000", "build-20260413-110000"
	gates := func(id string) *ledger.Ledger { return &ledger.Ledger{PipelineID: id} }
	other := &OtherLedgerError{Path: "/d/build-gate-ledger.md", ID: ledgers}
	tests := []struct {
		name       string
		dir, flag  string
		gates      *ledger.Ledger
		other      *OtherLedgerError
		active     string
		want       string
		wantErr    bool
		keepLedger bool
		problems   []string
	}{
		{name: "the flag first, a ledger of another pipeline skipped", dir: "/d/x", flag: named, gates: gates(ledgers), active: actives,
			want: named, problems: []string{"/d/x/build-gate-ledger.md:0: the ledger is for pipeline " + ledgers + ", not " + named}},
		{name: "the flag naming the ledger's", dir: "/d/x", flag: ledgers, gates: gates(ledgers), want: ledgers, keepLedger: true},
		{name: "then the ledger's", dir: "/d/x", gates: gates(ledgers), active: actives, want: ledgers, keepLedger: true},
		{name: "then .pipeline-active's, a ledger naming none skipped", dir: "/d/x", gates: gates(""), active: actives,
			want: actives, problems: []string{"/d/x/build-gate-ledger.md:0: the ledger names no PipelineID"}},
		{name: "then the directory's name", dir: "/d/crucible-dispatch-" + named, want: named},
		{name: "else a new one", dir: "/d/x", want: ""},
		{name: "a new one, the ledger naming none skipped", dir: "/d/x", gates: gates(""),
			problems: []string{"/d/x/build-gate-ledger.md:0: the ledger names no PipelineID"}},
		{name: "a hook-test ledger refuses when nothing names it", dir: "/d/x", other: other, wantErr: true},
		{name: "a hook-test ledger is skipped when something does", dir: "/d/x", flag: named, other: other,
			want: named, problems: []string{other.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &ImportReport{}
			d := &importDocs{files: map[string][]byte{}, gates: tt.gates, other: tt.other, active: Active{PipelineID: tt.active}}
			if tt.gates != nil {
				d.files["build-gate-ledger.md"] = []byte("ledger")
			}
			id, err := choosePipeline(tt.dir, tt.flag, d, skips{dir: tt.dir, r: r})
			if tt.wantErr {
				if !errors.Is(err, tt.other) {
					t.Fatalf("err = %v, want %v", err, tt.other)
				}
				return
			}
			if err != nil || id != tt.want {
				t.Fatalf("choosePipeline = %q, %v; want %q", id, err, tt.want)
			}
			if kept := d.gates != nil && d.files["build-gate-ledger.md"] != nil; kept != tt.keepLedger {
				t.Errorf("ledger kept: %v, want %v", kept, tt.keepLedger)
			}
			if !slices.Equal(r.Problems, tt.problems) {
				t.Errorf("problems %q, want %q", r.Problems, tt.problems)
			}
		})
	}
}

// TestWhatIsNew: what an import takes of a directory, given what the
// pipeline took before and what it would export now.
func TestWhatIsNew(t *testing.T) {
	const (
		l1 = `{"seq":1,"file":"1-a.md","role":"a","phase":"1","task":null,"status":"dispatched"}`
		l2 = `{"seq":1,"file":"1-a.md","role":"a","phase":"1","task":null,"status":"completed"}`
		l3 = `{"seq":2,"file":"2-b.md","role":"b","phase":"1","task":null,"status":"dispatched"}`
	)
	manifest := func(raw ...string) []ManifestLine {
		lines, problems := ParseManifest([]byte(strings.Join(raw, "\n") + "\n"))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		return lines
	}
	all := manifest(l1, l2, l3)
	d1 := Decision{Time: "2026-04-13T14:00:00Z", Type: "tier", Choice: "T1"}
	d2 := Decision{Time: "2026-04-13T14:05:00Z", Type: "tier", Choice: "T2"}
	files := map[string][]byte{"build-gate-ledger.md": []byte("ledger"), "handoff-1-to-2.md": []byte("handoff")}
	record := func(lines int, files map[string][]byte) pipeline.Imports {
		rec := pipeline.Imports{ManifestLines: lines, ManifestDigest: digestLines(all[:lines]), Files: map[string]string{}}
		for name, b := range files {
			rec.Files[name] = digest(b)
		}
		return rec
	}
	exportOf := func(lines int, files map[string][]byte, decisions ...Decision) map[string][]byte {
		out := map[string][]byte{}
		for name, b := range files {
			out[name] = b
		}
		for _, l := range all[:lines] {
			out["manifest.jsonl"] = append(append(out["manifest.jsonl"], l.Raw...), '\n')
		}
		for _, d := range decisions {
			out["journal"] = append(out["journal"], d.Render()...)
		}
		return out
	}
	tests := []struct {
		name      string
		lines     []ManifestLine
		files     map[string][]byte
		decisions []Decision
		rec       pipeline.Imports
		exported  map[string][]byte // nil: a new pipeline
		wantLines []ManifestLine
		wantFiles []string
		wantDecs  []Decision
		asked     bool   // whether the export was looked at
		err       string // the error's end
	}{
		{name: "a new pipeline takes all", lines: all, files: files, decisions: []Decision{d1},
			wantLines: all, wantFiles: []string{"build-gate-ledger.md", "handoff-1-to-2.md"}, wantDecs: []Decision{d1}},
		{name: "the same directory again: nothing, by the record alone", lines: all, files: files,
			rec: record(3, files), exported: map[string][]byte{}},
		{name: "lines appended since", lines: all, files: files, rec: record(1, files),
			exported: exportOf(1, files), wantLines: all[1:], asked: true},
		{name: "a file changed since", lines: all, files: map[string][]byte{"build-gate-ledger.md": []byte("ledger 2")},
			rec: record(3, files), exported: exportOf(3, files), wantFiles: []string{"build-gate-ledger.md"}, asked: true},
		{name: "what the pipeline exports is not new", lines: all, files: files, decisions: []Decision{d1, d2},
			rec: pipeline.Imports{}, exported: exportOf(3, files, d1), wantDecs: []Decision{d2}, asked: true},
		{name: "a decision recorded twice is new the second time", lines: all[:1], decisions: []Decision{d1, d1},
			rec: record(1, nil), exported: exportOf(1, nil, d1), wantDecs: []Decision{d1}, asked: true},
		{name: "a line taken before has changed", lines: manifest(l1, l3), rec: record(2, nil), exported: exportOf(2, nil),
			asked: true, err: "/d/manifest.jsonl: lines already imported have changed since (the manifest is append-only)"},
		{name: "fewer lines than taken before", lines: all[:1], rec: record(2, nil), exported: exportOf(2, nil),
			asked: true, err: "lines already imported have changed since (the manifest is append-only)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			var exported func() (map[string][]byte, error)
			if tt.exported != nil {
				exported = func() (map[string][]byte, error) { asked = true; return tt.exported, nil }
			}
			if tt.files == nil {
				tt.files = map[string][]byte{}
			}
			d := &importDocs{files: tt.files, decisions: tt.decisions}
			n, err := whatIsNew("/d", tt.lines, d, tt.rec, "journal", exported)
			if asked != tt.asked {
				t.Errorf("export looked at: %v, want %v", asked, tt.asked)
			}
			if tt.err != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one ending %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw := func(lines []ManifestLine) (out []string) {
				for _, l := range lines {
					out = append(out, string(l.Raw))
				}
				return out
			}
			if got, want := raw(n.lines), raw(tt.wantLines); !slices.Equal(got, want) {
				t.Errorf("lines %q, want %q", got, want)
			}
			if !slices.Equal(n.files, tt.wantFiles) {
				t.Errorf("files %q, want %q", n.files, tt.wantFiles)
			}
			if !slices.Equal(n.decisions, tt.wantDecs) {
				t.Errorf("decisions %v, want %v", n.decisions, tt.wantDecs)
			}
		})
	}
}

// TestReadDispatchFiles: which dispatch file and output an import reads for
// each seq, and what refuses it.
func TestReadDispatchFiles(t *testing.T) {
	dir := t.TempDir()
	sent := DispatchFile{Template: "a", Pipeline: "build", Phase: "1", Timestamp: "2026-04-13T14:00:00Z", Prompt: []byte("do a\n")}.Render()
	for name, b := range map[string][]byte{
		"1-a.md": sent, "1-a.output.md": []byte("did a"), "2-b.md": []byte("no header"), "2-b.output.md": []byte("did b"),
		"3-c.md": []byte("c"), "3-c.output.md": []byte("did c"), "-x.md": []byte("x"), "4-d.md": []byte("d"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	line := func(seq int, file, status string) ManifestLine {
		return ManifestLine{Seq: seq, File: file, Status: status}
	}
	listed := map[string]bool{"1-a.output.md": true, "2-b.output.md": true}
	tests := []struct {
		name             string
		lines            []ManifestLine
		prompts, outputs map[int]string
		sent             map[int]string
		err              error
	}{
		{name: "a dispatch file, its header's time, the output of its final line",
			lines:   []ManifestLine{line(1, "1-a.md", "dispatched"), line(1, "1-a.md", "completed")},
			prompts: map[int]string{1: string(sent)}, outputs: map[int]string{1: "did a"}, sent: map[int]string{1: "2026-04-13T14:00:00Z"}},
		{name: "no output for a dispatched line, no time without a header",
			lines:   []ManifestLine{line(2, "2-b.md", "dispatched")},
			prompts: map[int]string{2: "no header"}},
		{name: "an output the listing does not hold is not looked for",
			lines:   []ManifestLine{line(3, "3-c.md", "completed")},
			prompts: map[int]string{3: "c"}},
		{name: "a missing file, then the next line's; a name the chain cannot keep is left out",
			lines:   []ManifestLine{line(4, "4-gone.md", "dispatched"), line(4, "4-d.md", "completed"), line(5, "-x.md", "dispatched"), line(6, "", "completed")},
			prompts: map[int]string{4: "d"}},
		{name: "a name outside the directory refuses",
			lines: []ManifestLine{line(1, "1-a.md", "dispatched"), line(7, "../1-a.md", "dispatched")}, err: ErrOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := readDispatchFiles(dir, tt.lines, listed)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				return
			}
			text := func(files map[int][]byte) map[int]string {
				out := map[int]string{}
				for seq, b := range files {
					out[seq] = string(b)
				}
				return out
			}
			for _, c := range []struct {
				what      string
				got, want map[int]string
			}{{"prompts", text(f.prompts), tt.prompts}, {"outputs", text(f.outputs), tt.outputs}, {"sent", f.sent, tt.sent}} {
				if !maps.Equal(c.got, c.want) {
					t.Errorf("%s %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}
