package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/redact"
)

// cpRun runs one command line with the given environment and returns
// stdout, stderr and the exit code.
func cpRun(t *testing.T, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut,
		getenv: func(k string) string { return vars[k] }}
	code := run(context.Background(), e, args)
	return out.String(), errOut.String(), code
}

// seedStore fills a FileStore with sessions in several states.
func seedStore(t *testing.T, dir string, opts checkpoint.Options) map[string]*checkpoint.Checkpoint {
	t.Helper()
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*checkpoint.Checkpoint{}
	for name, st := range map[string]checkpoint.Status{
		"build-fix": checkpoint.StatusFailed, "docs": checkpoint.StatusCompleted,
		"deploy": checkpoint.StatusWaitingApproval, "paused-one": checkpoint.StatusPaused,
	} {
		c := storetest.Sample(name, 0)
		c.Status = st
		if name == "docs" {
			c.Task = "write the release notes"
		}
		if err := s.Save(ctx, c, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, c, c.ID); err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	return out
}

func TestCheckpointListShowHistory(t *testing.T) {
	dir := t.TempDir()
	seeded := seedStore(t, dir, checkpoint.Options{})
	vars := map[string]string{checkpointStoreEnv: dir}

	out, errOut, code := cpRun(t, vars, "checkpoint", "list")
	if code != 0 || !strings.Contains(out, "SESSION") || strings.Count(out, "\n") != 5 {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "list", "--status", "failed,paused", "--json")
	var infos []checkpoint.SessionInfo
	if code != 0 || json.Unmarshal([]byte(out), &infos) != nil || len(infos) != 2 {
		t.Fatalf("list --status --json: %d %s", code, out)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "list", "--like", "fix the failing build", "--json")
	var matches []checkpoint.Match
	if code != 0 || json.Unmarshal([]byte(out), &matches) != nil || len(matches) != 2 || matches[0].Score < 0.3 {
		t.Fatalf("list --like: %d %s", code, out)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "list", "--like", "write release notes")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("list --like with no match (docs is completed): %d %q", code, out)
	}

	out, _, code = cpRun(t, vars, "checkpoint", "show", "build-fix")
	for _, want := range []string{"build-fix", "failed", "seq 2", "fix the failing build", "STEP", "go_test", "error: exit status 1", seeded["build-fix"].Hash} {
		if !strings.Contains(out, want) {
			t.Errorf("show: missing %q in\n%s", want, out)
		}
	}
	if code != 0 {
		t.Fatalf("show: exit %d", code)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "show", "build-fix", seeded["build-fix"].ParentID, "--json")
	var c checkpoint.Checkpoint
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Seq != 1 || c.Transcript == nil {
		t.Fatalf("show ID --json: %d %.300s", code, out)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "history", "build-fix", "--json")
	var h []checkpoint.Meta
	if code != 0 || json.Unmarshal([]byte(out), &h) != nil || len(h) != 2 || h[0].ID != seeded["build-fix"].ID {
		t.Fatalf("history: %d %s", code, out)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "history", "build-fix")
	if code != 0 || !strings.Contains(out, "plain") || strings.Count(out, "\n") != 3 {
		t.Fatalf("history text: %d %q", code, out)
	}
}

