package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
)

// TestKillAndResume runs the example as a program, kills it with SIGKILL
// mid-run, runs it again on the same work dir and store, and checks that
// the resumed session ends exactly as an uninterrupted one: the same final
// answer, files, transcript and steps, and every side effect performed
// exactly once.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the example many times")
	}
	bin := buildExample(t)
	refDir := t.TempDir()
	want := runToEnd(t, bin, refDir)
	if want.compactions < 2 {
		t.Fatalf("the reference run compacted %d times; the example should compact at least twice", want.compactions)
	}
	checkReceiptsKept(t, refDir, want.final)

	// Killed from outside, when the output shows the run has reached a
	// point. --step-delay holds the process at each pause point long
	// enough for the kill to land there.
	sigkills := []struct {
		name  string
		at    *regexp.Regexp
		check func(t *testing.T, resumed string)
	}{
		{
			name: "after the staging deploy, before its checkpoint",
			at:   regexp.MustCompile(`^\s+\[deploy service\] deployed`),
			check: func(t *testing.T, resumed string) {
				if !strings.Contains(resumed, "key seen before") {
					t.Logf("the kill landed after the deploy's checkpoint; resumed output:\n%s", resumed)
				}
			},
		},
		{
			name: "production deploy asked for, reply not saved",
			at:   regexp.MustCompile(`model → deploy .*production`),
		},
		{
			name: "with the email about to be sent",
			at:   regexp.MustCompile(`checkpoint \d+ \(running send_email\)`),
		},
	}
	// Killed by the example itself (--crash-at), exactly at a point. Each
	// case is a chain of runs on one session, each killed at its point and
	// resumed by the next; resumed is what the next run must print.
	type crash struct{ at, resumed string }
	crashes := []struct {
		name  string
		runs  []crash
		check func(t *testing.T, out string)
	}{
		{
			name: "side effects performed, no checkpoint knows",
			runs: []crash{
				// The staging deploy happened; its checkpoint was not saved.
				{at: "effect:deploy", resumed: "[deploy service] key seen before: answering with receipt dep-"},
				// Production's key is saved; the deploy is not called yet.
				// (The first deploy this run starts is staging's, again.)
				{at: "running:deploy@2", resumed: "interrupted, to finish: call_"},
				{at: "effect:send_email", resumed: "[send_email service] key seen before: answering with receipt msg-"},
			},
		},
		{
			name: "killed while resuming",
			runs: []crash{
				{at: "effect:deploy"},
				{at: "resume", resumed: "[deploy service] key seen before"},
			},
		},
		{
			name: "results saved",
			runs: []crash{
				// The staging deploy's result is checkpointed: it is never
				// asked for again.
				{at: "result:deploy"},
				// Between the two calls of one turn: CHANGELOG written,
				// email not sent.
				{at: "result:write_file", resumed: "[send_email service] emailed"},
				// Completed; the answer was never printed.
				{at: "final", resumed: "completed at checkpoint"},
			},
			check: func(t *testing.T, out string) {
				if strings.Count(out, "deployed inventory v1.4.1 to staging (receipt") != 1 || strings.Contains(out, "key seen before") {
					t.Errorf("a deploy reached the service again after its result was checkpointed:\n%s", out)
				}
			},
		},
		{
			name: "compaction saved",
			runs: []crash{{at: "compaction@2", resumed: "resuming from checkpoint"}},
		},
	}

	t.Run("sigkill", func(t *testing.T) {
		for _, tc := range sigkills {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				out := killWhen(t, bin, dir, tc.at, "--step-delay", "30ms")
				receipts := readReceipts(t, dir)
				if len(receipts) == 0 || strings.Contains(out, "final:") {
					t.Fatalf("killed with %d side effects done (want ≥ 1, and the run unfinished); output:\n%s", len(receipts), out)
				}
				got := runToEnd(t, bin, dir)
				if tc.check != nil {
					tc.check(t, got.stdout)
				}
				compareRuns(t, got, want)
			})
		}
	})
	t.Run("crash-at", func(t *testing.T) {
		for _, tc := range crashes {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				var all strings.Builder
				prev := ""
				for _, c := range tc.runs {
					out, err := runExample(bin, dir, "--crash-at", c.at)
					all.WriteString(out)
					if !killed(err) || !strings.Contains(out, "crash: killing the process at") {
						t.Fatalf("--crash-at %s: want the process killed, got %v; output:\n%s", c.at, err, out)
					}
					if prev != "" {
						mustContain(t, out, prev)
					}
					prev = c.resumed
				}
				got := runToEnd(t, bin, dir)
				all.WriteString(got.stdout)
				if prev != "" {
					mustContain(t, got.stdout, prev)
				}
				if tc.check != nil {
					tc.check(t, all.String())
				}
				compareRuns(t, got, want)
			})
		}
	})
	// The same with the session in Redis, as workers on many machines
	// would keep it.
	t.Run("redis store", func(t *testing.T) {
		t.Parallel()
		addr := startRedis(t)
		dir := t.TempDir()
		spec := "redis://" + addr + "/0"
		for _, at := range []string{"effect:deploy", "effect:send_email"} {
			if out, err := runExample(bin, dir, "--store", spec, "--crash-at", at); !killed(err) {
				t.Fatalf("--crash-at %s: want the process killed, got %v; output:\n%s", at, err, out)
			}
		}
		out, err := runExample(bin, dir, "--store", spec)
		if err != nil {
			t.Fatalf("%v; output:\n%s", err, out)
		}
		mustContain(t, out, "[send_email service] key seen before")
		compareRuns(t, resultIn(t, dir, spec, out), want)
	})

	// Every run dies at its fourth pause point, whichever it is, until one
	// gets to the end: the session is killed everywhere, one step at a
	// time, and resumed each time from what the last run saved.
	t.Run("killed at every step", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		runs := 0
		for ; runs < 100; runs++ {
			out, err := runExample(bin, dir, "--crash-at", "*@4")
			if err == nil {
				break
			}
			if !killed(err) {
				t.Fatalf("run %d: %v; output:\n%s", runs+1, err, out)
			}
		}
		if runs < 8 {
			t.Fatalf("only %d runs were killed before one finished", runs)
		}
		t.Logf("%d runs killed before one finished", runs)
		compareRuns(t, result(t, dir, ""), want)
	})
}

