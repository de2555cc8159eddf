package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Pause points are where the loop can be watched (--step-delay) or killed
// (--crash-at), to see for yourself that a run killed anywhere resumes
// without repeating a side effect:
//
//	start, resume    the session's first checkpoint, or the one claiming it on resume
//	compaction       the compacted transcript is saved
//	reply            the model's reply is saved, with a pending step per call
//	running          a call and its idempotency key are saved, before it runs
//	effect           a service has acted (deploy, send_email) and not yet answered:
//	                 the effect is real, and no checkpoint knows of it
//	result           the call's result is saved
//	failed, final    a call failed and the run stops; the session is completed
var pausePoints = []string{"start", "resume", "compaction", "reply", "running", "effect", "result", "failed", "final"}

// pauses runs the pause points. It is safe for concurrent use: the effect
// point is reached on the service's HTTP goroutine.
type pauses struct {
	delay time.Duration
	crash *crashSpec
	out   io.Writer

	mu   sync.Mutex
	seen int
}

// crashSpec is a --crash-at value: POINT[:TOOL][@N] names the Nth time
// (default the first) this process reaches POINT, for TOOL if given. POINT
// "*" is any point.
type crashSpec struct {
	point, tool string
	n           int
}

func parseCrashSpec(s string) (*crashSpec, error) {
	if s == "" {
		return nil, nil
	}
	c := &crashSpec{n: 1}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		n, err := strconv.Atoi(s[at+1:])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--crash-at %q: want POINT[:TOOL][@N] with N ≥ 1", s)
		}
		c.n, s = n, s[:at]
	}
	c.point, c.tool, _ = strings.Cut(s, ":")
	if c.point != "*" && !slices.Contains(pausePoints, c.point) {
		return nil, fmt.Errorf("--crash-at: unknown point %q; points are * and %s", c.point, strings.Join(pausePoints, ", "))
	}
	return c, nil
}

// at is called when the loop reaches a point: it kills the process if
// --crash-at names this point, and waits --step-delay otherwise.
func (p *pauses) at(ctx context.Context, point, tool string) error {
	p.mu.Lock()
	crash := false
	if c := p.crash; c != nil && (c.point == "*" || c.point == point) && (c.tool == "" || c.tool == tool) {
		p.seen++
		crash = p.seen == c.n
	}
	p.mu.Unlock()
	if crash {
		fmt.Fprintf(p.out, "crash: killing the process at %s %s\n", point, tool)
		killSelf()
	}
	if p.delay <= 0 {
		return nil
	}
	t := time.NewTimer(p.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// killSelf ends the process as abruptly as `kill -9` would: no deferred
// calls, no flushing, no saving.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill() // if it fails, Exit below still ends the process
		time.Sleep(5 * time.Second)
	}
	os.Exit(137)
}