func TestCheckpointExitCodes(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, checkpoint.Options{})
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"checkpoint"}, 2, "missing subcommand"},
		{[]string{"checkpoint", "--help"}, 0, ""},
		{[]string{"checkpoint", "frobnicate"}, 2, "unknown subcommand"},
		{[]string{"checkpoint", "list", "--status", "sleepy"}, 2, "unknown status"},
		{[]string{"checkpoint", "list", "--bogus"}, 2, "bogus"},
		{[]string{"checkpoint", "show"}, 2, "want SESSION"},
		{[]string{"checkpoint", "show", "../etc"}, 2, "session ID"},
		{[]string{"checkpoint", "show", "nobody"}, 1, "not found"},
		{[]string{"checkpoint", "show", "docs", "00000009-ffffffffffff"}, 1, "not found"},
		{[]string{"checkpoint", "history", "nobody"}, 1, "not found"},
		{[]string{"checkpoint", "resume", "docs"}, 1, "completed"},
		{[]string{"checkpoint", "resume", "deploy", "--approve", "x"}, 2, "go together"},
		{[]string{"checkpoint", "prune", "--keep", "-1"}, 2, "negative"},
		{[]string{"checkpoint", "verify", "a/b"}, 2, "not a session ID"},
		{[]string{"checkpoint", "list", "--store", "http://example.com"}, 2, "redis://"},
	}
	vars := map[string]string{checkpointStoreEnv: dir}
	for _, tc := range tests {
		_, errOut, code := cpRun(t, vars, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
}

func TestCheckpointResumeAndApprove(t *testing.T) {
	dir := t.TempDir()
	seeded := seedStore(t, dir, checkpoint.Options{})
	resumeKey := "resume-key-0123456789abcdef"
	vars := map[string]string{checkpointStoreEnv: dir, resumeKeyEnv: resumeKey}

	out, _, code := cpRun(t, vars, "checkpoint", "resume", "build-fix")
	if code != 0 || !strings.Contains(out, "next: step build (go_build {})") || !strings.Contains(out, "reset to pending: build, test") {
		t.Fatalf("resume: %d %q", code, out)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "resume", "build-fix", "--save", "--json")
	var rep resumeReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Saved == "" || rep.Next.ID != "build" || rep.Status != checkpoint.StatusRunning {
		t.Fatalf("resume --save: %d %s", code, out)
	}
	s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	latest, _ := s.Latest(context.Background(), "build-fix")
	if latest.ID != rep.Saved || latest.Status != checkpoint.StatusRunning || latest.Steps[2].Status != checkpoint.StepPending {
		t.Fatalf("saved resume state: %+v", latest)
	}

	out, _, code = cpRun(t, vars, "checkpoint", "resume", "deploy")
	if code != 0 || !strings.Contains(out, "waiting for approval: deploy") {
		t.Fatalf("resume of a waiting session: %d %q", code, out)
	}
	tokens := checkpoint.Tokens{Key: []byte(resumeKey)}
	tok, _ := tokens.Issue("deploy", "alice", seeded["deploy"].Pending.ParamsHash, time.Hour)
	_, errOut, code := cpRun(t, vars, "checkpoint", "resume", "deploy", "--user", "bob", "--approve", tok)
	if code != 1 || !strings.Contains(errOut, "another user") {
		t.Fatalf("approve as another user: %d %q", code, errOut)
	}
	_, errOut, code = cpRun(t, map[string]string{checkpointStoreEnv: dir}, "checkpoint", "resume", "deploy", "--user", "alice", "--approve", tok)
	if code != 2 || !strings.Contains(errOut, resumeKeyEnv) {
		t.Fatalf("approve without a key: %d %q", code, errOut)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "resume", "deploy", "--user", "alice", "--approve", tok)
	if code != 0 || !strings.Contains(out, "approved") || !strings.Contains(out, "running, 1 retries") {
		t.Fatalf("approve: %d %q", code, out)
	}
}

func TestCheckpointPruneVerify(t *testing.T) {
	dir := t.TempDir()
	seeded := seedStore(t, dir, checkpoint.Options{})
	vars := map[string]string{checkpointStoreEnv: dir}
	out, _, code := cpRun(t, vars, "checkpoint", "verify")
	if code != 0 || !strings.Contains(out, "checked 8 checkpoints: 0 problems") {
		t.Fatalf("verify: %d %q", code, out)
	}
	// Damage the end of one session's log: verify names the session and
	// fails; prune leaves it whole and says so; recover goes back to its
	// newest checkpoint that verifies.
	logPath := filepath.Join(dir, "docs", "log")
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-40] ^= 0x20
	os.WriteFile(logPath, data, 0o600)
	out, _, code = cpRun(t, vars, "checkpoint", "verify", "--json")
	var rep struct {
		Checked  int
		Problems []checkpoint.Problem
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Problems) == 0 {
		t.Fatalf("verify damaged: %d %s", code, out)
	}
	for _, p := range rep.Problems {
		if p.Session != "docs" {
			t.Fatalf("verify damaged: problem %+v", p)
		}
	}
	out, errOut, code := cpRun(t, vars, "checkpoint", "prune", "--keep", "1")
	if code != 1 || out != "pruned 3 checkpoints, 0 whole sessions\n" || !strings.Contains(errOut, "docs") {
		t.Fatalf("prune: %d %q %q", code, out, errOut)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "recover", "docs")
	if code != 0 || !strings.Contains(out, "docs: head is checkpoint "+seeded["docs"].ParentID) {
		t.Fatalf("recover: %d %q", code, out)
	}
	if out, _, code = cpRun(t, vars, "checkpoint", "verify"); code != 0 || !strings.Contains(out, "checked 4 checkpoints: 0 problems") {
		t.Fatalf("verify after recover: %d %q", code, out)
	}
}

