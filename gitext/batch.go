package gitext

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// batchAhead is how many requests ReadEach sends before reading their
// answers: one round trip with cat-file per batchAhead objects instead of
// one per object. The requests of one batch (under 100 bytes each) fit in
// a pipe's buffer, so writing them never waits for cat-file to be read.
const batchAhead = 64

// ReadEach reads the objects revs name, in order, sending requests ahead
// of the answers, and calls fn with each one's type and content, or with an
// error wrapping ErrMissing, until fn returns false or an error.
func (o *ObjectReader) ReadEach(revs []string, fn func(i int, kind string, data []byte, err error) (bool, error)) error {
	for _, rev := range revs {
		if strings.ContainsAny(rev, "\n") {
			return fmt.Errorf("invalid object name %q", rev)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for start := 0; start < len(revs); start += batchAhead {
		chunk := revs[start:min(start+batchAhead, len(revs))]
		if _, err := io.WriteString(o.stdin, strings.Join(chunk, "\n")+"\n"); err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		more := true
		var stop error
		for i, rev := range chunk {
			kind, data, err := o.answer(rev)
			if err != nil && !errors.Is(err, ErrMissing) {
				return err // out of step with cat-file: nothing more can be read
			}
			if more && stop == nil {
				more, stop = fn(start+i, kind, data, err)
			}
			// Once fn is done, the chunk's other answers are read and dropped.
		}
		if !more || stop != nil {
			return stop
		}
	}
	return nil
}
