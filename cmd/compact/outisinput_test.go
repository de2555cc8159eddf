package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-32: a --report or --handoff path that names the input transcript
// replaces it: the run exits 0, the session file now holds a JSON report (or
// the handoff's markdown), and the original transcript is gone. compact
// already refuses two outputs naming one file; an output naming the input
// (a typo, a tab-completion slip) must be refused the same way, before
// anything is written, and the input left byte-identical.
func TestOutputNamingTheInputIsRefused(t *testing.T) {
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--report", "--handoff", "-o"} {
		dir := t.TempDir()
		in := filepath.Join(dir, "session.jsonl")
		if err := os.WriteFile(in, src, 0o644); err != nil {
			t.Fatal(err)
		}
		// The same file, also through a symbolic link and a hard link.
		link := filepath.Join(dir, "link.jsonl")
		if err := os.Symlink(in, link); err != nil {
			t.Fatal(err)
		}
		hard := filepath.Join(dir, "hard.jsonl")
		if err := os.Link(in, hard); err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{in, link, hard} {
			args := []string{"--force", "--summarizer", "fallback", in, flag, target}
			if flag != "-o" {
				args = append(args, "-o", filepath.Join(dir, "out.jsonl"))
			}
			code, _, stderr := runCmd(t, "", nil, args...)
			got, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, src) {
				t.Errorf("%s %s: exit %d (%q); the input transcript was replaced (%d bytes, was %d)", flag, filepath.Base(target), code, stderr, len(got), len(src))
				if err := os.WriteFile(in, src, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if code != exitUsage {
				t.Errorf("%s %s: exit %d; want %d (an output naming the input)", flag, filepath.Base(target), code, exitUsage)
			}
			if !strings.Contains(stderr, "is the input") || !strings.Contains(stderr, flag+" ") {
				t.Errorf("%s %s: the error does not say the output is the input: %q", flag, filepath.Base(target), stderr)
			}
			if flag == "-o" && !strings.Contains(stderr, "--in-place") {
				t.Errorf("-o %s: the error does not say how to replace the input on purpose: %q", filepath.Base(target), stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.jsonl")); err == nil {
				t.Errorf("%s %s: refused, but another output was written", flag, filepath.Base(target))
			}
			assertNoTemps(t, dir)
		}
	}
}

// The other commands with an output refuse the input as it too (QA-32):
// convert -o, redact -o; checkpoint show --transcript -o and compact
// --report refuse a file inside the checkpoint store they read or write.
func TestOtherCommandsRefuseTheInputAsOutput(t *testing.T) {
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "session.jsonl")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	if code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--checkpoint", store, "--session", "s1", in, "-o", filepath.Join(dir, "out.jsonl")); code != exitOK {
		t.Fatalf("compact --checkpoint: exit %d: %s", code, stderr)
	}
	storeFiles := snapshot(t, store)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"convert -o input", []string{"convert", "--to", "claude-code", in, "-o", link}, "is the input"},
		{"redact -o input", []string{"redact", in, "-o", in}, "is the input"},
		{"redact --as text -o input", []string{"redact", "--as", "text", link, "-o", in}, "is the input"},
		{"checkpoint show -o in store", []string{"checkpoint", "show", "--store", store, "--transcript", "-o", filepath.Join(store, "x.jsonl"), "s1"}, "inside the checkpoint store"},
		{"compact --report in store", []string{"--force", "--summarizer", "fallback", "--checkpoint", store, "--session", "s1", in, "-o", filepath.Join(dir, "out2.jsonl"), "--report", filepath.Join(store, "r.json")}, "inside the checkpoint store"},
		{"compact --report is store", []string{"--force", "--summarizer", "fallback", "--checkpoint", store, "--session", "s1", in, "-o", filepath.Join(dir, "out2.jsonl"), "--report", store}, "inside the checkpoint store"},
	} {
		code, _, stderr := runCmd(t, "", nil, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want exit %d saying %q", c.name, code, stderr, exitUsage, c.want)
		}
		if got, _ := os.ReadFile(in); !bytes.Equal(got, src) {
			t.Fatalf("%s: the input was replaced", c.name)
		}
		if _, err := os.Stat(filepath.Join(dir, "out2.jsonl")); err == nil {
			t.Errorf("%s: refused, but another output was written", c.name)
		}
		if now := snapshot(t, store); now != storeFiles {
			t.Errorf("%s: the store changed:\n%s\nwas\n%s", c.name, now, storeFiles)
		}
	}
	// Outputs beside the input or the store are fine.
	if code, _, stderr := runCmd(t, "", nil, "checkpoint", "show", "--store", store, "--transcript", "-o", filepath.Join(dir, "x.jsonl"), "s1"); code != exitOK {
		t.Errorf("checkpoint show -o beside the store: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "", nil, "redact", in, "-o", filepath.Join(dir, "storeX")); code != exitOK {
		t.Errorf("redact -o a name sharing the store's prefix: exit %d: %s", code, stderr)
	}
}

