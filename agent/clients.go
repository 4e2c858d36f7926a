package agent

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/pipeline"
)

// clientAnswer is what a client's stdout says of a session: its answer,
// its cost, what it was refused.
type clientAnswer struct {
	Output  []byte
	Usage   *pipeline.Usage
	Denials []string
}

// readClaude takes the answer out of what claude -p --output-format json
// printed: one result object, or (with verbose set in claude's settings)
// an array of the session's messages ending in it.
func readClaude(out Captured) (clientAnswer, *Failure) {
	bad := func(why string) (clientAnswer, *Failure) {
		return clientAnswer{}, &Failure{Kind: BadOutput, Detail: "claude printed " + why + ", not the JSON result of --output-format json"}
	}
	if out.Cut > 0 {
		return bad("more than is kept")
	}
	text := bytes.TrimSpace(out.Bytes())
	var res claudeResult
	if bytes.HasPrefix(text, []byte("[")) {
		var msgs []claudeResult
		if err := json.Unmarshal(text, &msgs); err != nil {
			return bad("an unreadable array")
		}
		i := len(msgs) - 1
		for i >= 0 && msgs[i].Type != "result" {
			i--
		}
		if i < 0 {
			return bad("messages without a result")
		}
		res = msgs[i]
	} else if err := json.Unmarshal(text, &res); err != nil || res.Type != "result" {
		if len(text) == 0 {
			return bad("nothing")
		}
		return bad("something else")
	}
	a := clientAnswer{Output: []byte(res.Result), Usage: res.usage()}
	for _, d := range res.PermissionDenials {
		a.Denials = append(a.Denials, d.String())
	}
	switch {
	case res.APIErrorStatus != nil:
		return a, &Failure{Kind: APIError, Detail: fmt.Sprintf("claude's model API answered %d: %s", *res.APIErrorStatus, oneLine(res.Result, 300))}
	case res.IsError:
		return a, &Failure{Kind: AgentError, Detail: fmt.Sprintf("claude reported an error (%s)", res.Subtype)}
	}
	return a, nil
}

// claudeResult is the result message of claude -p --output-format json
// (Claude Code 2.1).
type claudeResult struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	APIErrorStatus *int     `json:"api_error_status"`
	Result         string   `json:"result"`
	SessionID      string   `json:"session_id"`
	NumTurns       int      `json:"num_turns"`
	TotalCostUSD   *float64 `json:"total_cost_usd"`
	DurationMS     int64    `json:"duration_ms"`
	Usage          struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	ModelUsage map[string]struct {
		CostUSD      float64 `json:"costUSD"`
		OutputTokens int64   `json:"outputTokens"`
	} `json:"modelUsage"`
	PermissionDenials []claudeDenial `json:"permission_denials"`
}

// usage is the result's account of the session; the model is the one that
// cost the most of those it names.
func (r claudeResult) usage() *pipeline.Usage {
	u := &pipeline.Usage{Client: string(Claude), SessionID: r.SessionID, Turns: r.NumTurns, CostUSD: r.TotalCostUSD,
		InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens, CacheReadTokens: r.Usage.CacheReadInputTokens,
		CacheCreationTokens: r.Usage.CacheCreationInputTokens, DurationMS: r.DurationMS}
	models := slices.SortedFunc(maps.Keys(r.ModelUsage), func(a, b string) int {
		return cmp.Or(cmp.Compare(r.ModelUsage[b].CostUSD, r.ModelUsage[a].CostUSD),
			cmp.Compare(r.ModelUsage[b].OutputTokens, r.ModelUsage[a].OutputTokens), strings.Compare(a, b))
	})
	if len(models) > 0 {
		u.Model = models[0]
	}
	return u
}

// claudeDenial is a tool call claude refused: in print mode nobody is
// asked, so what its permissions do not allow is refused.
type claudeDenial struct {
	ToolName  string         `json:"tool_name"`
	ToolInput map[string]any `json:"tool_input"`
}

