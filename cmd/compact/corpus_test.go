package main

import (
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// corpusDir returns the directory of the shared corpus's real transcripts
// (beside them is SOURCES.md, which is not one). It skips t where the
// corpus is missing and fails it under COMPACT_REQUIRE_CORPUS.
func corpusDir(t testing.TB) string {
	t.Helper()
	return corpus.Dir(t, corpus.Transcripts)
}

// corpusPath returns the path of a transcript of the shared corpus, as
// corpusDir finds it; a corpus without the file fails t.
func corpusPath(t testing.TB, name string) string {
	t.Helper()
	return corpus.Path(t, corpus.Transcripts, name)
}

// corpusTranscripts lists the shared corpus's transcripts, as corpusDir
// finds them; a corpus directory without any fails t.
func corpusTranscripts(t testing.TB) []string {
	t.Helper()
	return corpus.List(t, corpus.Transcripts)
}
