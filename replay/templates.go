package replay

import (
	"context"
	"path"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
)

// TemplatesAt reads the template overrides that commit holds in
// prompt.OverrideDir, each named in errors as label:path.
func TemplatesAt(ctx context.Context, repo *gitext.Repo, commit, label string) (map[string]prompt.Override, error) {
	entries, err := repo.ListDir(ctx, commit, prompt.OverrideDir)
	if err != nil {
		return nil, err
	}
	out := map[string]prompt.Override{}
	for _, e := range entries {
		p := e.Path
		name, ok := strings.CutSuffix(path.Base(p), ".md")
		if !ok {
			continue
		}
		text, err := repo.CatFile(ctx, "blob", commit+":"+p)
		if err != nil {
			return nil, err
		}
		out[name] = prompt.Override{Source: label + ":" + p, Text: string(text)}
	}
	return out, nil
}

// Templates is the prompt set a walk of pipeline id goes on with, and its
// mutations by template name: the work tree's templates, or those of the
// revision the newest replay read them from, with the texts its mutations
// swapped in as the chain keeps them. So `build --resume` of a killed
// replay goes on with the templates the replay began with.
func Templates(ctx context.Context, svc *pipeline.Service, id, workTree string) (*prompt.Set, map[string]string, error) {
	events, err := svc.ChainEvents(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var last *pipeline.ReplayData
	for _, e := range events {
		if e.Type == pipeline.TypeReplay {
			var d pipeline.ReplayData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return nil, nil, err
			}
			last = &d
		}
	}
	if last == nil || (last.TemplateRef == "" && len(last.Mutations) == 0) {
		set, err := prompt.Load(workTree)
		return set, nil, err
	}
	overrides := map[string]prompt.Override{}
	base := workTree
	if last.TemplateRef != "" {
		base = ""
		if overrides, err = TemplatesAt(ctx, svc.Repo, last.TemplateRef, last.TemplateRef); err != nil {
			return nil, nil, err
		}
	}
	mutations := map[string]string{}
	for _, m := range last.Mutations {
		name, _, _ := strings.Cut(m, ".md -> ")
		p := pipeline.ReplayTemplatePath(last.Session, name)
		text, err := svc.ReadKept(ctx, id, p)
		if err != nil {
			return nil, nil, err
		}
		overrides[name] = prompt.Override{Source: p, Text: string(text)}
		mutations[name] = m
	}
	set, err := prompt.LoadWith(base, overrides)
	return set, mutations, err
}

// RevisionError is a --template-ref that names no commit.
type RevisionError struct{ Rev string }

func (e *RevisionError) Error() string { return "--template-ref " + e.Rev + ": not a commit" }

// TemplatesAtRevision resolves rev (--template-ref's) to its commit and
// reads the template overrides it holds, each named in errors as rev:path.
func TemplatesAtRevision(ctx context.Context, repo *gitext.Repo, rev string) (string, map[string]prompt.Override, error) {
	commit, err := repo.ResolveCommit(ctx, rev)
	if err != nil {
		return "", nil, &RevisionError{Rev: rev}
	}
	overrides, err := TemplatesAt(ctx, repo, commit, rev)
	return commit, overrides, err
}
