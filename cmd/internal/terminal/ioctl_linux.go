package terminal

import "syscall"

const ioctlGetTermios = syscall.TCGETS
