package redact

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden redacts the documents under testdata/golden (an env dump, a
// YAML config with a Kubernetes Secret, a Claude Code session, an HTTP log,
// and a file of look-alikes that must survive) and compares the output and
// the findings with the .golden files. Regenerate with go test -update.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/golden/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			r := newTestRedactor(t)
			out, found := r.RedactBytes(raw)
			var b strings.Builder
			b.Write(out)
			b.WriteString("\n--- findings (rule start end)\n")
			for _, f := range found {
				fmt.Fprintf(&b, "%s %d %d\n", f.Rule, f.Start, f.End)
			}
			golden := in + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", in, golden, b.String())
			}
			if strings.HasPrefix(filepath.Base(in), "negatives") && len(found) > 0 {
				t.Errorf("look-alikes masked: %v", found)
			}
		})
	}
	if n == 0 {
		t.Fatal("no golden inputs")
	}
}
