//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// Package terminal tells whether a file is a terminal, as isatty(3) does:
// by asking for its terminal attributes.
package terminal

import (
	"os"
	"syscall"
	"unsafe"
)

// Is reports whether f is a terminal.
func Is(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), ioctlGetTermios, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
