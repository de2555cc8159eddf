package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/syncbuffer"
)

// offline are the flags that make a batch run without an LLM, the same
// bytes every time.
var offline = []string{"--summarizer", "fallback", "--force"}

// copyCorpus copies the corpus transcripts and SOURCES.md (a file the batch
// must pass over) into dir (times copies, each in its own subdirectory when
// times > 1) and returns how many transcripts it holds.
func copyCorpus(t *testing.T, dir string, times int) int {
	t.Helper()
	src := corpusDir(t)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range times {
		sub := dir
		if times > 1 {
			sub = filepath.Join(dir, "copy"+strconv.Itoa(i))
		}
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !corpus.IsTranscript(e.Name()) && e.Name() != "SOURCES.md" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sub, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if corpus.IsTranscript(e.Name()) {
				n++
			}
		}
	}
	return n
}

// writeFiles creates files (slash paths under dir) with their contents.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// corpusFile returns a corpus transcript's bytes.
func corpusFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(corpusPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outputs lists the files under dir (slash paths), leaving out the
// checkpoint store.
func outputs(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && d.Name() == ".compact" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// sameTrees fails unless dirs a and b hold the same files with the same
// bytes (checkpoint stores aside).
func sameTrees(t *testing.T, a, b string) {
	t.Helper()
	na, nb := outputs(t, a), outputs(t, b)
	if !slices.Equal(na, nb) {
		t.Fatalf("different files:\n%s: %v\n%s: %v", a, na, b, nb)
	}
	for _, n := range na {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if !bytes.Equal(x, y) {
			t.Fatalf("%s differs between %s and %s", n, a, b)
		}
	}
}

func readBatchReport(t *testing.T, path string) batchReport {
	t.Helper()
	return readJSON[batchReport](t, path)
}

// byName indexes a report's files by their path's base name.
func byName(r batchReport) map[string]*fileResult {
	m := map[string]*fileResult{}
	for _, f := range r.Files {
		m[filepath.Base(f.Path)] = f
	}
	return m
}

// latestBatchCheckpoint loads the batch checkpoint of out from its default
// store.
func latestBatchCheckpoint(t *testing.T, out string) *checkpoint.Checkpoint {
	t.Helper()
	s, err := checkpoint.NewFileStore(filepath.Join(out, batchStoreDir), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(out)
	c, err := s.Latest(context.Background(), batchSession(abs))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildCompact builds the compact command into a temporary directory, for
// the tests that signal or kill it.
func buildCompact(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "compact")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// batchCommand returns bin with args, in an environment without LLM or
// checkpoint settings, so it runs offline and uses its default store.
func batchCommand(bin string, extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "COMPACT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// waitFor polls until cond holds, failing the test after a minute (a hang,
// not a slow machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func exitStatus(err error) int {
	var x *exec.ExitError
	if errors.As(err, &x) {
		return x.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestBatchProcess runs the compact command as a process, built once, to
// kill and interrupt it.
func TestBatchProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs it several times")
	}
	bin := buildCompact(t)
	t.Run("kill and resume", func(t *testing.T) { testBatchKillAndResume(t, bin) })
	t.Run("SIGINT", func(t *testing.T) { testBatchInterrupt(t, bin, syscall.SIGINT) })
	t.Run("SIGTERM", func(t *testing.T) { testBatchInterrupt(t, bin, syscall.SIGTERM) })
	t.Run("second interrupt", func(t *testing.T) { testBatchSecondInterrupt(t, bin) })
}

// testBatchKillAndResume kills a batch with SIGKILL halfway, runs it
// again, and checks that the outputs are those of an uninterrupted run and
// that the second run skipped what the first had finished.
func testBatchKillAndResume(t *testing.T, bin string) {
	tmp := t.TempDir()
	in, ref, out := filepath.Join(tmp, "in"), filepath.Join(tmp, "ref"), filepath.Join(tmp, "out")
	transcripts := copyCorpus(t, in, 1)

	clean := batchCommand(bin, nil, append([]string{"batch", in, "--out", ref, "--quiet"}, offline...)...)
	if b, err := clean.CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}
	if got := len(outputs(t, ref)); got != transcripts {
		t.Fatalf("uninterrupted run wrote %d outputs, want %d", got, transcripts)
	}

	args := append([]string{"batch", in, "--out", out, "-j", "1", "--quiet"}, offline...)
	first := batchCommand(bin, nil, args...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	waitFor(t, "half the outputs", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("the batch finished (%v) before it could be killed halfway", err)
		default:
		}
		return len(outputs(t, out)) >= transcripts/2
	})
	first.Process.Kill()
	<-exited
	// What the killed run left: outputs (some maybe not yet in the
	// checkpoint) and perhaps a temporary file it was writing.
	before := map[string]os.FileInfo{}
	for _, n := range outputs(t, out) {
		if st, err := os.Stat(filepath.Join(out, n)); err == nil {
			before[n] = st
		}
	}
	t.Logf("killed with %d of %d outputs on disk", len(before), transcripts)

	rep := filepath.Join(tmp, "report.json")
	again := batchCommand(bin, nil, append(args, "--report", rep)...)
	if b, err := again.CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, b)
	}
	sameTrees(t, ref, out)

	r := readBatchReport(t, rep)
	resumed := 0
	for _, f := range r.Files {
		if !f.Resumed || f.Status == statusSkipped {
			continue
		}
		resumed++
		name := strings.TrimPrefix(f.Output, out+string(filepath.Separator))
		st, ok := before[filepath.ToSlash(name)]
		if !ok {
			t.Fatalf("%s counted as done earlier, but the killed run had not written it", f.Path)
		}
		// Skipped means not rewritten: the very same file is still there.
		if now, err := os.Stat(f.Output); err != nil || !os.SameFile(st, now) {
			t.Fatalf("%s was rewritten by the re-run", f.Output)
		}
	}
	if resumed == 0 || r.Totals.Failed != 0 || r.Totals.Pending != 0 || r.Totals.Compacted+r.Totals.Unchanged != transcripts {
		t.Fatalf("re-run totals %+v, %d resumed, %d outputs before", r.Totals, resumed, len(before))
	}
	if c := latestBatchCheckpoint(t, out); c.Status != checkpoint.StatusCompleted || c.CompletedSteps() != transcripts {
		t.Fatalf("checkpoint status %s, %d completed steps", c.Status, c.CompletedSteps())
	}
	t.Logf("re-run: %d files done earlier, %d redone", resumed, transcripts-resumed)
}

