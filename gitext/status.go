package gitext

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Dirty is what `git status` shows of the work tree whose top is dir:
// each path that differs from HEAD or the index, untracked ones each on
// its own (ignored ones not), with a fingerprint that changes when the
// file does: its status and what lstat says of it (size, modification
// time, mode, inode). Paths are relative to dir.
func (r *Repo) Dirty(ctx context.Context, dir string) (map[string]string, error) {
	// No optional locks: a status killed with its caller must not leave
	// index.lock behind, which would stop every later commit.
	out, err := runEnv(ctx, r, dir, nil, nil, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	dirty := map[string]string{}
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) < 4 {
			continue
		}
		path := string(e[3:])
		dirty[path] = string(e[:2]) + " " + fingerprint(filepath.Join(dir, filepath.FromSlash(path)))
	}
	return dirty, nil
}

// fingerprint is what lstat says of path, "-" when there is nothing there.
func fingerprint(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "-"
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%d %d %o %d", fi.Size(), fi.ModTime().UnixNano(), fi.Mode(), ino)
}
