package enforce

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-crucible/git-crucible/gitext"
)

// EnvEngineCommit carries an engine's commit token, in the environment of
// its own git commit only: the hooks let that commit through and leave
// its trailers and provenance to the engine, which writes them itself.
// The agents it runs never see it; the marker holds only its digest.
const EnvEngineCommit = "CRUCIBLE_ENGINE_COMMIT"

// EngineMarker is what an engine leaves in the git dir of the work tree it
// dispatches in while it runs: who it is, and its commit token's digest.
type EngineMarker struct {
	Owner    string `json:"owner"`   // gitext.Owner's record of its process
	Command  string `json:"command"` // build, replay
	Pipeline string `json:"pipeline"`
	Digest   string `json:"token_sha256"`
}

// EngineMarkerPath is the marker's file in gitDir, a worktree's own git dir.
func EngineMarkerPath(gitDir string) string { return filepath.Join(gitDir, "crucible", "engine.json") }

// TokenDigest is what an engine's marker records of its commit token: the
// token itself stays in the engine's process and its commits' environment.
func TokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ReadEngineMarker is the marker in gitDir of an engine that runs: nil
// when there is none, or its engine is gone (killed: it is stale).
func ReadEngineMarker(gitDir string) (*EngineMarker, error) {
	m, err := readMarker(gitDir)
	if m != nil {
		if _, gone := gitext.OwnerGone(m.Owner); gone {
			return nil, nil
		}
	}
	return m, err
}

// readMarker is the marker in gitDir, whether its engine runs or not.
func readMarker(gitDir string) (*EngineMarker, error) {
	b, err := os.ReadFile(EngineMarkerPath(gitDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m EngineMarker
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", EngineMarkerPath(gitDir), err)
	}
	return &m, nil
}

// Admits reports whether token is the engine's own.
func (m *EngineMarker) Admits(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(TokenDigest(token)), []byte(m.Digest)) == 1
}

// Name is the engine as a person knows it: its command and pid.
func (m *EngineMarker) Name() string {
	pid, _ := gitext.OwnerGone(m.Owner)
	return fmt.Sprintf("git crucible %s (pid %d)", m.Command, pid)
}

// EngineCommitting reports whether the engine of the work tree of gitDir
// makes the commit under way: its token is in this process's
// environment. Then the hooks leave its trailers and note to it, also
// when the engine was killed meanwhile: it notes the commit as it resumes.
func EngineCommitting(gitDir string) bool {
	token := os.Getenv(EnvEngineCommit)
	if token == "" {
		return false
	}
	m, err := readMarker(gitDir)
	return err == nil && m != nil && m.Admits(token)
}
