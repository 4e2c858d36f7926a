package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// A restore writes each file beside its place under a temporary name and
// renames it over the place, so that a kill leaves every path either as it
// was or as the checkpoint has it, never empty or half written. The
// temporary names go in a journal first: a killed restore's leftovers are
// removed by the next one, before its safety checkpoint could take them in.

// restoreTemp is the temporary name of a file being restored at path.
func restoreTemp(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".crucible-restore")
}

func (s *Shadow) journalPath() string {
	return filepath.Join(s.repo.GitDir, "crucible-restore-journal")
}

// clearRestoreTemps removes what a killed restore left (the journal's
// temporary files, never following a symbolic link) and the journal.
func (s *Shadow) clearRestoreTemps() error {
	b, err := os.ReadFile(s.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	root, err := os.OpenRoot(s.main.WorkTree) // nothing outside it is touched
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range strings.Split(string(b), "\x00") {
		if rel == "" || !filepath.IsLocal(rel) || throughLink(root, rel) {
			continue
		}
		if err := root.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.Remove(s.journalPath())
}

// throughLink reports whether a directory on the way to rel in root is a
// symbolic link (or gone): a directory replaced by one since the restore
// wrote there, whose file of that name is not the restore's.
func throughLink(root *os.Root, rel string) bool {
	for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
		if fi, err := root.Lstat(dir); err != nil || !fi.IsDir() {
			return true
		}
	}
	return false
}

// writeFiles writes cp's content at the changed paths that cp holds.
func (s *Shadow) writeFiles(ctx context.Context, cp *Checkpoint, changes []Change) error {
	var writes []string
	var journal []byte
	for _, c := range changes {
		if c.Op != "D" {
			writes = append(writes, c.Path)
			journal = append(append(journal, filepath.ToSlash(restoreTemp(filepath.FromSlash(c.Path)))...), 0)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	if err := fsutil.WriteAtomic(s.journalPath(), journal, 0o644); err != nil {
		return err
	}
	objects, err := s.repo.NewObjectReader(ctx)
	if err != nil {
		return err
	}
	defer objects.Close()
	// Each path's entry is looked up through the trees on its way, each
	// read once: a few changed paths cost a few trees, not a listing of all.
	trees := map[string][]gitext.TreeEntry{}
	entry := func(path string) (gitext.TreeEntry, error) {
		tree := cp.Tree
		parts := strings.Split(path, "/")
		for i, name := range parts {
			entries, ok := trees[tree]
			if !ok {
				data, err := objects.ReadKind(tree, "tree")
				if err != nil {
					return gitext.TreeEntry{}, err
				}
				if entries, err = gitext.DecodeTree(data, s.repo.HashLen()); err != nil {
					return gitext.TreeEntry{}, err
				}
				trees[tree] = entries
			}
			j := slices.IndexFunc(entries, func(e gitext.TreeEntry) bool { return e.Name == name })
			switch {
			case j < 0 || i < len(parts)-1 && !entries[j].IsTree():
				return gitext.TreeEntry{}, fmt.Errorf("not in checkpoint %s", cp.ID)
			case i == len(parts)-1:
				return entries[j], nil
			}
			tree = entries[j].OID
		}
		return gitext.TreeEntry{}, fmt.Errorf("not in checkpoint %s", cp.ID)
	}
	for _, path := range writes {
		e, err := entry(path)
		if err == nil {
			err = s.writeFile(objects, path, e)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return os.Remove(s.journalPath())
}

// writeFile puts one tree entry in place in the work tree.
func (s *Shadow) writeFile(objects *gitext.ObjectReader, rel string, f gitext.TreeEntry) error {
	path, err := s.makeParents(rel)
	if err != nil {
		return err
	}
	if f.Mode == "160000" { // a link to another repository's commit: git checks out an empty directory
		if err := os.Mkdir(path, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		return nil
	}
	data, err := objects.ReadKind(f.OID, "blob")
	if err != nil {
		return err
	}
	tmp := restoreTemp(path)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	switch f.Mode {
	case "120000":
		err = os.Symlink(string(data), tmp)
	case "100755", "100644":
		perm := os.FileMode(0o666) // less the umask, as git writes files
		if f.Mode == "100755" {
			perm = 0o777
		}
		err = writeNew(tmp, data, perm)
	default:
		return fmt.Errorf("unexpected mode %s", f.Mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// makeParents creates the directories on rel's way and returns its path,
// refusing to go through a symbolic link or a file (a restore must never
// write outside the work tree).
func (s *Shadow) makeParents(rel string) (string, error) {
	dir := s.main.WorkTree
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(dir, 0o777); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", errors.New("a directory on its path is a symbolic link or a file; left alone")
		}
	}
	return filepath.Join(dir, parts[len(parts)-1]), nil
}
