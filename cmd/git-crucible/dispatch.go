package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func dispatchCommand() *cli.Command {
	return &cli.Command{
		Name:  "dispatch",
		Usage: "record agent dispatches in the pipeline's manifest",
		Description: "An orchestrator records every agent it sends: 'start' before (prints the new seq), 'finish'\n" +
			"after. Prompts and outputs are kept in the pipeline's history for good, so a replay can use them\n" +
			"after /tmp is gone. The entries keep crucible's manifest.jsonl fields plus timestamp and template.",
		Subcommands: []*cli.Command{
			{
				Name:      "start",
				Usage:     "record a dispatch and print its seq",
				ArgsUsage: " ",
				Flags: commonFlags(
					&cli.StringFlag{Name: "role", Usage: "the agent's `ROLE` (plan-writer, implementer, reviewer, ...)"},
					&cli.StringFlag{Name: "phase", Usage: "the `PHASE` it works in (1-4 or a name)"},
					&cli.IntFlag{Name: "task", DefaultText: "none", Usage: "task `N` it works on"},
					&cli.StringFlag{Name: "template", Usage: "prompt template `NAME` (default: the role)"},
					&cli.StringFlag{Name: "model-tier", Usage: "model `TIER` (opus, sonnet, haiku, ...)"},
					&cli.StringFlag{Name: "prompt", Usage: "keep the prompt read from `FILE` (- for stdin)"},
					&cli.IntFlag{Name: "replay-of", DefaultText: "none", Usage: "the `SEQ` this dispatch replays"},
					&cli.StringFlag{Name: "replay-session", Usage: "the replay session `ID`"},
					&cli.StringFlag{Name: "mutation", Usage: `the template swap, "a.md -> b.md"`},
				),
				Action: dispatchStart,
			},
			{
				Name:      "finish",
				Usage:     "record a dispatch's final status",
				ArgsUsage: "<seq>",
				Flags: commonFlags(
					&cli.StringFlag{Name: "status", Usage: "`STATUS`: " + strings.Join(pipeline.DispatchStatuses, ", ")},
					&cli.StringFlag{Name: "output", Usage: "keep the agent's output read from `FILE` (- for stdin)"},
					&cli.StringFlag{Name: "summary", Usage: "one-line `SUMMARY` of the result"},
					&cli.IntFlag{Name: "tool-calls", DefaultText: "unknown", Usage: "tool calls the agent made"},
					&cli.StringFlag{Name: "usage", Usage: "record what the agent's client reported it used, the JSON object read from `FILE` (- for stdin), as dispatch show prints it"},
					&cli.StringFlag{Name: "client", Usage: "the `CLIENT` that reported the usage (claude, codex, claude-code, ...)"},
					&cli.StringFlag{Name: "model", Usage: "the `MODEL` that answered, as the client names it"},
					&cli.Int64Flag{Name: "input-tokens", Usage: "input tokens the client reported (`N`)"},
					&cli.Int64Flag{Name: "output-tokens", Usage: "output tokens the client reported (`N`)"},
					&cli.Int64Flag{Name: "cache-read-tokens", Usage: "cache read tokens the client reported (`N`)"},
					&cli.Int64Flag{Name: "cache-creation-tokens", Usage: "cache creation tokens the client reported (`N`)"},
					&cli.StringFlag{Name: "cost-usd", Usage: "the price the client gave, in US dollars (`USD`); none when it gave none"},
				),
				Description: "Records the dispatch's final entry. An orchestrator that runs its agents itself records what\n" +
					"their clients reported they used with --client and --input-tokens, --output-tokens,\n" +
					"--cache-read-tokens, --cache-creation-tokens, --cost-usd and --model, or with --usage FILE, the\n" +
					"JSON object 'dispatch show' prints as \"usage\" (client, session_id, model, turns, input_tokens,\n" +
					"output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, tool_uses, duration_ms); the\n" +
					"options win over the file's fields. A client that gives no price (codex) is recorded without\n" +
					"--cost-usd: a price is never made up. 'status' and 'metrics' sum them, and a build's or run's\n" +
					"--max-cost counts the prices.",
				Action: dispatchFinish,
			},
			{
				Name:      "list",
				Usage:     "list the manifest, one dispatch per line (in-flight ones show 'dispatched')",
				ArgsUsage: " ",
				Flags:     commonFlags(),
				Action:    dispatchList,
			},
			{
				Name:      "show",
				Usage:     "show one dispatch, or its kept prompt, output or stderr",
				ArgsUsage: "<seq>",
				Description: "Prints the dispatch as its manifest line: crucible's fields, and how the agent went when the\n" +
					"engine ran it: failure (its kind), exit_code, stderr (the tail of a failed agent's), denials (what\n" +
					"its client refused it, as \"Tool target\") and usage (what its client says it cost: client,\n" +
					"session_id, model, turns, tokens, cost_usd).",
				Flags: commonFlags(
					&cli.BoolFlag{Name: "prompt", Usage: "print the kept prompt"},
					&cli.BoolFlag{Name: "output", Usage: "print the kept output"},
					&cli.BoolFlag{Name: "stderr", Usage: "print the kept tail of a failed agent's stderr"},
				),
				Action: dispatchShow,
			},
		},
	}
}

