package fastgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Identity is a gate's identity in a cache of its results: the command
// and the toolchain fingerprint (Fingerprint), hashed.
func Identity(command, fingerprint string) string {
	sum := sha256.Sum256([]byte("crucible-gate 1\x00" + command + "\x00" + fingerprint))
	return hex.EncodeToString(sum[:16])
}

// Fingerprint runs toolchain (say, "go version") in dir and returns a hash
// of its output: the part of the cache key that changes when the toolchain
// does. No toolchain command is the fingerprint "".
func Fingerprint(ctx context.Context, dir, toolchain string) (string, error) {
	if strings.TrimSpace(toolchain) == "" {
		return "", nil
	}
	code, out, err := Run(ctx, dir, toolchain)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("toolchain fingerprint %q failed (exit %d): %s", toolchain, code, strings.TrimSpace(string(out)))
	}
	sum := sha256.Sum256(out)
	return hex.EncodeToString(sum[:]), nil
}
