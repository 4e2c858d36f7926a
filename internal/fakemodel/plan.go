package fakemodel

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Client is the program the model talks to, which decides its tools.
type Client string

const (
	Claude Client = "claude" // Claude Code: Read, Write, Bash (Anthropic Messages API)
	Codex  Client = "codex"  // Codex CLI: exec_command (OpenAI Responses API)
)

// Turn is one response of the model: tool calls made at once, or, with
// none, the final answer Text. Delay is waited before answering; an Error
// status answers with that API error instead.
type Turn struct {
	Calls []ToolCall
	Text  string
	Delay time.Duration
	Error int
}

// Result is what the client answered to a tool call.
type Result struct {
	Text    string
	IsError bool
}

// Play is a section turned into turns for a client.
type Play struct {
	Turns []Turn // the last one has no calls: the final answer (or an error)
	// In and Out are the token counts every response reports: the
	// section's tokens directive, else the defaults given to PlanSection.
	In, Out int
}

// Where a dispatch's files are: the client's working directory (for
// claude's tools, which want absolute paths) and the report's path.
type Where struct {
	Workdir string
	Report  string
}

// DefaultText is the model's final answer when a section prints nothing.
const DefaultText = "done"

// PlanSection turns sec's directives into turns of client c, one turn per
// tool call:
//
//	write P   claude: Read P, then Write P (Write refuses a file not Read);
//	          codex: exec_command mkdir -p and cat > P with a quoted heredoc
//	append P  claude: Read P, then Write P with what Read showed and the block;
//	          codex: exec_command cat >> P
//	remove P  Bash / exec_command rm -f P
//	report    claude: Write at the report's path; codex: cat > it
//	run C     Bash / exec_command C
//	stdout    the block is (added to) the final answer
//	sleep N   the next response waits N seconds
//	api-error S  from here on, every response is the API error S
//	tokens I O   every response of the dispatch reports I input, O output tokens
//	exit, crash  the play ends there: a model cannot make its client exit
//
// results holds the client's answer to each call made so far, in order;
// an append's Write needs the answer to its Read, and is left empty while
// that answer is not there.
func PlanSection(c Client, sec *Section, w Where, results []Result, in, out int) (Play, error) {
	p := Play{In: in, Out: out}
	var text []string
	var delay time.Duration
	calls := 0                   // calls planned so far: the index of the next one in results
	wrote := map[string]string{} // claude: what this play wrote, by absolute path
	add := func(tc ...ToolCall) {
		p.Turns = append(p.Turns, Turn{Calls: tc, Delay: delay})
		delay = 0
		calls += len(tc)
	}
	for _, d := range sec.Directives {
		if d.Kind == Tokens { // wherever it stands, it counts for every response
			p.In, p.Out, _ = parseTokens(d.Arg)
		}
	}
	file := func(rel string) (string, error) {
		if c == Claude && !strings.HasPrefix(w.Workdir, "/") {
			return "", fmt.Errorf("the client named no absolute working directory, which claude's file tools need")
		}
		return path.Join(w.Workdir, rel), nil
	}
directives:
	for _, d := range sec.Directives {
		switch d.Kind {
		case Write, Append:
			if c == Codex {
				op := ">"
				if d.Kind == Append {
					op = ">>"
				}
				cmd := "cat " + op + " " + shellQuote(d.Arg) + " " + heredoc(d.Block)
				if dir := path.Dir(d.Arg); dir != "." {
					cmd = "mkdir -p " + shellQuote(dir) + " && " + cmd
				}
				add(execCommand(cmd))
				continue
			}
			f, err := file(d.Arg)
			if err != nil {
				return p, err
			}
			content := d.Block
			if old, ok := wrote[f]; ok {
				// Written in this session: Write may replace it unread, and a
				// Read again would only say it is unchanged.
				if d.Kind == Append {
					content = old + d.Block
				}
			} else {
				read := calls
				add(ToolCall{Name: "Read", Input: map[string]any{"file_path": f}})
				if d.Kind == Append {
					content = ""
					if read < len(results) {
						content = readContent(results[read]) + d.Block
					}
				}
			}
			wrote[f] = content
			add(ToolCall{Name: "Write", Input: map[string]any{"file_path": f, "content": content}})
		case Remove:
			if f, err := file(d.Arg); err == nil {
				delete(wrote, f)
			}
			add(shell(c, "rm -f "+shellQuote(d.Arg)))
		case Run:
			add(shell(c, d.Arg))
		case Report:
			if w.Report == "" {
				return p, fmt.Errorf("the prompt names no report file")
			}
			target, isVar := shellPath(w.Report)
			switch {
			case c == Codex || isVar:
				add(shell(c, "cat > "+target+" "+heredoc(d.Block)))
			default:
				f := w.Report
				if !strings.HasPrefix(f, "/") {
					if f, _ = file(f); f == "" {
						return p, fmt.Errorf("the report's path %q is relative and the client named no working directory", w.Report)
					}
				}
				wrote[f] = d.Block
				add(ToolCall{Name: "Write", Input: map[string]any{"file_path": f, "content": d.Block}})
			}
		case Stdout:
			text = append(text, strings.TrimSuffix(d.Block, "\n"))
		case Sleep:
			s, _ := strconv.ParseFloat(d.Arg, 64)
			delay += time.Duration(s * float64(time.Second))
		case APIError:
			status, _ := strconv.Atoi(d.Arg)
			p.Turns = append(p.Turns, Turn{Error: status, Delay: delay})
			return p, nil
		case Tokens:
		case Exit, Crash:
			break directives
		default:
			return p, fmt.Errorf("unknown directive %q", d.Kind)
		}
	}
	final := strings.Join(text, "\n")
	if final == "" {
		final = DefaultText
	}
	p.Turns = append(p.Turns, Turn{Text: final, Delay: delay})
	return p, nil
}

