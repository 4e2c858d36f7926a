package main

import (
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Caps on the files options name, by what they hold: what is kept in the
// chain is capped as the engine caps an agent's output.
const (
	maxKeptInput = 16 << 20 // a prompt, an output, a handoff, a usage
	maxSmallFile = 1 << 20  // a verdict marker, a design document
)

// readFlagFile reads the file an option names (what is the option and its
// value, as the user gave them): a regular file of at most limit bytes,
// read once. A device, a FIFO, a socket or a directory is refused before
// anything is read, as an oversize file is: a usage error.
func readFlagFile(what, path string, limit int64) ([]byte, error) {
	b, err := fsutil.ReadFile(path, limit)
	return b, flagFileError(what, err)
}

// flagFileError is err as a usage error naming the option when the file
// is of the wrong kind or size; other errors as they are.
func flagFileError(what string, err error) error {
	var other *fsutil.NotRegularError
	var big *fsutil.TooLargeError
	switch {
	case errors.As(err, &other):
		return usageErrorf("%s: not a regular file (%s)", what, other.Kind())
	case errors.As(err, &big):
		return usageErrorf("%s: over the %d-byte limit", what, big.Limit)
	}
	return err
}

// readInput reads the file option flag names, or stdin for "-", both at
// most limit bytes.
func readInput(c *cli.Context, flag, path string, limit int64) ([]byte, error) {
	what := "--" + flag + " " + path
	if path != "-" {
		return readFlagFile(what, path, limit)
	}
	b, err := io.ReadAll(io.LimitReader(c.App.Reader, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, usageErrorf("%s: standard input is over the %d-byte limit", what, limit)
	}
	return b, err
}