// testBatchInterrupt sends SIGINT or SIGTERM: the batch stops taking
// files, finishes those in flight, saves its checkpoint, prints the command
// that resumes it and exits with 128 + the signal's number; running that
// command finishes the batch.
func testBatchInterrupt(t *testing.T, bin string, sig syscall.Signal) {
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in"), filepath.Join(tmp, "out")
	transcripts := copyCorpus(t, in, 1)

	args := append([]string{"batch", in, "--out", out, "-j", "2", "--progress-interval", "50ms"}, offline...)
	var stderr bytes.Buffer
	cmd := batchCommand(bin, nil, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a first output", func() bool { return len(outputs(t, out)) > 0 })
	cmd.Process.Signal(sig)
	if code := exitStatus(cmd.Wait()); code != 128+int(sig) {
		t.Fatalf("exit %d after %s, want %d; stderr:\n%s", code, sig, 128+int(sig), stderr.String())
	}
	msg := stderr.String()
	hint := "resume with:\n  compact batch " + shellJoin(args[1:]) + "\n"
	if !strings.Contains(msg, "stopping: no new files") || !strings.Contains(msg, hint) {
		t.Fatalf("stderr lacks the stop notice or the resume hint %q:\n%s", hint, msg)
	}

	// The checkpoint holds exactly the files on disk: those in flight were
	// finished and saved, nothing else was started.
	c := latestBatchCheckpoint(t, out)
	done := outputs(t, out)
	var completed []string
	for _, s := range c.Steps {
		if s.Status == checkpoint.StepCompleted {
			completed = append(completed, s.ID)
		}
	}
	if c.Status != checkpoint.StatusPaused || !slices.Equal(completed, done) || len(done) == transcripts {
		t.Fatalf("checkpoint %s with completed steps %v; outputs on disk %v", c.Status, completed, done)
	}

	rep := filepath.Join(tmp, "r.json")
	resume := batchCommand(bin, nil, append(slices.Clone(args), "--report", rep)...)
	if b, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	r := readBatchReport(t, rep)
	if r.Totals.Resumed < len(done) || r.Totals.Compacted+r.Totals.Unchanged != transcripts || len(outputs(t, out)) != transcripts {
		t.Fatalf("resumed run: totals %+v, %d outputs before", r.Totals, len(done))
	}
}

// slowLLM is an OpenAI-compatible server that answers after delay (or
// when the client gives up), counting the calls it is serving at once.
type slowLLM struct {
	*httptest.Server
	delay          atomic.Int64 // time.Duration
	calls          atomic.Int32
	inFlight, most atomic.Int32
}

func newSlowLLM(t *testing.T, delay time.Duration) *slowLLM {
	s := &slowLLM{}
	s.delay.Store(int64(delay))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.calls.Add(1)
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
		}
		select {
		case <-time.After(time.Duration(s.delay.Load())):
		case <-r.Context().Done():
			return
		}
		b := handoffCompletion()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// testBatchSecondInterrupt: while a slow LLM holds the files in flight, a
// second SIGINT ends the batch without waiting for them; the next run
// does them.
func testBatchSecondInterrupt(t *testing.T, bin string) {
	llm := newSlowLLM(t, time.Hour)
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in"), filepath.Join(tmp, "out")
	writeFiles(t, in, map[string]string{"a.json": chat(40), "b.json": chat(41), "c.json": chat(42)})
	llmEnv := []string{"OPENAI_BASE_URL=" + llm.URL + "/v1"}
	var stderr syncbuffer.Buffer
	cmd := batchCommand(bin, llmEnv, "batch", in, "--out", out, "-j", "2", "--force", "--retries", "0")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two LLM calls in flight", func() bool { return llm.inFlight.Load() == 2 })
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the stop notice", func() bool { return strings.Contains(stderr.String(), "stopping") })
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(cmd.Wait()); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "abandoned the files in flight") || !strings.Contains(stderr.String(), "resume with:") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
	if got := outputs(t, out); len(got) != 0 {
		t.Fatalf("abandoned files left outputs: %v", got)
	}

	llm.delay.Store(0)
	again := batchCommand(bin, llmEnv, "batch", in, "--out", out, "-j", "2", "--force", "--retries", "0", "--quiet")
	if b, err := again.CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, b)
	}
	if got := outputs(t, out); !slices.Equal(got, []string{"a.json", "b.json", "c.json"}) {
		t.Fatalf("outputs after the re-run: %v", got)
	}
}

