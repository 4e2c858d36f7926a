package interop

// What a Claude Code Agent call dispatches, crucible pointer prompts
// followed to the dispatch file they name.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// DispatchPointer is a crucible pointer prompt: instead of the instructions,
// the orchestrator sends an agent a short prompt naming the dispatch file
// that holds them ("Read your full instructions at
// /tmp/crucible-dispatch-<id>/2-plan-writer.md").
type DispatchPointer struct {
	Path     string // as the prompt writes it
	Seq      int    // from the file name <seq>-<template>.md
	Template string // from the file name
}

// maxPointerPrompt bounds what reads as a pointer: a pointer is a sentence
// or two, and a longer prompt that mentions a dispatch file in passing
// (a reviewer told where the writer's instructions were) holds its own.
const maxPointerPrompt = 1024

// ParseDispatchPointer reads a pointer prompt: at most 1024 bytes, holding
// "instruction" (in any case) and exactly one path whose file name
// is a dispatch file's, <seq>-<template>.md (seq digits, template letters,
// digits, '.', '_' and '-' starting with a letter or digit). The path is a
// word of the prompt, less the quotes, backticks, brackets or punctuation
// around it; the same path named twice counts once. Crucible words the
// pointer in several ways, and all read alike:
//
//	Read your full instructions at /tmp/crucible-dispatch-s1/2-plan-writer.md
//	Read and follow the instructions in `/tmp/crucible-dispatch-s1/2-plan-writer.md`.
//	Your instructions: "/tmp/crucible-dispatch-s1/2-plan-writer.md"
//	Read /tmp/crucible-dispatch-s1/2-plan-writer.md: it holds your full instructions.
func ParseDispatchPointer(prompt string) (DispatchPointer, bool) {
	if len(prompt) > maxPointerPrompt || !strings.Contains(strings.ToLower(prompt), "instruction") {
		return DispatchPointer{}, false
	}
	var found DispatchPointer
	for _, w := range strings.Fields(prompt) {
		path := strings.TrimRight(strings.TrimLeft(w, "\"'`([<"), "\"'`)]>.,;:!?")
		seq, template, ok := DispatchFileName(path[strings.LastIndexByte(path, '/')+1:])
		if !ok || path == found.Path {
			continue
		}
		if found.Path != "" {
			return DispatchPointer{}, false // two files: which one is meant?
		}
		found = DispatchPointer{Path: path, Seq: seq, Template: template}
	}
	return found, found.Path != ""
}

// DispatchFileName splits a dispatch file's name, <seq>-<template>.md, with
// seq at least 1 and the template a valid template name.
func DispatchFileName(name string) (seq int, template string, ok bool) {
	digits, rest, found := strings.Cut(name, "-")
	template, isMD := strings.CutSuffix(rest, ".md")
	if !found || !isMD || digits == "" || strings.Trim(digits, "0123456789") != "" ||
		pipeline.CheckName("template", template) != nil {
		return 0, "", false
	}
	seq, err := strconv.Atoi(digits)
	if err != nil || seq < 1 {
		return 0, "", false
	}
	return seq, template, true
}

// maxDispatchFile bounds what a pointer is followed to: dispatch files are
// kilobytes, and a prompt is outside input that may name anything.
const maxDispatchFile = 4 << 20

// ErrNotDispatchFile refuses to follow a pointer to anything but a regular
// file: a symbolic link (to ~/.ssh/id_rsa, say) would otherwise be read and
// kept in the chain, and a FIFO would hang the hook.
var ErrNotDispatchFile = errors.New("a pointer is followed only to a regular file")

// ReadDispatchPointer reads the dispatch file p names, where p names it (a
// relative path is the current directory's), without following a symbolic
// link at its name; a file that is not regular or is over 4 MiB is refused
// unread.
func ReadDispatchPointer(p DispatchPointer) (DispatchFile, error) {
	data, err := fsutil.ReadRegular(p.Path, maxDispatchFile, ErrNotDispatchFile)
	if err != nil {
		return DispatchFile{}, err
	}
	f, err := ParseDispatchFile(data)
	if err != nil {
		return DispatchFile{}, fmt.Errorf("%s: %w", p.Path, err)
	}
	return f, nil
}

// AgentDispatch is what an Agent call dispatches, as a hook records it.
type AgentDispatch struct {
	Role, Template string
	Phase          ledger.Phase // 0 when the call does not say
	Task           *int
	Prompt         []byte
	// Warning says why the file a pointer named was not used: the role and
	// template then come from its name, and the prompt is the pointer.
	Warning string
}

// DefaultAgentType is the agent Claude Code's Agent tool runs when a call
// names no subagent_type ("If omitted, the general-purpose agent is used").
const DefaultAgentType = "general-purpose"

