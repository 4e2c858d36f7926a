package main

//go:generate go test -run ^TestManPages$ -update

// manPageName is the page that documents the command at path (names of
// a command and its subcommands): the command's page, or git-crucible's.
// The pages are rendered by the tests (manpages_gen_test.go), so the
// renderer is not linked into the binary.
func manPageName(path []string) string {
	if len(path) == 0 {
		return "git-crucible"
	}
	return "git-crucible-" + path[0]
}
