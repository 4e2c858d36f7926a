package pipespec

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/internal/tomlpos"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/prompt"
)

// MaxBytes bounds a spec file: the default is a few kilobytes.
const MaxBytes = 1 << 20

// Problem is one thing wrong with a spec, at a line (0: the whole file).
type Problem struct {
	Line int
	Msg  string
}

// Error lists everything wrong with a spec, by line.
type Error struct {
	Source   string
	Problems []Problem
}

func (e *Error) Error() string {
	var sb strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			sb.WriteByte('\n')
		}
		if p.Line > 0 {
			fmt.Fprintf(&sb, "%s:%d: %s", e.Source, p.Line, p.Msg)
		} else {
			fmt.Fprintf(&sb, "%s: %s", e.Source, p.Msg)
		}
	}
	return sb.String()
}

// ErrNotRegular refuses a spec file that is a symbolic link or not a
// regular file: a tracked override is content a pull request controls.
var ErrNotRegular = errors.New("a spec must be a regular file")

// Load reads and parses the spec file at path (a regular file, never read
// through a symbolic link); see Parse. accept, unless nil, judges the
// content read before it is parsed: the file is read once, so what is
// accepted is what runs.
func Load(path string, templates *prompt.Set, accept func(content []byte) error) (*Spec, error) {
	data, err := fsutil.ReadRegular(path, MaxBytes, ErrNotRegular)
	if err == nil && accept != nil {
		err = accept(data)
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, path, templates)
}

// ForWorkTree is the spec a build in workTree walks when it names none:
// the work tree's override (OverridePath, read once: accept, unless nil,
// judges what was read — a tracked file runs only once trusted), else
// the default. An override that is a symbolic link is refused, not
// followed. templates are the work tree's.
func ForWorkTree(workTree string, templates *prompt.Set, accept func(content []byte) error) (*Spec, error) {
	if workTree != "" {
		override := filepath.Join(workTree, OverridePath)
		if _, err := os.Lstat(override); err == nil {
			return Load(override, templates, accept)
		}
	}
	return Default()
}

// Parse decodes and validates a spec; source names it in errors. Every
// template a step names must be one of templates' (Has); nil means the
// built-in ones. The error is an *Error listing every problem found with
// its line.
func Parse(data []byte, source string, templates *prompt.Set) (*Spec, error) {
	if templates == nil {
		set, err := prompt.Embedded()
		if err != nil {
			return nil, err
		}
		templates = set
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Source: source, Problems: []Problem{{pe.Position.Line, pe.Message}}}
		}
		return nil, &Error{Source: source, Problems: []Problem{{0, err.Error()}}}
	}
	d := &decoder{lines: tomlpos.Lines(data)}
	sp := d.spec(raw)
	sp.Source = source
	if len(d.problems) == 0 {
		d.validate(sp, templates)
	}
	if len(d.problems) > 0 {
		// By line; what concerns the whole file (line 0) last.
		key := func(p Problem) int { return cmp.Or(p.Line, math.MaxInt) }
		sort.SliceStable(d.problems, func(i, j int) bool { return key(d.problems[i]) < key(d.problems[j]) })
		return nil, &Error{Source: source, Problems: d.problems}
	}
	return sp, nil
}

// decoder turns the decoded TOML into a Spec, collecting problems with
// their lines instead of stopping at the first.
type decoder struct {
	lines    map[string]int
	problems []Problem
}

func (d *decoder) errorf(path string, format string, args ...any) {
	d.problems = append(d.problems, Problem{tomlpos.LineOf(d.lines, path), fmt.Sprintf(format, args...)})
}

// Keys of each table; a step's are common plus its kind's.
var (
	specKeys   = []string{"version", "phases"}
	phaseKeys  = []string{"number", "name", "steps"}
	commonKeys = []string{"id", "kind"}
	roundKeys  = []string{"role", "template", "inputs", "artifact", "fixer", "fix-template", "max-rounds"}
	kindKeys   = lazy.Value[map[Kind][]string]{New: func() map[Kind][]string {
		return map[Kind][]string{
			Dispatch:   {"role", "template", "inputs", "outputs", "exports", "skip-if-exists"},
			Gate:       roundKeys,
			ReviewLoop: roundKeys,
			Run:        {"command", "expect"},
			Checkpoint: {"name"},
			Approve:    {"message"},
			Tasks:      {"from", "steps", "max-parallel"},
		}
	}}
	kinds = []Kind{Dispatch, Gate, ReviewLoop, Run, Checkpoint, Approve, Tasks}
)

