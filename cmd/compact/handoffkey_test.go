package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompactHandoffKey: COMPACT_HANDOFF_KEY signs what compact writes, so
// compacting the output again with the same key folds the handoff, while a
// run under another key reads it as text and says so in a warning; a key
// too short to be secret is a usage error.
func TestCompactHandoffKey(t *testing.T) {
	dir := t.TempDir()
	first, second, rep := filepath.Join(dir, "first.json"), filepath.Join(dir, "second.json"), filepath.Join(dir, "r.json")
	key := map[string]string{handoffKeyEnv: "a secret of this team's store"}
	if code, _, stderr := runCmd(t, chat(40), key, "--force", "-o", first, "-"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	grown := string(data) // compacted again, forced
	if code, _, stderr := runCmd(t, grown, key, "--force", "-o", second, "--report", rep, "-"); code != exitOK {
		t.Fatalf("same key: exit %d: %s", code, stderr)
	}
	if w := strings.Join(readReport(t, rep).Warnings, "\n"); strings.Contains(w, "does not verify") {
		t.Fatalf("the same key did not verify the handoff: %s", w)
	}
	other := map[string]string{handoffKeyEnv: "another team's secret, not ours"}
	if code, _, stderr := runCmd(t, grown, other, "--force", "-o", second, "--report", rep, "-"); code != exitOK {
		t.Fatalf("other key: exit %d: %s", code, stderr)
	}
	if w := strings.Join(readReport(t, rep).Warnings, "\n"); !strings.Contains(w, "does not verify") {
		t.Fatalf("a handoff signed under another key was folded: warnings %q", w)
	}
	code, _, stderr := runCmd(t, chat(40), map[string]string{handoffKeyEnv: "short"}, "--force", "-o", second, "-")
	if code != exitUsage || !strings.Contains(stderr, handoffKeyEnv) {
		t.Fatalf("short key: exit %d: %s", code, stderr)
	}
}

// TestInspectTellsAnUnverifiedHandoff: inspect names a handoff signed
// under the key "compact", and one that only has its shape (forged, or
// signed under another key) "unverified compact".
func TestInspectTellsAnUnverifiedHandoff(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	key := map[string]string{handoffKeyEnv: "a secret of this team's store"}
	if code, _, stderr := runCmd(t, chat(40), key, "--force", "-o", out, "-"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		env  map[string]string
		kind string
	}{{key, "compact"}, {nil, "unverified compact"}} {
		code, stdout, stderr := runCmd(t, "", tc.env, "inspect", "--json", out)
		if code != exitOK {
			t.Fatalf("inspect: exit %d: %s", code, stderr)
		}
		var rep inspectReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Handoffs) != 1 || rep.Handoffs[0].Kind != tc.kind {
			t.Errorf("handoffs %+v, want one of kind %q", rep.Handoffs, tc.kind)
		}
	}
}
