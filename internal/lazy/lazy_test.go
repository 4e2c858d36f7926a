package lazy

import (
	"errors"
	"regexp"
	"sync"
	"testing"
)

var word = Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^\w+$`) }}

func TestValue(t *testing.T) {
	calls := 0
	v := Value[int]{New: func() int { calls++; return 42 }}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := v.Get(); got != 42 {
				t.Errorf("Get() = %d, want 42", got)
			}
		}()
	}
	wg.Wait()
	if calls != 1 {
		t.Errorf("New called %d times, want 1", calls)
	}
	if !word.Get().MatchString("abc") || word.Get().MatchString("a b") {
		t.Error("word matches wrongly")
	}
}

// TestGetAllocs: after the first call, Get allocates nothing.
func TestGetAllocs(t *testing.T) {
	word.Get()
	if n := testing.AllocsPerRun(100, func() { word.Get() }); n != 0 {
		t.Errorf("Get allocates %v times per call, want 0", n)
	}
}

func TestValues(t *testing.T) {
	calls := 0
	v := Values[string]{New: func() (string, error) { calls++; return "x", errTest }}
	for range 3 {
		if s, err := v.Get(); s != "x" || err != errTest {
			t.Errorf("Get() = %q, %v", s, err)
		}
	}
	if calls != 1 {
		t.Errorf("New called %d times, want 1", calls)
	}
}

var errTest = errors.New("test")
