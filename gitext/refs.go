package gitext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Refs are read here in process from git's "files" storage (loose, then
// packed-refs), and moved by git (reftx.go); only symbolic refs, which git
// 2.39's update-ref cannot compare-and-swap, and loose refs that git would
// only lock, compare, log and rename (refhere.go) are written here, under
// a lock file taken as git takes it.

func (r *Repo) refPath(name string) string {
	if name == "HEAD" {
		return filepath.Join(r.GitDir, name)
	}
	return filepath.Join(r.CommonDir, filepath.FromSlash(name))
}

// checkRef refuses a ref this code cannot read or write safely: reftable
// storage, or a name git would not accept, which as a path could reach
// outside the refs directory ("refs/heads/../../config").
func (r *Repo) checkRef(name string) error {
	if _, err := os.Stat(filepath.Join(r.CommonDir, "reftable")); err == nil {
		return errors.New("repositories with reftable ref storage are not supported yet")
	}
	if name == "HEAD" {
		return nil
	}
	return CheckRefName(name)
}

// CheckRefName applies git's rules for ref names (git check-ref-format) to
// a full name under refs/.
func CheckRefName(name string) error {
	bad := func(why string) error { return fmt.Errorf("invalid ref name %q: %s", name, why) }
	if !strings.HasPrefix(name, "refs/") {
		return bad("not under refs/")
	}
	if strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return bad("it contains '..' or '@{'")
	}
	if strings.HasSuffix(name, ".") {
		return bad("it ends with '.'")
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return bad("it contains a space, a control character or one of ~^:?*[\\")
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return bad("a component is empty, starts with '.' or ends with '.lock'")
		}
	}
	return nil
}

