package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/pipeline"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "entry points for hooks: Claude Code's, and git's (see 'git crucible hooks')",
		Subcommands: []*cli.Command{{
			Name:      "claude",
			Usage:     "record Agent tool calls from a Claude Code hook payload on stdin",
			ArgsUsage: " ",
			Description: "Configure it as a Claude Code PreToolUse and PostToolUse hook for the Agent tool: each call is\n" +
				"recorded as a dispatch start (role and template from subagent_type, the prompt kept) and its\n" +
				"finish (the response kept; an error response is status error), so the manifest is complete\n" +
				"without the model writing a line.\n\n" +
				"A crucible pointer prompt (\"Read your full instructions at /tmp/crucible-dispatch-<id>/2-plan-writer.md\")\n" +
				"is followed to the dispatch file it names: the template is the file name's, the role the file's\n" +
				"'# Dispatch:' header's, phase and task the header's, and the prompt kept is the file's. Only a\n" +
				"regular file of at most 4 MiB named <seq>-<template>.md is read, never through a symbolic link;\n" +
				"otherwise a warning says so and role and template come from the name.\n\n" +
				"A PostToolUse whose PreToolUse was never recorded is recorded all the same, start and finish at\n" +
				"once (no duration), marked reconstructed, with a warning.\n\n" +
				"Anything else — another tool or event, no repository, no active pipeline, a bad payload — is\n" +
				"ignored with exit 0: a hook must never break the agent. --strict reports those as errors\n" +
				"instead (for tests); warnings never change the exit status.",
			Flags:  commonFlags(&cli.BoolFlag{Name: "strict", Usage: "fail on payloads that are not recorded"}),
			Action: hookClaude,
		}, hookRunCommand()},
	}
}

func hookClaude(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	err := recordAgentCall(c)
	if err != nil && !c.Bool("strict") {
		return nil // never break the agent
	}
	return err
}

func recordAgentCall(c *cli.Context) error {
	payload, err := io.ReadAll(io.LimitReader(c.App.Reader, 64<<20))
	if err != nil {
		return err
	}
	call, err := interop.ParseHookPayload(payload)
	if errors.Is(err, interop.ErrNotAgentCall) {
		return &refused{Err: err}
	}
	if err != nil {
		return err
	}
	if call.Cwd != "" {
		if err := os.Chdir(call.Cwd); err != nil {
			return err
		}
	}
	return withPipeline(c, func(s *session, id string) error {
		st, err := s.load(c.Context)
		if err != nil {
			return err
		}
		seq, inFlight := st.InFlightSeq(call.ToolUseID)
		if call.Event == interop.HookPostToolUse && inFlight {
			d, err := s.svc.FinishDispatch(c.Context, id, seq, finishOf(call))
			if err == nil && s.jsonOut() {
				return s.printJSON(map[string]any{"pipeline": id, "finish": d})
			}
			return err
		}
		// A PreToolUse, or a PostToolUse whose PreToolUse never came.
		d := interop.DispatchOf(call)
		if d.Warning != "" {
			fmt.Fprintf(s.err(), "warning: %s\n", d.Warning)
		}
		r := pipeline.DispatchRequest{Role: d.Role, Phase: d.Phase, Task: d.Task, Template: d.Template,
			Prompt: d.Prompt, ToolUseID: call.ToolUseID}
		if r.Phase == 0 {
			r.Phase = st.Phase
		}
		if call.Event == interop.HookPreToolUse {
			seq, err := s.svc.StartDispatch(c.Context, id, r)
			if err == nil && s.jsonOut() {
				return s.printJSON(map[string]any{"pipeline": id, "seq": seq})
			}
			return err
		}
		f, err := s.svc.ReconstructDispatch(c.Context, id, r, finishOf(call))
		if err != nil {
			return err
		}
		fmt.Fprintf(s.err(), "warning: no PreToolUse was recorded for tool use %s: dispatch %d reconstructed from its PostToolUse, with no duration\n",
			call.ToolUseID, f.Seq)
		if s.jsonOut() {
			return s.printJSON(map[string]any{"pipeline": id, "seq": f.Seq, "reconstructed": true, "finish": f})
		}
		return nil
	})
}

// finishOf is the finish a PostToolUse reports.
func finishOf(call interop.AgentCall) pipeline.FinishRequest {
	status := "completed"
	if call.IsError {
		status = "error"
	}
	return pipeline.FinishRequest{Status: status, Output: []byte(call.Response), Summary: oneLine(firstLine(call.Response))}
}

// firstLine is the first line of s, at most 200 characters.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200])
	}
	return line
}