// snapshot lists dir's files with their sizes.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %s\n", path, info.Mode(), info.Size(), info.ModTime())
		return nil
	})
	return b.String()
}

// --in-place replaces the input on purpose (-o naming the input with it,
// or no -o at all); a transcript left as it was is not rewritten.
func TestInPlace(t *testing.T) {
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "session.jsonl")
	for _, extra := range [][]string{nil, {"-o", in}} {
		if err := os.WriteFile(in, src, 0o640); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--force", "--summarizer", "fallback", "--in-place", in}, extra...)
		code, stdout, stderr := runCmd(t, "", nil, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%v: wrote to stdout too (%d bytes)", args, len(stdout))
		}
		got, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= len(src) || !bytes.Contains(got, []byte("compact_boundary")) {
			t.Errorf("%v: the input was not replaced by the compacted transcript (%d bytes, was %d)", args, len(got), len(src))
		}
		if st, _ := os.Stat(in); st.Mode().Perm() != 0o640 {
			t.Errorf("%v: mode %v, want the input's 0640", args, st.Mode().Perm())
		}
		assertNoTemps(t, dir)
	}

	// Below the threshold nothing changes: the file keeps its inode.
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(in)
	code, _, stderr := runCmd(t, "", nil, "--summarizer", "fallback", "--in-place", in)
	if code != exitOK || !strings.Contains(stderr, "unchanged") {
		t.Fatalf("unchanged in place: exit %d: %s", code, stderr)
	}
	after, _ := os.Stat(in)
	if !os.SameFile(before, after) {
		t.Errorf("an unchanged transcript was rewritten in place (new inode)")
	}
	if !before.ModTime().Equal(after.ModTime()) {
		t.Errorf("an unchanged transcript was rewritten in place (mtime changed)")
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--in-place"}, "not stdin"},
		{[]string{"--in-place", "-"}, "not stdin"},
		{[]string{"--in-place", in, "-o", filepath.Join(dir, "other.jsonl")}, "drop one"},
		{[]string{"--in-place", in, "-o", "-"}, "drop one"},
	} {
		code, _, stderr := runCmd(t, "", nil, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}

// compact batch leaves its --report out of the inputs it walks: a report
// naming a transcript among them (a FILE argument or a file under a DIR)
// would replace it, so it is refused; an earlier batch report is replaced.
func TestBatchReportNamingAnInputIsRefused(t *testing.T) {
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions")
	if err := os.Mkdir(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(sessions, "a.jsonl")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"batch", in, "--out", filepath.Join(dir, "out"), "--report", in},
		{"batch", sessions, "--out", filepath.Join(dir, "out"), "--report", in},
		{"batch", filepath.Join(sessions, "*.jsonl"), "--out", filepath.Join(dir, "out"), "--report", in},
	} {
		code, _, stderr := runCmd(t, "", nil, append(args, "--summarizer", "fallback", "--force")...)
		if got, _ := os.ReadFile(in); !bytes.Equal(got, src) {
			t.Fatalf("%v: exit %d (%q): the input was replaced", args, code, stderr)
		}
		if code != exitUsage || !strings.Contains(stderr, "is one of the inputs") {
			t.Errorf("%v: exit %d, %q; want exit %d naming the input", args, code, stderr, exitUsage)
		}
	}
	// A report of an earlier batch in the input directory is rewritten.
	rep := filepath.Join(sessions, "report.json")
	for i := 0; i < 2; i++ {
		code, _, stderr := runCmd(t, "", nil, "batch", sessions, "--out", filepath.Join(dir, "out"), "--report", rep, "--summarizer", "fallback", "--force")
		if code != exitOK {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	if !isBatchReport(rep) {
		t.Errorf("the report does not start as a batch report")
	}
}