// TestCheckpointDamagedLogSurfaces is QA-1 through the CLI: one damaged
// byte in a log's first batch header makes the session DAMAGED in list,
// verify names the byte, and the compaction command's save fails instead
// of starting the session over (the log keeps its bytes).
func TestCheckpointDamagedLogSurfaces(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, checkpoint.Options{})
	vars := map[string]string{checkpointStoreEnv: dir}
	logPath := filepath.Join(dir, "docs", "log")
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-40] ^= 0x40 // in the head's record, the log's last frame
	os.WriteFile(logPath, data, 0o600)
	out, errOut, code := cpRun(t, vars, "checkpoint", "list")
	if code != 1 || !regexpLine(out, `^docs\s+DAMAGED\s+\d+\s.*log damaged at byte \d+`) || !strings.Contains(out, "build-fix") ||
		!strings.Contains(errOut, "1 damaged session(s): docs") {
		t.Fatalf("list: %d\n%s%s", code, out, errOut)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "list", "--json")
	var infos []checkpoint.SessionInfo
	if code != 1 || json.Unmarshal([]byte(out), &infos) != nil || len(infos) != 4 {
		t.Fatalf("list --json: %d %s", code, out)
	}
	out, _, code = cpRun(t, vars, "checkpoint", "verify", "docs")
	if code != 1 || !regexpLine(out, `log damaged at byte \d+: frame checksum does not match`) {
		t.Fatalf("verify: %d %q", code, out)
	}
	in := filepath.Join(t.TempDir(), "chat.json")
	os.WriteFile(in, []byte(chat(40)), 0o600)
	_, _, errOut = runCmd(t, "", vars, "--force", "--summarizer", "fallback", "--checkpoint", dir, "--session", "docs",
		"-o", filepath.Join(t.TempDir(), "out.json"), in)
	if !regexpLine(errOut, "log damaged at byte \\d+") {
		t.Errorf("compact --checkpoint over the damaged session: %q", errOut)
	}
	if after, _ := os.ReadFile(logPath); !bytes.Equal(after, data) {
		t.Errorf("the damaged log was rewritten: %d bytes, was %d", len(after), len(data))
	}
}

func regexpLine(text, pattern string) bool {
	return regexp.MustCompile(`(?m)` + pattern).MatchString(text)
}

func TestCheckpointEncryptedStore(t *testing.T) {
	dir := t.TempDir()
	key := bytes.Repeat([]byte{5}, 32)
	seedStore(t, dir, checkpoint.Options{Key: key})
	vars := map[string]string{checkpointStoreEnv: dir, checkpointKeyEnv: hex.EncodeToString(key)}
	if out, _, code := cpRun(t, vars, "checkpoint", "show", "docs"); code != 0 || !strings.Contains(out, "release notes") {
		t.Fatalf("show with the key: %d %q", code, out)
	}
	_, errOut, code := cpRun(t, map[string]string{checkpointStoreEnv: dir}, "checkpoint", "show", "docs")
	if code != 1 || !strings.Contains(errOut, "encrypted") {
		t.Fatalf("show without the key: %d %q", code, errOut)
	}
	_, errOut, code = cpRun(t, map[string]string{checkpointStoreEnv: dir, checkpointKeyEnv: "zz"}, "checkpoint", "list")
	if code != 2 || !strings.Contains(errOut, checkpointKeyEnv) {
		t.Fatalf("bad key: %d %q", code, errOut)
	}
}

// The compaction command's checkpoint helper: a compacted transcript and
// its record become the session's next checkpoint, redacted when asked.
func TestSaveCompactionCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	r, _ := redact.New(redact.Config{})
	r.AddValue(secret)
	tr := compact.Transcript{Messages: []compact.Message{
		{ID: "1", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "deploy with " + secret}}},
	}}
	rec := compact.Compaction{SourceHash: tr.Hash(), Method: compact.MethodFallback, TokensBefore: 900, TokensAfter: 300}
	for i := range 2 {
		c, err := saveCompactionCheckpoint(ctx, e, dir, "sess-1", tr, rec, r)
		if err != nil {
			t.Fatal(err)
		}
		if c.Seq != int64(i+1) || len(c.Compactions) != i+1 || c.Status != checkpoint.StatusRunning {
			t.Fatalf("save %d: %+v", i, c)
		}
	}
	var stored []byte
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			stored = append(stored, b...)
		}
		return nil
	})
	if bytes.Contains(stored, []byte(secret)) {
		t.Fatal("the secret was stored")
	}
	if _, err := saveCompactionCheckpoint(ctx, e, dir, "../x", tr, rec, nil); exitCode(err) != exitUsage {
		t.Fatalf("bad session: %v", err)
	}
}

// With a redis-server on PATH, the same commands work against Redis.
func TestCheckpointRedisStore(t *testing.T) {
	srv := storetest.StartRedis(t)
	spec := "redis://" + srv.Addr() + "/3"
	vars := map[string]string{}
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	c, err := saveCompactionCheckpoint(context.Background(), e, spec, "redis-sess", compact.Transcript{}, compact.Compaction{Method: compact.MethodNone}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cpRun(t, vars, "checkpoint", "show", "redis-sess", "--store", spec)
	if code != 0 || !strings.Contains(out, c.ID) {
		t.Fatalf("show on redis: %d %q %q", code, out, errOut)
	}
	if out, _, code := cpRun(t, vars, "checkpoint", "verify", "--store", spec); code != 0 || !strings.Contains(out, "checked 1") {
		t.Fatalf("verify on redis: %d %q", code, out)
	}
	srv.Stop()
	_, errOut, code = cpRun(t, vars, "checkpoint", "list", "--store", spec)
	if code != 1 || !strings.Contains(errOut, "unavailable") {
		t.Fatalf("list with redis down: %d %q", code, errOut)
	}
}
