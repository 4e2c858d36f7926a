package gitext

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestReadEach: answers come in the order asked, over several batches, a
// missing object among them; stopping in the middle of a batch leaves the
// reader in step for the next read.
func TestReadEach(t *testing.T) {
	r, _ := openRepo(t)
	var revs, want []string
	for i := range 150 {
		content := fmt.Sprintf("blob %d\n", i)
		oid, err := r.WriteObject("blob", []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		revs, want = append(revs, oid), append(want, content)
	}
	missing := r.HashObject("blob", []byte("never written"))
	revs[70], want[70] = missing, ""
	o, err := r.NewObjectReader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	n := 0
	err = o.ReadEach(revs, func(i int, kind string, data []byte, err error) (bool, error) {
		switch {
		case i != n:
			t.Fatalf("answer %d came as %d", i, n)
		case i == 70 && !errors.Is(err, ErrMissing):
			t.Fatalf("missing object: %v", err)
		case i != 70 && (err != nil || kind != "blob" || string(data) != want[i]):
			t.Fatalf("object %d: %s %q %v", i, kind, data, err)
		}
		n++
		return true, nil
	})
	if err != nil || n != len(revs) {
		t.Fatalf("%d answers, %v", n, err)
	}
	stop := errors.New("stop")
	for _, end := range []struct {
		more bool
		err  error
	}{{false, nil}, {true, stop}} {
		n = 0
		err = o.ReadEach(revs, func(int, string, []byte, error) (bool, error) {
			if n++; n == 10 {
				return end.more, end.err
			}
			return true, nil
		})
		if n != 10 || err != end.err {
			t.Fatalf("stopped after %d, %v", n, err)
		}
		if kind, data, err := o.Read(revs[3]); err != nil || kind != "blob" || string(data) != want[3] {
			t.Fatalf("read after a stop: %s %q %v", kind, data, err)
		}
	}
}
