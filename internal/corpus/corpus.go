// Package corpus finds the shared corpus of third-party data (real agent
// transcripts, the labelled redaction corpus, the labelled handoff
// transcripts) for tests, benchmarks and scripts.
//
// The corpus is never copied into this repository: it lives beside it, at
// ../shared/corpus relative to the module root, or wherever the
// COMPACT_CORPUS environment variable says. Where it is missing, a test that
// needs it is skipped with a message saying what is missing and how to get
// it; with COMPACT_REQUIRE_CORPUS set (as CI sets it) the same situation is
// a failure, so that a CI run cannot pass by skipping every corpus test,
// and so is a COMPACT_CORPUS that names no directory.
//
// The package is for tests: it reads the environment and the working
// directory, which no other package of the module does.
package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Environment variables read by the package.
const (
	// EnvDir names the corpus directory. A relative path is taken from the
	// module root, as the shell scripts take it.
	EnvDir = "COMPACT_CORPUS"
	// EnvRequire, set to anything but "" or "0", turns every skip for a
	// missing corpus into a failure.
	EnvRequire = "COMPACT_REQUIRE_CORPUS"
)

// DefaultDir is where the corpus is looked for when EnvDir is not set,
// relative to the module root.
const DefaultDir = "../shared/corpus"

// Subdirectories of the corpus holding transcripts.
const (
	Transcripts = "transcripts" // real transcripts of nine formats
	Wild        = "wild"        // newer layouts and agents' own compactions
	WildEntire  = "wild/entire" // whole Claude Code sessions
	Redact      = "redact"      // labelled redaction corpus and gitleaks' rule cases
	Handoff     = "handoff"     // labelled transcripts and the handoff scorer
)

// TranscriptDirs are the corpus subdirectories holding transcripts, in the
// order AllTranscripts lists them.
var TranscriptDirs = []string{Transcripts, Wild, WildEntire}

// ErrMissing is returned by Root when the corpus is not where it is looked
// for.
var ErrMissing = errors.New("the shared corpus is missing")

// Root returns the corpus directory: EnvDir if set, else DefaultDir from
// the module root. The error wraps ErrMissing when nothing is there, and
// says where it looked and how to get the corpus.
func Root() (string, error) {
	dir, explicit := os.Getenv(EnvDir), true
	if dir == "" {
		dir, explicit = DefaultDir, false
	}
	if !filepath.IsAbs(dir) {
		mod, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(mod, dir)
	}
	info, err := os.Stat(dir)
	switch {
	case err == nil && info.IsDir():
		return dir, nil
	case err == nil:
		return "", fmt.Errorf("%w: %s is not a directory", ErrMissing, dir)
	case errors.Is(err, fs.ErrNotExist):
		if explicit {
			return "", fmt.Errorf("%w: %s=%s does not exist", ErrMissing, EnvDir, os.Getenv(EnvDir))
		}
		return "", fmt.Errorf("%w: no directory %s (put the shared corpus at %s beside the repository, or set %s to its path)", ErrMissing, dir, DefaultDir, EnvDir)
	default:
		return "", fmt.Errorf("%w: %v", ErrMissing, err)
	}
}

// ModuleRoot returns the directory of the go.mod that holds the working
// directory, walking up from it.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod in %s or above it", wd)
		}
		dir = parent
	}
}

// Required reports whether EnvRequire asks for a missing corpus to fail
// the tests that need it.
func Required() bool {
	v := os.Getenv(EnvRequire)
	return v != "" && v != "0"
}

// Dir returns the corpus subdirectory sub (Transcripts, Wild, ...). When
// the corpus is missing it skips tb, or fails it if Required; when the
// corpus is there but sub is not, it fails tb: a corpus that is present
// but incomplete is never a reason to skip.
func Dir(tb testing.TB, sub string) string {
	tb.Helper()
	root, err := Root()
	if err != nil {
		missing(tb, err)
	}
	dir := filepath.Join(root, filepath.FromSlash(sub))
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		tb.Fatalf("the shared corpus at %s has no directory %s (an incomplete corpus; get the whole of it)", root, sub)
	}
	return dir
}

// Path returns the corpus file name in the subdirectory sub, as Dir finds
// it, failing tb when the corpus is there but the file is not.
func Path(tb testing.TB, sub, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(tb, sub), filepath.FromSlash(name))
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("the shared corpus has no %s/%s: %v", sub, name, err)
	}
	return p
}

// ReadFile returns the bytes of a corpus file, as Path finds it.
func ReadFile(tb testing.TB, sub, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, sub, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// List returns the paths of the transcript files directly in the corpus
// subdirectory sub, sorted, leaving out notes and scripts (SOURCES.md and
// the like). It fails tb when the directory holds no transcript.
func List(tb testing.TB, sub string) []string {
	tb.Helper()
	dir := Dir(tb, sub)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && IsTranscript(e.Name()) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		tb.Fatalf("no transcripts in %s", dir)
	}
	slices.Sort(files)
	return files
}

// AllTranscripts returns the transcript files of every TranscriptDirs
// directory, in that order.
func AllTranscripts(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, sub := range TranscriptDirs {
		files = append(files, List(tb, sub)...)
	}
	return files
}

// IsTranscript reports whether a corpus file name is a transcript (by its
// extension) rather than one of the notes or scripts kept beside them.
func IsTranscript(name string) bool {
	switch filepath.Ext(name) {
	case ".json", ".jsonl", ".traj":
		return true
	}
	return false
}

// Available reports whether the corpus is there, for code that uses it
// when it can and does without it otherwise (fuzz seeds, optional
// comparisons). Tests whose point is the corpus call Dir instead, so that
// its absence is reported.
func Available() bool {
	_, err := Root()
	return err == nil
}

// missing skips tb, or fails it when Required or when EnvDir names a
// directory that is not there (a mistyped path must not pass as a skip),
// saying why.
func missing(tb testing.TB, err error) {
	tb.Helper()
	switch {
	case Required():
		tb.Fatalf("%v; %s is set, so a missing corpus is a failure", err, EnvRequire)
	case os.Getenv(EnvDir) != "":
		tb.Fatalf("%v; unset %s to skip the tests that need the corpus", err, EnvDir)
	}
	tb.Skipf("%v; set %s=1 to make this a failure", err, EnvRequire)
}
