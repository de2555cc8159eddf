package fallback

import (
	"fmt"
	"testing"
)

// sharedBaseIndex is an index of n relative paths sharing one base name
// (a monorepo's index.ts files), a bare mention of it, and n absolute
// paths the relative ones end.
func sharedBaseIndex(n int) *refIndex {
	x := newRefIndex()
	x.see(ref{kind: refPath, text: "index.ts"}, 0, srcAgent)
	for i := range n {
		x.see(ref{kind: refPath, text: fmt.Sprintf("packages/p%d/src/index.ts", i)}, i, srcArgs)
		x.see(ref{kind: refPath, text: fmt.Sprintf("/home/u/repo/apps/a%d/index.ts", i)}, i, srcResult)
	}
	return x
}

// BenchmarkPathsSharedBase: folding relative paths into the paths they
// end is linear in the paths, however many share a base name (it was
// quadratic: 80% of serve's 1M-token compaction).
func BenchmarkPathsSharedBase(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				x := sharedBaseIndex(n)
				b.StartTimer()
				x.paths()
			}
		})
	}
}

// TestPathsFoldRelativeIntoAbsolute: a relative path folds into the one
// absolute path it ends, a bare name into the one relative path it ends.
func TestPathsFoldRelativeIntoAbsolute(t *testing.T) {
	x := newRefIndex()
	x.see(ref{kind: refPath, text: "/home/u/repo/src/app/main.go"}, 0, srcResult)
	x.see(ref{kind: refPath, text: "src/app/main.go"}, 1, srcArgs)
	x.see(ref{kind: refPath, text: "packages/services/src/get.ts"}, 2, srcArgs)
	x.see(ref{kind: refPath, text: "get.ts"}, 3, srcAgent)
	x.see(ref{kind: refPath, text: "a/index.ts"}, 4, srcArgs)
	x.see(ref{kind: refPath, text: "b/index.ts"}, 5, srcArgs)
	x.see(ref{kind: refPath, text: "index.ts"}, 6, srcAgent)
	var got []string
	for _, r := range x.paths() {
		got = append(got, fmt.Sprintf("%s:%d", r.text, r.messages()))
	}
	want := []string{"/home/u/repo/src/app/main.go:2", "packages/services/src/get.ts:2", "a/index.ts:1", "b/index.ts:1", "index.ts:1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v (index.ts ends two paths: it stays apart)", got, want)
	}
	if x.root != "/home/u/repo" {
		t.Errorf("root %q, want /home/u/repo", x.root)
	}
}
