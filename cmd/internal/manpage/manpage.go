// Package manpage renders manual pages in roff's man macros. It exists
// because the binaries are built without urfave/cli's own renderer, whose
// start-up cost every command would pay, and because a page built from
// plain values can be tested line by line.
package manpage

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// A Page is one manual page.
type Page struct {
	Name     string // "git-crucible-ledger"
	Section  string // "1"
	Source   string // the footer's left part: the project
	Manual   string // the header's centre: the manual's title
	Summary  string // what follows the name in NAME
	Sections []Section
}

// A Section is a titled part of a page: .SH, or .SS when Sub.
type Section struct {
	Title  string
	Sub    bool
	Blocks []Block
}

// A Block is prose (Text), formatted lines kept as they are (Lines: a
// synopsis), or, when Tag is set, an indented item under that tag whose
// body is Text.
type Block struct {
	Tag   []Span
	Lines [][]Span
	Text  string // blank lines separate paragraphs; indented lines are kept verbatim
}

// Font is a span's typeface.
type Font int

const (
	Roman Font = iota
	Bold
	Italic
)

// A Span is text in one font.
type Span struct {
	Text string
	Font Font
}

// B, I and R make spans, so that a synopsis reads like one.
func B(s string) Span { return Span{s, Bold} }
func I(s string) Span { return Span{s, Italic} }
func R(s string) Span { return Span{s, Roman} }

// fallbacks are stand-ins for the marks test runners print, which the
// help quotes (jest's ✕), where the output device has no glyph for them:
// groff's ascii device, which man uses in the C locale, warns of each and
// prints nothing. A page that uses one defines its stand-in.
var fallbacks = [...]struct{ glyph, ascii string }{{`\[u2715]`, "x"}, {`\[u2713]`, "v"}}

// Render writes p as roff.
func Render(w io.Writer, p Page) error {
	var body strings.Builder
	bw := bufio.NewWriter(&body)
	writeLine(bw, Escape(p.Name)+` \- `+Escape(p.Summary))
	for _, s := range p.Sections {
		macro := ".SH"
		if s.Sub {
			macro = ".SS"
		}
		fmt.Fprintf(bw, "%s %s\n", macro, quote(s.Title))
		for i, b := range s.Blocks {
			writeBlock(bw, b, i > 0)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	out := bufio.NewWriter(w)
	fmt.Fprintf(out, ".TH %s %s \"\" %s %s\n", quote(strings.ToUpper(p.Name)), quote(p.Section), quote(p.Source), quote(p.Manual))
	// Neither hyphenate nor justify: options would break at their dashes,
	// and the spaces that justify a line are copied with it.
	out.WriteString(".nh\n.ad l\n")
	for _, f := range fallbacks {
		if strings.Contains(body.String(), f.glyph) {
			fmt.Fprintf(out, ".if !c%s .char %s %s\n", f.glyph, f.glyph, f.ascii)
		}
	}
	out.WriteString(".SH NAME\n" + body.String())
	return out.Flush()
}

func writeBlock(w *bufio.Writer, b Block, afterBlock bool) {
	switch {
	case b.Tag != nil:
		w.WriteString(".TP\n")
		writeLine(w, spans(b.Tag))
		writeText(w, b.Text, ".IP")
	case b.Lines != nil:
		if afterBlock {
			w.WriteString(".PP\n")
		}
		for i, l := range b.Lines {
			if i > 0 {
				w.WriteString(".br\n")
			}
			writeLine(w, spans(l))
		}
	default:
		if afterBlock {
			w.WriteString(".PP\n")
		}
		writeText(w, b.Text, ".PP")
	}
}

// writeText writes paragraphs, each after the first introduced by
// paragraph (.PP, or .IP to stay under an item's tag). Runs of indented
// lines are kept as they are, without filling, and indented further.
func writeText(w *bufio.Writer, text, paragraph string) {
	for i, para := range strings.Split(strings.Trim(text, "\n"), "\n\n") {
		if i > 0 {
			w.WriteString(paragraph + "\n")
		}
		verbatim := false
		for _, line := range strings.Split(para, "\n") {
			indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
			if indented != verbatim {
				if indented {
					w.WriteString(".RS 4\n.nf\n")
				} else {
					w.WriteString(".fi\n.RE\n")
				}
				verbatim = indented
			}
			if indented {
				line = strings.TrimLeft(line, " \t")
			}
			writeLine(w, Escape(line))
		}
		if verbatim {
			w.WriteString(".fi\n.RE\n")
		}
	}
}

func spans(ss []Span) string {
	var b strings.Builder
	for _, s := range ss {
		switch s.Font {
		case Bold:
			b.WriteString(`\fB` + Escape(s.Text) + `\fR`)
		case Italic:
			b.WriteString(`\fI` + Escape(s.Text) + `\fR`)
		default:
			b.WriteString(Escape(s.Text))
		}
	}
	return b.String()
}

// writeLine writes one text line, guarded so that roff does not read it
// as a request: a line starting with a period or an apostrophe would be one.
func writeLine(w *bufio.Writer, line string) {
	if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
		w.WriteString(`\&`)
	}
	w.WriteString(line + "\n")
}

// Escape makes s literal text for roff: the backslash, the hyphen (so
// options copied from the page are typed with the ASCII hyphen-minus),
// the quotes, accents and tilde that typesetters would curl or raise, and
// anything beyond ASCII as a named code point.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\e`)
		case '-':
			b.WriteString(`\-`)
		case '\'':
			b.WriteString(`\(aq`)
		case '`':
			b.WriteString(`\(ga`)
		case '~':
			b.WriteString(`\(ti`)
		case '^':
			b.WriteString(`\(ha`)
		default:
			if r > 0x7e {
				fmt.Fprintf(&b, `\[u%04X]`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// quote makes s one argument of a macro.
func quote(s string) string {
	return `"` + strings.ReplaceAll(Escape(s), `"`, `\(dq`) + `"`
}
