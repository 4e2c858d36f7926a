package gitext

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Untracked says which untracked files Status lists (git's
// --untracked-files): each file, or a directory holding only untracked
// files as one entry ending in "/".
type Untracked string

// The untracked-file modes Status takes.
const (
	UntrackedAll    Untracked = "all"
	UntrackedNormal Untracked = "normal"
)

// StatusEntry is one path git status shows.
type StatusEntry struct {
	// XY is the path's state against HEAD (X, the index) and the index (Y,
	// the work tree) in the letters of git status --short: ' ' unchanged,
	// "??" untracked, both sides 'U', "AA" or "DD" unmerged.
	XY   string
	Path string // from the top of the work tree; a nested repository's ends in "/"
}

// InWorkTree reports whether the work tree's side of the path differs from
// the index (modified, deleted, type changed, unmerged) or it is untracked:
// what the index does not hold yet.
func (e StatusEntry) InWorkTree() bool { return e.XY[1] != ' ' }

// Status is what git status shows of the work tree: each path that
// differs from HEAD or the index, renames as a deletion and an addition,
// ignored files left out, in git's order.
func (r *Repo) Status(ctx context.Context, untracked Untracked) ([]StatusEntry, error) {
	out, err := run(ctx, r, nil, "status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files="+string(untracked), "--ignored=no")
	if err != nil {
		return nil, err
	}
	return parseStatus(out)
}

// parseStatus reads `git status --porcelain=v2 -z`.
func parseStatus(out []byte) ([]StatusEntry, error) {
	var entries []StatusEntry
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		rec := string(fields[i])
		if rec == "" {
			continue
		}
		var n int // fields before the path
		switch rec[0] {
		case '#', '!': // headers; ignored files are never asked for
			continue
		case '?':
			path, ok := strings.CutPrefix(rec, "? ")
			if !ok || path == "" {
				return nil, fmt.Errorf("unexpected git status record %q", rec)
			}
			entries = append(entries, StatusEntry{XY: "??", Path: path})
			continue
		case '1':
			n = 8
		case '2':
			n = 9
			i++ // the rename's source follows
		case 'u':
			n = 10
		default:
			return nil, fmt.Errorf("unexpected git status record %q", rec)
		}
		parts := strings.SplitN(rec, " ", n+1)
		if len(parts) != n+1 || len(parts[1]) != 2 || parts[n] == "" {
			return nil, fmt.Errorf("unexpected git status record %q", rec)
		}
		entries = append(entries, StatusEntry{XY: strings.ReplaceAll(parts[1], ".", " "), Path: parts[n]})
	}
	return entries, nil
}

// Dirty is what `git status` shows of the work tree whose top is dir:
// each path that differs from HEAD or the index, untracked ones each on
// its own (ignored ones not), with a fingerprint that changes when the
// file does: its status and what lstat says of it (size, modification
// time, mode, inode). Paths are relative to dir.
func (r *Repo) Dirty(ctx context.Context, dir string) (map[string]string, error) {
	// No optional locks: a status killed with its caller must not leave
	// index.lock behind, which would stop every later commit.
	entries, err := r.With(Exec{Dir: dir, Env: []string{"GIT_OPTIONAL_LOCKS=0"}}).Status(ctx, UntrackedAll)
	if err != nil {
		return nil, err
	}
	dirty := map[string]string{}
	for _, e := range entries {
		dirty[e.Path] = e.XY + " " + fingerprint(filepath.Join(dir, filepath.FromSlash(e.Path)))
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