// runResult is what a finished run leaves behind.
type runResult struct {
	stdout      string
	final       string            // the final answer, as printed
	files       map[string]string // the work dir's files
	transcript  string            // the final checkpoint's transcript hash
	steps       []string          // each step's id, tool, status and output
	sideEffects []string          // the side effects' keys, in order
	compactions int
}

// runToEnd runs the example on dir until it exits, which must be with
// success, and returns what it left.
func runToEnd(t *testing.T, bin, dir string, args ...string) runResult {
	t.Helper()
	out, err := runExample(bin, dir, args...)
	if err != nil {
		t.Fatalf("agentloop %s: %v; output:\n%s", strings.Join(args, " "), err, out)
	}
	return result(t, dir, out)
}

func runExample(bin, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--dir", dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// killWhen starts the example and kills it with SIGKILL as soon as a line
// matching at appears on its output, and returns the output so far.
func killWhen(t *testing.T, bin, dir string, at *regexp.Regexp, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--dir", dir}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	matched := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		out.WriteString(sc.Text() + "\n")
		if matched = at.MatchString(sc.Text()); matched {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if !matched {
		t.Fatalf("the run ended (%v) before a line matching %q; output:\n%s%s", err, at, out.String(), stderr.String())
	}
	if !killed(err) {
		t.Fatalf("want the run killed, got %v", err)
	}
	return out.String()
}

// killed reports whether a run ended by SIGKILL.
func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// result reads what a finished session left in dir and its store, and
// checks what must hold of any finished session: a verified checkpoint
// chain, each side effect performed once, and no secret in the store.
func result(t *testing.T, dir, stdout string) runResult {
	t.Helper()
	return resultIn(t, dir, filepath.Join(dir, ".agentloop"), stdout)
}

// resultIn is result for a session kept in the store spec names.
func resultIn(t *testing.T, dir, spec, stdout string) runResult {
	t.Helper()
	ctx := context.Background()
	store, err := checkpoint.Open(ctx, spec, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c, err := store.Latest(ctx, "agentloop")
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != checkpoint.StatusCompleted {
		t.Fatalf("the session is %s, want completed", c.Status)
	}
	if checked, problems, err := checkpoint.Verify(ctx, store); err != nil || len(problems) > 0 || checked == 0 {
		t.Fatalf("verify the store: %d checked, problems %v, err %v", checked, problems, err)
	}
	r := runResult{
		stdout:      stdout,
		final:       lastAnswer(c.Transcript),
		files:       map[string]string{},
		transcript:  c.Transcript.Hash(),
		compactions: len(c.Compactions),
	}
	if stdout != "" && !strings.Contains(stdout, "final: "+r.final+"\n") {
		t.Errorf("the run did not print the final answer %q", r.final)
	}
	for _, s := range c.Steps {
		r.steps = append(r.steps, fmt.Sprintf("%s %s %s %q", s.ID, s.Tool, s.Status, s.Output))
	}
	for _, e := range c.SideEffects {
		r.sideEffects = append(r.sideEffects, e.Key)
	}
	for _, name := range []string{sourceFile, testFile, changelogFile, receiptsFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r.files[name] = string(b)
	}

	receipts := readReceipts(t, dir)
	if len(receipts) != 3 {
		t.Errorf("%d side effects performed, want 3 (two deploys and an email):\n%s", len(receipts), r.files[receiptsFile])
	}
	for key, n := range receipts {
		if n != 1 {
			t.Errorf("side effect %s performed %d times", key, n)
		}
	}
	if len(r.sideEffects) != len(receipts) {
		t.Errorf("the checkpoint records %d side effects, the services performed %d", len(r.sideEffects), len(receipts))
	}
	if strings.HasPrefix(spec, "redis://") {
		return r
	}
	err = filepath.WalkDir(spec, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if bytes.Contains(b, []byte("Tr0ub4dor")) {
			t.Errorf("%s holds the database password from the test log", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// compareRuns checks that a resumed session ended as the uninterrupted one.
func compareRuns(t *testing.T, got, want runResult) {
	t.Helper()
	if got.final != want.final {
		t.Errorf("final answer:\n got %q\nwant %q", got.final, want.final)
	}
	for name, w := range want.files {
		if got.files[name] != w {
			t.Errorf("%s differs from the uninterrupted run's:\n got %q\nwant %q", name, got.files[name], w)
		}
	}
	if got.transcript != want.transcript {
		t.Errorf("the final transcript differs from the uninterrupted run's")
	}
	if got.compactions != want.compactions {
		t.Errorf("%d compactions, want %d", got.compactions, want.compactions)
	}
	if !slices.Equal(got.steps, want.steps) {
		t.Errorf("steps:\n got %q\nwant %q", got.steps, want.steps)
	}
	if !slices.Equal(got.sideEffects, want.sideEffects) {
		t.Errorf("side effects:\n got %q\nwant %q", got.sideEffects, want.sideEffects)
	}
}

// readReceipts counts the receipt lines of receipts.log by idempotency key.
func readReceipts(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, receiptsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			t.Fatalf("malformed receipt line %q", line)
		}
		n[fields[1]]++
	}
	return n
}

func mustContain(t *testing.T, out, s string) {
	t.Helper()
	if !strings.Contains(out, s) {
		t.Errorf("the output lacks %q:\n%s", s, out)
	}
}

// buildExample builds the example into a temporary directory, with the
// race detector when the test has it (reusing the packages the test was
// built from).
func buildExample(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentloop")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startRedis starts a throwaway redis-server on a free loopback port and
// returns its address; the test is skipped where redis-server is missing.
func startRedis(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatalf("redis-server did not start listening on %s", addr)
	return ""
}
