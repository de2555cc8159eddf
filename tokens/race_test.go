//go:build race

package tokens

// raceEnabled shrinks the bounded samples of the slow differential tests
// when the race detector (which CI runs) slows everything tenfold.
const raceEnabled = true
