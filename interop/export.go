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
	x := &manifestExport{ctx: ctx, svc: svc, id: id, dir: dir, files: files, starts: map[int]ManifestLine{}}
	for _, e := range events {
		if err := x.add(e); err != nil {
			return err
		}
	}
	if x.manifest != nil {
		files["manifest.jsonl"] = x.manifest
	}
	if x.journal != nil {
		files[DecisionsFile(id)] = x.journal
	}
	return nil
}

// manifestExport is an export of pipeline id's events into files so far:
// manifest.jsonl and the journal as far as they go, and the "dispatched"
// line of each dispatch by seq, which its final line repeats.
type manifestExport struct {
	ctx               context.Context
	svc               *pipeline.Service
	id, dir           string
	files             map[string][]byte
	starts            map[int]ManifestLine
	manifest, journal []byte
}

// add exports event e, when it is one that the files record.
func (x *manifestExport) add(e pipeline.Event) error {
	switch e.Type {
	case pipeline.TypeDispatchStart:
		return decoded(e, x.dispatchStart)
	case pipeline.TypeDispatchFinish:
		return decoded(e, x.dispatchFinish)
	case pipeline.TypeImportDispatch:
		return decoded(e, x.importDispatch)
	case pipeline.TypeDecision:
		return decoded(e, x.decision)
	case pipeline.TypeVerdict:
		return decoded(e, x.verdict)
	case pipeline.TypeImportVerdict:
		return decoded(e, x.importVerdict)
	}
	return nil
}

// decoded passes event e and its payload, decoded as a T, to take.
func decoded[T any](e pipeline.Event, take func(pipeline.Event, *T) error) error {
	var d T
	if err := pipeline.DecodeData(e, &d); err != nil {
		return err
	}
	return take(e, &d)
}

// line appends l to the manifest with e's time: a dispatch recorded
// natively says when, crucible's lines never did.
func (x *manifestExport) line(l ManifestLine, e pipeline.Event) {
	l.Timestamp = &e.Time
	x.manifest = append(append(x.manifest, l.Render()...), '\n')
}

// keep makes file name the content kept at path in the chain.
func (x *manifestExport) keep(name, path string) error {
	b, err := x.svc.ReadKept(x.ctx, x.id, path)
	if err != nil {
		return err
	}
	x.files[name] = b
	return nil
}

// dispatchStart is a "dispatched" line, and the dispatch file of its kept
// prompt.
func (x *manifestExport) dispatchStart(e pipeline.Event, d *pipeline.DispatchStart) error {
	l := ManifestLine{Seq: d.Seq, File: fmt.Sprintf("%d-%s.md", d.Seq, d.Template), Role: d.Role,
		Phase: strconv.Itoa(int(d.Phase)), Task: d.Task, Status: "dispatched", InputChars: &d.InputChars,
		ModelTier: pipeline.Optional(d.ModelTier), ReplayOf: d.ReplayOf, ReplaySession: pipeline.Optional(d.ReplaySession),
		Mutation: pipeline.Optional(d.Mutation), Template: &d.Template}
	x.starts[d.Seq] = l
	if d.Prompt != "" {
		prompt, err := x.svc.ReadKept(x.ctx, x.id, d.Prompt)
		if err != nil {
			return err
		}
		task := ""
		if d.Task != nil {
			task = strconv.Itoa(*d.Task)
		}
		x.files[l.File] = DispatchFile{Template: d.Template, Pipeline: "build", Phase: l.Phase, Task: task,
			Timestamp: e.Time, DispatchDir: x.dir, Prompt: prompt}.Render()
	}
	x.line(l, e)
	return nil
}

// dispatchFinish is the final line of a dispatch, and its kept output.
func (x *manifestExport) dispatchFinish(e pipeline.Event, d *pipeline.DispatchFinish) error {
	l := x.starts[d.Seq]
	l.Status, l.DurationS, l.Summary = d.Status, &d.DurationS, pipeline.Optional(d.Summary)
	l.OutputChars, l.ToolCalls = &d.OutputChars, d.ToolCalls
	if d.Output != "" {
		if err := x.keep(pipeline.OutputName(l.File), d.Output); err != nil {
			return err
		}
	}
	x.line(l, e)
	return nil
}

// importDispatch is an imported manifest line as it came, with the
// dispatch file and output kept with it.
func (x *manifestExport) importDispatch(e pipeline.Event, d *pipeline.ImportDispatchData) error {
	x.manifest = append(append(x.manifest, d.Line...), '\n')
	l, err := pipeline.ImportedLine(d.Line)
	if err != nil {
		return err
	}
	for name, kept := range map[string]string{l.File: d.Prompt, pipeline.OutputName(l.File): d.Output} {
		if kept == "" {
			continue
		}
		if err := x.keep(name, kept); err != nil {
			return err
		}
	}
	return nil
}

// decision is a line of the decision journal.
func (x *manifestExport) decision(e pipeline.Event, d *pipeline.DecisionData) error {
	x.journal = append(x.journal, Decision{Time: d.DecidedAt(e), Type: d.Type, Choice: d.Choice, Reason: d.Reason,
		Alternatives: d.Alternatives}.Render()...)
	return nil
}

// verdict is a marker as crucible's quality gate writes it, so that an
// import of the export finds each PASS verified.
func (x *manifestExport) verdict(e pipeline.Event, d *pipeline.VerdictData) error {
	m := Marker{Verdict: d.Verdict, Phase: d.Phase, PipelineID: d.PipelineID, Rounds: d.Rounds, FinalScore: d.Score,
		Timestamp: e.Time, RunID: fmt.Sprintf("%s-%d", x.id, e.Seq)}
	for _, f := range d.Marker {
		m.Fields = append(m.Fields, Field{Key: f.Key, Value: f.Value})
	}
	x.files["gate-verdict-"+m.RunID+".md"] = RenderMarker(m)
	return nil
}

// importVerdict is an imported marker as it came.
func (x *manifestExport) importVerdict(e pipeline.Event, d *pipeline.ImportVerdictData) error {
	return x.keep(d.Name, d.Path)
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
