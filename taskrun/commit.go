package taskrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// Commit is the commit a task's work became at the fan-in; SHA is ""
// for a task that changed nothing (an explore task): the seed marks it
// committed all the same.
type Commit struct {
	Task string
	SHA  string
}

// CommitLevel makes the per-task commits of a level: each passed result,
// in the order given (the topological one), on top of the one before,
// starting at head. A task's changed paths take their content from its
// tree, so a file two tasks both changed (and reported) is the later
// task's. message gives each commit's message, trailers included. Only
// objects are written: the caller moves the branch (and records head as
// the level's boundary) once all are made.
func CommitLevel(ctx context.Context, repo *gitext.Repo, head string, results []Result, message func(Result) string) ([]Commit, string, error) {
	// Outside the repository: a kill -9 leaves the index, and perhaps its
	// lock, where the system cleans up.
	tmp, err := os.MkdirTemp("", "crucible-level-index-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	var commits []Commit
	for _, r := range results {
		if !r.Passed {
			continue
		}
		if len(r.Changed) == 0 {
			commits = append(commits, Commit{Task: r.ID})
			continue
		}
		tree, err := overlay(ctx, repo, index, head, r)
		if err != nil {
			return nil, "", err
		}
		out, err := repo.GitIndexInput(ctx, index, []byte(message(r)), "commit-tree", tree, "-p", head, "-F", "-")
		if err != nil {
			return nil, "", err
		}
		head = strings.TrimSpace(string(out))
		commits = append(commits, Commit{Task: r.ID, SHA: head})
	}
	return commits, head, nil
}

// overlay is head's tree with r's changed paths as r's tree has them.
func overlay(ctx context.Context, repo *gitext.Repo, index, head string, r Result) (string, error) {
	if _, err := repo.GitIndex(ctx, index, "read-tree", head); err != nil {
		return "", err
	}
	out, err := repo.Git(ctx, "ls-tree", "-r", "-z", "--full-tree", r.Tree)
	if err != nil {
		return "", err
	}
	changed := make(map[string]bool, len(r.Changed))
	for _, p := range r.Changed {
		changed[p] = true
	}
	var info bytes.Buffer
	for _, entry := range bytes.Split(out, []byte{0}) {
		// "mode type oid\tpath", which update-index --index-info reads as is.
		_, path, ok := bytes.Cut(entry, []byte{'\t'})
		if ok && changed[string(path)] {
			info.Write(entry)
			info.WriteByte(0)
			delete(changed, string(path))
		}
	}
	zero := strings.Repeat("0", repo.HashLen()*2)
	for _, p := range r.Changed {
		if changed[p] { // not in the task's tree: it deleted it
			info.WriteString("0 " + zero + "\t" + p + "\x00")
		}
	}
	if _, err := repo.GitIndexInput(ctx, index, info.Bytes(), "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	out, err = repo.GitIndex(ctx, index, "write-tree")
	return strings.TrimSpace(string(out)), err
}
