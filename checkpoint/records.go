package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// The shadow keeps a copy of every checkpoint's commit message beside its
// refs, so that listing and finding checkpoints reads one file instead of
// every commit through git. A commit never changes, so a record is never
// stale; it is used only when every checkpoint ref has one, and anything
// else falls back to git and rewrites the file:
//
//	git-crucible checkpoints 1
//	<commit> <tree> <length>      one record per checkpoint
//	<commit message, exactly length bytes>
const recordsMagic = "git-crucible checkpoints 1\n"

type record struct{ id, tree, message string }

func (s *Shadow) recordsPath() string { return filepath.Join(s.repo.GitDir, "crucible-checkpoints") }

func encodeRecords(recs []record) []byte {
	var b bytes.Buffer
	b.WriteString(recordsMagic)
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s %d\n%s", r.id, r.tree, len(r.message), r.message)
	}
	return b.Bytes()
}

// decodeRecords returns the records by commit, or nil when the file is not
// complete and well formed.
func decodeRecords(b []byte) map[string]record {
	rest, ok := bytes.CutPrefix(b, []byte(recordsMagic))
	if !ok {
		return nil
	}
	recs := map[string]record{}
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		f := strings.Split(string(line), " ")
		if !ok || len(f) != 3 || f[0] == "" || f[1] == "" {
			return nil
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > len(after) || strconv.Itoa(n) != f[2] {
			return nil
		}
		if _, dup := recs[f[0]]; dup {
			return nil
		}
		recs[f[0]] = record{id: f[0], tree: f[1], message: string(after[:n])}
		rest = after[n:]
	}
	return recs
}

// saveRecords is best effort: a missing or partial file only costs a git read.
func (s *Shadow) saveRecords(recs []record) {
	sortRecords(recs)
	_ = fsutil.WriteAtomic(s.recordsPath(), encodeRecords(recs), 0o644)
}

// addRecord appends r to the file, in place: a new file costs more than the
// write here, and a reader that meets a torn record (a kill, or a read
// meanwhile) sees a wrong length and falls back to git.
func (s *Shadow) addRecord(r record) {
	f, err := os.OpenFile(s.recordsPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return // no file: the next listing writes it whole
	}
	f.Write(bytes.TrimPrefix(encodeRecords([]record{r}), []byte(recordsMagic)))
	f.Close()
}

func sortRecords(recs []record) {
	sort.Slice(recs, func(i, j int) bool { return recs[i].id < recs[j].id })
}

// message is the commit message that records c; parse reads it back.
func (c *Checkpoint) message() string {
	return fmt.Sprintf("checkpoint: %s\n\nReason: %s\nSource: %s\nBranch: %s\nHead: %s\nTime: %s\nSeq: %d\nPipeline: %s\n",
		c.Reason, c.Reason, c.Source, c.Branch, c.Head, c.Time, c.Seq, c.Pipeline)
}

// List returns every checkpoint, newest first.
func (s *Shadow) List(ctx context.Context) ([]Checkpoint, error) {
	recs, err := s.records(ctx)
	if err != nil {
		return nil, err
	}
	list := make([]Checkpoint, 0, len(recs))
	for _, r := range recs {
		list = append(list, parse(r))
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Seq > list[j].Seq })
	return list, nil
}

// records returns the record of every checkpoint ref, from the file when it
// has them all, else from git (and then rewrites the file).
func (s *Shadow) records(ctx context.Context) ([]record, error) {
	refs, err := s.repo.ListRefs(ctx, RefPrefix)
	if err != nil {
		return nil, err
	}
	b, _ := os.ReadFile(s.recordsPath())
	if known := decodeRecords(b); known != nil {
		recs := make([]record, 0, len(refs))
		for _, ref := range refs {
			r, ok := known[ref.OID]
			if !ok {
				break
			}
			recs = append(recs, r)
		}
		if len(recs) == len(refs) {
			return recs, nil
		}
	}
	commits, err := s.repo.RefCommits(ctx, RefPrefix)
	if err != nil {
		return nil, err
	}
	recs := []record{}
	for _, c := range commits {
		recs = append(recs, record{id: c.OID, tree: c.Tree, message: c.Message})
	}
	s.saveRecords(append([]record(nil), recs...))
	return recs, nil
}

func parse(r record) Checkpoint {
	cp := Checkpoint{ID: r.id, Tree: r.tree}
	for _, line := range strings.Split(r.message, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Reason":
			cp.Reason = v
		case "Source":
			cp.Source = v
		case "Branch":
			cp.Branch = v
		case "Head":
			cp.Head = v
		case "Time":
			cp.Time = v
		case "Seq":
			cp.Seq, _ = strconv.Atoi(v)
		case "Pipeline":
			cp.Pipeline = v
		}
	}
	return cp
}
