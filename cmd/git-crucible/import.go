package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "read a crucible scratch or dispatch directory into a pipeline",
		ArgsUsage: "<dir>",
		Description: "Reads manifest.jsonl (required), the dispatch files it names and their outputs\n" +
			"(<seq>-<template>.output.md), build-gate-ledger.md, handoff-N-to-M.md, gate-verdict-*.md,\n" +
			"crucible-decisions-*.log, pipeline-status.md, .pipeline-active and checkpoint-manifest.md.\n" +
			"The pipeline is --pipeline, else the ledger's PipelineID, else .pipeline-active's, else the\n" +
			"directory's name (crucible-dispatch-<id>, or a run id such as build-YYYYMMDD-HHMMSS), else a new\n" +
			"id, printed; it is created when new (active on the branch unless another open one is), started\n" +
			"when the run was: the ledger's Run line, else .pipeline-active's start_time, else the first\n" +
			"dispatch file's Timestamp. Only regular files directly inside the directory, and in its\n" +
			"quality-gate/, are read: a symbolic link, or a dispatch file named outside it ('../x'),\n" +
			"refuses the whole import.\n" +
			"What the skills wrote is taken as given, but for a PASS: a phase the ledger says PASS with no\n" +
			"gate-verdict marker saying Verdict: PASS for its PipelineID and phase (beside the ledger, or\n" +
			"in quality-gate/ where crucible's quality gate keeps every run's: this pipeline's are taken\n" +
			"from there too) is imported INFERRED, blocking until a fresh gate passes, as a model can\n" +
			"write a ledger. Importing the same directory again adds nothing, nor does importing what\n" +
			"'git crucible export' wrote of the same pipeline; lines appended to the\n" +
			"manifest since are added. A malformed line or file is reported with its file and line and\n" +
			"skipped; a directory with no valid manifest line is an error that changes nothing, and so is a\n" +
			"ledger in the hook tests' shape ('pipeline-id:' lines) when nothing else names the pipeline.\n" +
			"'git crucible export' gives the files back.",
		Flags: commonFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("want exactly one argument, the directory")
			}
			dir := c.Args().First()
			return withRepo(c, func(s *session) error {
				r, err := interop.Import(c.Context, s.svc, dir, s.pipeline)
				if r != nil && !s.jsonOut() {
					for _, p := range r.Problems {
						s.warn("%s (skipped)", p)
					}
				}
				var dirErr *interop.DirError
				var other *interop.OtherLedgerError
				switch {
				case errors.Is(err, interop.ErrNoManifest):
					return &refused{Err: err}
				case errors.As(err, &dirErr) && dirErr.NoManifest:
					return withHints(err, "import reads a crucible dispatch or scratch directory: the one holding"+
						" manifest.jsonl (crucible-dispatch-<session-id>)")
				case errors.As(err, &other):
					id := other.ID
					if id == "" {
						id = "<id>"
					}
					return withHints(&refused{Err: err}, fmt.Sprintf("to import the rest without that ledger, name the pipeline:"+
						" git crucible import --pipeline %s %s", id, shellQuote(dir)))
				case err != nil:
					return err
				}
				if s.jsonOut() {
					return s.printJSON(r)
				}
				switch {
				case r.Nothing():
					fmt.Fprintf(s.out(), "Nothing new to import into %s\n", r.Pipeline)
				default:
					verb := "Imported into"
					if r.Created {
						verb = "Imported as new pipeline"
					}
					fmt.Fprintf(s.out(), "%s %s: %d manifest lines", verb, r.Pipeline, r.Lines)
					if r.Outputs > 0 {
						fmt.Fprintf(s.out(), ", %d outputs", r.Outputs)
					}
					if r.Decisions > 0 {
						fmt.Fprintf(s.out(), ", %d decisions", r.Decisions)
					}
					if len(r.Files) > 0 {
						fmt.Fprintf(s.out(), ", %s", strings.Join(r.Files, ", "))
					}
					fmt.Fprintln(s.out())
				}
				for _, p := range r.Inferred {
					s.warn("Phase %d (%s) says PASS with no PASS gate-verdict marker of %s: imported as INFERRED; it blocks until a fresh gate passes",
						p, p.Name(), r.Pipeline)
					s.hint("run the phase's quality gate; when it passes: git crucible gate verdict %d --verdict PASS && git crucible ledger pass %d", p, p)
				}
				return nil
			})
		},
	}
}

// shellQuote is s as a shell word, for a command a hint shows.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
