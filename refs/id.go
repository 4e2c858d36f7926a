// Package refs is the pipeline store: one commit chain per pipeline under
// refs/crucible/pipelines/<id>, appended by compare-and-swap, with the
// materialised state in every commit's tree and an index of the pipeline
// active on each branch. It knows the layout, not what events mean.
package refs

import (
	"fmt"
	"math/rand/v2"

	"github.com/git-crucible/git-crucible/gitext"
	"time"
)

const (
	// PipelinePrefix holds one ref per pipeline.
	PipelinePrefix = "refs/crucible/pipelines/"
	// ActivePrefix holds a symbolic ref per branch naming its active
	// pipeline, as refs/remotes/<remote>/HEAD names a remote's default branch.
	ActivePrefix = "refs/crucible/active/"
)

// NewID returns a crucible-style id, build-YYYYMMDD-HHMMSS, with a random
// suffix so that two machines starting at the same second never collide.
func NewID(t time.Time) (string, error) {
	// Uniqueness, not secrecy, is needed: math/rand/v2 is seeded by the OS
	// per process, and crypto/rand's initialisation would cost every hook.
	return fmt.Sprintf("%s%06x", t.UTC().Format("build-20060102-150405-"), rand.Uint32()&0xffffff), nil
}

// ValidateID accepts ids that are safe as one ref name component: letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 100
// characters, and a ref name by git's rules (no "..", not ending in ".lock"
// or '.').
func ValidateID(id string) error {
	bad := func(why string) error { return fmt.Errorf("invalid pipeline id %q: %s", id, why) }
	switch {
	case id == "":
		return bad("empty")
	case len(id) > 100:
		return bad("longer than 100 characters")
	case !isAlnum(id[0]):
		return bad("must start with a letter or digit")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return bad(fmt.Sprintf("character %q is not allowed", c))
		}
	}
	if err := gitext.CheckRefName(PipelineRef(id)); err != nil {
		return bad(`not a ref name git accepts (it contains "..", or ends in ".lock" or ".")`)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// PipelineRef is the ref holding pipeline id's chain.
func PipelineRef(id string) string { return PipelinePrefix + id }

// ActiveRef is the symbolic ref naming branch's active pipeline.
func ActiveRef(branch string) string { return ActivePrefix + branch }