func TestBatchSkipsNonTranscripts(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	writeFiles(t, in, map[string]string{
		"a.json":                  chat(40),
		"sessions/b.jsonl":        corpusFile(t, "claudecode_cclog_edge_cases.jsonl"),
		"notes.md":                "# notes\nnot a transcript\n",
		"empty.txt":               "",
		"data.bin":                "\x00\x01\x02\xff\xfe binary",
		"config.json":             `{"compilerOptions": {"strict": true}}`,
		".git/HEAD":               "ref: refs/heads/main\n",
		"elsewhere/c.json":        chat(40),
		"sessions/.hidden.jsonl":  corpusFile(t, "claudecode_cclog_edge_cases.jsonl"),
		"sessions/deep/d.traj":    corpusFile(t, "sweagent_gpt4_test-repo-i1.traj"),
		"sessions/deep/notes.txt": "plain text",
	})
	if err := os.Symlink(filepath.Join(in, "elsewhere"), filepath.Join(in, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	rep := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--report", rep, "-j", "3"}, offline...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := []string{"a.json", "elsewhere/c.json", "sessions/.hidden.jsonl", "sessions/b.jsonl", "sessions/deep/d.traj"}
	if got := outputs(t, out); !slices.Equal(got, want) {
		t.Fatalf("outputs %v, want %v", got, want)
	}
	r := readBatchReport(t, rep)
	files := byName(r)
	reasons := map[string]string{
		"notes.md": "not a transcript", "empty.txt": "empty file", "data.bin": "not a transcript",
		"config.json": "not a transcript", "notes.txt": "not a transcript", "link": "symbolic link to a directory",
	}
	for name, reason := range reasons {
		f := files[name]
		if f == nil || f.Status != statusSkipped || !strings.Contains(f.SkippedReason, reason) || f.Output != "" {
			t.Fatalf("%s: %+v, want skipped: %s", name, f, reason)
		}
		if !strings.Contains(stdout, name+": "+f.SkippedReason) {
			t.Fatalf("summary does not name %s with its reason:\n%s", name, stdout)
		}
	}
	if files["HEAD"] != nil {
		t.Fatal("walked into .git")
	}
	if r.Totals.Skipped != len(reasons) || r.Totals.Compacted+r.Totals.Unchanged != len(want) || r.Totals.Failed != 0 {
		t.Fatalf("totals %+v", r.Totals)
	}
	if !regexp.MustCompile(`(?m)^skipped\s+6$`).MatchString(stdout) {
		t.Fatalf("summary table:\n%s", stdout)
	}
}

func TestBatchGlob(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"runs/r1/session.json":      chat(40),
		"runs/r1/other.json":        chat(41),
		"runs/r2/deep/session.json": chat(42),
		"runs/r3/session.txt":       chat(43),
		"top.json":                  chat(44),
	})
	t.Chdir(dir)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"star", []string{"runs/*/session.json"}, []string{"r1/session.json"}},
		{"double star", []string{"runs/**/session.json"}, []string{"r1/session.json", "r2/deep/session.json"}},
		{"double star at the end", []string{"runs/r2/**"}, []string{"deep/session.json"}},
		{"absolute", []string{filepath.Join(dir, "runs", "r?", "*.json")}, []string{"r1/other.json", "r1/session.json"}},
		{"class", []string{"runs/r[13]/*"}, []string{"r1/other.json", "r1/session.json", "r3/session.txt"}},
		// Shell-expanded globs arrive as files: outputs mirror them under
		// their deepest common directory, as the quoted glob would.
		{"files", []string{"runs/r1/session.json", "runs/r2/deep/session.json"}, []string{"r1/session.json", "r2/deep/session.json"}},
		{"directory and glob", []string{"runs/r2", "*.json"}, []string{"runs/r2/deep/session.json", "top.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCmd(t, "", nil, append(append([]string{"batch", "--out", out, "-j", "2"}, tt.args...), offline...)...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			want := slices.Sorted(slices.Values(tt.want))
			if got := outputs(t, out); !slices.Equal(got, want) {
				t.Fatalf("outputs %v, want %v", got, want)
			}
		})
	}
	code, _, stderr := runCmd(t, "", nil, "batch", "runs/*/nothing.json", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "matches no files") {
		t.Fatalf("a glob matching nothing: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCmd(t, "", nil, "batch", "runs/a**/x", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "whole path segment") {
		t.Fatalf("a bad **: exit %d, %s", code, stderr)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pat, name string
		match     bool
	}{
		{"*.json", "a.json", true},
		{"*.json", "d/a.json", false},
		{"**/*.json", "a.json", true},
		{"**/*.json", "d/e/a.json", true},
		{"d/**/a.json", "d/a.json", true},
		{"d/**/a.json", "d/x/y/a.json", true},
		{"d/**/a.json", "e/x/a.json", false},
		{"**", "x/y", true},
		{"r?/*", "r1/x", true},
		{"r?/*", "r10/x", false},
		{"[ab]/**/*.traj", "b/c/t.traj", true},
		{"[ab]/**/*.traj", "c/c/t.traj", false},
	}
	for _, tt := range tests {
		pat, name := strings.Split(tt.pat, "/"), strings.Split(tt.name, "/")
		if got := globMatch(pat, name); got != tt.match {
			t.Errorf("globMatch(%q, %q) = %v", tt.pat, tt.name, got)
		}
		// A directory holding a match must be entered.
		if tt.match && len(name) > 1 && !globCouldMatch(pat, name[:len(name)-1]) {
			t.Errorf("globCouldMatch(%q, %q) = false, but %q matches", tt.pat, name[:len(name)-1], tt.name)
		}
	}
	if globCouldMatch(strings.Split("a/*.json", "/"), []string{"b"}) || globCouldMatch(strings.Split("a/*.json", "/"), []string{"a", "x"}) {
		t.Error("globCouldMatch enters directories that cannot match")
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"runs/**/*.json", "--out", "my out", "it's", "-j", "4", ""})
	want := `'runs/**/*.json' --out 'my out' 'it'\''s' -j 4 ''`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestBatchReport(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	small := chat(2)
	writeFiles(t, in, map[string]string{
		"big.json":   chat(40),
		"small.json": small,
		"bad.traj":   corpusFile(t, "sweagent_gpt4_test-repo-i1.traj")[:3000],
		"x.md":       "# no",
	})
	rep := filepath.Join(t.TempDir(), "report.json")
	code, stdout, stderr := runCmd(t, "", nil, "batch", in, "--out", out, "--report", rep, "--summarizer", "fallback")
	if code != exitFailure || !strings.Contains(stderr, "failed: "+filepath.Join(in, "bad.traj")) {
		t.Fatalf("exit %d, want 1 for the truncated file\n%s\n%s", code, stdout, stderr)
	}
	r := readBatchReport(t, rep)
	f := byName(r)
	big, sm, bad, md := f["big.json"], f["small.json"], f["bad.traj"], f["x.md"]
	if big.Status != statusUnchanged || big.Method != compact.MethodNone || big.Reason == "" {
		t.Fatalf("big.json below the threshold: %+v", big)
	}
	// --force is off: the small transcript is under the threshold and so is
	// the big one; rerun with --force for the compacted case below.
	if sm.Status != statusUnchanged || sm.Format != string(format.OpenAIChat) || sm.TokensBefore == 0 || sm.TokensAfter != sm.TokensBefore {
		t.Fatalf("small.json: %+v", sm)
	}
	if bad.Status != statusFailed || !strings.Contains(bad.Error, "swe-agent") || bad.Output != "" {
		t.Fatalf("bad.traj: %+v", bad)
	}
	if md.Status != statusSkipped || md.SkippedReason == "" {
		t.Fatalf("x.md: %+v", md)
	}
	if r.Totals != (batchTotals{Files: 4, Unchanged: 2, Skipped: 1, Failed: 1,
		TokensBefore: big.TokensBefore + sm.TokensBefore, TokensAfter: big.TokensAfter + sm.TokensAfter}) {
		t.Fatalf("totals %+v", r.Totals)
	}
	if c := latestBatchCheckpoint(t, out); c.Status != checkpoint.StatusFailed || !strings.Contains(c.LastError, "bad.traj") {
		t.Fatalf("checkpoint %s, last error %q", c.Status, c.LastError)
	}

	// Changing an option that shapes the output redoes every file; the
	// failed one fails again.
	code, _, stderr = runCmd(t, "", nil, "batch", in, "--out", out, "--report", rep, "--summarizer", "fallback", "--force", "--keep-head", "0")
	r = readBatchReport(t, rep)
	f = byName(r)
	big = f["big.json"]
	if code != exitFailure || r.Totals.Resumed != 0 || big.Status != statusCompacted || big.Method != compact.MethodFallback ||
		big.TokensAfter >= big.TokensBefore || big.Saved <= 0 || big.OutputSHA256 == "" || big.InputSHA256 == "" ||
		big.Output != filepath.Join(out, "big.json") {
		t.Fatalf("exit %d, forced run: %+v\n%s", code, big, stderr)
	}
	compacted, err := readTranscript(big.Output)
	if err != nil || !slices.ContainsFunc(compacted.Messages, func(m compact.Message) bool {
		return strings.Contains(m.Text(), "<<<compact:handoff>>>")
	}) {
		t.Fatalf("the output holds no handoff: %v", err)
	}

	// Fixing the broken file redoes it alone.
	writeFiles(t, in, map[string]string{"bad.traj": corpusFile(t, "sweagent_gpt4_test-repo-i1.traj")})
	code, stdout, stderr = runCmd(t, "", nil, "batch", in, "--out", out, "--report", rep, "--summarizer", "fallback", "--force", "--keep-head", "0")
	r = readBatchReport(t, rep)
	f = byName(r)
	if code != exitOK || r.Totals.Resumed != 3 || f["bad.traj"].Resumed || f["bad.traj"].Status != statusCompacted ||
		!strings.Contains(stdout, "3 of these were done by an earlier run") {
		t.Fatalf("exit %d, totals %+v, bad.traj %+v\n%s\n%s", code, r.Totals, f["bad.traj"], stdout, stderr)
	}

	// An output changed or removed behind the batch's back is written again.
	os.WriteFile(filepath.Join(out, "big.json"), []byte("edited"), 0o644)
	os.Remove(filepath.Join(out, "small.json"))
	code, _, _ = runCmd(t, "", nil, "batch", in, "--out", out, "--report", rep, "--summarizer", "fallback", "--force", "--keep-head", "0")
	f = byName(readBatchReport(t, rep))
	if code != exitOK || f["big.json"].Resumed || f["small.json"].Resumed || !f["bad.traj"].Resumed || !f["x.md"].Resumed {
		t.Fatalf("exit %d: big %+v small %+v", code, f["big.json"], f["small.json"])
	}
	if b, _ := os.ReadFile(filepath.Join(out, "big.json")); string(b) == "edited" {
		t.Fatal("the edited output was kept")
	}
}

