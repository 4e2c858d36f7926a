package engine

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/git-crucible/git-crucible/gitext"
)

// guardedConfig matches the repository's config an agent must not
// change: what decides which hooks run (core.hooksPath, config-based
// hooks, includes that could set either) and git-crucible's own (which
// agent plays a role and how, consent to agents' commands). Claude Code is
// reported to rewrite core.hooksPath when it makes a worktree: an agent
// can switch the gates off unmeant.
const guardedConfig = `^(core\.hookspath|hook\..*|include\..*|includeif\..*|crucible\..*)$`

// hookSet is what makes the repository's hooks run, as a dispatch found
// them: the repository's own config of them and the hooks directory's
// files.
type hookSet struct {
	config map[string][]string // key -> its values, in order
	// configFiles is what the config files looked like when config was
	// read: while they look the same, config is not read again.
	configFiles []fileStamp
	dir         string // the hooks directory git runs from
	files       map[string]hookFile
}

// fileStamp tells a file changed without reading it.
type fileStamp struct {
	ino, size, mtime int64
}

// stamps are the repository's config files' (and the per-worktree one's).
func stamps(r *gitext.Repo) []fileStamp {
	var out []fileStamp
	for _, p := range []string{filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree")} {
		var st fileStamp
		if fi, err := os.Stat(p); err == nil {
			st.size, st.mtime = fi.Size(), fi.ModTime().UnixNano()
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				st.ino = int64(sys.Ino)
			}
		}
		out = append(out, st)
	}
	return out
}

type hookFile struct {
	mode fs.FileMode
	data []byte // a link's target for a symbolic link
}

// hooksOf reads the repository's hooks as they are now, from the hooks
// directory dir ("" for the one git runs them from now). The config is
// prev's while the config files look as they did for prev.
func hooksOf(ctx context.Context, r *gitext.Repo, dir string, prev *hookSet) (*hookSet, error) {
	h := &hookSet{config: map[string][]string{}, configFiles: stamps(r), files: map[string]hookFile{}}
	if prev != nil && slices.Equal(prev.configFiles, h.configFiles) {
		h.config = prev.config
		if dir == "" {
			dir = prev.dir
		}
	} else {
		entries, err := r.ConfigEntriesIn(ctx, gitext.ConfigLocal, guardedConfig)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.NoValue {
				h.config[e.Key] = append(h.config[e.Key], e.Value)
			}
		}
	}
	if h.dir = dir; dir == "" {
		var err error
		if h.dir, err = r.HooksDir(ctx); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(h.dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range entries {
		f, err := readHook(filepath.Join(h.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if f != nil {
			h.files[e.Name()] = *f
		}
	}
	return h, nil
}

// readHook reads a hook file, or a link's target; nil for what is
// neither (a directory).
func readHook(path string) (*hookFile, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		return &hookFile{mode: fi.Mode(), data: []byte(target)}, err
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(path)
		return &hookFile{mode: fi.Mode(), data: data}, err
	}
	return nil, nil
}

// changes says what differs in now from h, the state before, sorted.
func (h *hookSet) changes(now *hookSet) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(mergedKeys(h.config, now.config))) {
		if !slices.Equal(h.config[k], now.config[k]) {
			out = append(out, fmt.Sprintf("%s was %s, is %s", k, values(h.config[k]), values(now.config[k])))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mergedKeys(h.files, now.files))) {
		before, was := h.files[name]
		after, is := now.files[name]
		switch {
		case !is:
			out = append(out, "hook "+name+" was removed")
		case !was:
			out = append(out, "hook "+name+" was added")
		case before.mode != after.mode || !bytes.Equal(before.data, after.data):
			out = append(out, "hook "+name+" was changed")
		}
	}
	return out
}

func mergedKeys[V any](a, b map[string]V) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func values(v []string) string {
	if len(v) == 0 {
		return "unset"
	}
	return fmt.Sprintf("%q", strings.Join(v, `", "`))
}

// restore puts the hooks back as h holds them, from now: config values,
// and the hook files changed or removed. A hook file added is moved to
// keep (made if need be), not deleted: it is someone's file.
func (h *hookSet) restore(ctx context.Context, r *gitext.Repo, now *hookSet, keep string) error {
	for k := range mergedKeys(h.config, now.config) {
		if slices.Equal(h.config[k], now.config[k]) {
			continue
		}
		if len(now.config[k]) > 0 {
			if err := r.ConfigUnsetAll(ctx, gitext.ConfigLocal, k); err != nil {
				return err
			}
		}
		for _, v := range h.config[k] {
			if err := r.ConfigAdd(ctx, gitext.ConfigLocal, k, v); err != nil {
				return err
			}
		}
	}
	for name := range mergedKeys(h.files, now.files) {
		before, was := h.files[name]
		after, is := now.files[name]
		path := filepath.Join(h.dir, name)
		switch {
		case was && is && before.mode == after.mode && bytes.Equal(before.data, after.data):
			continue
		case !was:
			if err := os.MkdirAll(keep, 0o755); err != nil {
				return err
			}
			if err := os.Rename(path, filepath.Join(keep, name)); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := putHook(path, before); err != nil {
			return err
		}
	}
	return nil
}

// putHook writes f at path, in place of whatever is there.
func putHook(path string, f hookFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".crucible-restore"
	os.Remove(tmp)
	var err error
	if f.mode&fs.ModeSymlink != 0 {
		err = os.Symlink(string(f.data), tmp)
	} else if err = os.WriteFile(tmp, f.data, f.mode.Perm()); err == nil {
		err = os.Chmod(tmp, f.mode.Perm())
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// guardHooks reads the hooks before a dispatch; the function it returns
// checks them after it, puts back what changed, and says what that was
// ("" for nothing). A hook file added is kept in keep. The engine keeps
// the hooks it read last, so that a dispatch runs git only when a config
// file changed.
func (e *Engine) guardHooks(ctx context.Context, keep string) (func() (string, error), error) {
	r := e.Service.Repo
	before, err := hooksOf(ctx, r, "", e.hooks.Load())
	if err != nil {
		return nil, err
	}
	e.hooks.Store(before)
	// Checked after the agent even when ctx ended: a cancelled agent
	// had its chance to change them too.
	ctx = context.WithoutCancel(ctx)
	return func() (string, error) {
		now, err := hooksOf(ctx, r, before.dir, before)
		if err != nil {
			return "", err
		}
		changed := before.changes(now)
		if len(changed) == 0 {
			return "", nil
		}
		e.hooks.Store(nil) // what is put back is read again

		if err := before.restore(ctx, r, now, keep); err != nil {
			return "", fmt.Errorf("the agent changed the repository's hooks (%s), and they could not be put back: %w", strings.Join(changed, "; "), err)
		}
		return strings.Join(changed, "; "), nil
	}, nil
}
