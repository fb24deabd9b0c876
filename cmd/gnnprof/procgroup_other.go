//go:build !unix

package main

import "syscall"

// ownProcessGroup is nil where process groups are not set this way: the child shares this one's.
func ownProcessGroup() *syscall.SysProcAttr { return nil }