func TestBatchQuiet(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeFiles(t, in, map[string]string{"a.json": chat(40), "b.md": "no"})
	code, stdout, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--quiet", "--progress-interval", "1ms"}, offline...)...)
	if code != exitOK || stdout != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Failures are still reported.
	writeFiles(t, in, map[string]string{"c.json": `[{"role": "user", "content": "hi"}`})
	code, stdout, stderr = runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--quiet"}, offline...)...)
	if code != exitFailure || stdout != "" || !strings.Contains(stderr, "failed: "+filepath.Join(in, "c.json")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestBatchProgressLines: off a terminal, a plain line now and then and
// one at the end, no escape sequences.
func TestBatchProgressLines(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	for i := range 6 {
		writeFiles(t, in, map[string]string{"s" + strconv.Itoa(i) + ".json": chat(40 + i)})
	}
	code, stdout, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "-j", "2", "--progress-interval", "1ms"}, offline...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	status := regexp.MustCompile(`^compact batch: \d/6 files \(\d compacted, 0 unchanged, 0 skipped, 0 failed\), [\d,]+ tokens saved( \(\d+%\))?, \d+s elapsed, ETA (--|\d+s)$`)
	periodic := 0
	for _, l := range lines[1:] {
		if !status.MatchString(l) {
			t.Fatalf("unexpected progress line %q", l)
		}
		periodic++
	}
	last := lines[len(lines)-1]
	if periodic < 2 || !strings.HasPrefix(last, "compact batch: 6/6 files (6 compacted") || strings.Contains(stderr, "\r") ||
		!strings.HasPrefix(lines[0], "compact batch: 6 files (") {
		t.Fatalf("%d status lines, last %q:\n%s", periodic, last, stderr)
	}
	if !regexp.MustCompile(`(?m)^compacted\s+6\s`).MatchString(stdout) {
		t.Fatalf("summary:\n%s", stdout)
	}
}

// TestBatchProgressBar: on a terminal, the bar is redrawn in place, never
// as wide as the terminal, and cleared before the summary.
func TestBatchProgressBar(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	for i := range 4 {
		writeFiles(t, in, map[string]string{"s" + strconv.Itoa(i) + ".json": chat(40 + i)})
	}
	var so, se bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &so, stderr: &se, stderrTTY: true,
		getenv: func(k string) string { return map[string]string{"COLUMNS": "90"}[k] }}
	if code := run(context.Background(), e, append([]string{"batch", in, "--out", out, "-j", "1"}, offline...)); code != exitOK {
		t.Fatalf("exit %d\n%s", code, se.String())
	}
	s := se.String()
	draws := strings.Split(s, "\r\033[K")
	bars := 0
	for _, d := range draws[1:] {
		if d == "" || strings.HasSuffix(d, "\n") {
			continue
		}
		bars++
		if len([]rune(d)) > 89 || !regexp.MustCompile(`^compact batch \[[=> ]+\] \d/4 files  [\d.]+[kMG]? tokens saved`).MatchString(d) {
			t.Fatalf("bar %q (%d columns)", d, len([]rune(d)))
		}
	}
	if bars == 0 || !strings.HasSuffix(s, "\r\033[K") {
		t.Fatalf("%d bars; stderr %q", bars, s)
	}
}