// DispatchOf is what call dispatches. A pointer prompt (ParseDispatchPointer)
// names the dispatch file: the template is its name's, the role its header's
// "# Dispatch:" template (else the name's), the phase and task its header's
// when they read as such, and the prompt its prompt (the pointer when the
// file holds none). Any other prompt is kept as it is, and the role and the
// template are the agent's type (TemplateName): the call's subagent_type,
// else the agentType its PostToolUse says ran, else DefaultAgentType.
func DispatchOf(call HookEvent) AgentDispatch {
	p, ok := ParseDispatchPointer(call.Prompt)
	if !ok {
		name := TemplateName(call.agentType())
		return AgentDispatch{Role: name, Template: name, Prompt: []byte(call.Prompt)}
	}
	d := AgentDispatch{Role: p.Template, Template: p.Template, Prompt: []byte(call.Prompt)}
	f, err := ReadDispatchPointer(p)
	if err != nil {
		d.Warning = fmt.Sprintf("dispatch file not read, role and template taken from its name: %v", err)
		return d
	}
	if role := strings.Join(strings.Fields(f.Template), " "); role != "" {
		d.Role = role[:min(len(role), 100)]
	}
	if phase, err := ledger.ParsePhase(strings.TrimSpace(f.Phase)); err == nil {
		d.Phase = phase
	}
	if task, err := strconv.Atoi(strings.TrimSpace(f.Task)); err == nil && task >= 1 {
		d.Task = &task
	}
	if f.Prompt != nil {
		d.Prompt = f.Prompt
	}
	return d
}

// agentType is the type of agent call asked for, or was given.
func (call HookEvent) agentType() string {
	switch {
	case call.SubagentType != "":
		return call.SubagentType
	case call.AgentType != "":
		return call.AgentType
	}
	return DefaultAgentType
}

// AgentTypeMismatch is the warning to give when the agent Claude Code says
// ran is not the type the call was recorded as: a call that named no type,
// recorded as DefaultAgentType. "" when they agree, or when the role came
// from a pointer's dispatch file or the call named its type.
func (call HookEvent) AgentTypeMismatch() string {
	if call.SubagentType != "" || call.AgentType == "" || TemplateName(call.AgentType) == DefaultAgentType {
		return ""
	}
	if _, ok := ParseDispatchPointer(call.Prompt); ok {
		return ""
	}
	return fmt.Sprintf("tool use %s named no subagent_type and was recorded as %s, but Claude Code ran agent type %q",
		call.ToolUseID, DefaultAgentType, call.AgentType)
}

// Failure kinds of an Agent call's dispatch (DispatchFinish.Failure).
const (
	FailureToolError   = "tool-error"  // the call failed: PostToolUseFailure
	FailureInterrupted = "interrupted" // the call was interrupted: PostToolUseFailure with is_interrupt
	FailureDetached    = "detached"    // its background agent's end was never reported
)

// ClientClaudeCode is Usage.Client for an Agent call's subagent.
const ClientClaudeCode = "claude-code"

// FinishOf is the finish an event reports for the dispatch of its call:
//   - PostToolUse: completed (error when tool_response.is_error), the
//     response kept as the output (unless empty), its first line the
//     summary; tool calls,
//     and Usage when tool_response has usage: model, tokens, tool uses and
//     duration, for client ClientClaudeCode and the event's session;
//   - PostToolUseFailure: failed with failure FailureToolError, or, when
//     interrupted, error with FailureInterrupted; the error kept as the
//     output, its first line the summary;
//   - SubagentStop (a background agent's end): completed, its last message
//     kept as the output, its first line the summary.
//
// AgentType is the agent type the event names, made a name (TemplateName).
func FinishOf(e HookEvent) pipeline.FinishRequest {
	f := pipeline.FinishRequest{Status: "completed", ToolCalls: e.ToolUses}
	text := e.Response
	switch {
	case e.Event == HookPostToolUseFailure && e.Interrupted:
		f.Status, f.Failure, text = "error", FailureInterrupted, e.Error
	case e.Event == HookPostToolUseFailure:
		f.Status, f.Failure, text = "failed", FailureToolError, e.Error
	case e.IsError:
		f.Status = "error"
	}
	if text != "" {
		f.Output, f.Summary = []byte(text), Summary(text)
	}
	if e.AgentType != "" {
		f.AgentType = TemplateName(e.AgentType)
	}
	if t := e.Tokens; t != nil && e.Event == HookPostToolUse {
		f.Usage = &pipeline.Usage{Client: ClientClaudeCode, SessionID: e.SessionID, Model: e.Model,
			InputTokens: t.Input, OutputTokens: t.Output, CacheReadTokens: t.CacheRead, CacheCreationTokens: t.CacheCreation}
		if e.ToolUses != nil {
			f.Usage.ToolUses = *e.ToolUses
		}
		if e.DurationMS != nil {
			f.Usage.DurationMS = *e.DurationMS
		}
	}
	return f
}

// Summary is a dispatch's summary of text: its first non-blank line, its
// spaces folded, at most 200 characters.
func Summary(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200])
	}
	return line
}

// TemplateName makes a subagent type usable as a template and file name:
// characters a name may not hold become '-', and an empty result "agent".
func TemplateName(subagent string) string {
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
