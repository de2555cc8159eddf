package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// recorder is a testing.TB that records the first Skip or Fatal and stops
// the goroutine there, as the testing package does.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls f with a recorder in its own goroutine and returns the
// recorder once f has returned or stopped.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// fakeCorpus writes a corpus with a transcripts directory holding two
// transcripts and the notes kept beside them, and an empty wild directory.
func fakeCorpus(t *testing.T) string {
	root := t.TempDir()
	for name, body := range map[string]string{
		"transcripts/b.jsonl":     "{}\n",
		"transcripts/a.traj":      "{}",
		"transcripts/SOURCES.md":  "# sources\n",
		"transcripts/expect.py":   "print()\n",
		"transcripts/sub/c.jsonl": "{}\n",
		"wild/SOURCES.md":         "# sources\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestEnvDir(t *testing.T) {
	root := fakeCorpus(t)
	t.Setenv(EnvDir, root)
	t.Setenv(EnvRequire, "")

	var got []string
	r := run(t, func(tb testing.TB) { got = List(tb, Transcripts) })
	if r.skipped != "" || r.failed != "" {
		t.Fatalf("List: skipped %q, failed %q", r.skipped, r.failed)
	}
	want := []string{filepath.Join(root, "transcripts", "a.traj"), filepath.Join(root, "transcripts", "b.jsonl")}
	if !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q (no notes, no subdirectories)", got, want)
	}
	if b := string(run(t, func(tb testing.TB) { got = []string{string(ReadFile(tb, Transcripts, "a.traj"))} }).failed); b != "" || got[0] != "{}" {
		t.Errorf("ReadFile: %q, failed %q", got, b)
	}
}

func TestRelativeEnvDirIsFromModuleRoot(t *testing.T) {
	mod, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mod, "go.mod")); err != nil {
		t.Fatalf("ModuleRoot %s has no go.mod", mod)
	}
	// This package's own directory, named from the module root, is a
	// directory: Root must find it whatever the working directory.
	t.Setenv(EnvDir, filepath.Join("internal", "corpus"))
	got, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(mod, "internal", "corpus"); got != want {
		t.Errorf("Root = %s, want %s", got, want)
	}
}

// TestMissing: a missing corpus skips, saying what is missing and how to
// get it; with EnvRequire set it fails with the same words.
func TestMissing(t *testing.T) {
	// A module root whose ../shared/corpus does not exist.
	mod := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(mod, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(mod, "pkg"))
	t.Setenv(EnvDir, "")

	for _, tc := range []struct {
		require  string
		wantSkip bool
	}{{"", true}, {"0", true}, {"1", false}} {
		t.Run("require="+tc.require, func(t *testing.T) {
			t.Setenv(EnvRequire, tc.require)
			if Available() {
				t.Fatal("Available with no corpus")
			}
			r := run(t, func(tb testing.TB) { Dir(tb, Transcripts); t.Error("Dir returned") })
			msg := r.skipped
			if !tc.wantSkip {
				msg = r.failed
				if r.skipped != "" {
					t.Errorf("skipped although %s=%s: %s", EnvRequire, tc.require, r.skipped)
				}
			} else if r.failed != "" {
				t.Errorf("failed: %s", r.failed)
			}
			for _, want := range []string{filepath.Join(mod, DefaultDir), DefaultDir, EnvDir, EnvRequire} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
		})
	}
}

// TestMissingEnvDirFails: a COMPACT_CORPUS naming nothing is a mistake to
// report, not a reason to skip.
func TestMissingEnvDirFails(t *testing.T) {
	t.Setenv(EnvRequire, "")
	t.Setenv(EnvDir, filepath.Join(t.TempDir(), "nothing"))
	r := run(t, func(tb testing.TB) { Dir(tb, Transcripts) })
	if r.failed == "" || !strings.Contains(r.failed, EnvDir) {
		t.Errorf("skipped %q, failed %q; want a failure naming %s", r.skipped, r.failed, EnvDir)
	}
}

// TestIncompleteFails: a corpus that is there but lacks what a test reads
// fails that test whether or not EnvRequire is set.
func TestIncompleteFails(t *testing.T) {
	root := fakeCorpus(t)
	t.Setenv(EnvDir, root)
	t.Setenv(EnvRequire, "")
	for name, f := range map[string]func(tb testing.TB){
		"no directory":   func(tb testing.TB) { Dir(tb, Handoff) },
		"no file":        func(tb testing.TB) { Path(tb, Transcripts, "gone.jsonl") },
		"no transcripts": func(tb testing.TB) { List(tb, Wild) },
	} {
		r := run(t, f)
		if r.failed == "" || r.skipped != "" {
			t.Errorf("%s: skipped %q, failed %q; want a failure", name, r.skipped, r.failed)
		}
	}
}

func TestIsTranscript(t *testing.T) {
	for name, want := range map[string]bool{
		"a.jsonl": true, "a.json": true, "a.traj": true, "x.traj.json": true,
		"SOURCES.md": false, "expect.py": false, "README": false,
	} {
		if got := IsTranscript(name); got != want {
			t.Errorf("IsTranscript(%q) = %v", name, got)
		}
	}
}

// TestSharedCorpus checks the real corpus where it is: every transcript
// directory lists transcripts. It shows the skip message on a fresh clone.
func TestSharedCorpus(t *testing.T) {
	files := AllTranscripts(t)
	t.Logf("%d transcripts under %s", len(files), Dir(t, "."))
}
