package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a pipeline as a crucible scratch directory",
		ArgsUsage: "[<pipeline>] <dir>",
		Description: "Writes the files the crucible skills read: manifest.jsonl (a 'dispatched' line per dispatch\n" +
			"and its final line, in order), <seq>-<template>.md dispatch files for kept prompts and\n" +
			"<seq>-<template>.output.md for kept outputs, crucible-decisions-<id>.log (the decision journal),\n" +
			"build-gate-ledger.md, a gate-verdict-<id>-<seq>.md marker per verdict (as crucible's quality\n" +
			"gate writes it, so that an import finds each PASS verified), handoff-N-to-M.md,\n" +
			"pipeline-status.md (as of the last event) and .pipeline-active. Imported markers and\n" +
			"checkpoint-manifest.md come back as they were read, other imported files too while the\n" +
			"pipeline has not moved on since. Importing the directory back adds nothing. A file that\n" +
			"already exists with other content is not overwritten without --force.",
		Flags: commonFlags(&cli.BoolFlag{Name: "force", Usage: "overwrite files of the same names"}),
		Action: func(c *cli.Context) error {
			var dir string
			switch c.NArg() {
			case 1:
				dir = c.Args().Get(0)
			case 2:
				if c.String("pipeline") != "" {
					return usageErrorf("name the pipeline once: as an argument or with --pipeline")
				}
				if err := c.Set("pipeline", c.Args().Get(0)); err != nil {
					return err
				}
				dir = c.Args().Get(1)
			default:
				return usageErrorf("want [<pipeline>] <dir>")
			}
			return withPipeline(c, func(s *session, id string) error {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return err
				}
				files, err := interop.Export(c.Context, s.svc, id, abs)
				if err != nil {
					return err
				}
				names, err := interop.WriteFiles(abs, files, c.Bool("force"))
				var clash *interop.ClashError
				if errors.As(err, &clash) {
					return withHints(&refused{Err: err}, "export to a new directory, or pass --force to overwrite these files")
				}
				if err != nil {
					return err
				}
				if s.jsonOut() {
					return s.printJSON(map[string]any{"pipeline": id, "dir": abs, "files": names})
				}
				fmt.Fprintf(s.out(), "Exported %s to %s (%d files)\n", id, abs, len(names))
				return nil
			})
		},
	}
}
