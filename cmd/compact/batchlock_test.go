package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 14.4: a second batch on an --out another batch is writing exits 2
// and says which process holds it, or with --wait waits for it, and never
// makes the first fail. Before, both ran and removed each other's
// temporary files ("failed 39/41").
func TestBatchOneRunPerOut(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("s%02d.json", i)] = chat(30 + i)
	}
	writeFiles(t, in, files)
	// A batch running: the lock held as a batch holds it.
	unlock, err := lockBatchOutput(context.Background(), out, false, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--quiet"}, offline...)...)
	if code != exitUsage || !strings.Contains(stderr, "another compact batch (process "+fmt.Sprint(os.Getpid())+") is writing to") ||
		!strings.Contains(stderr, "--wait") {
		t.Fatalf("second batch: exit %d, %q", code, stderr)
	}
	if got := outputs(t, out); len(got) != 0 {
		t.Fatalf("the refused batch wrote %v", got)
	}
	// With --wait it runs once the first is done.
	var wg sync.WaitGroup
	var waitCode int
	var waitErr string
	wg.Add(1)
	go func() {
		defer wg.Done()
		waitCode, _, waitErr = runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--wait", "--quiet"}, offline...)...)
	}()
	time.Sleep(200 * time.Millisecond)
	unlock()
	wg.Wait()
	if waitCode != exitOK || !strings.Contains(waitErr, "waiting for the batch writing to") {
		t.Fatalf("--wait: exit %d, %q", waitCode, waitErr)
	}
	if got := outputs(t, out); len(got) != 12 {
		t.Fatalf("outputs %v", got)
	}
	// Two at once with --wait: both succeed, one after the other.
	out2 := t.TempDir()
	codes := make([]int, 2)
	errs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, errs[i] = runCmd(t, "", nil, append([]string{"batch", in, "--out", out2, "--wait", "--quiet", "-j", "2"}, offline...)...)
		}()
	}
	wg.Wait()
	if codes[0] != exitOK || codes[1] != exitOK {
		t.Fatalf("two batches with --wait: exits %v\n%s\n%s", codes, errs[0], errs[1])
	}
	if tmps, _ := filepath.Glob(filepath.Join(out2, ".*.tmp-*")); len(tmps) > 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
}
