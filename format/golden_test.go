package format

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites golden files instead of comparing with them:
// go test ./format/ -update. Defined once for the whole package's tests.
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with the file at path (under testdata/), or writes it
// when -update is set.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./format/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./format/ -update after checking the change):\n got: %s\nwant: %s", path, got, want)
	}
}
