// A command is a short process: with updatemaxprocs=0 the runtime starts
// no goroutine to follow later changes of the CPU limit (GOMAXPROCS is
// still taken from it at start), which measured 1-2% of a ledger check or
// a hook.
//
//go:debug updatemaxprocs=0

// Command git-crucible-hook is git-crucible's part of the git hooks, what
// the hooks that 'git crucible hooks install' writes run on every commit:
// `git-crucible-hook <hook> [<arg>...]`. It is a binary of its own so that
// a hook starts only what hooks need (no command-line framework), and
// stays as cheap as git's own work around it.
package main

import (
	"os"

	"github.com/git-crucible/git-crucible/cmd/internal/hookcli"
)

func main() {
	os.Exit(hookcli.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
