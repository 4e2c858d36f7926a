package fakemodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Dispatch is what a crucible prompt tells its agent about the dispatch,
// read from the prompt's text as a model reads it (prompt/templates
// _context.md and _report.md).
type Dispatch struct {
	PhaseName string // Design, Plan, Execute, Completion
	Phase     string // "1" to "4"
	Step      string // the spec step's id
	Round     string // "" outside rounds
	MaxRounds string
	Role      string
	Task      string // the task's id; "" outside tasks
	TaskTitle string
	// FastGate and TestCommand are the commands the prompt names; "" when
	// it names none.
	FastGate    string
	TestCommand string
	// ReportPath is where the prompt says to write the report: an
	// absolute path, or "$CRUCIBLE_OUTPUT" when the prompt names only
	// the variable.
	ReportPath string
}

// Conds is what selects the dispatch's scenario section: the values the
// scripted agent sees in CRUCIBLE_ROLE, _PHASE, _TASK and _ROUND.
func (d Dispatch) Conds() Conds {
	return Conds{Role: d.Role, Phase: d.Phase, Task: d.Task, Round: d.Round}
}

func (d Dispatch) String() string {
	return fmt.Sprintf("%s phase=%s task=%s round=%s", d.Role, d.Phase, d.Task, d.Round)
}

var (
	headerLine = regexp.MustCompile(`(?m)^# crucible build — (.+) \(phase (\d+) of 4\), step (\S+?)(?:, round (\d+) of at most (\d+))?$`)
	roleLine   = regexp.MustCompile("(?m)^- Your role: (.+)$")
	taskLine   = regexp.MustCompile("(?m)^## Your task: (.+?) — (.*)$")
	gateLine   = regexp.MustCompile("(?m)^- Fast gate: `(.+)`$")
	testLine   = regexp.MustCompile("(?m)^- Project test command: `(.+)`$")
	reportPath = regexp.MustCompile("write your report as YAML to the file `([^`\n]+)`")
)

// ParsePrompt reads the dispatch from a crucible prompt; false when text
// has no crucible header.
func ParsePrompt(text string) (Dispatch, bool) {
	m := headerLine.FindStringSubmatch(text)
	if m == nil {
		return Dispatch{}, false
	}
	d := Dispatch{PhaseName: m[1], Phase: m[2], Step: m[3], Round: m[4], MaxRounds: m[5]}
	d.Role = first(roleLine, text, 1)
	if t := taskLine.FindStringSubmatch(text); t != nil {
		d.Task, d.TaskTitle = t[1], t[2]
	}
	d.FastGate = first(gateLine, text, 1)
	d.TestCommand = first(testLine, text, 1)
	// The report's section ends the prompt, after what other agents wrote
	// (a critique's task reports): its last mention is the one.
	if all := reportPath.FindAllStringSubmatch(text, -1); all != nil {
		d.ReportPath = all[len(all)-1][1]
	}
	return d, true
}

func first(re *regexp.Regexp, text string, group int) string {
	if m := re.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[group])
	}
	return ""
}

// FakeToolsPrefix starts a line of a directive prompt: FAKE-TOOLS and a
// JSON array of tool calls, made at once in one model turn.
const FakeToolsPrefix = "FAKE-TOOLS "

// ToolCall is a tool call the model makes: the tool's name and its input
// (claude's tool_use input, codex's function call arguments).
type ToolCall struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// ParseFakeTools reads the FAKE-TOOLS lines of a directive prompt, one
// turn each, in order; nil when text has none.
func ParseFakeTools(text string) ([][]ToolCall, error) {
	var turns [][]ToolCall
	for i, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), FakeToolsPrefix)
		if !ok {
			continue
		}
		var calls []ToolCall
		if err := json.Unmarshal([]byte(rest), &calls); err != nil {
			return nil, fmt.Errorf("line %d: %s needs a JSON array of {\"name\", \"input\"}: %w", i+1, strings.TrimSpace(FakeToolsPrefix), err)
		}
		if len(calls) == 0 {
			return nil, fmt.Errorf("line %d: %s with no tool call", i+1, strings.TrimSpace(FakeToolsPrefix))
		}
		for j, c := range calls {
			if c.Name == "" {
				return nil, fmt.Errorf("line %d: tool call %d has no name", i+1, j+1)
			}
			if c.Input == nil {
				calls[j].Input = map[string]any{}
			}
		}
		turns = append(turns, calls)
	}
	return turns, nil
}
