package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/checkpoint"
	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/notes"
)

// Gather reads what the repository shows of src's work: the dispatch seqs
// of src's pipeline with a commit on its branch since its baseline (one
// git log, trailers and provenance notes included), and the checkpoints
// the shadow holds. It changes nothing: a repository with no shadow yet
// holds no checkpoint.
func Gather(ctx context.Context, repo *gitext.Repo, src *Source) (Evidence, error) {
	ev := Evidence{Commits: map[int]bool{}, Branch: src.Branch}
	tip := "HEAD"
	if src.Branch != "" {
		if _, err := repo.Resolve(ctx, "refs/heads/"+src.Branch); err == nil {
			tip = "refs/heads/" + src.Branch
		}
	}
	if _, err := repo.Resolve(ctx, tip); err == nil {
		format := "%x1e%(trailers:key=" + enforce.TrailerPipeline + ",valueonly,separator=%x2C)%x1f%(trailers:key=" +
			enforce.TrailerSeq + ",valueonly,separator=%x2C)%x1f%N%x1f%B"
		opts, revs := gitext.LogOptions{Notes: notes.ProvenanceRef}, tip
		// Only the pipeline's commits: since its baseline, else (a crucible
		// run that named none) since it started.
		if _, err := repo.Resolve(ctx, src.Baseline+"^{commit}"); src.Baseline != "" && err == nil {
			revs = src.Baseline + ".." + tip
		} else {
			opts.Since = src.Started
		}
		out, err := repo.LogFormat(ctx, format, opts, revs)
		if err != nil {
			return ev, err
		}
		commitsOf(out, src.Pipeline, ev.Commits)
	}
	if ev.Checkpoints = map[string]bool{}; repo.WorkTree == "" || !shadowExists(repo) {
		return ev, nil
	}
	sh, err := checkpoint.Open(ctx, repo)
	if err != nil {
		return ev, err
	}
	list, err := sh.List(ctx)
	if err != nil {
		return ev, err
	}
	for _, c := range list {
		ev.Checkpoints[c.ID] = true
	}
	return ev, nil
}

// shadowExists reports whether the shadow repository was made: opening
// one that was not would make it.
func shadowExists(repo *gitext.Repo) bool {
	name := "main"
	if repo.GitDir != repo.CommonDir {
		name = "worktree-" + filepath.Base(repo.GitDir)
	}
	_, err := os.Stat(filepath.Join(repo.CrucibleDir(), "shadow", name, "HEAD"))
	return err == nil
}

// engineMessage is how the engine's task commits name their dispatch.
var engineMessage = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`dispatch (\d+) of pipeline (\S+?)\.?\s*$`) }}

// commitsOf adds to seqs the dispatches of pipeline id that the log's
// commits name: records of pipeline trailer, seq trailer, note, message.
func commitsOf(log []byte, id string, seqs map[int]bool) {
	for _, rec := range bytes.Split(log, []byte{0x1e}) {
		f := strings.SplitN(string(rec), "\x1f", 4)
		if len(f) < 4 {
			continue
		}
		if strings.TrimSpace(f[0]) == id {
			for _, s := range strings.Split(f[1], ",") {
				if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
					seqs[n] = true
				}
			}
		}
		provs, _ := notes.ParseProvenance([]byte(f[2]))
		for _, p := range provs {
			if p.Pipeline == id && p.Seq > 0 {
				seqs[p.Seq] = true
			}
		}
		for _, line := range strings.Split(f[3], "\n") {
			if m := engineMessage.Get().FindStringSubmatch(line); m != nil && m[2] == id {
				n, _ := strconv.Atoi(m[1])
				seqs[n] = true
			}
		}
	}
}
