package main

import (
	"context"
	"io"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
)

// hotPath runs `ledger check [--quiet|-q] [--json] [--pipeline ID] [<phase>]`
// — what scripts run before every step — without building the command-line
// app, which saves about a tenth of the whole process (the git hooks run
// git-crucible-hook, which has no app to build). Any other shape (help, a
// typo, a new option) is left to the app: handled is false, and the app
// gives the same answer, only slower.
func hotPath(args []string, stdout, stderr io.Writer) (code int, handled bool) {
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