// unknown reports m's keys that are not in allowed, in key order.
func (d *decoder) unknown(m map[string]any, path, what string, allowed ...[]string) {
	var bad []string
	for k := range m {
		ok := false
		for _, list := range allowed {
			for _, a := range list {
				ok = ok || k == a
			}
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	for _, k := range bad {
		d.errorf(tomlpos.Join(path, k), "unknown key %q %s", k, what)
	}
}

func (d *decoder) spec(raw map[string]any) *Spec {
	sp := &Spec{Version: 1}
	d.unknown(raw, "", "(a spec has version and phases)", specKeys)
	if v, ok := d.integer(raw, "", "version"); ok {
		sp.Version = v
	}
	for i, m := range d.tables(raw, "", "phases") {
		path := "phases." + strconv.Itoa(i)
		d.unknown(m, path, "in a phase (it has number, name and steps)", phaseKeys)
		p := Phase{Line: tomlpos.LineOf(d.lines, path), path: path}
		if n, ok := d.integer(m, path, "number"); ok {
			p.Number = ledger.Phase(n)
		}
		p.Name = d.str(m, path, "name")
		if p.Name == "" && p.Number.Valid() {
			p.Name = p.Number.Name()
		}
		p.Steps = d.steps(m, path)
		sp.Phases = append(sp.Phases, p)
	}
	return sp
}

func (d *decoder) steps(m map[string]any, path string) []Step {
	var steps []Step
	for i, sm := range d.tables(m, path, "steps") {
		steps = append(steps, d.step(sm, path+".steps."+strconv.Itoa(i)))
	}
	return steps
}

func (d *decoder) step(m map[string]any, path string) Step {
	s := Step{Line: tomlpos.LineOf(d.lines, path), path: path, ID: d.str(m, path, "id"), Kind: Kind(d.str(m, path, "kind"))}
	allowed, ok := kindKeys.Get()[s.Kind]
	switch {
	case s.Kind == "":
		d.errorf(path, "a step needs a kind (%s)", kindList())
		return s
	case !ok:
		d.errorf(tomlpos.Join(path, "kind"), "unknown step kind %q (%s)", s.Kind, kindList())
		return s
	}
	d.unknown(m, path, "in a "+string(s.Kind)+" step", commonKeys, allowed)
	s.Role = d.str(m, path, "role")
	s.Template = d.str(m, path, "template")
	s.Inputs = d.strList(m, path, "inputs")
	s.Outputs = d.strMap(m, path, "outputs")
	s.Exports = d.strList(m, path, "exports")
	s.SkipIfExists = d.boolean(m, path, "skip-if-exists")
	s.Artifact = d.str(m, path, "artifact")
	s.Fixer = d.str(m, path, "fixer")
	s.FixTemplate = d.str(m, path, "fix-template")
	s.Command = d.str(m, path, "command")
	s.Expect = d.str(m, path, "expect")
	s.Name = d.str(m, path, "name")
	s.Message = d.str(m, path, "message")
	s.From = d.str(m, path, "from")
	if s.Kind == Tasks {
		s.Steps = d.steps(m, path)
		s.MaxParallel = 1
		if n, ok := d.integer(m, path, "max-parallel"); ok {
			s.MaxParallel = n
		}
	}
	if s.Rounds() {
		s.MaxRounds = DefaultMaxRounds
		if n, ok := d.integer(m, path, "max-rounds"); ok {
			s.MaxRounds = n
		}
		def := map[Kind]string{Gate: "red-team", ReviewLoop: "reviewer"}[s.Kind]
		s.Role = or(s.Role, def)
		if s.Kind == Gate {
			s.Template = or(s.Template, "red-team")
		}
		s.Fixer = or(s.Fixer, "fixer")
		s.FixTemplate = or(s.FixTemplate, "fixer")
	}
	if s.Kind == Run {
		s.Expect = or(s.Expect, ExpectPass)
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func kindList() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func (d *decoder) str(m map[string]any, path, key string) string {
	v, ok := m[key]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.errorf(tomlpos.Join(path, key), "%s must be a string", key)
	}
	return s
}

func (d *decoder) boolean(m map[string]any, path, key string) bool {
	v, ok := m[key]
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		d.errorf(tomlpos.Join(path, key), "%s must be true or false", key)
	}
	return b
}

func (d *decoder) integer(m map[string]any, path, key string) (int, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok || n < -1<<31 || n > 1<<31-1 {
		d.errorf(tomlpos.Join(path, key), "%s must be an integer", key)
		return 0, false
	}
	return int(n), true
}

func (d *decoder) strList(m map[string]any, path, key string) []string {
	v, ok := m[key]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, isStr := e.(string)
		ok = ok && isStr
		out = append(out, s)
	}
	if !ok {
		d.errorf(tomlpos.Join(path, key), "%s must be a list of strings", key)
		return nil
	}
	return out
}

func (d *decoder) strMap(m map[string]any, path, key string) map[string]string {
	v, ok := m[key]
	if !ok {
		return nil
	}
	table, ok := v.(map[string]any)
	out := make(map[string]string, len(table))
	for k, e := range table {
		s, isStr := e.(string)
		ok = ok && isStr
		out[k] = s
	}
	if !ok {
		d.errorf(tomlpos.Join(path, key), "%s must be a table of strings (name = \"path\")", key)
		return nil
	}
	return out
}

// tables is m[key] as an array of tables.
func (d *decoder) tables(m map[string]any, path, key string) []map[string]any {
	v, ok := m[key]
	if !ok {
		return nil
	}
	if list, ok := v.([]map[string]any); ok {
		return list
	}
	// An inline array of inline tables decodes as []any.
	list, ok := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		t, isTable := e.(map[string]any)
		ok = ok && isTable
		out = append(out, t)
	}
	if !ok {
		d.errorf(tomlpos.Join(path, key), "%s must be an array of tables ([[%s]])", key, strings.TrimLeft(tomlpos.Join(stripIndexes(path), key), "."))
		return nil
	}
	return out
}

// stripIndexes turns "phases.0.steps" into "phases.steps", as TOML names it.
func stripIndexes(path string) string {
	parts := strings.Split(path, ".")
	out := parts[:0]
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}
