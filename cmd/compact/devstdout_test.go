package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-42: `compact S.jsonl --report /dev/stdout > out.jsonl` (or any output
// path that is a link to an open descriptor: /dev/stdout, /dev/stderr,
// /proc/self/fd/N) is resolved to the file the descriptor points at and
// replaced by rename: out.jsonl ends up holding the report alone, the
// compacted transcript goes to the unlinked inode, exit 0. ("-" is refused:
// "--report and --handoff need a file: the transcript goes to stdout".)
// Here /proc/self/fd/N stands for /dev/stdout: N is the stdout the command
// writes the transcript to.
func TestReportToStdoutLinkKeepsTheTranscript(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	dir := t.TempDir()
	outPath := filepath.Join(dir, "out.jsonl")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: out, stderr: &errb, getenv: func(string) string { return "" }}
	stdoutLink := fmt.Sprintf("/proc/self/fd/%d", out.Fd())
	code := run(context.Background(), e, []string{"--force", "--summarizer", "fallback", "--report", stdoutLink,
		"../../testdata/sessions/claudecode_invoicer.jsonl"})
	got, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if code == exitOK && !bytes.Contains(got, []byte(`"sessionId"`)) {
		t.Errorf("--report %s with the transcript on that same stdout: exit 0, and out.jsonl (%d bytes) holds no transcript: %.80q", stdoutLink, len(got), got)
	}
}

// QA-42: every path naming a stream the run writes (by descriptor, or the
// file it was redirected to) is written through that stream, never
// renamed over; a second output on stdout is refused; two names of one
// file (a hard link) are refused.
func TestOutputsNamingStreams(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	in := "../../testdata/sessions/claudecode_invoicer.jsonl"
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	runWith := func(stdout, stderr *os.File, args ...string) int {
		e := &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, getenv: func(string) string { return "" }}
		return run(context.Background(), e, append([]string{"--force", "--summarizer", "fallback", in}, args...))
	}
	read := func(f *os.File) string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fdPath := func(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }
	o := filepath.Join(dir, "o.jsonl")

	// The report to stdout by descriptor, the transcript to -o.
	stdout, stderr := open("stdout1"), open("stderr1")
	if code := runWith(stdout, stderr, "-o", o, "--report", fdPath(stdout)); code != exitOK {
		t.Fatalf("--report stdout's descriptor with -o: exit %d: %s", code, read(stderr))
	}
	if got := read(stdout); !strings.HasPrefix(got, "{") || !strings.Contains(got, `"tokens_after"`) {
		t.Errorf("stdout does not hold the report: %.80q", got)
	}
	if !sameFile(stdout) {
		t.Errorf("stdout's file was replaced (renamed over)")
	}

	// The report to stderr by descriptor: the report, then the line.
	stdout, stderr = open("stdout2"), open("stderr2")
	if code := runWith(stdout, stderr, "-o", o, "--report", "/dev/fd/"+fmt.Sprint(stderr.Fd())); code != exitOK {
		t.Fatalf("--report stderr's descriptor: exit %d: %s", code, read(stderr))
	}
	if got := read(stderr); !strings.HasPrefix(got, "{") || !strings.Contains(got, "\ncompact: ") {
		t.Errorf("stderr does not hold the report then the line: %q", got)
	}

	// The report to the file stdout was redirected to, named by its path,
	// with the transcript on stdout too: refused; with -o: written there.
	stdout, stderr = open("stdout3"), open("stderr3")
	if code := runWith(stdout, stderr, "--report", stdout.Name()); code != exitUsage || !strings.Contains(read(stderr), "is this command's stdout") {
		t.Errorf("--report = stdout's file, transcript on stdout: exit %d, %q; want %d", code, read(stderr), exitUsage)
	}
	if got := read(stdout); got != "" {
		t.Errorf("refused, but stdout got %d bytes", len(got))
	}
	if code := runWith(stdout, stderr, "-o", o, "--report", stdout.Name()); code != exitOK || !strings.Contains(read(stdout), `"tokens_after"`) {
		t.Errorf("--report = stdout's file with -o: exit %d, stdout %.60q", code, read(stdout))
	}

	// Another descriptor (3> fd3.json): written through it, same inode.
	stdout, stderr, fd3 := open("stdout4"), open("stderr4"), open("fd3.json")
	if code := runWith(stdout, stderr, "-o", o, "--report", fdPath(fd3)); code != exitOK {
		t.Fatalf("--report another descriptor: exit %d: %s", code, read(stderr))
	}
	if !sameFile(fd3) || !strings.Contains(read(fd3), `"tokens_after"`) {
		t.Errorf("the descriptor's file was replaced or holds no report: %.60q", read(fd3))
	}
	assertNoTemps(t, dir)

	// -o a, --report b where b is a hard link to a.
	b := filepath.Join(dir, "b.json")
	if err := os.Link(o, b); err != nil {
		t.Fatal(err)
	}
	stdout, stderr = open("stdout5"), open("stderr5")
	if code := runWith(stdout, stderr, "-o", o, "--report", b); code != exitUsage || !strings.Contains(read(stderr), "name the same file") {
		t.Errorf("-o and --report hard links of one file: exit %d, %q", code, read(stderr))
	}
}

// sameFile reports whether f's path still names the file f has open (it
// was not renamed over).
func sameFile(f *os.File) bool {
	open, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(f.Name())
	return err == nil && os.SameFile(now, open)
}
