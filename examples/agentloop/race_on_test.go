//go:build race

package main

// raceEnabled makes the kill tests build the example with the race
// detector too, from the packages already built for this test.
const raceEnabled = true
