package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
)

// NoReportSummary is the finish of an agent that exited 0 and wrote no
// report where its dispatch requires one.
const NoReportSummary = "it wrote no report: its output is kept"

// checked is ex once the report the agent left is checked against the
// format its dispatch requires (prompt.ReportTask, ReportFindings or
// ReportCritique; "" when none is): an agent that exited 0 but wrote
// none, or one that does not parse, or says it failed, has failed, as its
// finish records, so that the manifest, metrics and replay see it so.
//
// A failed agent's finish also says what its client refused it (claude's
// permission denials) and keeps the tail of its stderr.
func checked(ex exitRecord, format string, res agent.Result) exitRecord {
	if ex.Status != "completed" || format == "" {
		return ex
	}
	rep := res.Report
	fail := func(kind agent.FailureKind, summary string) exitRecord {
		ex.Status, ex.Summary, ex.Failure = "failed", summary, string(kind)
		ex.Stderr = res.Stderr.Last(maxStderrKept)
		return ex
	}
	if rep == nil {
		if refused := agent.RefusedText(res.Kind, res.Denials); refused != "" {
			return fail(agent.NoReport, "it wrote no report ("+refused+"): its output is kept")
		}
		return fail(agent.NoReport, NoReportSummary)
	}
	switch format {
	case prompt.ReportTask:
		t, err := report.ParseTask(rep)
		switch {
		case err != nil:
			return fail(agent.BadReport, err.Error())
		case t.Status == report.Failed:
			return fail(agent.Reported, "it reports failure: "+t.Error)
		}
	case prompt.ReportFindings:
		if _, err := report.ParseFindings(rep); err != nil {
			return fail(agent.BadReport, err.Error())
		}
	case prompt.ReportCritique:
		if _, err := report.ParseCritique(rep); err != nil {
			return fail(agent.BadReport, err.Error())
		}
	}
	return ex
}

// wroteReport reports whether the output a finished dispatch keeps is its
// report, not the stdout of an agent that wrote none.
func wroteReport(r pipeline.Record) bool {
	return r.Failure != string(agent.NoReport) && r.Summary != noReportKept
}

// noReportKept is the summary of an agent that wrote no report where none
// is required: its stdout is kept as its output.
const noReportKept = "no report: its output is kept"

// The report format a dispatch requires is kept in its run directory, for
// a successor that adopts what its agent left to check it too.
func writeFormat(dir, format string) error {
	if format == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, formatFile), []byte(format), 0o644)
}

func readFormat(dir string) (string, error) {
	b, err := readKept(dir, formatFile, maxRecord)
	if err != nil {
		return "", fmt.Errorf("%s: %w", formatFile, err)
	}
	return string(b), nil
}
