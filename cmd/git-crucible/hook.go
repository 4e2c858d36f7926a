package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/claudecode"
	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/refs"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "entry points for hooks: Claude Code's, and git's (see 'git crucible hooks')",
		Subcommands: []*cli.Command{{
			Name:      "claude",
			Usage:     "record Agent tool calls, and guard gate-ledger writes, from a Claude Code hook payload on stdin",
			ArgsUsage: " ",
			Description: "'git crucible hooks install --claude' configures it in Claude Code's settings, for the Agent tool's\n" +
				"PreToolUse, PostToolUse and PostToolUseFailure, for the Write and Edit tools' PreToolUse, and for\n" +
				"SubagentStop, Stop and SessionEnd.\n\n" +
				"A Write or Edit of a file named build-gate-ledger.md (crucible's gate ledger) that gives a phase\n" +
				"a PASS it did not have is blocked — exit 2, the reason on stderr, Claude Code's blocking\n" +
				"answer, --strict or not — unless quality-gate/ beside the ledger holds a gate-verdict-*.md\n" +
				"marker saying Verdict: PASS for the ledger's PipelineID and that phase (design, plan, code), as\n" +
				"crucible's quality gate writes it. A Phase 3 PASS (Phase 3 ends COMPLETE) and a PASS in a ledger\n" +
				"with no PipelineID are always blocked. The ledger is read as a person reads it (any header\n" +
				"spacing, indented keys, trailing spaces), an Edit is judged on the file it would leave, and the\n" +
				"older payload shape (tool, input) is read too: crucible's gate-ledger-guard hook, done by\n" +
				"git-crucible. It needs no repository or pipeline and writes nothing.\n\n" +
				"Each Agent call is recorded as a dispatch, so the manifest is complete without the model\n" +
				"writing a line:\n" +
				"   - PreToolUse: its start. Role and template are the subagent_type (Claude Code's general-purpose\n" +
				"     when the call names none), the prompt is kept, the phase is the pipeline's, and a call with\n" +
				"     run_in_background is marked background;\n" +
				"   - PostToolUse: its finish, completed (error when the response is an error), the agent's text\n" +
				"     kept as the output and its first line the summary, with the tool calls, the agent type that\n" +
				"     ran (agent_type) and what Claude Code says it cost (usage: model, tokens, tool uses,\n" +
				"     duration);\n" +
				"   - PostToolUseFailure: its finish, failed with failure tool-error and the error as the\n" +
				"     summary; error with failure interrupted when the call was interrupted;\n" +
				"   - a call run in the background returns at once (status async_launched): its dispatch stays\n" +
				"     in flight, and its agent id is kept in <git-common-dir>/crucible/claude-agents/ until its\n" +
				"     SubagentStop finishes it, completed, with its last message as the output. A turn's Stop that\n" +
				"     no longer lists the agent among the session's background tasks (claude -p killed), or the\n" +
				"     session's SessionEnd, settles it instead: error, failure detached. The SubagentStop of an\n" +
				"     agent not run in the background is left to its call's PostToolUse.\n" +
				"'git crucible dispatch show <seq>' and 'dispatch list --json' show what was recorded.\n\n" +
				"Calls go to the pipeline active on the branch of the payload's cwd; with --pipeline, to that\n" +
				"one. Inside an agent the engine runs, CRUCIBLE_PIPELINE names the pipeline (a task DAG's agents\n" +
				"work in detached worktrees) and CRUCIBLE_SEQ the engine's dispatch, which each call's dispatch\n" +
				"names as its parent_seq (dropped, with a warning, when the pipeline has no such dispatch).\n\n" +
				"A crucible pointer prompt (\"Read your full instructions at /tmp/crucible-dispatch-<id>/2-plan-writer.md\")\n" +
				"is followed to the dispatch file it names: the template is the file name's, the role the file's\n" +
				"'# Dispatch:' header's, phase and task the header's, and the prompt kept is the file's. Only a\n" +
				"regular file of at most 4 MiB named <seq>-<template>.md is read, never through a symbolic link;\n" +
				"otherwise a warning says so and role and template come from the name.\n\n" +
				"A PostToolUse or PostToolUseFailure whose PreToolUse was never recorded is recorded all the\n" +
				"same, start and finish at once (no duration), marked reconstructed, with a warning; a launch in\n" +
				"the background is started then, marked reconstructed.\n\n" +
				"Anything else — another tool or event, no repository, no active pipeline, a bad payload — is\n" +
				"ignored with exit 0: a hook must never break the agent. --strict reports those as errors\n" +
				"instead (for tests); warnings never change the exit status. Nothing is printed on stdout but\n" +
				"with --json: what was done ('action': started, finished, reconstructed, launched, noted,\n" +
				"settled or ignored), with the pipeline, seq and finish.",
			Flags:  commonFlags(&cli.BoolFlag{Name: "strict", Usage: "fail on payloads that are not recorded"}),
			Action: hookClaude,
		}, hookRunCommand()},
	}
}

func hookClaude(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	payload, err := io.ReadAll(io.LimitReader(c.App.Reader, 64<<20))
	if err == nil {
		// Before any repository is looked for: crucible's users have only
		// the markdown.
		if w, ok := interop.ParseFileWrite(payload); ok {
			home, _ := os.UserHomeDir()
			if err := interop.GuardLedgerWrite(w, home); err != nil {
				// Claude Code's blocking answer: exit 2, the reason on stderr.
				cliexit.Error(c.App.ErrWriter, "%v", err)
				return &silentExit{Code: exitBlocked}
			}
		}
		err = recordHookEvent(c, payload)
	}
	if err != nil && !c.Bool("strict") {
		return nil // never break the agent
	}
	return err
}

func recordHookEvent(c *cli.Context, payload []byte) error {
	e, err := interop.ParseHookPayload(payload)
	if errors.Is(err, interop.ErrNotAgentCall) {
		return &refused{Err: err}
	}
	if err != nil {
		return err
	}
	// A subagent of an agent the engine runs: recorded in the engine's
	// pipeline, whatever the branch (a task DAG's agents work in detached
	// worktrees), and linked to the engine's dispatch.
	id, parent := c.String("pipeline"), 0
	if env := os.Getenv(enforce.EnvPipeline); env != "" {
		if err := refs.ValidateID(env); err != nil {
			return fmt.Errorf("%s: %w", enforce.EnvPipeline, err)
		}
		if id == "" {
			id = env
		}
		if id == env {
			parent = enforce.AgentFromEnv(os.Getenv).Seq
		}
	}
	if e.Cwd != "" {
		if err := os.Chdir(e.Cwd); err != nil {
			return err
		}
	}
	return withRepo(c, func(s *session) error {
		s.svc.Hook = true // an engine holding the pipeline lets it record subagents' dispatches only
		r := claudecode.Recorder{Svc: s.svc, Pipeline: id, Parent: parent}
		o, err := r.Record(c.Context, e)
		if o != nil {
			for _, w := range o.Warnings {
				s.warn("%s", w)
			}
		}
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(o)
		}
		return nil
	})
}
