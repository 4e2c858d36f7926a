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
				"without the model writing a line. Anything else — another tool or event, no repository, no\n" +
				"active pipeline, a bad payload — is ignored with exit 0: a hook must never break the agent.\n" +
				"--strict reports those as errors instead (for tests).",
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
		if call.Event == "PreToolUse" {
			role := templateName(call.SubagentType)
			seq, err := s.svc.StartDispatch(c.Context, id, pipeline.DispatchRequest{Role: role, Phase: st.Phase,
				Template: role, Prompt: []byte(call.Prompt), ToolUseID: call.ToolUseID})
			if err == nil && s.jsonOut() {
				return s.printJSON(map[string]any{"pipeline": id, "seq": seq})
			}
			return err
		}
		seq, ok := st.InFlightSeq(call.ToolUseID)
		if !ok {
			return &refused{Err: fmt.Errorf("no dispatch in flight for tool use %s", call.ToolUseID)}
		}
		status := "completed"
		if call.IsError {
			status = "error"
		}
		d, err := s.svc.FinishDispatch(c.Context, id, seq, pipeline.FinishRequest{Status: status, Output: []byte(call.Response),
			Summary: oneLine(firstLine(call.Response))})
		if err == nil && s.jsonOut() {
			return s.printJSON(map[string]any{"pipeline": id, "finish": d})
		}
		return err
	})
}

// templateName makes a subagent type usable as a template and file name.
func templateName(subagent string) string {
	var b strings.Builder
	for _, r := range subagent {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.TrimLeft(b.String(), ".-")
	if name == "" {
		return "agent"
	}
	return name[:min(len(name), 100)]
}

// firstLine is the first line of s, at most 200 characters.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200])
	}
	return line
}
