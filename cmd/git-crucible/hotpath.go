package main

import (
	"context"
	"io"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
)

// hotPath runs `ledger check [--quiet|-q] [--json] [--pipeline ID] [<phase>]`
// — what hooks and scripts run on every commit — without building the
// command-line app, whose set-up costs as much as the check itself. Any
// other shape (help, a typo, a new option) is left to the app: handled is
// false, and the app gives the same answer, only slower.
func hotPath(args []string, stdout, stderr io.Writer) (code int, handled bool) {
	if code, handled := hotHook(args, stdout, stderr); handled {
		return code, true
	}
	if len(args) < 3 || args[1] != "ledger" || args[2] != "check" {
		return 0, false
	}
	var quiet, json bool
	var pipelineID, phaseArg string
	rest := args[3:]
	for i := 0; i < len(rest); i++ {
		switch tok := rest[i]; {
		case tok == "--quiet" || tok == "-q":
			quiet = true
		case tok == "--json":
			json = true
		case (tok == "--pipeline" || tok == "-p") && i+1 < len(rest) && pipelineID == "":
			i++
			pipelineID = rest[i]
		case strings.HasPrefix(tok, "--pipeline=") && pipelineID == "":
			pipelineID = strings.TrimPrefix(tok, "--pipeline=")
		case !strings.HasPrefix(tok, "-") && phaseArg == "":
			phaseArg = tok
		default:
			return 0, false
		}
	}
	var phase ledger.Phase
	if phaseArg != "" {
		p, err := ledger.ParsePhase(phaseArg)
		if err != nil {
			return 0, false // the app words usage errors
		}
		phase = p
	}
	ctx := context.Background()
	s, err := openSession(ctx, stdout, stderr, pipelineID, json)
	if err != nil {
		return report(stderr, err), true
	}
	defer s.close()
	return report(stderr, checkLedger(ctx, s, phase, quiet)), true
}

// hotHook runs the hooks git runs on every commit — `hook run pre-commit`,
// `commit-msg <file>` and `post-commit`, as the installed shims call them —
// without building the app. Anything else is the app's.
func hotHook(args []string, stdout, stderr io.Writer) (code int, handled bool) {
	if len(args) < 4 || args[1] != "hook" || args[2] != "run" {
		return 0, false
	}
	name, rest := args[3], args[4:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	switch {
	case (name == "pre-commit" || name == "post-commit") && len(rest) == 0,
		name == "commit-msg" && len(rest) == 1:
		return report(stderr, runHook(context.Background(), name, rest, nil, stdout, stderr)), true
	}
	return 0, false
}
