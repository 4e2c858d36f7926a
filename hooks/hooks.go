// Package hooks is git-crucible's part of the git hooks. Run is what each
// hook does (refuse a commit while its phase may not go on, add trailers,
// write provenance notes, audit pushes), returning what to say and an
// error, never printing. Install, Inspect and Uninstall manage the hook
// files: tiny sh shims that run "git-crucible-hook <name>", recognised by
// a marker line, next to whatever hook was there before (chained or backed
// up, never lost); for those the caller learns from gitext where the
// directory is and how git is configured.
package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
)

// Binary is git-crucible's main command, looked up on PATH.
const Binary = "git-crucible"

// HookBinary is the command the hooks run, looked up on PATH; install.sh
// puts it beside Binary.
const HookBinary = "git-crucible-hook"

// Beside is where HookBinary is installed, given the main binary's path.
func Beside(binary string) string { return filepath.Join(filepath.Dir(binary), HookBinary) }

// version is the version of the hook file this package writes: 1 ran
// "git-crucible hook run", which still works; 2 runs git-crucible-hook; 3
// leaves pre-commit's check to commit-msg when no editor opens; 4 queues
// post-commit's note without starting git-crucible-hook.
const version = 4

// markerPrefix starts the line that makes a hook file ours.
const markerPrefix = "# git-crucible hook v"

// marker is the line that makes a hook file ours.
var marker = lazy.Value[string]{New: func() string {
	return fmt.Sprintf(`%s%d — managed by "git crucible hooks"; remove with "git crucible hooks uninstall"`, markerPrefix, version)
}}

// Suffixes of the files a foreign hook is moved to.
const (
	ChainedSuffix = ".crucible-chained" // run by our hook, first (--chain)
	BackupSuffix  = ".crucible-backup"  // kept, not run (--force)
)

// Defaults are the hooks installed when none are named: those of a work
// tree, or pre-receive in a bare (server) repository.
func Defaults(bare bool) []string {
	if bare {
		return []string{"pre-receive"}
	}
	return []string{"pre-commit", "commit-msg", "post-commit", "post-rewrite", "pre-push"}
}

// All is every hook git-crucible handles.
func All() []string { return append(Defaults(false), "pre-receive") }

// Known reports whether name is a hook git-crucible handles.
func Known(name string) bool { return slices.Contains(All(), name) }

// TakesStdin reports whether git gives the hook input on stdin.
func TakesStdin(name string) bool {
	return name == "pre-push" || name == "post-rewrite" || name == "pre-receive"
}

// State is what a hook file is, from git-crucible's point of view.
type State string

const (
	Missing     State = "missing"
	Ours        State = "ours"
	OursChained State = "ours-chained" // ours, and runs a foreign hook first
	Outdated    State = "outdated"     // ours, but not what this version writes, or not executable
	Foreign     State = "foreign"
)

// Hook is one hook file as found in the directory.
type Hook struct {
	Name          string   `json:"name"`
	Path          string   `json:"path"`
	State         State    `json:"state"`
	Chained       string   `json:"chained,omitempty"`  // the hook ours runs first, when there is one
	Backup        string   `json:"backup,omitempty"`   // a hook replaced by --force, when kept
	Fallback      string   `json:"fallback,omitempty"` // ours: the binary it runs when git-crucible is not on PATH
	NotExecutable bool     `json:"not_executable,omitempty"`
	Head          []string `json:"head,omitempty"`          // foreign: its first lines
	Tool          string   `json:"tool,omitempty"`          // foreign: husky, lefthook, ... when recognised
	RunsCrucible  bool     `json:"runs_crucible,omitempty"` // foreign, but runs git-crucible (added by hand)

	content      []byte
	sameAsChain  bool // the chained file is this very file (an interrupted --chain)
	sameAsBackup bool // likewise for --force
}

// Ours reports whether the file is git-crucible's, whatever its version.
func (h Hook) Ours() bool { return h.State == Ours || h.State == OursChained || h.State == Outdated }

// headLines is how much of a foreign hook is shown.
const headLines = 5

// Inspect reads the hook called name in dir.
func Inspect(dir, name string) (Hook, error) {
	h := Hook{Name: name, Path: filepath.Join(dir, name)}
	fi, err := os.Lstat(h.Path)
	if errors.Is(err, fs.ErrNotExist) {
		h.State = Missing
	} else if err != nil {
		return h, err
	}
	for _, aside := range []struct {
		path *string
		same *bool
		sfx  string
	}{{&h.Chained, &h.sameAsChain, ChainedSuffix}, {&h.Backup, &h.sameAsBackup, BackupSuffix}} {
		afi, err := os.Lstat(h.Path + aside.sfx)
		if err == nil {
			*aside.path = h.Path + aside.sfx
			*aside.same = fi != nil && os.SameFile(fi, afi)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return h, err
		}
	}
	if h.State == Missing {
		return h, nil
	}
	if h.content, err = os.ReadFile(h.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return h, err // a dangling symbolic link reads as empty
	}
	if st, err := os.Stat(h.Path); err != nil || st.Mode().Perm()&0o111 == 0 {
		h.NotExecutable = true
	}
	fallback, ours := parseShim(h.content)
	switch {
	case !ours:
		h.State = Foreign
		h.Head = head(h.content, headLines)
		h.Tool = identify(dir, h.content)
		h.RunsCrucible = runsCrucible(h.content)
	case h.NotExecutable || !bytes.Equal(h.content, Shim(name, fallback)):
		h.State, h.Fallback = Outdated, fallback
	case h.Chained != "":
		h.State, h.Fallback = OursChained, fallback
	default:
		h.State, h.Fallback = Ours, fallback
	}
	return h, nil
}

// head is the first n lines of a file, without their line ends.
func head(data []byte, n int) []string {
	var lines []string
	for len(data) > 0 && len(lines) < n {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		lines = append(lines, string(bytes.TrimSuffix(line, []byte("\r"))))
		data = rest
	}
	return lines
}

// identify names the hook manager that wrote a foreign hook, if it is one
// we know: by the directory (husky's core.hooksPath) or by the content.
func identify(dir string, content []byte) string {
	if slices.Contains(strings.Split(filepath.ToSlash(dir), "/"), ".husky") {
		return "husky"
	}
	lower := bytes.ToLower(content)
	for _, t := range []struct{ needle, tool string }{
		{"lefthook", "lefthook"}, {"husky", "husky"}, {"pre-commit.com", "pre-commit"},
		{"git-lfs", "git-lfs"}, {"overcommit", "overcommit"},
	} {
		if bytes.Contains(lower, []byte(t.needle)) {
			return t.tool
		}
	}
	return ""
}

// runsCrucible reports whether a foreign hook calls git-crucible's hook
// entry point itself, as the line printed by --manual does.
func runsCrucible(content []byte) bool {
	for _, call := range []string{HookBinary + " ", "git-crucible hook run", "git crucible hook run"} {
		if bytes.Contains(content, []byte(call)) {
			return true
		}
	}
	return false
}

// ManualLine is the line to add to one's own hook to run git-crucible's.
func ManualLine(name string) string {
	return fmt.Sprintf(`%s %s "$@" || exit $?`, HookBinary, name)
}
