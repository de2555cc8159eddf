package main

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent: one-shot commands collect at oneShotGCPercent; serve,
// and any command when the user set $GOGC, keep what the runtime has.
func TestSetGCPercent(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	for _, tc := range []struct {
		gogc string
		args []string
		want int
	}{
		{"", nil, oneShotGCPercent},
		{"", []string{"--summarizer", "fallback", "in.json"}, oneShotGCPercent},
		{"", []string{"count", "in.json"}, oneShotGCPercent},
		{"", []string{"serve"}, 100},
		{"200", []string{"count"}, 100},
		{"off", nil, 100},
	} {
		debug.SetGCPercent(100)
		setGCPercent(tc.gogc, tc.args)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q %v: GC percent %d, want %d", tc.gogc, tc.args, got, tc.want)
		}
	}
}
