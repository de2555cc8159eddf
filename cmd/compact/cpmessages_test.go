package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestCheckpointToken (QA-14.2): the CLI issues a resume token for a
// session's pending action (the token alone on stdout), and resume
// --approve - takes it from stdin or $COMPACT_RESUME_TOKEN, off the
// command line.
func TestCheckpointToken(t *testing.T) {
	for _, via := range []string{"stdin", "env"} {
		dir := t.TempDir()
		seedStore(t, dir, checkpoint.Options{})
		vars := map[string]string{checkpointStoreEnv: dir, resumeKeyEnv: "resume-key-0123456789abcdef"}
		code, tok, errOut := runCmd(t, "", vars, "checkpoint", "token", "deploy", "--user", "alice", "--ttl", "5m")
		tok = strings.TrimSpace(tok)
		if code != 0 || tok == "" || strings.Contains(tok, "\n") || !strings.Contains(errOut, "approves deploy's pending deploy") || !strings.Contains(errOut, "by alice") {
			t.Fatalf("token: exit %d %q %q", code, tok, errOut)
		}
		stdin, env := tok+"\n", map[string]string{checkpointStoreEnv: dir, resumeKeyEnv: vars[resumeKeyEnv]}
		if via == "env" {
			stdin, env[resumeTokenEnv] = "", tok
		}
		code, out, errOut := runCmd(t, stdin, env, "checkpoint", "resume", "deploy", "--user", "alice", "--approve", "-")
		if code != 0 || !strings.Contains(out, "approved deploy's pending action as alice") {
			t.Fatalf("%s: resume --approve -: exit %d\n%s%s", via, code, out, errOut)
		}
		// Used once: the same token again is refused.
		code, out, errOut = runCmd(t, stdin, env, "checkpoint", "resume", "deploy", "--user", "alice", "--approve", "-")
		if code != 1 {
			t.Fatalf("%s: the token approved twice: exit %d\n%s%s", via, code, out, errOut)
		}
	}

	dir := t.TempDir()
	seedStore(t, dir, checkpoint.Options{})
	vars := map[string]string{checkpointStoreEnv: dir, resumeKeyEnv: "resume-key-0123456789abcdef"}
	code, out, _ := runCmd(t, "", vars, "checkpoint", "token", "deploy", "--user", "alice", "--json")
	var rep tokenReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Token == "" || rep.Tool != "deploy" || rep.User != "alice" ||
		rep.ParamsSHA256 == "" || time.Until(rep.ExpiresAt) < 9*time.Minute || time.Until(rep.ExpiresAt) > 11*time.Minute {
		t.Fatalf("token --json: exit %d %s", code, out)
	}
	if err := (checkpoint.Tokens{Key: []byte(vars[resumeKeyEnv])}).Verify(rep.Token, "deploy", "alice", rep.ParamsSHA256); err != nil {
		t.Fatalf("the issued token does not verify: %v", err)
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		code int
		want string
	}{
		{vars, []string{"token", "docs", "--user", "alice"}, 1, "no action waits for approval"},
		{vars, []string{"token", "nosuch", "--user", "alice"}, 1, "not found"},
		{vars, []string{"token", "deploy"}, 2, "--user"},
		{vars, []string{"token", "deploy", "--user", "alice", "--ttl", "-1m"}, 2, "--ttl"},
		{map[string]string{checkpointStoreEnv: dir}, []string{"token", "deploy", "--user", "alice"}, 2, resumeKeyEnv},
		{vars, []string{"resume", "deploy", "--user", "alice", "--approve", "-"}, 2, "no token on stdin and $" + resumeTokenEnv},
	} {
		code, out, errOut := runCmd(t, "", c.env, append([]string{"checkpoint"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}
}

// TestCheckpointRecoverStartOver (QA-31): a session whose first batch is
// damaged has nothing to recover; recover says --start-over, which sets the
// damaged log aside, after which compact --checkpoint saves again.
func TestCheckpointRecoverStartOver(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, checkpoint.Options{})
	logPath := filepath.Join(dir, "docs", "log")
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), data...)
	damaged[20] ^= 0x5a // inside the first batch, which every checkpoint shares
	os.WriteFile(logPath, damaged, 0o600)
	vars := map[string]string{checkpointStoreEnv: dir}
	out, errOut, code := cpRun(t, vars, "checkpoint", "recover", "docs")
	if code != 1 || !strings.Contains(errOut, "--start-over") {
		t.Fatalf("recover: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = cpRun(t, vars, "checkpoint", "recover", "--start-over", "docs")
	if code != 0 || !strings.Contains(out, "the damaged log is kept as "+filepath.Join(dir, "docs", "log.damaged-")) {
		t.Fatalf("recover --start-over: exit %d\n%s%s", code, out, errOut)
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "docs", "log.damaged-*"))
	if len(aside) != 1 {
		t.Fatalf("set aside: %v", aside)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, damaged) {
		t.Error("the damaged log was not kept as it was")
	}
	in := filepath.Join(t.TempDir(), "chat.json")
	os.WriteFile(in, []byte(chat(40)), 0o600)
	if code, _, stderr := runCmd(t, "", vars, "--force", "--summarizer", "fallback", "--checkpoint", dir, "--session", "docs",
		"-o", filepath.Join(t.TempDir(), "out.json"), in); code != 0 {
		t.Fatalf("save after starting over: exit %d %s", code, stderr)
	}
	if out, errOut, code := cpRun(t, vars, "checkpoint", "verify"); code != 0 {
		t.Errorf("verify after starting over: exit %d\n%s%s", code, out, errOut)
	}
	// A readable session is not started over.
	if _, errOut, code := cpRun(t, vars, "checkpoint", "recover", "--start-over", "deploy"); code != 0 || errOut != "" {
		t.Errorf("recover --start-over of a readable session: exit %d %s", code, errOut)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "deploy", "log.damaged-*")); len(got) != 0 {
		t.Errorf("a readable session was set aside: %v", got)
	}
}
