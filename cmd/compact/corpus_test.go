package main

import (
	"path/filepath"
	"testing"
)

// corpusDir is the repository's one copy of the shared corpus of real
// transcripts. Beside them are SOURCES.md and expect.py, which are not
// transcripts.
const corpusDir = "../../testdata/corpus/transcripts"

// isCorpusTranscript reports whether name, a file of corpusDir, is a
// transcript rather than one of the notes kept beside them.
func isCorpusTranscript(name string) bool {
	switch filepath.Ext(name) {
	case ".json", ".jsonl", ".traj":
		return true
	}
	return false
}

// corpusTranscripts lists the corpus transcripts. The corpus is part of the
// repository, so finding none is a failure, not a reason to skip.
func corpusTranscripts(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if isCorpusTranscript(f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no transcripts in %s", corpusDir)
	}
	return out
}
