package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
)

// Dir is where runs live, under the repository's top: dispatch/<name>/.
const Dir = "dispatch"

// manifestNames are a run directory's manifest, in the order looked for.
var manifestNames = []string{"dispatch.yaml", "dispatch.toml"}

// Resolve finds the manifest arg names, as the seed resolves its input:
// a manifest file; a run directory holding one; a run's name under
// top/dispatch/; nothing, the run whose manifest changed last.
func Resolve(top, arg string) (string, error) {
	if arg == "" {
		return latest(filepath.Join(top, Dir))
	}
	if fi, err := os.Stat(arg); err == nil {
		if !fi.IsDir() {
			return arg, nil
		}
		return inDir(arg)
	}
	if strings.ContainsAny(arg, `/\`) || strings.HasPrefix(arg, ".") {
		return "", fmt.Errorf("%s: no such file or directory", arg)
	}
	path, err := inDir(filepath.Join(top, Dir, arg))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no run named %q: no %s", arg, filepath.Join(Dir, arg, manifestNames[0]))
	}
	return path, err
}

func inDir(dir string) (string, error) {
	for _, name := range manifestNames {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s: no %s: %w", dir, strings.Join(manifestNames, " or "), fs.ErrNotExist)
}

func latest(root string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	best, bestTime := "", int64(0)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path, err := inDir(filepath.Join(root, e.Name()))
		if err != nil {
			continue
		}
		fi, err := os.Stat(path)
		if err == nil && (best == "" || fi.ModTime().UnixNano() > bestTime) {
			best, bestTime = path, fi.ModTime().UnixNano()
		}
	}
	if best == "" {
		return "", fmt.Errorf("no run under %s/: name a manifest, a run directory or a run", Dir)
	}
	return best, nil
}

// Load reads and validates the manifest at path. A task whose manifest
// entry lists no files takes them from its plan.md, beside the manifest
// in a directory named after the task, as the seed keeps it.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return LoadData(path, data)
}

// LoadData is Load of data, read from path.
func LoadData(path string, data []byte) (*Manifest, error) {
	m, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	for i := range m.Tasks {
		t := &m.Tasks[i]
		if len(t.Files) > 0 {
			continue
		}
		plan, err := os.ReadFile(PlanPath(path, t.ID))
		if err != nil {
			continue // no plan: nothing to hold the task's changes to
		}
		t.Files = PlanFiles(plan)
		for range t.Files {
			m.lines.tasks[i].files = append(m.lines.tasks[i].files, t.Line)
		}
	}
	if errs := m.validate(); len(errs) > 0 {
		for _, e := range errs {
			e.File = path
		}
		return nil, errs
	}
	return m, nil
}

// backquoted is a `path` in markdown.
var backquoted = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile("`([^`\n]+)`") }}

// PlanFiles lists the backquoted paths of a plan.md's "Files to Modify"
// section, the seed's best-effort reading: its headings are "## ...".
func PlanFiles(plan []byte) []string {
	var files []string
	for _, line := range planSection(plan, "Files to Modify") {
		for _, m := range backquoted.Get().FindAllStringSubmatch(line, -1) {
			f := CleanPath(m[1])
			if f != "" && !strings.ContainsAny(f, " \t") && !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files
}

// PlanObjective is a plan.md's "Objective" section, trimmed: what a
// task's commit message says with the seed's message-source objective.
func PlanObjective(plan []byte) string {
	return strings.TrimSpace(strings.Join(planSection(plan, "Objective"), "\n"))
}

// planSection is the lines of a plan.md's "## <name>" sections.
func planSection(plan []byte, name string) []string {
	var lines []string
	in := false
	for _, line := range strings.Split(string(plan), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.EqualFold(strings.TrimSpace(line[3:]), name)
			continue
		}
		if in {
			lines = append(lines, strings.TrimRight(line, "\r"))
		}
	}
	return lines
}

// PlanPath is where task id's plan.md lives, beside the manifest at
// manifest in a directory named after the task.
func PlanPath(manifest, id string) string {
	return filepath.Join(filepath.Dir(manifest), id, "plan.md")
}
