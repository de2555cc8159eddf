package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-39.4: a store directory that cannot be read is said once (the log
// store and the older layout's listing both read it, and both errors were
// joined: the same line twice).
func TestUnreadableStoreSaidOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := NewFileStore(dir, Options{Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The directory becomes a file under the open store: every read of
	// it fails (as "permission denied" does for another user).
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.List(context.Background(), Filter{})
	if err == nil {
		t.Fatal("List of an unreadable store: no error")
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 1 {
		t.Errorf("the error is said %d times: %q", len(lines), err)
	}
}
