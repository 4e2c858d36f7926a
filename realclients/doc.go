// Package realclients holds the end-to-end tests that run the real Claude
// Code CLI (claude) and Codex CLI (codex), installed from the npm registry,
// against the fake model server of package internal/fakemodel: whole
// builds and task runs with every role played by a real client, a Claude
// Code session recorded by our hooks, and the README's commands as a user
// types them. They run the installed binaries, built once for the package,
// not a test binary: what a user runs. Without the clients they skip,
// naming the command that installs them; with CI=true they fail.
package realclients