// String is the tool and what it was to act on: "Write /a/b", "Bash sh x".
func (d claudeDenial) String() string {
	for _, key := range []string{"file_path", "notebook_path", "command", "path", "url", "pattern"} {
		if v, ok := d.ToolInput[key].(string); ok && v != "" {
			return d.ToolName + " " + oneLine(v, 200)
		}
	}
	return d.ToolName
}

// RefusedText says what a client refused its agent, for an error message.
func RefusedText(kind Kind, denials []string) string {
	if len(denials) == 0 {
		return ""
	}
	parts := make([]string, len(denials))
	for i, d := range denials {
		tool, target, ok := strings.Cut(d, " ")
		if ok {
			parts[i] = tool + " on " + target
		} else {
			parts[i] = tool
		}
	}
	return string(kind) + " was refused " + strings.Join(parts, "; ")
}

// readCodex reads what codex exec --json printed: one JSON event a line.
// Its answer is the last agent message (codex also writes it to its
// --output-last-message file, which wins when it is there); its usage the
// sum of its turns'; a failed turn or a stream error with no turn after it
// is a failure.
func readCodex(out Captured) (clientAnswer, *Failure) {
	var a clientAnswer
	var u pipeline.Usage
	u.Client = string(Codex)
	var failed string
	turns := 0
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e codexEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // not an event: codex printed something else
		}
		switch e.Type {
		case "thread.started":
			u.SessionID = e.ThreadID
		case "item.completed":
			if e.Item.Type == "agent_message" {
				a.Output = []byte(e.Item.Text)
			}
		case "turn.completed":
			turns++
			u.InputTokens += e.Usage.InputTokens
			u.OutputTokens += e.Usage.OutputTokens
			u.CacheReadTokens += e.Usage.CachedInputTokens
			failed = ""
		case "turn.failed":
			failed = e.Error.Message
		case "error":
			failed = e.Message
		}
	}
	if turns > 0 || u.SessionID != "" {
		u.Turns = turns
		a.Usage = &u
	}
	if m := apiStatus.Get().FindStringSubmatch(failed); m != nil {
		return a, &Failure{Kind: APIError, Detail: "codex's model API answered " + m[1] + ": " + oneLine(failed, 300)}
	}
	if failed != "" {
		return a, &Failure{Kind: AgentError, Detail: "codex reported an error: " + oneLine(failed, 300)}
	}
	return a, nil
}

// apiStatus finds the HTTP status in codex's account of a failed request
// ("unexpected status 401 Unauthorized: ...").
var apiStatus = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`unexpected status (\d{3})\b`) }}

// codexEvent is a line of codex exec --json (Codex CLI 0.171).
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Item     struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Usage struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// oneLine is s on one line, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// Hint is one sentence on what to do about a dispatch that failed as
// kind, its summary said: "" when there is nothing better to say than
// to fix the cause.
func Hint(kind FailureKind, summary string) string {
	switch {
	case strings.Contains(summary, "cannot be used with root/sudo privileges"):
		return "claude refuses to skip its permission checks as root: drop --dangerously-skip-permissions or --permission-mode bypassPermissions from the agent's args (the built-in access needs neither), or set IS_SANDBOX=1 in its env on a machine that is a sandbox"
	case kind == APIError && (strings.Contains(summary, " 401") || strings.Contains(summary, " 403")):
		return "the model API refused the client's credentials: for claude set ANTHROPIC_API_KEY or run 'claude /login', for codex set OPENAI_API_KEY or run 'codex login'; then go on with --resume"
	case kind == APIError:
		return "the model API did not answer (overloaded, rate-limited or down): go on later with --resume"
	case kind == NoReport && strings.Contains(summary, " was refused "):
		return "the agent's client refused what it needed: 'git crucible agents' shows what each role may do; give the agent more in its args if the role needs it"
	case kind == NotStarted:
		return "the agent's program could not start: 'git crucible agents' shows what each role runs"
	}
	return ""
}
