package gitext

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Repo is a discovered repository. All paths are absolute.
type Repo struct {
	GitDir    string // this worktree's git dir (HEAD lives here)
	CommonDir string // shared by all worktrees (refs, objects, config)
	WorkTree  string // "" for a bare repository or when run inside the git dir
	Bare      bool
	Format    string // object format: "sha1" or "sha256"
	// Private says the repository's objects are its own alone: the
	// object-store variables a caller's environment may carry (a push
	// quarantine sets GIT_OBJECT_DIRECTORY for the repository receiving it)
	// do not apply to it. A checkpoint shadow is private.
	Private bool
	// NoReflogs leaves the reflogs of the refs BeginRefs moves to git's
	// config (a bare repository keeps none): a checkpoint shadow prunes
	// its refs to free their objects, which a reflog would keep.
	NoReflogs bool
	// RefsHere lets MoveRef move a loose ref in process (refhere.go): for
	// a short-lived process, a hook, whose kill can leave the ref's lock.
	RefsHere bool
	refsHere int // whether the repository allows RefsHere: 0 not asked yet, 1 yes, -1 no

	via *Exec // how its verbs run git (With); nil: as the zero Exec says
}

// ObjectDir is where loose objects are written.
func (r *Repo) ObjectDir() string {
	if d := os.Getenv("GIT_OBJECT_DIRECTORY"); d != "" && !r.Private {
		return d
	}
	return filepath.Join(r.CommonDir, "objects")
}

// CrucibleDir is git-crucible's private, local-only directory under the
// common dir (caches, writer identity). Nothing in it is the truth.
func (r *Repo) CrucibleDir() string { return filepath.Join(r.CommonDir, "crucible") }

// Discover finds the repository the way git does from the current directory
// and environment. Plain layouts are recognised by reading a few files (the
// hot path of hooks cannot afford a process); anything unusual is left to
// one `git rev-parse`, so git's own rules decide.
func Discover(ctx context.Context) (*Repo, error) {
	if r, ok := discoverFast(); ok {
		return r, nil
	}
	return discoverWithGit(ctx)
}

// discoverWithGit asks git, in one process.
func discoverWithGit(ctx context.Context) (*Repo, error) {
	out, err := run(ctx, nil, nil, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
		"--is-bare-repository", "--is-inside-work-tree", "--show-object-format", "--show-cdup")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 5 {
		return nil, fmt.Errorf("unexpected output from git rev-parse: %q", out)
	}
	r := &Repo{GitDir: lines[0], CommonDir: lines[1], Bare: lines[2] == "true", Format: lines[4]}
	if lines[3] == "true" {
		cwd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cdup := ""
		if len(lines) > 5 {
			cdup = lines[5]
		}
		r.WorkTree = filepath.Clean(filepath.Join(cwd, cdup))
	}
	return r, nil
}

// discoverFast handles a plain repository: no environment overrides but
// GIT_DIR, a .git directory or gitfile found walking up on one filesystem,
// owned by us, with no core.worktree, include, non-default formats or
// core.bare other than false.
func discoverFast() (*Repo, bool) {
	for _, k := range []string{"GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
		"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE"} {
		if os.Getenv(k) != "" {
			return nil, false
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, false
	}
	var gitDir, workTree string
	if d := os.Getenv("GIT_DIR"); d != "" {
		gitDir, workTree = abs(cwd, d), cwd
	} else {
		gitDir, workTree = findDotGit(cwd)
		if gitDir == "" {
			return nil, false
		}
	}
	if !isFile(filepath.Join(gitDir, "HEAD")) || !ownedByUs(workTree) {
		return nil, false
	}
	common := gitDir
	if b, err := fsutil.ReadNoPoll(filepath.Join(gitDir, "commondir")); err == nil {
		common = abs(gitDir, strings.TrimSpace(string(b)))
	}
	cfg, err := fsutil.ReadNoPoll(filepath.Join(common, "config"))
	if err != nil {
		return nil, false
	}
	cfg = bytes.ToLower(cfg)
	for _, k := range []string{"worktree", "refstorage", "include"} {
		if bytes.Contains(cfg, []byte(k)) {
			return nil, false
		}
	}
	format, ok := objectFormat(cfg)
	if !ok || mayBeBare(cfg) {
		return nil, false
	}
	return &Repo{GitDir: gitDir, CommonDir: filepath.Clean(common), WorkTree: workTree, Format: format}, true
}

// objectFormat reads extensions.objectFormat from the lower-cased config
// text: sha1 when no line names it, else its value when written as git
// init writes it, "objectformat = sha256" on a line of its own under
// [extensions]. Any other spelling (a quoted value, a comment after it, a
// continued line, another section) is not ok: git decides.
func objectFormat(cfg []byte) (string, bool) {
	if !bytes.Contains(cfg, []byte("objectformat")) {
		return "sha1", true
	}
	if bytes.Contains(cfg, []byte("\\\n")) || bytes.Contains(cfg, []byte("\\\r\n")) {
		return "", false // a continued line could hide where a value ends
	}
	format, section := "", ""
	for _, line := range bytes.Split(cfg, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if bytes.HasPrefix(line, []byte("[")) {
			section = string(line)
		}
		if !bytes.Contains(line, []byte("objectformat")) {
			continue
		}
		key, value, _ := bytes.Cut(line, []byte("="))
		v := string(bytes.TrimSpace(value))
		if section != "[extensions]" || string(bytes.TrimSpace(key)) != "objectformat" || format != "" || (v != "sha1" && v != "sha256") {
			return "", false
		}
		format = v
	}
	return format, true
}

// mayBeBare reports whether the lower-cased config text could set
// core.bare to anything but false: every "bare" followed by "=" or the end
// of its line must be given one of git's four spellings of false. Git
// decides whatever else (true, yes, on, 1, a bare "bare", a quoted value,
// a comment after it, the same word in another section).
func mayBeBare(cfg []byte) bool {
	for rest := cfg; ; {
		i := bytes.Index(rest, []byte("bare"))
		if i < 0 {
			return false
		}
		rest = rest[i+len("bare"):]
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return true // "bare" alone is true
		}
		value, ok := bytes.CutPrefix(line, []byte("="))
		if !ok {
			continue // part of another word or value: "/srv/bare.git"
		}
		switch string(bytes.TrimSpace(value)) {
		case "false", "no", "off", "0":
		default:
			return true
		}
	}
}

// findDotGit walks up from dir to the first .git directory or gitfile, and
// gives up (to git) at a filesystem boundary or a directory that may itself
// be a git dir.
func findDotGit(dir string) (gitDir, workTree string) {
	var dev uint64
	for first := true; ; first = false {
		st, err := os.Stat(dir)
		if err != nil {
			return "", ""
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			if !first && uint64(sys.Dev) != dev {
				return "", ""
			}
			dev = uint64(sys.Dev)
		}
		if isFile(filepath.Join(dir, "HEAD")) || filepath.Base(dir) == ".git" {
			return "", "" // possibly inside a git dir or a bare repository
		}
		dotgit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				return dotgit, dir
			}
			b, err := fsutil.ReadNoPoll(dotgit)
			rest, ok := strings.CutPrefix(string(b), "gitdir: ")
			if err != nil || !ok {
				return "", ""
			}
			return abs(dir, strings.TrimSpace(rest)), dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

func abs(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// ownedByUs mirrors git's safe.directory ownership test; a stranger's
// repository goes to git, which knows the configured exceptions.
func ownedByUs(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid()
}
