package format

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactkit/compact/internal/sample"
)

// TestReadWholeSizedByFile: a file is read into one buffer of its size
// (no chunks joined), from wherever it stands, and a file read through
// ReadWith gives what the same bytes from memory give.
func TestReadWholeSizedByFile(t *testing.T) {
	dir := t.TempDir()
	for _, f := range sample.Files(1) {
		path := filepath.Join(dir, f.Name)
		if err := os.WriteFile(path, f.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := sizeOf(file); got != int64(len(f.Data)) {
			t.Errorf("%s: sizeOf = %d, want %d", f.Name, got, len(f.Data))
		}
		buf, err := readWhole(file)
		if err != nil || !bytes.Equal(buf, f.Data) || cap(buf) != len(buf) {
			t.Errorf("%s: readWhole: %d bytes (cap %d), %v; want the file's %d", f.Name, len(buf), cap(buf), err, len(f.Data))
		}
		if _, err := file.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		fromFile, err := ReadWith(file, f.Name, "", ReadOptions{})
		file.Close()
		if err != nil {
			t.Fatal(err)
		}
		fromMemory, err := ReadWith(bytes.NewReader(f.Data), f.Name, "", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromFile, fromMemory) {
			t.Errorf("%s: read from the file and from memory differ", f.Name)
		}
	}
	// A reader of unknown size (a pipe) is read in chunks all the same.
	if got := sizeOf(bytes.NewBufferString("x")); got != -1 {
		t.Errorf("sizeOf(a buffer) = %d, want -1", got)
	}
}