func TestBatchLLMConcurrency(t *testing.T) {
	llm := newSlowLLM(t, 30*time.Millisecond)
	in, out := t.TempDir(), t.TempDir()
	for i := range 6 {
		writeFiles(t, in, map[string]string{"s" + strconv.Itoa(i) + ".json": chat(40 + i)})
	}
	environ := map[string]string{"OPENAI_BASE_URL": llm.URL + "/v1", "OPENAI_API_KEY": "sk-test"}
	rep := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := runCmd(t, "", environ, "batch", in, "--out", out, "-j", "4", "--llm-concurrency", "1", "--force", "--report", rep)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, f := range readBatchReport(t, rep).Files {
		if f.Method != compact.MethodLLM || f.LLMAttempts != 1 {
			t.Fatalf("%s: %+v", f.Path, f)
		}
	}
	if llm.calls.Load() != 6 || llm.most.Load() != 1 {
		t.Fatalf("%d calls, at most %d at once; want 6, 1", llm.calls.Load(), llm.most.Load())
	}
	// Options that shape the output include the LLM's: another summary
	// model redoes the files.
	code, _, stderr = runCmd(t, "", environ, "batch", in, "--out", out, "-j", "4", "--llm-concurrency", "2", "--force", "--report", rep, "--summary-model", "other")
	if r := readBatchReport(t, rep); code != exitOK || r.Totals.Resumed != 0 || llm.calls.Load() != 12 || llm.most.Load() > 2 {
		t.Fatalf("exit %d, totals %+v, %d calls, at most %d at once\n%s", code, r.Totals, llm.calls.Load(), llm.most.Load(), stderr)
	}
}