// optionalInt is the value of an int flag, or nil when it was not given.
func optionalInt(c *cli.Context, name string) *int {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Int(name)
	return &v
}

func seqArg(c *cli.Context) (int, error) {
	if c.NArg() != 1 {
		return 0, usageErrorf("want exactly one argument, the dispatch <seq>")
	}
	seq, err := strconv.Atoi(c.Args().First())
	if err != nil || seq < 1 {
		return 0, usageErrorf("invalid seq %q", c.Args().First())
	}
	return seq, nil
}

func dispatchStart(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	if err := requireFlags(c, "role", "phase"); err != nil {
		return err
	}
	phase, err := ledger.ParsePhase(c.String("phase"))
	if err != nil {
		return usageErrorf("%v", err)
	}
	r := pipeline.DispatchRequest{Role: c.String("role"), Phase: phase, Task: optionalInt(c, "task"),
		Template: c.String("template"), ModelTier: c.String("model-tier"), ReplayOf: optionalInt(c, "replay-of"),
		ReplaySession: c.String("replay-session"), Mutation: c.String("mutation")}
	template, what := r.Template, "template"
	if template == "" {
		template, what = r.Role, "role (the template name when --template is not given)"
	}
	if err := pipeline.CheckName(what, template); err != nil {
		return usageErrorf("%v", err)
	}
	if p := c.String("prompt"); p != "" {
		if r.Prompt, err = readInput(c, "prompt", p, maxKeptInput); err != nil {
			return err
		}
	}
	return withPipeline(c, func(s *session, id string) error {
		seq, err := s.svc.StartDispatch(c.Context, id, r)
		if err != nil {
			return ruleError(err, s.explicitPipeline(id))
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"pipeline": id, "seq": seq})
		}
		fmt.Fprintln(s.out(), seq)
		return nil
	})
}

func dispatchFinish(c *cli.Context) error {
	seq, err := seqArg(c)
	if err != nil {
		return err
	}
	if err := requireFlags(c, "status"); err != nil {
		return err
	}
	r := pipeline.FinishRequest{Status: c.String("status"), Summary: oneLine(c.String("summary")), ToolCalls: optionalInt(c, "tool-calls")}
	if !pipeline.ValidDispatchStatus(r.Status) {
		return usageErrorf("unknown status %q (want %s)", r.Status, strings.Join(pipeline.DispatchStatuses, ", "))
	}
	if c.String("output") == "-" && c.String("usage") == "-" {
		return usageErrorf("--output and --usage cannot both read stdin")
	}
	if p := c.String("output"); p != "" {
		if r.Output, err = readInput(c, "output", p, maxKeptInput); err != nil {
			return err
		}
	}
	if r.Usage, err = usageOf(c); err != nil {
		return err
	}
	return withPipeline(c, func(s *session, id string) error {
		d, err := s.svc.FinishDispatch(c.Context, id, seq, r)
		if err != nil {
			return &refused{Err: err}
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"pipeline": id, "finish": d})
		}
		fmt.Fprintf(s.out(), "Dispatch %d: %s after %d s\n", seq, d.Status, d.DurationS)
		return nil
	})
}

func dispatchList(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	return withPipeline(c, func(s *session, id string) error {
		entries, err := s.svc.Manifest(c.Context, id)
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(entries)
		}
		for _, m := range entries {
			task, dur := "-", "-"
			if m.Task != nil {
				task = strconv.Itoa(*m.Task)
			}
			if m.DurationS != nil {
				dur = strconv.Itoa(*m.DurationS) + "s"
			}
			summary := ""
			if m.Summary != nil {
				summary = *m.Summary
			}
			fmt.Fprintf(s.out(), "%4d  phase %s  task %-3s %-18s %-10s %6s  %s\n", m.Seq, m.Phase, task, m.Role, m.Status, dur, summary)
		}
		return nil
	})
}

