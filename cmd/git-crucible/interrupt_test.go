package main

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestInterrupted: a SIGTERM ends interruptible's context as an
// interruption; its parent ending it, or nothing, is not one.
func TestInterrupted(t *testing.T) {
	parent, cancel := context.WithCancel(t.Context())
	ctx, stop := interruptible(parent)
	if interrupted(ctx, parent) {
		t.Error("interrupted before anything ended it")
	}
	cancel()
	<-ctx.Done()
	if interrupted(ctx, parent) {
		t.Error("its parent's end taken for an interruption")
	}
	stop()

	ctx, stop = interruptible(t.Context())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("SIGTERM did not end the context")
	}
	if !interrupted(ctx, t.Context()) {
		t.Error("SIGTERM not taken for an interruption")
	}
}