func TestBatchUsageErrors(t *testing.T) {
	in := t.TempDir()
	writeFiles(t, in, map[string]string{"a.json": chat(4)})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no input", []string{"batch", "--out", t.TempDir()}, "name a directory"},
		{"no out", []string{"batch", in}, "--out DIR is required"},
		{"out is the input", []string{"batch", in, "--out", in}, "the outputs would replace the inputs"},
		{"missing input", []string{"batch", filepath.Join(in, "nope"), "--out", t.TempDir()}, "no such file"},
		{"negative workers", []string{"batch", in, "--out", t.TempDir(), "-j", "-1"}, "-j -1"},
		{"negative llm concurrency", []string{"batch", in, "--out", t.TempDir(), "--llm-concurrency", "-1"}, "--llm-concurrency"},
		{"bad threshold", []string{"batch", in, "--out", t.TempDir(), "--threshold", "2"}, "--threshold"},
		{"bad summarizer", []string{"batch", in, "--out", t.TempDir(), "--summarizer", "magic"}, "--summarizer"},
		{"llm without one", []string{"batch", in, "--out", t.TempDir(), "--summarizer", "llm"}, "API key"},
		{"unknown flag", []string{"batch", in, "--out", t.TempDir(), "--bogus"}, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, "", nil, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	code, _, stderr := runCmd(t, "", nil, "batch", "--help")
	if code != exitOK || !strings.Contains(stderr, "-llm-concurrency") || !strings.Contains(stderr, "-keep-tail-tokens") ||
		!strings.Contains(stderr, "Run the same command again") {
		t.Fatalf("help: exit %d\n%s", code, stderr)
	}
}

// TestBatchOutputInsideInput: --out under the input directory is left out
// of the walk, so a re-run does not compact its own outputs.
func TestBatchOutputInsideInput(t *testing.T) {
	in := t.TempDir()
	writeFiles(t, in, map[string]string{"a.json": chat(40)})
	out := filepath.Join(in, "compacted")
	rep := filepath.Join(in, "report.json")
	for range 2 {
		code, _, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--report", rep}, offline...)...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if r := readBatchReport(t, rep); r.Totals.Files != 1 {
			t.Fatalf("files %+v", r.Files)
		}
	}
	if got := outputs(t, out); !slices.Equal(got, []string{"a.json"}) {
		t.Fatalf("outputs %v", got)
	}
}