// PlanFakeTools is the play of a directive prompt: each FAKE-TOOLS line a
// turn, then the final answer.
func PlanFakeTools(turns [][]ToolCall, in, out int) Play {
	p := Play{In: in, Out: out}
	for _, calls := range turns {
		p.Turns = append(p.Turns, Turn{Calls: calls})
	}
	p.Turns = append(p.Turns, Turn{Text: DefaultText})
	return p
}

// Next is the turn to play after made tool calls: the first turn whose
// calls were not all made. Its index is what the request log shows.
func (p Play) Next(made int) (int, Turn) {
	for i, t := range p.Turns {
		if len(t.Calls) == 0 || made < len(t.Calls) {
			return i, t
		}
		made -= len(t.Calls)
	}
	// More calls than planned (a client retrying a tool?): answer again.
	last := len(p.Turns) - 1
	return last, p.Turns[last]
}

// shell is a tool call running cmd in the client's shell.
func shell(c Client, cmd string) ToolCall {
	if c == Codex {
		return execCommand(cmd)
	}
	return ToolCall{Name: "Bash", Input: map[string]any{"command": cmd}}
}

// execCommand is codex's shell call; it waits up to the 30 s codex allows
// for the command's output, so that a test suite's output is there.
func execCommand(cmd string) ToolCall {
	return ToolCall{Name: "exec_command", Input: map[string]any{"cmd": cmd, "yield_time_ms": 30000}}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var variable = regexp.MustCompile(`^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})$`)

// shellPath is p for sh: a variable ($CRUCIBLE_OUTPUT, which the task
// run's prompts name instead of a path) double-quoted, else quoted.
func shellPath(p string) (string, bool) {
	if m := variable.FindStringSubmatch(p); m != nil {
		return `"$` + m[1] + m[2] + `"`, true
	}
	return shellQuote(p), false
}

// heredoc is a quoted here-document holding block, with a delimiter that
// no line of it is.
func heredoc(block string) string {
	delim := "CRUCIBLE_EOF"
	for i := 1; strings.Contains("\n"+block, "\n"+delim+"\n"); i++ {
		delim = "CRUCIBLE_EOF_" + strconv.Itoa(i)
	}
	return "<<'" + delim + "'\n" + block + delim
}

var numbered = regexp.MustCompile(`^ *(\d+)\t(.*)$`)

// readContent is the file Claude Code's Read showed: its numbered lines
// ("     1\tline"), up to the first line that is not the next one (a
// reminder Read adds). A Read that failed (no such file) is empty.
func readContent(r Result) string {
	if r.IsError {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(r.Text, "\n") {
		m := numbered.FindStringSubmatch(strings.TrimSuffix(l, "\r"))
		if m == nil || m[1] != strconv.Itoa(len(lines)+1) {
			break
		}
		lines = append(lines, m[2])
	}
	return strings.Join(lines, "\n")
}
