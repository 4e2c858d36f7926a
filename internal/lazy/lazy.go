// Package lazy holds package-level values computed on first use instead of
// at init: a regular expression compiled, a map built, a template parsed.
// Every command of the binaries, and every hook of every commit, would pay
// for them at start-up otherwise (internal/layout's TestInitAllocs).
//
// A Value written as a composite literal, var re = lazy.Value[T]{New: f},
// is laid out by the linker: it costs nothing at init, where
// sync.OnceValue(f) allocates its closure.
package lazy

import "sync"

// Value is New's result, computed once, on the first Get. Its zero value
// (with New set) is ready; it must not be copied after first use.
type Value[T any] struct {
	New  func() T
	once sync.Once
	v    T
}

// Get returns New's result, calling New on the first call only; concurrent
// calls wait for it.
func (l *Value[T]) Get() T {
	l.once.Do(l.init)
	return l.v
}

func (l *Value[T]) init() { l.v = l.New() }

// Values is Value for a function that may fail: New's result and error,
// computed once, on the first Get.
type Values[T any] struct {
	New  func() (T, error)
	once sync.Once
	v    T
	err  error
}

// Get returns New's result and error, calling New on the first call only;
// concurrent calls wait for it.
func (l *Values[T]) Get() (T, error) {
	l.once.Do(l.init)
	return l.v, l.err
}

func (l *Values[T]) init() { l.v, l.err = l.New() }
