package main

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
)

// TestCompactionSweep compacts real transcripts with the deterministic
// fallback at two windows and checks what a user resuming the output would
// meet: exit 0; the output reads back in the input's format; it has no
// orphan the input did not have; and compact check finds nothing in it the
// input did not already have (no broken chain, no split pair, no split
// model turn). It covers every file of transcripts/, wild/ and
// wild/entire/ (about 5 s); with -short, the first file of each format and
// layout.
func TestCompactionSweep(t *testing.T) {
	files := corpus.AllTranscripts(t)
	if testing.Short() {
		files = sweepSample(t, files)
	}
	dir := t.TempDir()
	for _, file := range files {
		in := readTranscriptFile(t, file)
		inProblems := problemSet(t, file)
		for _, window := range []int{16000, 8000} {
			name := filepath.Base(file) + "@" + strconv.Itoa(window)
			out := filepath.Join(dir, name)
			code, _, stderr := runCmd(t, "", nil, "--summarizer", "fallback", "--force", "--window", strconv.Itoa(window), "-o", out, file)
			if code != exitOK && code != exitOverWindow { // over the window: written all the same
				t.Errorf("%s: exit %d: %s", name, code, stderr)
				continue
			}
			got := readTranscriptFile(t, out)
			if got.Format != in.Format {
				t.Errorf("%s: read back as %s, want %s", name, got.Format, in.Format)
			}
			had := map[string]bool{}
			for _, o := range in.Orphans() {
				had[string(o.Kind)+" "+o.CallID] = true
			}
			for _, o := range got.Orphans() {
				if !had[string(o.Kind)+" "+o.CallID] {
					t.Errorf("%s: new orphan: %s %q at message %d", name, o.Kind, o.CallID, o.Index)
				}
			}
			for _, p := range problemList(t, out) {
				if !inProblems[p.Kind] {
					t.Errorf("%s: compact check: %s (%s)", name, p, p.Kind)
				}
			}
		}
	}
	t.Logf("%d files at 2 windows", len(files))
}

// sweepSample is the first file of each format and layout (by the
// detected format and the file name's agent prefix), plus the files whose
// names say they hold something special.
func sweepSample(t *testing.T, files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		base := filepath.Base(f)
		key, _, _ := strings.Cut(base, "_")
		if strings.Contains(f, "/entire/") {
			key = "entire"
		}
		key += filepath.Ext(base)
		special := strings.Contains(base, "compact") || strings.Contains(base, "two_records") ||
			strings.Contains(base, "v1_") || strings.Contains(base, "jsonl_") || strings.Contains(base, "open_call")
		if !seen[key] || special {
			seen[key] = true
			out = append(out, f)
		}
	}
	return out
}

// problemList runs compact check's logic on a file.
func problemList(t *testing.T, path string) []format.Problem {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, problems, err := format.Check(data, path, "")
	if err != nil {
		t.Fatalf("check %s: %v", path, err)
	}
	return problems
}

// problemSet is the kinds of problem a file has: compaction may keep them,
// never add one.
func problemSet(t *testing.T, path string) map[string]bool {
	set := map[string]bool{}
	for _, p := range problemList(t, path) {
		set[p.Kind] = true
	}
	return set
}

var (
	cutsPerFile = flag.Int("cuts", 1, "TestCompactionNeverSplitsAModelTurn: random cuts per corpus file")
	cutsSeed    = flag.Uint64("cuts-seed", 1, "TestCompactionNeverSplitsAModelTurn: seed of the cuts (0: a new one each run)")
)

// TestCompactionNeverSplitsAModelTurn: whatever the window, the head and
// the tail budget, compacting a real transcript never leaves reasoning cut
// off from the text or calls of its turn, nor a call from its result: the
// property DESIGN.md states for every format, over every corpus file and
// cuts drawn at random (-cuts per file, from -cuts-seed: fixed by default,
// so CI runs the same cuts; -cuts-seed 0 draws new ones and prints the
// seed).
func TestCompactionNeverSplitsAModelTurn(t *testing.T) {
	files := corpus.AllTranscripts(t)
	seed := *cutsSeed
	if seed == 0 {
		seed = rand.Uint64()
		t.Logf("-cuts-seed %d", seed)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, file := range files {
		in := readTranscriptFile(t, file)
		before := splitTurns(&in)
		had := map[string]bool{}
		for _, o := range in.Orphans() {
			had[string(o.Kind)+" "+o.CallID] = true
		}
		for k := 0; k < *cutsPerFile; k++ {
			window, head, tail := 2000+rng.IntN(62000), rng.IntN(5), rng.IntN(20000)
			args := []string{"--summarizer", "fallback", "--force", "--window", strconv.Itoa(window),
				"--keep-head", strconv.Itoa(head), "--keep-tail-tokens", strconv.Itoa(tail), "-o", out, file}
			code, _, stderr := runCmd(t, "", nil, args...)
			if code != exitOK && code != exitOverWindow { // over the window: written all the same
				t.Errorf("compact %s: exit %d: %s", strings.Join(args, " "), code, stderr)
				continue
			}
			got := readTranscriptFile(t, out)
			for _, id := range splitTurns(&got) {
				if !slices.Contains(before, id) {
					t.Errorf("compact %s: message %s: reasoning cut off from its turn", strings.Join(args, " "), id)
				}
			}
			for _, o := range got.Orphans() {
				if !had[string(o.Kind)+" "+o.CallID] {
					t.Errorf("compact %s: new orphan %s %q", strings.Join(args, " "), o.Kind, o.CallID)
				}
			}
		}
	}
}

// splitTurns returns the ids of assistant messages holding only reasoning
// that the next message does not continue (an assistant message), in any
// format.
func splitTurns(t *compact.Transcript) []string {
	var ids []string
	for i := 0; i+1 < len(t.Messages); i++ {
		m := &t.Messages[i]
		only := m.Role == compact.RoleAssistant && len(m.Parts) > 0 &&
			!slices.ContainsFunc(m.Parts, func(p compact.Part) bool { return p.Type != compact.PartThinking })
		if only && t.Messages[i+1].Role != compact.RoleAssistant {
			ids = append(ids, m.ID)
		}
	}
	return ids
}
