package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchRedactKept: batch takes --redact-kept as the main command does:
// the secrets of the kept head and tail are masked in every output, the
// outputs equal what `compact --redact-kept` writes, and turning the flag
// on redoes files an earlier run wrote without it.
func TestBatchRedactKept(t *testing.T) {
	secrets := []string{"Kq7mZ2pXw9vBhead", "Kq7mZ2pXw9vBtail"}
	chatIn := plantedChat(t, secrets[0], "", secrets[1])
	in, out := t.TempDir(), t.TempDir()
	writeFiles(t, in, map[string]string{"a.json": chatIn, "sub/b.json": chatIn})
	rep := filepath.Join(t.TempDir(), "report.json")
	run := func(extra ...string) batchReport {
		t.Helper()
		args := append([]string{"batch", in, "--out", out, "--report", rep}, offline...)
		code, stdout, stderr := runCmd(t, "", nil, append(args, extra...)...)
		if code != exitOK {
			t.Fatalf("batch %v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
		return readBatchReport(t, rep)
	}
	run()
	for _, f := range []string{"a.json", "sub/b.json"} {
		if b, _ := os.ReadFile(filepath.Join(out, f)); !strings.Contains(string(b), secrets[0]) {
			t.Fatalf("%s: without --redact-kept the head is not verbatim: the test plants the secret elsewhere", f)
		}
	}
	r := run("--redact-kept")
	if r.Totals.Resumed != 0 || r.Totals.Compacted != 2 {
		t.Errorf("--redact-kept did not redo the files written without it: %+v", r.Totals)
	}
	single := filepath.Join(t.TempDir(), "single.json")
	if code, _, stderr := runCmd(t, chatIn, nil, "--summarizer", "fallback", "--force", "--redact-kept", "-o", single, "-"); code != exitOK {
		t.Fatalf("compact --redact-kept: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(single)
	for _, f := range []string{"a.json", "sub/b.json"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: --redact-kept left %s", f, s)
			}
		}
		if string(b) != string(want) {
			t.Errorf("%s differs from compact --redact-kept's output:\n%s", f, firstDifference(string(want), string(b)))
		}
	}
	for name, f := range byName(r) {
		if f.TokensAfter <= 0 || f.TokensAfter >= f.TokensBefore {
			t.Errorf("%s: tokens %d -> %d", name, f.TokensBefore, f.TokensAfter)
		}
	}
	// The same options again: nothing is redone.
	if r := run("--redact-kept"); r.Totals.Resumed != 2 {
		t.Errorf("a second --redact-kept run redid files: %+v", r.Totals)
	}
}

// TestBatchUnknownModelWarnsOnce: an unknown model (with --window) is
// named once per file, by the compactor, with no stale batch-level text
// claiming a window was assumed.
func TestBatchUnknownModelWarnsOnce(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeFiles(t, in, map[string]string{"a.json": chat(40), "b.json": chat(30)})
	rep := filepath.Join(t.TempDir(), "report.json")
	args := append([]string{"batch", in, "--out", out, "--report", rep, "--model", "gpt-nonesuch", "--window", "8000"}, offline...)
	code, stdout, stderr := runCmd(t, "", nil, args...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readBatchReport(t, rep)
	all := stdout + stderr + strings.Join(r.Warnings, "\n")
	if strings.Contains(all, "assumed") {
		t.Errorf("a stale warning says a window was assumed:\n%s", all)
	}
	for name, f := range byName(r) {
		n := 0
		for _, w := range f.Warnings {
			n += strings.Count(w, `unknown model "gpt-nonesuch"`)
		}
		if n != 1 {
			t.Errorf("%s: the unknown model is named %d times in %q, want 1", name, n, f.Warnings)
		}
	}
	if len(r.Warnings) != 0 {
		t.Errorf("batch-level warnings repeat the files': %q", r.Warnings)
	}
}
