//go:build race

package main

// raceEnabled tells tests that the race detector is on: it makes compute several times slower,
// which moves the time shares that findings are judged by.
const raceEnabled = true
