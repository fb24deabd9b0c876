//go:build unix

package main

import "syscall"

// ownProcessGroup puts a child process in a process group of its own, so that a terminal's
// Ctrl-C reaches only this process, which passes it on.
func ownProcessGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
