package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
)

var (
	jsonFlag     = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON on stdout"}
	pipelineFlag = &cli.StringFlag{Name: "pipeline", Aliases: []string{"p"}, Usage: "work on pipeline `ID` (a unique prefix will do) instead of the one active on the current branch"}
)

// commonFlags are accepted by every command.
func commonFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{jsonFlag, pipelineFlag}, extra...)
}

// session is an opened repository and the options every command shares.
type session struct {
	svc      *pipeline.Service
	stdout   io.Writer
	stderr   io.Writer
	pipeline string // --pipeline, "" for the branch's active one
	json     bool   // --json
	markdown bool   // status --markdown
}

// open opens the session of a command, which may read, push or rewrite
// commits' notes: the provenance notes the post-commit hook queued are
// written first (the hot path's ledger check reads none).
func open(c *cli.Context) (*session, error) {
	s, err := openSession(c.Context, c.App.Writer, c.App.ErrWriter, c.String("pipeline"), c.Bool("json"))
	if err == nil {
		flushNotes(c.Context, s.svc.Repo, s.err())
	}
	return s, err
}

// flushNotes writes the provenance notes the post-commit hook queued.
func flushNotes(ctx context.Context, repo *gitext.Repo, stderr io.Writer) {
	if _, err := notes.Flush(ctx, repo); err != nil {
		cliexit.Warn(stderr, "queued provenance notes were not written: %v", err)
	}
}

// A malformed pipeline id on the command line is a usage error (129); a
// well-formed one that names no pipeline is fatal (128), as git treats a bad
// option and a missing object.
func openSession(ctx context.Context, stdout, stderr io.Writer, pipelineID string, json bool) (*session, error) {
	if pipelineID != "" {
		if err := refs.ValidateID(pipelineID); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return nil, err
	}
	return &session{svc: pipeline.Open(repo), stdout: stdout, stderr: stderr, pipeline: pipelineID, json: json}, nil
}

func (s *session) close() { s.svc.Close() }

func (s *session) out() io.Writer { return s.stdout }
func (s *session) err() io.Writer { return s.stderr }

// pipelineID resolves --pipeline or the branch's active pipeline.
func (s *session) pipelineID(ctx context.Context) (string, error) {
	id, err := s.svc.Resolve(ctx, s.pipeline)
	var none *pipeline.NoActiveError
	switch {
	case errors.As(err, &none):
		return "", withHints(err, `start one with: git crucible start "<goal>"`,
			"or name one with --pipeline <id> (see: git crucible list)")
	case errors.Is(err, refs.ErrNoPipeline):
		if archived, _ := s.svc.Store.IsArchived(s.pipeline); archived {
			return "", withHints(fmt.Errorf("pipeline %s is archived (%s)", s.pipeline, refs.ArchiveRef(s.pipeline)), "see: git crucible list --archived")
		}
		return "", withHints(err, "see: git crucible list")
	}
	return id, err
}

// load resolves and reads the pipeline the command works on.
func (s *session) load(ctx context.Context) (*pipeline.State, error) {
	id, err := s.pipelineID(ctx)
	if err != nil {
		return nil, err
	}
	st, _, err := s.svc.Load(ctx, id)
	return st, err
}

func (s *session) jsonOut() bool { return s.json }

func (s *session) printJSON(v any) error { return writeJSON(s.out(), v, "  ") }

// writeJSON prints v on one line (indent "") or indented, with '<', '>'
// and '&' as themselves: "a.md -> b.md" stays as crucible writes it.
func writeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

// notices prints lines that carry their own words ("WARNING: ...") on stderr.
func (s *session) notices(lines []string) {
	for _, l := range lines {
		fmt.Fprintln(s.err(), l)
	}
}

// hint, warn and error print one "hint: ", "warning: " or "error: " line on
// stderr, in cliexit's words like every error the command returns.
func (s *session) hint(format string, args ...any)  { cliexit.Hint(s.err(), format, args...) }
func (s *session) warn(format string, args ...any)  { cliexit.Warn(s.err(), format, args...) }
func (s *session) error(format string, args ...any) { cliexit.Error(s.err(), format, args...) }

// phaseArg parses the n-th positional argument as a phase.
func phaseArg(c *cli.Context, n int) (ledger.Phase, error) {
	if c.NArg() <= n {
		return 0, usageErrorf("missing <phase> (1-4 or design, plan, execute, completion)")
	}
	p, err := ledger.ParsePhase(c.Args().Get(n))
	if err != nil {
		return 0, usageErrorf("%v", err)
	}
	return p, nil
}

// wantArgs refuses extra positional arguments.
func wantArgs(c *cli.Context, max int) error {
	if c.NArg() > max {
		return usageErrorf("unexpected argument %q", c.Args().Get(max))
	}
	return nil
}

// requireFlags refuses a command line that lacks one of the named options.
func requireFlags(c *cli.Context, names ...string) error {
	for _, n := range names {
		if strings.TrimSpace(c.String(n)) == "" {
			return withHints(usageErrorf("option '--%s' is required", n), "see: "+helpHint(c))
		}
	}
	return nil
}

// ruleError turns a ledger refusal into a refused error with the commands
// that fix it; command is the CLI line of one ledger action.
var (
	ruleError = cliexit.Rule
	command   = cliexit.Command
)

// explicitPipeline is the id to name in hints: only when the user named one.
func (s *session) explicitPipeline(id string) string {
	if s.pipeline == "" {
		return ""
	}
	return id
}

func phaseLabel(p ledger.Phase) string { return fmt.Sprintf("Phase %d (%s)", p, p.Name()) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// withPipeline runs body on the pipeline the command names (--pipeline, or
// the one active on the current branch).
func withPipeline(c *cli.Context, body func(s *session, id string) error) error {
	return withRepo(c, func(s *session) error {
		id, err := s.pipelineID(c.Context)
		if err != nil {
			return err
		}
		return body(s, id)
	})
}

// withRepo runs body in the repository the command was started in.
func withRepo(c *cli.Context, body func(*session) error) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.close()
	return body(s)
}