func dispatchShow(c *cli.Context) error {
	seq, err := seqArg(c)
	if err != nil {
		return err
	}
	if n := countTrue(c, "prompt", "output", "stderr"); n > 1 {
		return usageErrorf("--prompt, --output and --stderr cannot be used together")
	}
	return withPipeline(c, func(s *session, id string) error {
		entries, err := s.svc.Manifest(c.Context, id)
		if err != nil {
			return err
		}
		var m *pipeline.ManifestEntry
		for i := range entries {
			if entries[i].Seq == seq {
				m = &entries[i]
			}
		}
		if m == nil {
			return &refused{Err: fmt.Errorf("pipeline %s has no dispatch %d", id, seq)}
		}
		if c.Bool("stderr") {
			if m.Stderr == "" {
				return &refused{Err: fmt.Errorf("dispatch %d has no kept stderr: it is kept only of an agent that failed", seq)}
			}
			_, err := io.WriteString(s.out(), m.Stderr)
			return err
		}
		if c.Bool("prompt") || c.Bool("output") {
			path, what := m.Prompt, "prompt"
			if c.Bool("output") {
				path, what = m.Output, "output"
			}
			if path == "" {
				err := &refused{Err: fmt.Errorf("dispatch %d has no kept %s", seq, what)}
				if what == "output" && m.Stderr != "" {
					return withHints(err, fmt.Sprintf("its agent's stderr is kept: git crucible dispatch show %d --stderr", seq))
				}
				return err
			}
			b, err := s.svc.ReadKept(c.Context, id, path)
			if err != nil {
				return err
			}
			if what == "prompt" && m.PromptFile {
				// An imported dispatch file: the prompt is what follows its header.
				if f, err := interop.ParseDispatchFile(b); err == nil {
					b = f.Prompt
				}
			}
			_, err = s.out().Write(b)
			return err
		}
		if s.jsonOut() {
			return s.printJSON(m)
		}
		return writeJSON(s.out(), m, "") // as its manifest.jsonl line
	})
}

// countTrue is how many of the boolean flags names are set.
func countTrue(c *cli.Context, names ...string) int {
	n := 0
	for _, name := range names {
		if c.Bool(name) {
			n++
		}
	}
	return n
}

// usageFlags are dispatch finish's options that say what a client
// reported, besides --usage.
var usageFlags = []string{"client", "model", "input-tokens", "output-tokens", "cache-read-tokens", "cache-creation-tokens", "cost-usd"}

// usageOf is the usage dispatch finish records: --usage's object, the
// options over it; nil when none is given.
func usageOf(c *cli.Context) (*pipeline.Usage, error) {
	var u pipeline.Usage
	given := false
	if path := c.String("usage"); path != "" {
		b, err := readInput(c, "usage", path, maxKeptInput)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&u); err != nil {
			return nil, usageErrorf("--usage %s: not a usage object: %v", path, err)
		}
		if dec.More() {
			return nil, usageErrorf("--usage %s: more than one JSON value", path)
		}
		given = true
	}
	for _, name := range usageFlags {
		given = given || c.IsSet(name)
	}
	if !given {
		return nil, nil
	}
	if c.IsSet("client") {
		u.Client = c.String("client")
	}
	if c.IsSet("model") {
		u.Model = c.String("model")
	}
	for name, dst := range map[string]*int64{"input-tokens": &u.InputTokens, "output-tokens": &u.OutputTokens,
		"cache-read-tokens": &u.CacheReadTokens, "cache-creation-tokens": &u.CacheCreationTokens} {
		if c.IsSet(name) {
			*dst = c.Int64(name)
		}
	}
	if c.IsSet("cost-usd") {
		v, err := strconv.ParseFloat(strings.TrimPrefix(c.String("cost-usd"), "$"), 64)
		if err != nil {
			return nil, usageErrorf("--cost-usd %s: want an amount of US dollars, like 0.42", c.String("cost-usd"))
		}
		u.CostUSD = &v
	}
	if strings.TrimSpace(u.Client) == "" {
		return nil, withHints(usageErrorf("a usage needs the client that reported it"), "name it: --client claude (or codex, claude-code, ...)")
	}
	if err := u.Check(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	return &u, nil
}
