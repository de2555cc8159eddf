package redact

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// TestRedactToMatchesRedact: writing a large document piece by piece gives
// the bytes and findings Redact gives, for JSON Lines, a JSON array and
// text, with secrets on both sides of every cut.
func TestRedactToMatchesRedact(t *testing.T) {
	line := func(i int) string {
		return `{"n":` + strings.Repeat("1", 1+i%3) + `,"content":"GITHUB_TOKEN=` + tGitHub + `\nsk: ` + tOpenAI + ` x\u00e9 \u201c` + tGitHub2 + `\u201d","pad":"` + strings.Repeat("y", 300) + `"}`
	}
	var jl, arr strings.Builder
	arr.WriteString("[\n")
	for i := 0; i < 3000; i++ {
		jl.WriteString(line(i) + "\n")
		if i > 0 {
			arr.WriteString(",\n  ")
		}
		arr.WriteString(line(i))
	}
	arr.WriteString("\n]\n")
	text := strings.Repeat("password="+tPassword+" and a line of text\nAuthorization: Bearer "+tJWT+"\n", 9000)
	docs := map[string]string{"jsonl": jl.String(), "array": arr.String(), "text": text}
	if corpus.Available() {
		if files, _ := filepath.Glob(filepath.Join(corpus.Dir(t, "wild"), "entire", "*.jsonl")); len(files) > 0 {
			var b strings.Builder
			for _, f := range files[:min(len(files), 6)] {
				raw, _ := os.ReadFile(f)
				b.Write(raw)
			}
			docs["corpus"] = b.String()
		}
	}
	r := newTestRedactor(t)
	for name, doc := range docs {
		if len(doc) <= pieceBytes {
			t.Fatalf("%s: %d bytes, no cut to test", name, len(doc))
		}
		want, wantFound := r.Redact(doc)
		var got bytes.Buffer
		found, err := r.NewScope().RedactTo(&got, doc)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%s: RedactTo and Redact differ (%d and %d bytes)", name, got.Len(), len(want))
		}
		if len(found) != len(wantFound) {
			t.Errorf("%s: %d findings, Redact %d", name, len(found), len(wantFound))
		}
		for i := range min(len(found), len(wantFound)) {
			if found[i].Start != wantFound[i].Start || found[i].End != wantFound[i].End {
				t.Errorf("%s: finding %d at %d-%d, Redact %d-%d", name, i, found[i].Start, found[i].End, wantFound[i].Start, wantFound[i].End)
				break
			}
		}
	}
}
