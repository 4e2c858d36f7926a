//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import "syscall"

const ioctlGetTermios = syscall.TIOCGETA
