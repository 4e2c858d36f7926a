// A command is a short process: with updatemaxprocs=0 the runtime starts
// no goroutine to follow later changes of the CPU limit (GOMAXPROCS is
// still taken from it at start), which measured 1-2% of a ledger check or
// a hook.
//
//go:debug updatemaxprocs=0

// Command git-crucible keeps an agent pipeline's state — gate ledger,
// events, verdicts — in the repository, as git objects. Run it as
// `git crucible <command>`.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
