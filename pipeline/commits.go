package pipeline

import (
	"context"
	"strings"
)

// Commit is one of a pipeline's commits on its branch (Commits).
type Commit struct {
	Hash     string    `json:"hash"`
	Tree     string    `json:"tree"`
	Subject  string    `json:"subject"`
	Trailers []Trailer `json:"trailers"`
}

// Trailer is one trailer of a commit message.
type Trailer struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// maxBranchCommits bounds the branch's history Commits reads.
const maxBranchCommits = 5000

// Commits are the commits on st's branch since its baseline whose
// Crucible-Pipeline trailer names st, oldest first, read from the newest
// maxBranchCommits of the branch: what a report shows of the pipeline's
// work. None when the branch is gone.
func (s *Service) Commits(ctx context.Context, st *State) ([]Commit, error) {
	if st.Branch == "" {
		return nil, nil
	}
	ref := "refs/heads/" + st.Branch
	if oid, err := s.Repo.ReadRef(ref); err != nil || oid == "" {
		return nil, nil // the branch is gone: no commits to show
	}
	var hidden []string
	if st.Baseline != "" {
		hidden = []string{st.Baseline}
	}
	logged, err := s.Repo.Log(ctx, ref, hidden, maxBranchCommits)
	if err != nil {
		return nil, err
	}
	var commits []Commit
	for _, l := range logged {
		c := Commit{Hash: l.Hash, Tree: l.Tree, Subject: l.Subject}
		ours := false
		for _, line := range strings.Split(l.Trailers, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			t := Trailer{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)}
			c.Trailers = append(c.Trailers, t)
			ours = ours || t.Key == "Crucible-Pipeline" && t.Value == st.ID
		}
		if ours {
			commits = append(commits, c)
		}
	}
	return commits, nil
}
