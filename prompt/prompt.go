// Package prompt renders the prompts crucible sends its agents: Go
// text/template files, one per template name, embedded as defaults
// (templates/*.md) and overridable per work tree by
// .crucible/templates/<name>.md.
//
// An override is tracked content that a pull request can change, but a
// template is a prompt, not code: it only changes what an agent is asked,
// and the agent runs under the same configuration and trust either way. So
// overrides need no `git crucible trust`; they are only read carefully:
// regular files directly inside the directory, never through a symbolic
// link, size-bounded.
//
// Files whose name starts with "_" are partials: they hold {{define}}
// blocks every template may call ("context", "report") and are not
// templates a step can name.
package prompt

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/lazy"
)

// OverrideDir is where a work tree overrides or adds templates.
const OverrideDir = ".crucible/templates"

// Limits on what is read from OverrideDir, and of any template given
// elsewhere (replay --mutate's): prompts are kilobytes.
const (
	MaxTemplateBytes = 64 << 10
	maxTemplates     = 100
)

// embeddedPrefix names the built-in files in errors and in Source, so a
// message never suggests a work-tree file that does not exist.
const embeddedPrefix = "<built-in>/"

//go:embed templates/*.md
var builtin embed.FS

var validName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^_?[a-z0-9][a-z0-9-]*$`) }}

// ErrRefused is wrapped by the error that refuses an override file: a
// symbolic link, not a regular file, or an invalid name.
var ErrRefused = errors.New("a template override must be a regular file named <name>.md directly inside " + OverrideDir)

// Set is a parsed set of templates, ready to render.
type Set struct {
	sources map[string]string             // name -> file it came from
	digests map[string]string             // name -> sha256 of its text, hex
	steps   map[string]*template.Template // step templates (not partials) by name
}

type file struct{ path, text string }

// Embedded is the set of built-in templates.
func Embedded() (*Set, error) { return embedded.Get() }

var embedded = lazy.Values[*Set]{New: func() (*Set, error) { return Load("") }}

// Load is the built-in templates overridden and extended by the work tree's
// OverrideDir (absent is fine; workdir "" reads none). A template that does
// not parse is an error naming its file and line.
func Load(workdir string) (*Set, error) { return LoadWith(workdir, nil) }

// Override is a template's text from elsewhere than the work tree: a
// replay's mutation, or a git revision's template.
type Override struct {
	Source string // the file it came from, as errors name it
	Text   string
}

// LoadWith is Load, then each override replacing or adding the template
// it is keyed by.
func LoadWith(workdir string, overrides map[string]Override) (*Set, error) {
	files := map[string]file{}
	entries, err := fs.ReadDir(builtin, "templates")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(builtin, "templates/"+e.Name())
		if err != nil {
			return nil, err
		}
		files[strings.TrimSuffix(e.Name(), ".md")] = file{embeddedPrefix + e.Name(), string(b)}
	}
	if workdir != "" {
		if err := readOverrides(workdir, files); err != nil {
			return nil, err
		}
	}
	for name, o := range overrides {
		if !validName.Get().MatchString(name) {
			return nil, fmt.Errorf("%s: %q is not a template name (lower-case letters, digits and dashes)", o.Source, name)
		}
		if len(o.Text) > MaxTemplateBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", o.Source, MaxTemplateBytes)
		}
		files[name] = file{o.Source, o.Text}
	}
	return parse(files)
}

// readOverrides replaces or adds files from workdir's OverrideDir.
func readOverrides(workdir string, files map[string]file) error {
	dir, shown := workdir, ""
	for _, part := range strings.Split(OverrideDir, "/") {
		dir, shown = filepath.Join(dir, part), path.Join(shown, part)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: is not a directory (a symbolic link?); %w", shown, ErrRefused)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok {
			continue
		}
		display := OverrideDir + "/" + e.Name()
		if !validName.Get().MatchString(name) {
			return fmt.Errorf("%s: %q is not a template name (lower-case letters, digits and dashes); %w", display, name, ErrRefused)
		}
		if n++; n > maxTemplates {
			return fmt.Errorf("%s: more than %d templates", OverrideDir, maxTemplates)
		}
		b, err := fsutil.ReadRegular(filepath.Join(dir, e.Name()), MaxTemplateBytes, ErrRefused)
		if err != nil {
			return err
		}
		files[name] = file{display, string(b)}
	}
	return nil
}

var funcs = lazy.Value[template.FuncMap]{New: func() template.FuncMap { return template.FuncMap{"join": strings.Join} }}

// parse makes every non-partial file a template that sees every partial.
func parse(files map[string]file) (*Set, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	base := template.New("").Option("missingkey=error").Funcs(funcs.Get())
	for _, name := range names {
		if f := files[name]; strings.HasPrefix(name, "_") {
			if _, err := base.New(f.path).Parse(f.text); err != nil {
				return nil, err
			}
		}
	}
	s := &Set{sources: map[string]string{}, digests: map[string]string{}, steps: map[string]*template.Template{}}
	for _, name := range names {
		f := files[name]
		s.sources[name] = f.path
		sum := sha256.Sum256([]byte(f.text))
		s.digests[name] = hex.EncodeToString(sum[:])
		if strings.HasPrefix(name, "_") {
			continue
		}
		t, err := base.Clone()
		if err == nil {
			t, err = t.New(f.path).Parse(f.text)
		}
		if err != nil {
			return nil, err
		}
		s.steps[name] = t
	}
	return s, nil
}

// Has reports whether name is a template a step can use (not a partial).
func (s *Set) Has(name string) bool {
	_, ok := s.steps[name]
	return ok
}

// Names lists the templates a step can use, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.steps))
	for name := range s.steps {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Source is the file a template came from: OverrideDir/<name>.md, or
// "<built-in>/<name>.md".
func (s *Set) Source(name string) string { return s.sources[name] }

// Digest is the sha256 (hex) of template name's own text, partials not
// included; "" for no such template. A dispatch records it, so that a
// replay can tell a template changed since.
func (s *Set) Digest(name string) string { return s.digests[name] }

// Render executes template name with d. A missing map key, a nil task or
// an unknown field is an error naming the file and line.
func (s *Set) Render(name string, d Data) (string, error) {
	t, ok := s.steps[name]
	if !ok {
		return "", fmt.Errorf("no template %q", name)
	}
	if d.Report.Path == "" || (d.Report.Format != ReportTask && d.Report.Format != ReportFindings && d.Report.Format != ReportCritique) {
		return "", fmt.Errorf("template %s: the report needs a path and the format %q, %q or %q, not %q",
			name, ReportTask, ReportFindings, ReportCritique, d.Report.Format)
	}
	var sb strings.Builder
	if err := t.Execute(&sb, d); err != nil {
		return "", err
	}
	return sb.String(), nil
}