// readLoose returns a loose ref's raw content, or "" when there is none.
func (r *Repo) readLoose(name string) (string, error) {
	b, err := fsutil.ReadNoPoll(r.refPath(name))
	if errors.Is(err, os.ErrNotExist) || isDirErr(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func isDirErr(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory")
}

// readPacked looks name up in packed-refs.
func (r *Repo) readPacked(name string) (string, error) {
	b, err := fsutil.ReadNoPoll(filepath.Join(r.CommonDir, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	oid := ""
	eachPackedRef(b, func(n, o []byte) bool {
		if string(n) == name {
			oid = string(o)
			return false
		}
		return true
	})
	return oid, nil
}

// eachPackedRef calls fn with each "<oid> <name>" line of a packed-refs
// file, in order, until fn returns false. The header ("#") and peeled
// ("^<oid>") lines are skipped, and so is a line without both fields.
func eachPackedRef(b []byte, fn func(name, oid []byte) bool) {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		oid, name, ok := bytes.Cut(line, []byte(" "))
		if ok && len(oid) > 0 && len(name) > 0 && !fn(name, oid) {
			return
		}
	}
}

// ReadRef returns the object id name points at, or "" when it does not exist.
// Symbolic refs are an error: callers ask for them with ReadSymref.
func (r *Repo) ReadRef(name string) (string, error) {
	if err := r.checkRef(name); err != nil {
		return "", err
	}
	v, err := r.readLoose(name)
	if err != nil || v == "" {
		if err == nil {
			v, err = r.readPacked(name)
		}
		return v, err
	}
	if strings.HasPrefix(v, "ref: ") {
		return "", fmt.Errorf("%s is a symbolic ref", name)
	}
	return v, nil
}

// ReadSymref returns the target of the symbolic ref name, or "" when name
// does not exist or is not symbolic.
func (r *Repo) ReadSymref(name string) (string, error) {
	if err := r.checkRef(name); err != nil {
		return "", err
	}
	v, err := r.readLoose(name)
	if err != nil {
		return "", err
	}
	target, ok := strings.CutPrefix(v, "ref: ")
	if !ok {
		return "", nil
	}
	return target, nil
}

// SetSymref points the symbolic ref name at target if it currently points
// at old ("" means it must not exist). It is the one ref write done in
// process: git 2.39's update-ref has no verb for symbolic refs and
// git symbolic-ref no old value, so the compare-and-swap runs here under
// name's lock file, taken as git takes it.
func (r *Repo) SetSymref(name, target, old string) error {
	if err := CheckRefName(target); err != nil {
		return err
	}
	if err := r.checkRef(name); err != nil {
		return err
	}
	lock, err := takeLock(r.refPath(name), LockWait)
	if err != nil {
		return err
	}
	cur, err := r.ReadSymref(name)
	if err != nil {
		lock.rollback()
		return err
	}
	if cur != old {
		lock.rollback()
		return fmt.Errorf("%s: expected %s, found %s: %w", name, orNone(old), orNone(cur), ErrRefChanged)
	}
	return lock.commit("ref: " + target + "\n")
}

// DeleteSymref removes the symbolic ref name if it still points at target,
// under name's lock as SetSymref writes it: git 2.39's symbolic-ref --delete
// has no old value to compare.
func (r *Repo) DeleteSymref(name, target string) error {
	if err := r.checkRef(name); err != nil {
		return err
	}
	lock, err := takeLock(r.refPath(name), LockWait)
	if err != nil {
		return err
	}
	defer lock.rollback()
	cur, err := r.ReadSymref(name)
	if err != nil {
		return err
	}
	if cur != target {
		return fmt.Errorf("%s: expected %s, found %s: %w", name, orNone(target), orNone(cur), ErrRefChanged)
	}
	return os.Remove(r.refPath(name))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Ref is a ref name and the object it points at.
type Ref struct{ Name, OID string }

// ListRefs lists the refs under prefix (e.g. "refs/crucible/pipelines/"),
// sorted by name. Plain loose and packed refs are read in process; anything
// else (a symbolic or broken ref, an odd name, reftable) is left to git.
func (r *Repo) ListRefs(ctx context.Context, prefix string) ([]Ref, error) {
	if refs, ok := r.listRefsFiles(prefix); ok {
		return refs, nil
	}
	out, err := run(ctx, r, nil, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		oid, name, ok := strings.Cut(sc.Text(), " ")
		if ok {
			refs = append(refs, Ref{Name: name, OID: oid})
		}
	}
	return refs, sc.Err()
}

// listRefsFiles is ListRefs for the "files" ref storage, false when git
// must answer. Loose refs are read before packed-refs, as git does: a
// concurrent pack-refs writes packed-refs before it deletes the loose files.
func (r *Repo) listRefsFiles(prefix string) ([]Ref, bool) {
	if !strings.HasPrefix(prefix, "refs/") || !strings.HasSuffix(prefix, "/") || !validRefName(strings.TrimSuffix(prefix, "/")) ||
		r.checkRef(strings.TrimSuffix(prefix, "/")) != nil {
		return nil, false
	}
	if perWorktree(prefix) {
		return nil, false
	}
	found := map[string]string{}
	ok := true
	root := r.refPath(prefix)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		base := d.Name()
		if d.IsDir() || path == root || strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".lock") {
			return nil // git skips these names too
		}
		rel, _ := filepath.Rel(root, path)
		name := prefix + filepath.ToSlash(rel)
		b, rerr := fsutil.ReadNoPoll(path)
		oid := strings.TrimSuffix(string(b), "\n")
		if !d.Type().IsRegular() || rerr != nil || !validRefName(name) || !r.ValidOID(oid) {
			ok = false
			return filepath.SkipAll
		}
		found[name] = oid
		return nil
	})
	if err != nil || !ok {
		return nil, false
	}
	packed, err := fsutil.ReadNoPoll(filepath.Join(r.CommonDir, "packed-refs"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	eachPackedRef(packed, func(n, o []byte) bool {
		name := string(n)
		if !strings.HasPrefix(name, prefix) {
			return true
		}
		if !validRefName(name) || !r.ValidOID(string(o)) {
			ok = false
			return false
		}
		if _, loose := found[name]; !loose {
			found[name] = string(o)
		}
		return true
	})
	if !ok {
		return nil, false
	}
	refs := make([]Ref, 0, len(found))
	for name, oid := range found {
		refs = append(refs, Ref{Name: name, OID: oid})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, true
}

// validRefName accepts a conservative subset of git's ref names: names
// CheckRefName accepts, made of letters, digits, '-', '_', '.' and '/', no
// component starting with '-'. Git decides about anything else.
func validRefName(name string) bool {
	if CheckRefName(name) != nil || strings.Contains(name, "/-") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if b := name[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.' || b == '/') {
			return false
		}
	}
	return true
}

// HeadBranch returns the branch HEAD is on ("main"), or "" when detached.
// An unborn branch is still a branch.
func (r *Repo) HeadBranch() (string, error) {
	v, err := r.readLoose("HEAD")
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", errors.New("HEAD is missing")
	}
	if t, ok := strings.CutPrefix(v, "ref: refs/heads/"); ok {
		return t, nil
	}
	return "", nil
}

// HeadCommit returns the commit HEAD points at, or "" on an unborn branch.
func (r *Repo) HeadCommit() (string, error) {
	v, err := r.readLoose("HEAD")
	if err != nil {
		return "", err
	}
	if t, ok := strings.CutPrefix(v, "ref: "); ok {
		return r.ReadRef(t)
	}
	return v, nil
}
