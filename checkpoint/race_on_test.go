//go:build race

package checkpoint_test

// raceEnabled slows everything down several times: the crash test writes
// smaller checkpoints and lets each writer run longer before the kill.
const raceEnabled = true
