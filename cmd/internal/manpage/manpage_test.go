package manpage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words", "plain words"},
		{"--pipeline ID, -p", `\-\-pipeline ID, \-p`},
		{`a\b`, `a\eb`},
		{".hidden", ".hidden"}, // a line start is writeLine's business
		{"crucible's `sync`", `crucible\(aqs \(gasync\(ga`},
		{"~/x ^y", `\(ti/x \(hay`},
		{"GREEN → RED — done", `GREEN \[u2192] RED \[u2014] done`},
		{`"SKIP GATE"`, `"SKIP GATE"`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRender(t *testing.T) {
	head := ".TH \"X\\-Y\" \"1\" \"\" \"src\" \"Manual\"\n.nh\n.ad l\n.SH NAME\nx\\-y \\- does \\(aqy\\(aq\n"
	page := func(s ...Section) Page {
		return Page{Name: "x-y", Section: "1", Source: "src", Manual: "Manual", Summary: "does 'y'", Sections: s}
	}
	for _, tc := range []struct {
		name string
		page Page
		want string
	}{
		{"empty", page(), head},
		{"paragraphs and lines starting with a period or apostrophe", page(Section{Title: "DESCRIPTION", Blocks: []Block{
			{Text: "first line\n.dotted line\n'quoted line\n\nsecond paragraph"},
		}}), head + ".SH \"DESCRIPTION\"\nfirst line\n\\&.dotted line\n\\(aqquoted line\n.PP\nsecond paragraph\n"},
		{"indented lines kept verbatim", page(Section{Title: "DESCRIPTION", Blocks: []Block{
			{Text: "readable with git:\n   git show a:b\n   .x\nthen prose"},
		}}), head + ".SH \"DESCRIPTION\"\nreadable with git:\n.RS 4\n.nf\ngit show a:b\n\\&.x\n.fi\n.RE\nthen prose\n"},
		{"verbatim to the end of a paragraph", page(Section{Title: "D", Blocks: []Block{{Text: "  a\\b\n\nnext"}}}),
			head + ".SH \"D\"\n.RS 4\n.nf\na\\eb\n.fi\n.RE\n.PP\nnext\n"},
		{"items, their paragraphs, and a block after a block", page(Section{Title: "OPTIONS", Blocks: []Block{
			{Tag: []Span{B("--reason"), R(" "), I("TEXT")}, Text: "why\n\nmore"},
			{Text: "after"},
		}}), head + ".SH \"OPTIONS\"\n.TP\n\\fB\\-\\-reason\\fR \\fITEXT\\fR\nwhy\n.IP\nmore\n.PP\nafter\n"},
		{"synopsis lines and a subsection with quotes in its title", page(
			Section{Title: "SYNOPSIS", Blocks: []Block{{Lines: [][]Span{{B("x y"), R(" [options]")}, {B("x y z")}}}}},
			Section{Title: `x "y" z`, Sub: true},
		), head + ".SH \"SYNOPSIS\"\n\\fBx y\\fR [options]\n.br\n\\fBx y z\\fR\n.SS \"x \\(dqy\\(dq z\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, tc.page); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}

// TestRenderCleanForMan checks that man renders a page using every kind of
// block without a warning from groff.
func TestRenderCleanForMan(t *testing.T) {
	man, err := exec.LookPath("man")
	if err != nil {
		t.Skip("man is not installed")
	}
	page := Page{Name: "x-y", Section: "1", Source: "src", Manual: "Manual", Summary: "does y", Sections: []Section{
		{Title: "SYNOPSIS", Blocks: []Block{{Lines: [][]Span{{B("x y"), R(" ["), I("options"), R("]")}, {B("x y z")}}}}},
		{Title: "DESCRIPTION", Blocks: []Block{{Text: "a -- b 'c' `d` ~e ^f \\g → h\n.i\n\n   verbatim\n'j"}}},
		{Title: "x y z", Sub: true, Blocks: []Block{{Tag: []Span{B("--k"), R(" "), I("L")}, Text: "m\n\n  n\no"}}},
	}}
	path := filepath.Join(t.TempDir(), "x-y.1")
	var b bytes.Buffer
	if err := Render(&b, page); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(man, "--warnings", "-l", path)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("man: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"a -- b 'c' `d` ~e ^f \\g", "verbatim", "--k L"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("man's output lacks %q:\n%s", want, out)
		}
	}
}
