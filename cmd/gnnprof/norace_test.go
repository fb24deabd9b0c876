//go:build !race

package main

// raceEnabled tells tests that the race detector is on (see race_test.go).
const raceEnabled = false
