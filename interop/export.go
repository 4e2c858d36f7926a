package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Export renders pipeline id as a crucible scratch directory dir (the name
// is written into the files that record it): file name to content. It is a
// function of the chain and dir alone, so that an import can tell its own
// files: pipeline-status.md is rendered as of the last event, as crucible
// rewrites it at each change.
func Export(ctx context.Context, svc *pipeline.Service, id, dir string) (map[string][]byte, error) {
	st, _, err := svc.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"build-gate-ledger.md": ledger.Render(&st.Gates.Ledger),
		"pipeline-status.md":   StatusOf(st, st.Updated).Render(),
		".pipeline-active": Active{PipelineID: st.ID, Skill: "build", Phase: strconv.Itoa(int(st.Phase)),
			StartTime: st.Created, ScratchDir: dir, DispatchDir: dir, Branch: st.Branch, BaselineSHA: st.Baseline}.Render(),
	}
	if err := exportManifest(ctx, svc, id, dir, files); err != nil {
		return nil, err
	}
	// Files imported and not changed since are given back as they came;
	// checkpoint-manifest.md, which no event renders, always is.
	for _, name := range snapshots {
		if st.Import.Files[name] == "" || st.Seq != st.Import.Seq && name != checkpointList {
			continue
		}
		doc, err := svc.ReadKept(ctx, id, pipeline.ImportPath(name))
		if err != nil {
			return nil, err
		}
		files[name] = doc
	}
	for _, from := range []ledger.Phase{ledger.Design, ledger.Plan, ledger.Execute} {
		doc, err := svc.ReadKept(ctx, id, pipeline.HandoffPath(from))
		switch {
		case errors.Is(err, gitext.ErrMissing):
			continue
		case err != nil:
			return nil, err
		}
		files[fmt.Sprintf("handoff-%d-to-%d.md", from, from+1)] = doc
	}
	return files, nil
}

// exportManifest writes manifest.jsonl as crucible appends it (a
// "dispatched" line when an agent is sent, its final line when it returns,
// in event order), a dispatch file for every kept prompt, a
// <seq>-<template>.output.md for every kept output, the decision journal,
// and a gate-verdict-<pipeline>-<seq>.md marker for every verdict (the
// crucible marker it was recorded from, when it was).
func exportManifest(ctx context.Context, svc *pipeline.Service, id, dir string, files map[string][]byte) error {
	events, err := svc.ChainEvents(ctx, id)
	if err != nil {
		return err
	}
	starts := map[int]ManifestLine{}
	var manifest, journal []byte
	for _, e := range events {
		var line ManifestLine
		switch e.Type {
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			line = ManifestLine{Seq: d.Seq, File: fmt.Sprintf("%d-%s.md", d.Seq, d.Template), Role: d.Role,
				Phase: strconv.Itoa(int(d.Phase)), Task: d.Task, Status: "dispatched", InputChars: &d.InputChars,
				ModelTier: pipeline.Optional(d.ModelTier), ReplayOf: d.ReplayOf, ReplaySession: pipeline.Optional(d.ReplaySession),
				Mutation: pipeline.Optional(d.Mutation), Template: &d.Template}
			starts[d.Seq] = line
			if d.Prompt != "" {
				prompt, err := svc.ReadKept(ctx, id, d.Prompt)
				if err != nil {
					return err
				}
				task := ""
				if d.Task != nil {
					task = strconv.Itoa(*d.Task)
				}
				files[line.File] = DispatchFile{Template: d.Template, Pipeline: "build", Phase: line.Phase, Task: task,
					Timestamp: e.Time, DispatchDir: dir, Prompt: prompt}.Render()
			}
		case pipeline.TypeImportDispatch:
			var d pipeline.ImportDispatchData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			manifest = append(append(manifest, d.Line...), '\n')
			l, err := pipeline.ImportedLine(d.Line)
			if err != nil {
				return err
			}
			for name, kept := range map[string]string{l.File: d.Prompt, pipeline.OutputName(l.File): d.Output} {
				if kept == "" {
					continue
				}
				if files[name], err = svc.ReadKept(ctx, id, kept); err != nil {
					return err
				}
			}
			continue
		case pipeline.TypeDecision:
			var d pipeline.DecisionData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			at := d.DecidedAt(e)
			journal = append(journal, Decision{Time: at, Type: d.Type, Choice: d.Choice, Reason: d.Reason,
				Alternatives: d.Alternatives}.Render()...)
			continue
		case pipeline.TypeVerdict:
			// As crucible's quality gate writes it, so that an import of the
			// export finds each PASS verified.
			var d pipeline.VerdictData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			m := Marker{Verdict: d.Verdict, Phase: d.Phase, PipelineID: d.PipelineID, Rounds: d.Rounds, FinalScore: d.Score,
				Timestamp: e.Time, RunID: fmt.Sprintf("%s-%d", id, e.Seq)}
			for _, f := range d.Marker {
				m.Fields = append(m.Fields, Field{Key: f.Key, Value: f.Value})
			}
			files["gate-verdict-"+m.RunID+".md"] = RenderMarker(m)
			continue
		case pipeline.TypeImportVerdict:
			var d pipeline.ImportVerdictData
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			doc, err := svc.ReadKept(ctx, id, d.Path)
			if err != nil {
				return err
			}
			files[d.Name] = doc
			continue
		case pipeline.TypeDispatchFinish:
			var d pipeline.DispatchFinish
			if err := pipeline.DecodeData(e, &d); err != nil {
				return err
			}
			line = starts[d.Seq]
			line.Status, line.DurationS, line.Summary = d.Status, &d.DurationS, pipeline.Optional(d.Summary)
			line.OutputChars, line.ToolCalls = &d.OutputChars, d.ToolCalls
			if d.Output != "" {
				output, err := svc.ReadKept(ctx, id, d.Output)
				if err != nil {
					return err
				}
				files[pipeline.OutputName(line.File)] = output
			}
		default:
			continue
		}
		line.Timestamp = &e.Time
		manifest = append(append(manifest, line.Render()...), '\n')
	}
	if manifest != nil {
		files["manifest.jsonl"] = manifest
	}
	if journal != nil {
		files[DecisionsFile(id)] = journal
	}
	return nil
}

// ClashError is an export that would replace files holding other content.
type ClashError struct {
	Dir   string
	Names []string
}

func (e *ClashError) Error() string {
	return fmt.Sprintf("%s already holds other content in: %v", e.Dir, e.Names)
}

// WriteFiles writes an export's files into dir and returns their names,
// sorted. A name that is not a plain file name fails it before anything is
// written. Unless force, it writes none when one would replace a file with
// other content (a *ClashError).
func WriteFiles(dir string, files map[string][]byte, force bool) ([]string, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var clash []string
	for _, name := range names {
		// Names come from the chain, which a remote may have written.
		if !filepath.IsLocal(name) || filepath.Base(name) != name {
			return nil, fmt.Errorf("refusing to write '%s': not a file name directly inside %s", name, dir)
		}
		old, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil && !bytes.Equal(old, files[name]) {
			clash = append(clash, name)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if len(clash) > 0 && !force {
		return nil, &ClashError{Dir: dir, Names: clash}
	}
	for _, name := range names {
		if err := fsutil.WriteAtomic(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return nil, err
		}
	}
	return names, nil
}
