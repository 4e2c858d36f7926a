package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// interruptible is parent, ended by Ctrl-C and SIGTERM too: an engine given
// it ends its agents' and gates' process groups and leaves what it ran to go
// on with, instead of the process dying under them.
func interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// interrupted says whether a signal, not parent, ended ctx (made by
// interruptible(parent)). Ask before ctx's stop, which ends it too.
func interrupted(ctx, parent context.Context) bool {
	return ctx.Err() != nil && parent.Err() == nil
}