// TestBatchSaverConflict: two processes saving one batch's checkpoint
// lose neither's steps: a conflicting save reloads and applies its steps
// again (compare-and-set).
func TestBatchSaverConflict(t *testing.T) {
	ctx := context.Background()
	store, err := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &batchSaver{store: store, session: "batch-x", task: "a"}
	if err := a.save(ctx, []checkpoint.Step{{ID: "0", Status: checkpoint.StepPending}}, checkpoint.StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	b := &batchSaver{store: store, session: "batch-x", task: "b", cp: a.cp.Clone()}
	var wg sync.WaitGroup
	for i, s := range []*batchSaver{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				id := string(rune('a'+i)) + strconv.Itoa(j)
				if err := s.save(ctx, []checkpoint.Step{{ID: id, Status: checkpoint.StepCompleted}}, checkpoint.StatusRunning, ""); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	c, err := store.Latest(ctx, "batch-x")
	if err != nil {
		t.Fatal(err)
	}
	if c.CompletedSteps() != 20 || len(c.Steps) != 21 || c.Seq != 21 {
		t.Fatalf("%d completed of %d steps, seq %d", c.CompletedSteps(), len(c.Steps), c.Seq)
	}
	if !slices.IsSortedFunc(c.Steps, func(x, y checkpoint.Step) int { return strings.Compare(x.ID, y.ID) }) {
		t.Fatal("steps out of order")
	}
}

// TestBatchRedisStore keeps a batch's progress in a real redis-server.
func TestBatchRedisStore(t *testing.T) {
	spec := "redis://" + storetest.StartRedis(t).Addr() + "/5"

	in, out := t.TempDir(), t.TempDir()
	writeFiles(t, in, map[string]string{"a.json": chat(40), "b.json": chat(41)})
	rep := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"batch", in, "--out", out, "--store", spec, "--report", rep}, offline...)
	for run, resumed := range []int{0, 2} {
		code, _, stderr := runCmd(t, "", nil, args...)
		if r := readBatchReport(t, rep); code != exitOK || r.Totals.Resumed != resumed || r.Store != spec {
			t.Fatalf("run %d: exit %d, totals %+v\n%s", run, code, r.Totals, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, batchStoreDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a local store was created beside the outputs: %v", err)
	}
	code, stdout, _ := runCmd(t, "", nil, "checkpoint", "list", "--store", spec)
	if code != exitOK || !strings.Contains(stdout, batchSession(out)) || !strings.Contains(stdout, "2/2") {
		t.Fatalf("checkpoint list: %d\n%s", code, stdout)
	}
}
