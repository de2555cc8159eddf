package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// TestCheckpointEncryptedSessionWithoutKey (QA-8.2): a store holding an
// encrypted session, used without its key: list shows it from its clear
// record meta, exit 0; verify says to set the key, not to recover; recover
// and show say the same, never "corrupt".
func TestCheckpointEncryptedSessionWithoutKey(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, checkpoint.Options{})
	key := bytes.Repeat([]byte{5}, 32)
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	c := storetest.Sample("enc1", 0)
	if err := s.Save(context.Background(), c, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	vars := map[string]string{checkpointStoreEnv: dir}
	out, errOut, code := cpRun(t, vars, "checkpoint", "list")
	if code != 0 || !regexpLine(out, `^enc1\s+running\s+1\s+\?\s+\S+ \S+\s+\(encrypted with key [0-9a-f]+; set \$`+checkpointKeyEnv+`\)$`) ||
		strings.Count(out, "\n") != 6 {
		t.Errorf("list: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = cpRun(t, vars, "checkpoint", "verify")
	if code != 1 || !strings.Contains(errOut, "1 encrypted session(s) not verified: enc1 (set $"+checkpointKeyEnv) ||
		strings.Contains(errOut, "recover") || strings.Contains(out+errOut, "corrupt") || strings.Count(out, "not verified") != 1 {
		t.Errorf("verify: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"checkpoint", "recover", "enc1"}, {"checkpoint", "show", "enc1"}} {
		out, errOut, code = cpRun(t, vars, args...)
		if code != 1 || strings.Contains(errOut, "corrupt") || !strings.Contains(errOut, "set $"+checkpointKeyEnv) {
			t.Errorf("%s: exit %d\n%s%s", args[1], code, out, errOut)
		}
	}
	// With the key, all is well.
	withKey := map[string]string{checkpointStoreEnv: dir, checkpointKeyEnv: hex.EncodeToString(key)}
	if out, errOut, code := cpRun(t, withKey, "checkpoint", "verify"); code != 0 {
		t.Errorf("verify with the key: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCheckpointEmptyAndUnknownSessions (QA-8.1): an empty log left by a
// first save that failed is no session (verify is clean); recovering a
// session that does not exist says it is not found.
func TestCheckpointEmptyAndUnknownSessions(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, checkpoint.Options{})
	os.MkdirAll(filepath.Join(dir, "s2"), 0o700)
	os.WriteFile(filepath.Join(dir, "s2", "log"), nil, 0o600)
	vars := map[string]string{checkpointStoreEnv: dir}
	if out, errOut, code := cpRun(t, vars, "checkpoint", "verify"); code != 0 || strings.Contains(out, "s2") {
		t.Errorf("verify with an empty log: exit %d\n%s%s", code, out, errOut)
	}
	for _, session := range []string{"s2", "nosuch"} {
		out, errOut, code := cpRun(t, vars, "checkpoint", "recover", session)
		if code != 1 || !strings.Contains(errOut, "checkpoint not found: session "+session) || strings.Contains(errOut, "corrupt") {
			t.Errorf("recover %s: exit %d\n%s%s", session, code, out, errOut)
		}
	}
}
