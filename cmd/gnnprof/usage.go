package main

import "strings"

// isArgError recognizes cobra's own usage errors (unknown command, wrong argument count),
// which cobra returns as plain errors.
func isArgError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand flag", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
