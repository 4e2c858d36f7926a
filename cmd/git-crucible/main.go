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
