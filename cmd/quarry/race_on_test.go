//go:build race

package main

// raceOn: the race detector slows CPU-bound work (ingesting) ten times or
// more; tests that time it size their input down.
const raceOn = true
