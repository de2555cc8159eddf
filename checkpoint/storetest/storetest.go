// Package storetest is the conformance suite every checkpoint.Store passes.
// A store's tests call Run with a Backend that opens handles on a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Backend { return newBackend(t) })
//	}
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/redact"
)

// Backend is one empty store under test.
type Backend interface {
	// Open returns a new handle on the backend's store, configured by opts.
	// Handles opened on one backend see the same data, as two processes
	// would.
	Open(opts checkpoint.Options) (checkpoint.Store, error)
	// Dump returns every byte the backend stores, concatenated, so the
	// suite can check that a secret is nowhere at rest.
	Dump() ([]byte, error)
	// Corrupt replaces the stored record of one checkpoint with what
	// mutate returns, behind the store's back (DamageFrames does it to a
	// log's frames).
	Corrupt(session, id string, mutate func([]byte) []byte) error
	// CorruptContent damages one element the checkpoint's save stored.
	CorruptContent(session, id string) error
}

// Clock is a settable clock for Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Sample returns a checkpoint of session with every field a caller fills:
// steps in each status, a transcript with a tool call and its result (and
// raw source records), a compaction record, cached results, a side effect,
// a pending action and permissions. pad adds that many bytes of tool output
// to reach a wanted size.
func Sample(session string, pad int) *checkpoint.Checkpoint {
	args := json.RawMessage(`{"path":"main.go","line":12}`)
	raw := json.RawMessage(`{"type":"assistant","message":{"content":"reading main.go"}}`)
	call := compact.ToolCall{ID: "call_1", Name: "read_file", Arguments: args}
	msgs := []compact.Message{
		{ID: "m1", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "fix the failing build in main.go"}}},
		{ID: "m2", Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartText, Text: "reading main.go"}, {Type: compact.PartToolCall, ToolCall: &call}}},
		{ID: "m3", Role: compact.RoleTool, ToolCallIDs: []string{"call_1"}, Parts: []compact.Part{{Type: compact.PartText, Text: "package main\n" + strings.Repeat("x", pad)}}},
	}
	msgs[1].Source = compact.Source{Format: "test", Records: []json.RawMessage{raw}, Fingerprint: msgs[1].Fingerprint()}
	pending, err := checkpoint.NewPendingAction("deploy", json.RawMessage(`{"env":"prod","version":"1.2.3"}`))
	if err != nil {
		panic(err) // constant, valid JSON
	}
	return &checkpoint.Checkpoint{
		Session: session, Task: "fix the failing build in main.go", Status: checkpoint.StatusRunning,
		PlanVersion: 2, CurrentStep: "build",
		Steps: []checkpoint.Step{
			{ID: "read", Status: checkpoint.StepCompleted, InputHash: "abc", Output: "package main", Tool: "read_file", Args: args, Duration: 120 * time.Millisecond},
			{ID: "build", Status: checkpoint.StepRunning, Tool: "go_build", Args: json.RawMessage(`{}`)},
			{ID: "test", Status: checkpoint.StepFailed, Tool: "go_test", Error: "exit status 1"},
			{ID: "ship", Status: checkpoint.StepPending},
		},
		Transcript:  &compact.Transcript{Format: "test", Messages: msgs},
		Compactions: []compact.Compaction{{SourceHash: "feed", DroppedFrom: 1, DroppedTo: 1, Method: compact.MethodNone, Reason: "under threshold", At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}},
		ToolCache:   map[string]json.RawMessage{"read_file:1": json.RawMessage(`{"text":"package main"}`)},
		SideEffects: []checkpoint.SideEffect{{Tool: "send_mail", Key: "send_mail:2", Receipt: json.RawMessage(`{"id":"msg-9"}`)}},
		Pending:     pending,
		Permissions: []checkpoint.Permission{{Scope: "github:repo:write", Ref: "env:GITHUB_TOKEN"}},
		RetryCount:  1, LastError: "rate limited",
	}
}

// Run runs the conformance suite. newBackend is called once per subtest
// and must return an empty store.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"SaveLatestRoundTrip", testRoundTrip},
		{"ChainAndHistory", testChain},
		{"CompareAndSet", testCAS},
		{"ConcurrentWriters", testConcurrent},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"List", testList},
		{"Delete", testDelete},
		{"Prune", testPrune},
		{"Corrupt", testCorrupt},
		{"Encryption", testEncryption},
		{"EncryptedWithoutKey", testEncryptedWithoutKey},
		{"RecoverUnknownSession", testRecoverUnknownSession},
		{"RedactingMode", testRedacting},
		{"Resume", testResume},
		{"Verify", testVerify},
		{"ElementDamage", testElementDamage},
		{"ApproveOnce", testApproveOnce},
		{"UsedTokenStaysUsed", testUsedTokenStaysUsed},
		{"State", testState},
		{"RedactsByDefault", testRedactsByDefault},
		{"SaveCompactionCAS", testSaveCompaction},
		{"Model", testModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newBackend(t)) })
	}
}

func open(t *testing.T, b Backend, opts checkpoint.Options) checkpoint.Store {
	t.Helper()
	s, err := b.Open(opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func save(t *testing.T, s checkpoint.Store, c *checkpoint.Checkpoint, parent string) {
	t.Helper()
	if err := s.Save(context.Background(), c, parent); err != nil {
		t.Fatalf("save %s over %q: %v", c.Session, parent, err)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// content zeroes the fields a store assigns, for comparing what a caller
// wrote with what it read back.
func content(c *checkpoint.Checkpoint) *checkpoint.Checkpoint {
	d := c.Clone()
	d.SchemaVersion, d.ID, d.ParentID, d.Seq, d.Hash = 0, "", "", 0, ""
	d.CreatedAt, d.UpdatedAt = time.Time{}, time.Time{}
	return d
}

func sameContent(t *testing.T, got, want *checkpoint.Checkpoint) {
	t.Helper()
	g, _ := json.Marshal(content(got))
	w, _ := json.Marshal(content(want))
	if !bytes.Equal(g, w) {
		t.Fatalf("content differs:\n got %s\nwant %s", g, w)
	}
}

func testRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, b, checkpoint.Options{Now: clock.Now})
	c := Sample("round-trip", 100)
	orig := c.Clone()
	save(t, s, c, "")
	if c.ID == "" || c.Seq != 1 || c.ParentID != "" || len(c.Hash) != 64 || c.SchemaVersion != checkpoint.SchemaVersion {
		t.Fatalf("identity after first save: id %q seq %d parent %q hash %q schema %d", c.ID, c.Seq, c.ParentID, c.Hash, c.SchemaVersion)
	}
	if !c.CreatedAt.Equal(clock.Now()) || !c.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("times: created %v updated %v, want %v", c.CreatedAt, c.UpdatedAt, clock.Now())
	}
	got, err := s.Latest(ctx, "round-trip")
	if err != nil {
		t.Fatal(err)
	}
	sameContent(t, got, orig)
	if got.ID != c.ID || got.Hash != c.Hash || got.Seq != 1 || !got.UpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("latest is %s/%s seq %d, saved %s/%s", got.ID, got.Hash, got.Seq, c.ID, c.Hash)
	}
	// Raw source records come back byte for byte.
	if r := got.Transcript.Messages[1].Source.Records[0]; !bytes.Equal(r, orig.Transcript.Messages[1].Source.Records[0]) {
		t.Fatalf("source record changed: %s", r)
	}
	if !got.Transcript.Messages[1].Unchanged() {
		t.Fatal("a kept message no longer counts as unchanged")
	}
	byID, err := s.Load(ctx, "round-trip", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byID, got) {
		t.Fatal("Load by ID differs from Latest")
	}
	// A second handle (another process) sees the same.
	other := open(t, b, checkpoint.Options{})
	if o, err := other.Latest(ctx, "round-trip"); err != nil || o.Hash != c.Hash {
		t.Fatalf("second handle: %v, hash %v", err, o)
	}
}

func testChain(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, b, checkpoint.Options{Now: clock.Now})
	c := Sample("chain", 0)
	var ids []string
	parent := ""
	for i := range 4 {
		c.Steps[3].Output = fmt.Sprint("round ", i)
		save(t, s, c, parent)
		if c.Seq != int64(i+1) || c.ParentID != parent {
			t.Fatalf("save %d: seq %d parent %q, want %d %q", i, c.Seq, c.ParentID, i+1, parent)
		}
		ids = append(ids, c.ID)
		parent = c.ID
		clock.Advance(time.Minute)
	}
	first, err := s.Load(ctx, "chain", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if !first.CreatedAt.Equal(c.CreatedAt) || first.Steps[3].Output != "round 0" {
		t.Fatalf("first checkpoint: created %v output %q", first.CreatedAt, first.Steps[3].Output)
	}
	if c.UpdatedAt.Sub(c.CreatedAt) != 3*time.Minute {
		t.Fatalf("created %v updated %v", c.CreatedAt, c.UpdatedAt)
	}
	h, err := s.History(ctx, "chain")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 4 {
		t.Fatalf("history has %d entries, want 4", len(h))
	}
	for i, m := range h {
		want := ids[3-i]
		if m.ID != want || m.Seq != int64(4-i) || m.Session != "chain" || m.Status != checkpoint.StatusRunning || m.Size <= 0 || m.Codec == "" {
			t.Fatalf("history[%d] = %+v, want id %s", i, m, want)
		}
		if i+1 < len(h) && m.ParentID != h[i+1].ID {
			t.Fatalf("history[%d] parent %s, next is %s", i, m.ParentID, h[i+1].ID)
		}
		full, err := s.Load(ctx, "chain", m.ID)
		if err != nil || full.Hash != m.Hash {
			t.Fatalf("load %s: %v (hash %v vs %s)", m.ID, err, full, m.Hash)
		}
	}
}

func testCAS(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	c := Sample("cas", 0)
	save(t, s, c, "")
	first := c.ID
	// A second first save of the same session conflicts.
	d := Sample("cas", 0)
	wantErr(t, s.Save(ctx, d, ""), checkpoint.ErrConflict, "second first save")
	if d.ID != "" || d.Hash != "" {
		t.Fatal("a failed save changed the caller's checkpoint")
	}
	wantErr(t, s.Save(ctx, d, "00000001-000000000000"), checkpoint.ErrConflict, "save over a parent that never was")
	save(t, s, c, first)
	// Two writers read the same head; the first to save wins.
	a, _ := s.Latest(ctx, "cas")
	bb, _ := s.Latest(ctx, "cas")
	a.Task, bb.Task = "writer A", "writer B"
	save(t, s, a, a.ID)
	wantErr(t, s.Save(ctx, bb, bb.ID), checkpoint.ErrConflict, "stale writer")
	got, err := s.Latest(ctx, "cas")
	if err != nil || got.Task != "writer A" || got.Seq != 3 {
		t.Fatalf("after conflict: %v %+v", err, got)
	}
	// The loser reloads and succeeds.
	bb, _ = s.Latest(ctx, "cas")
	bb.Task = "writer B"
	save(t, s, bb, bb.ID)
	if bb.Seq != 4 || bb.ParentID != a.ID {
		t.Fatalf("retry: seq %d parent %s", bb.Seq, bb.ParentID)
	}
	// A new session with a parent given conflicts too.
	wantErr(t, s.Save(ctx, Sample("cas-new", 0), first), checkpoint.ErrConflict, "new session with a parent")
}

// testConcurrent runs writers on separate handles, each reading the latest
// and saving over it until it has committed its share. Every commit must
// be in the history: none overwritten, none lost.
func testConcurrent(t *testing.T, b Backend) {
	ctx := context.Background()
	const writers, each = 4, 8
	seed := open(t, b, checkpoint.Options{})
	c := Sample("race", 0)
	c.Steps = nil
	c.CurrentStep = ""
	save(t, seed, c, "")
	var mu sync.Mutex
	committed := map[string]string{}
	conflicts := 0
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := open(t, b, checkpoint.Options{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < each; {
				cur, err := s.Latest(ctx, "race")
				if err != nil {
					errs <- err
					return
				}
				cur.Task = fmt.Sprintf("writer %d commit %d", w, n)
				err = s.Save(ctx, cur, cur.ID)
				if errors.Is(err, checkpoint.ErrConflict) {
					mu.Lock()
					conflicts++
					mu.Unlock()
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				committed[cur.ID] = cur.Task
				mu.Unlock()
				n++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h, err := seed.History(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != writers*each+1 {
		t.Fatalf("history has %d checkpoints, want %d", len(h), writers*each+1)
	}
	inHistory := map[string]bool{}
	for _, m := range h {
		inHistory[m.ID] = true
	}
	for id, task := range committed {
		if !inHistory[id] {
			t.Fatalf("commit %s (%s) is not in the history: lost", id, task)
		}
		got, err := seed.Load(ctx, "race", id)
		if err != nil || got.Task != task {
			t.Fatalf("commit %s: %v, task %v", id, err, got)
		}
	}
	t.Logf("%d writers, %d commits, %d conflicts", writers, len(committed), conflicts)
}

func testNotFound(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	_, err := s.Latest(ctx, "nobody")
	wantErr(t, err, checkpoint.ErrNotFound, "latest of a missing session")
	_, err = s.History(ctx, "nobody")
	wantErr(t, err, checkpoint.ErrNotFound, "history of a missing session")
	c := Sample("somebody", 0)
	save(t, s, c, "")
	_, err = s.Load(ctx, "somebody", "00000009-aaaaaaaaaaaa")
	wantErr(t, err, checkpoint.ErrNotFound, "load of a missing checkpoint")
	_, err = s.Load(ctx, "nobody", c.ID)
	wantErr(t, err, checkpoint.ErrNotFound, "load from another session")
}

func testInvalid(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	for _, id := range []string{"", "../escape", "a/b", ".hidden", "sp ace", strings.Repeat("x", 129)} {
		wantErr(t, s.Save(ctx, Sample(id, 0), ""), checkpoint.ErrInvalid, fmt.Sprintf("save session %q", id))
		_, err := s.Latest(ctx, id)
		wantErr(t, err, checkpoint.ErrInvalid, fmt.Sprintf("latest of session %q", id))
	}
	_, err := s.Load(ctx, "ok", "../../etc/passwd")
	wantErr(t, err, checkpoint.ErrInvalid, "load with a path as ID")
	mutations := map[string]func(c *checkpoint.Checkpoint){
		"unknown status":      func(c *checkpoint.Checkpoint) { c.Status = "sleeping" },
		"unknown step status": func(c *checkpoint.Checkpoint) { c.Steps[0].Status = "done-ish" },
		"repeated step":       func(c *checkpoint.Checkpoint) { c.Steps[1].ID = c.Steps[0].ID },
		"step without ID":     func(c *checkpoint.Checkpoint) { c.Steps[0].ID = "" },
		"current not a step":  func(c *checkpoint.Checkpoint) { c.CurrentStep = "nope" },
		"args not JSON":       func(c *checkpoint.Checkpoint) { c.Steps[0].Args = json.RawMessage(`{`) },
		"secret as ref":       func(c *checkpoint.Checkpoint) { c.Permissions[0].Ref = "ghp_abcdefghijklmnop" },
		"params hash stale":   func(c *checkpoint.Checkpoint) { c.Pending.Params = json.RawMessage(`{"env":"dev"}`) },
		"waiting, no action":  func(c *checkpoint.Checkpoint) { c.Status, c.Pending = checkpoint.StatusWaitingApproval, nil },
		"cache not JSON":      func(c *checkpoint.Checkpoint) { c.ToolCache["k"] = json.RawMessage(`nope`) },
	}
	for name, mutate := range mutations {
		c := Sample("invalid", 0)
		mutate(c)
		wantErr(t, s.Save(ctx, c, ""), checkpoint.ErrInvalid, name)
	}
	_, err = s.Latest(ctx, "invalid")
	wantErr(t, err, checkpoint.ErrNotFound, "nothing of the invalid saves stored")
}

func testList(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, b, checkpoint.Options{Now: clock.Now})
	for i, st := range []checkpoint.Status{checkpoint.StatusFailed, checkpoint.StatusPaused, checkpoint.StatusCompleted, checkpoint.StatusFailed} {
		c := Sample(fmt.Sprint("list-", i), 0)
		c.Status = st
		c.Task = fmt.Sprint("task ", i)
		save(t, s, c, "")
		clock.Advance(time.Hour)
	}
	all, err := s.List(ctx, checkpoint.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range all {
		names = append(names, in.Session)
	}
	if got := strings.Join(names, ","); got != "list-3,list-2,list-1,list-0" {
		t.Fatalf("list order %s, want newest first", got)
	}
	in := all[0]
	if in.Task != "task 3" || in.Status != checkpoint.StatusFailed || in.Seq != 1 || in.Latest == "" ||
		in.Steps != 4 || in.CompletedSteps != 1 || in.UpdatedAt.IsZero() || in.CreatedAt.IsZero() {
		t.Fatalf("session info %+v", in)
	}
	failed, err := s.List(ctx, checkpoint.Filter{Status: []checkpoint.Status{checkpoint.StatusFailed}})
	if err != nil || len(failed) != 2 || failed[0].Session != "list-3" || failed[1].Session != "list-0" {
		t.Fatalf("failed sessions: %v %+v", err, failed)
	}
	// The clock is now one hour past list-3's save: two hours back reaches list-2.
	recent, err := s.List(ctx, checkpoint.Filter{MaxAge: 2 * time.Hour})
	if err != nil || len(recent) != 2 {
		t.Fatalf("recent sessions: %v %+v", err, recent)
	}
	both, err := s.List(ctx, checkpoint.Filter{MaxAge: 2 * time.Hour, Status: []checkpoint.Status{checkpoint.StatusCompleted}})
	if err != nil || len(both) != 1 || both[0].Session != "list-2" {
		t.Fatalf("recent completed: %v %+v", err, both)
	}
}

func testDelete(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	c := Sample("doomed", 0)
	save(t, s, c, "")
	save(t, s, c, c.ID)
	save(t, s, Sample("kept", 0), "")
	if err := s.Delete(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Latest(ctx, "doomed")
	wantErr(t, err, checkpoint.ErrNotFound, "latest after delete")
	if err := s.Delete(ctx, "doomed"); err != nil {
		t.Fatalf("deleting a missing session: %v", err)
	}
	all, err := s.List(ctx, checkpoint.Filter{})
	if err != nil || len(all) != 1 || all[0].Session != "kept" {
		t.Fatalf("list after delete: %v %+v", err, all)
	}
	// The session can start over.
	save(t, s, Sample("doomed", 0), "")
}

func testPrune(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, b, checkpoint.Options{Now: clock.Now})
	old := Sample("stale", 0)
	save(t, s, old, "")
	save(t, s, old, old.ID)
	clock.Advance(10 * 24 * time.Hour)
	c := Sample("busy", 0)
	var ids []string
	for i := range 6 {
		if i > 0 {
			save(t, s, c, c.ID)
		} else {
			save(t, s, c, "")
		}
		ids = append(ids, c.ID)
		clock.Advance(time.Hour)
	}
	res, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: 3, MaxAge: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 1 || res.Checkpoints != 2+3 {
		t.Fatalf("prune removed %+v, want 1 session and 5 checkpoints", res)
	}
	_, err = s.Latest(ctx, "stale")
	wantErr(t, err, checkpoint.ErrNotFound, "a session older than max age")
	h, err := s.History(ctx, "busy")
	if err != nil || len(h) != 3 || h[0].ID != ids[5] || h[2].ID != ids[3] {
		t.Fatalf("history after prune: %v %+v", err, h)
	}
	_, err = s.Load(ctx, "busy", ids[0])
	wantErr(t, err, checkpoint.ErrNotFound, "a pruned checkpoint")
	// Age alone: only checkpoints older than two hours go, never the head.
	res, err = s.Prune(ctx, checkpoint.PruneOptions{MaxAge: 2*time.Hour + time.Minute})
	if err != nil || res.Checkpoints != 1 || res.Sessions != 0 {
		t.Fatalf("age prune: %v %+v", err, res)
	}
	clock.Advance(time.Hour)
	if _, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	h, err = s.History(ctx, "busy")
	if err != nil || len(h) != 1 || h[0].ID != ids[5] {
		t.Fatalf("keep last 1: %v %+v", err, h)
	}
	// The session goes on from its head.
	save(t, s, c, c.ID)
}

func testCorrupt(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	cases := map[string]func([]byte) []byte{
		"truncated":   func(p []byte) []byte { return p[:len(p)*2/3] },
		"bit flipped": func(p []byte) []byte { q := bytes.Clone(p); q[len(q)-10] ^= 0x20; return q },
		"empty":       func([]byte) []byte { return nil },
		"garbage":     func([]byte) []byte { return []byte("{\"not\":\"a checkpoint\"}\n{}") },
		"extended":    func(p []byte) []byte { return append(bytes.Clone(p), "trailing"...) },
		"meta rewritten": func(p []byte) []byte {
			return bytes.Replace(p, []byte(`"status":"running"`), []byte(`"status":"paused"`), 1)
		},
	}
	for name, mutate := range cases {
		session := "corrupt-" + strings.ReplaceAll(name, " ", "-")
		first := Sample(session, 50)
		save(t, s, first, "")
		c := first.Clone()
		c.Task = "the second save"
		save(t, s, c, first.ID)
		if err := b.Corrupt(session, c.ID, mutate); err != nil {
			t.Fatal(err)
		}
		// The damaged record was the latest: the session has no readable
		// head, which is never taken for "no state" or for the one before.
		got, err := s.Latest(ctx, session)
		if !errors.Is(err, checkpoint.ErrCorrupt) || got != nil {
			t.Fatalf("%s: latest gave %v, %v; want ErrCorrupt and nothing", name, got, err)
		}
		if !strings.Contains(err.Error(), session) {
			t.Fatalf("%s: error %q does not name the session", name, err)
		}
		_, err = s.Load(ctx, session, c.ID)
		wantErr(t, err, checkpoint.ErrCorrupt, name+": load")
		// A writer cannot build on a head it cannot read.
		wantErr(t, s.Save(ctx, Sample(session, 0), c.ID), checkpoint.ErrCorrupt, name+": save over the damaged head")
		// Recover goes back to the newest checkpoint that verifies, and the
		// session goes on from there.
		back, err := checkpoint.Recover(ctx, s, session)
		if err != nil || back.ID != first.ID {
			t.Fatalf("%s: recover gave %v, %v; want %s", name, back, err, first.ID)
		}
		if got, err := s.Latest(ctx, session); err != nil || got.ID != first.ID {
			t.Fatalf("%s: latest after recover: %v %v", name, got, err)
		}
		save(t, s, Sample(session, 0), first.ID)
	}
	// Damaged content: the checkpoint holding it is corrupt, named, and the
	// checkpoint before it still loads.
	first := Sample("corrupt-content", 0)
	save(t, s, first, "")
	c := first.Clone()
	c.Task = "a task saved once"
	save(t, s, c, first.ID)
	if err := b.CorruptContent("corrupt-content", c.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.Latest(ctx, "corrupt-content")
	wantErr(t, err, checkpoint.ErrCorrupt, "latest whose content is damaged")
	if !strings.Contains(err.Error(), c.ID) {
		t.Fatalf("error %q does not name the checkpoint", err)
	}
	if got, err := s.Load(ctx, "corrupt-content", first.ID); err != nil || got.Task != first.Task {
		t.Fatalf("the checkpoint before the damage: %v %v", got, err)
	}
	_, problems, err := checkpoint.Verify(ctx, s, "corrupt-content")
	if err != nil || len(problems) != 1 || problems[0].ID != c.ID {
		t.Fatalf("verify: %v %+v", err, problems)
	}
}

func testEncryption(t *testing.T, b Backend) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	plain := open(t, b, checkpoint.Options{})
	sealed := open(t, b, checkpoint.Options{Key: key})
	wrong := open(t, b, checkpoint.Options{Key: bytes.Repeat([]byte{9}, 32)})
	p := Sample("mixed", 0)
	p.Task = "plain words visible at rest"
	save(t, plain, p, "")
	e := Sample("mixed", 0)
	e.Task = "sealed words never visible at rest"
	save(t, sealed, e, p.ID)
	dump, err := b.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dump, []byte("plain words visible")) || bytes.Contains(dump, []byte("sealed words")) {
		t.Fatal("want the plain checkpoint readable at rest and the sealed one not")
	}
	// The keyed store reads both codecs.
	if got, err := sealed.Load(ctx, "mixed", p.ID); err != nil || got.Task != p.Task {
		t.Fatalf("keyed store reading a plain checkpoint: %v", err)
	}
	if got, err := sealed.Latest(ctx, "mixed"); err != nil || got.Task != e.Task || got.Hash != e.Hash {
		t.Fatalf("keyed store reading its own: %v", err)
	}
	_, err = plain.Latest(ctx, "mixed")
	wantErr(t, err, checkpoint.ErrKeyRequired, "plain store reading a sealed checkpoint")
	_, err = wrong.Latest(ctx, "mixed")
	wantErr(t, err, checkpoint.ErrWrongKey, "store with another key")
	h, err := plain.History(ctx, "mixed")
	if err != nil || len(h) != 2 || h[0].Codec != "aes-gcm" || h[1].Codec != "plain" {
		t.Fatalf("history without the key: %v %+v", err, h)
	}
	if _, err := b.Open(checkpoint.Options{Key: []byte("short")}); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
}

func testRedacting(t *testing.T, b Backend) {
	ctx := context.Background()
	const secret = "sk-live-51HcXyZsecretVALUE0042"
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r.AddValue(secret)
	s := open(t, b, checkpoint.Options{Redactor: r})
	c := Sample("redacting", 0)
	c.Task = "rotate " + secret
	c.LastError = "401 for " + secret
	c.Steps[0].Output = "token=" + secret
	c.Steps[1].Error = "bad " + secret
	c.Steps[1].Args = json.RawMessage(`{"token":"` + secret + `","n":1}`)
	c.ToolCache["k"] = json.RawMessage(`{"` + secret + `":["` + secret + `"]}`)
	c.SideEffects[0].Receipt = json.RawMessage(`"` + secret + `"`)
	c.Permissions[0].Ref = "env:" + secret
	pending, _ := checkpoint.NewPendingAction("deploy", json.RawMessage(`{"auth":"Bearer `+secret+`"}`))
	c.Pending = pending
	m := &c.Transcript.Messages[1]
	m.Parts[0].Text = "using " + secret
	m.Parts[1].ToolCall.Arguments = json.RawMessage(`{"key":"` + secret + `"}`)
	m.Source.Records = []json.RawMessage{json.RawMessage(`{"type":"assistant","raw":"` + secret + `"}`)}
	c.Transcript.Messages[2].Parts[0].Text = secret
	c.Transcript.Records = []compact.Record{{At: 1, Type: "meta", Raw: json.RawMessage(`{"env":"` + secret + `"}`)}}
	c.Transcript.Envelope = json.RawMessage(`{"api_key":"` + secret + `"}`)
	c.Transcript.Tools = []compact.ToolDef{{Name: "x", Description: "uses " + secret}}
	c.Compactions[0].Warnings = []string{"saw " + secret}
	save(t, s, c, "")
	if !strings.Contains(c.Task, secret) {
		t.Fatal("redacting mode changed the caller's checkpoint")
	}
	dump, err := b.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(dump, []byte(secret)) || bytes.Contains(dump, []byte("51HcXyZsecret")) {
		t.Fatalf("the secret is stored in redacting mode")
	}
	got, err := s.Latest(ctx, "redacting")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Task, "[REDACTED") || got.Hash != c.Hash {
		t.Fatalf("read back: task %q, hash %s vs %s", got.Task, got.Hash, c.Hash)
	}
	if got.Pending.ParamsHash != pending.ParamsHash {
		t.Fatal("the pending params hash must stay that of the real params")
	}
	// A checkpoint read back in redacting mode can be saved again.
	got.Status = checkpoint.StatusPaused
	save(t, s, got, got.ID)
	// A value without secrets keeps its exact bytes.
	clean := Sample("redacting-clean", 0)
	save(t, s, clean, "")
	back, err := s.Latest(ctx, "redacting-clean")
	if err != nil {
		t.Fatal(err)
	}
	sameContent(t, back, Sample("redacting-clean", 0))
}

func testResume(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	c := Sample("resume", 0)
	c.Status = checkpoint.StatusFailed
	save(t, s, c, "")
	r, err := checkpoint.Resume(ctx, s, "resume")
	if err != nil {
		t.Fatal(err)
	}
	rc := r.Checkpoint
	if r.Next == nil || r.Next.ID != "build" || rc.CurrentStep != "build" || rc.Status != checkpoint.StatusRunning || rc.RetryCount != 2 {
		t.Fatalf("resume: next %+v status %s retries %d", r.Next, rc.Status, rc.RetryCount)
	}
	if strings.Join(r.Reset, ",") != "build,test" || rc.Steps[2].Error != "" || rc.Steps[0].Output != "package main" {
		t.Fatalf("reset %v, steps %+v", r.Reset, rc.Steps)
	}
	save(t, s, rc, rc.ID)
	for st, want := range map[checkpoint.Status]error{checkpoint.StatusCompleted: checkpoint.ErrCompleted, checkpoint.StatusCancelled: checkpoint.ErrCancelled} {
		rc.Status = st
		save(t, s, rc, rc.ID)
		_, err := checkpoint.Resume(ctx, s, "resume")
		wantErr(t, err, want, "resume of a "+string(st)+" session")
	}
}

func testVerify(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	c := Sample("verify", 0)
	save(t, s, c, "")
	first := c.ID
	save(t, s, c, c.ID)
	save(t, s, Sample("verify-2", 0), "")
	n, problems, err := checkpoint.Verify(ctx, s)
	if err != nil || len(problems) != 0 || n != 3 {
		t.Fatalf("healthy store: checked %d, problems %+v, err %v", n, problems, err)
	}
	if err := b.CorruptContent("verify", first); err != nil {
		t.Fatal(err)
	}
	// The damaged element is held by both checkpoints of the session (it
	// is stored once): both are reported, the other session is not.
	n, problems, err = checkpoint.Verify(ctx, s)
	if err != nil || len(problems) != 2 || n != 3 {
		t.Fatalf("damaged store: checked %d, problems %+v, err %v", n, problems, err)
	}
	for _, p := range problems {
		if p.Session != "verify" || !errors.Is(p.Err, checkpoint.ErrCorrupt) {
			t.Fatalf("problem %+v", p)
		}
	}
	if problems[1].ID != first {
		t.Fatalf("problems %+v do not name %s", problems, first)
	}
}

// testApproveOnce: a resume token approves one pending action, once, in
// every handle on the store (issue 14.2). Before, the token approved the
// second action with the same parameters too.
func testApproveOnce(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	tokens := checkpoint.Tokens{Key: bytes.Repeat([]byte{1}, 32)}
	c := Sample("approve", 0)
	c.Status = checkpoint.StatusWaitingApproval
	save(t, s, c, "")
	tok, err := tokens.Issue("approve", "alice", c.Pending.ParamsHash, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a, err := checkpoint.Approve(ctx, s, tokens, "approve", "alice", tok)
	if err != nil || len(a.UsedNonces) != 1 || a.Pending.ApprovedBy != "alice" {
		t.Fatalf("first approval: %v %+v", err, a)
	}
	// The action ran; the loop asks for the same action again.
	again := func(s checkpoint.Store) {
		cur, err := s.Latest(ctx, "approve")
		if err != nil {
			t.Fatal(err)
		}
		cur.Pending, _ = checkpoint.NewPendingAction("deploy", json.RawMessage(`{"env":"prod","version":"1.2.3"}`))
		cur.Status = checkpoint.StatusWaitingApproval
		save(t, s, cur, cur.ID)
	}
	again(s)
	_, err = checkpoint.Approve(ctx, s, tokens, "approve", "alice", tok)
	wantErr(t, err, checkpoint.ErrTokenUsed, "the token replayed on a second pending action")
	// Another handle (another process) refuses the replay too.
	other := open(t, b, checkpoint.Options{})
	_, err = checkpoint.Approve(ctx, other, tokens, "approve", "alice", tok)
	wantErr(t, err, checkpoint.ErrTokenUsed, "the token replayed through another handle")
	// A new token approves the new action.
	tok2, _ := tokens.Issue("approve", "alice", c.Pending.ParamsHash, time.Hour)
	if _, err := checkpoint.Approve(ctx, other, tokens, "approve", "alice", tok2); err != nil {
		t.Fatal(err)
	}
	again(other)
	_, err = checkpoint.Approve(ctx, s, tokens, "approve", "alice", tok2)
	wantErr(t, err, checkpoint.ErrTokenUsed, "the second token replayed")
}

// testEncryptedWithoutKey (QA-8.2): a store without the key (or with
// another) lists an encrypted session from what its records say in the
// clear, Verify reports it once as not verified for want of its key, not
// as damage, and Recover says the same, changing nothing.
func testEncryptedWithoutKey(t *testing.T, b Backend) {
	ctx := context.Background()
	sealed := open(t, b, checkpoint.Options{Key: bytes.Repeat([]byte{7}, 32)})
	e := Sample("enc1", 0)
	save(t, sealed, e, "")
	e2 := Sample("enc1", 0)
	save(t, sealed, e2, e.ID)
	save(t, open(t, b, checkpoint.Options{}), Sample("plain1", 0), "")
	for _, c := range []struct {
		opts checkpoint.Options
		want error
	}{{checkpoint.Options{}, checkpoint.ErrKeyRequired}, {checkpoint.Options{Key: bytes.Repeat([]byte{9}, 32)}, checkpoint.ErrWrongKey}} {
		s := open(t, b, c.opts)
		infos, err := s.List(ctx, checkpoint.Filter{})
		if err != nil || len(infos) != 2 {
			t.Fatalf("List without the key: %v %+v", err, infos)
		}
		for _, in := range infos {
			if in.Session == "enc1" && (in.Encrypted == "" || in.Task != "" || in.Seq != 2 || in.Latest != e2.ID || in.Status != e2.Status || in.UpdatedAt.IsZero()) {
				t.Errorf("the encrypted session is listed as %+v", in)
			}
			if in.Session == "plain1" && in.Encrypted != "" {
				t.Errorf("a plain session is listed as encrypted: %+v", in)
			}
		}
		if infos, err := s.List(ctx, checkpoint.Filter{Status: []checkpoint.Status{e2.Status}}); err != nil || len(infos) != 2 {
			t.Errorf("List by status without the key: %v %+v", err, infos)
		}
		_, probs, err := checkpoint.Verify(ctx, s)
		if err != nil || len(probs) != 1 || probs[0].Session != "enc1" || !errors.Is(probs[0].Err, c.want) || errors.Is(probs[0].Err, checkpoint.ErrCorrupt) {
			t.Errorf("Verify without the key: %v %+v", err, probs)
		}
		before, _ := b.Dump()
		_, err = checkpoint.Recover(ctx, s, "enc1")
		if !errors.Is(err, c.want) || errors.Is(err, checkpoint.ErrCorrupt) {
			t.Errorf("Recover without the key: %v, want %v", err, c.want)
		}
		if after, _ := b.Dump(); !bytes.Equal(before, after) {
			t.Error("Recover without the key changed the store")
		}
	}
}

// testRecoverUnknownSession (QA-8.1): recovering a session that was never
// saved is ErrNotFound, not corruption.
func testRecoverUnknownSession(t *testing.T, b Backend) {
	s := open(t, b, checkpoint.Options{})
	_, err := checkpoint.Recover(context.Background(), s, "nosuch")
	wantErr(t, err, checkpoint.ErrNotFound, "Recover of a session never saved")
}

// testUsedTokenStaysUsed: a used token stays used whatever later saves
// carry (QA-4): a loop that saves a checkpoint built from its own state
// (no UsedNonces), or a Clone of the checkpoint before the approval, over
// the approval cannot re-arm the token, in this handle or another.
func testUsedTokenStaysUsed(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	tokens := checkpoint.Tokens{Key: bytes.Repeat([]byte{2}, 32)}
	c := Sample("used", 0)
	c.Status = checkpoint.StatusWaitingApproval
	save(t, s, c, "")
	before := c.Clone()
	tok, err := tokens.Issue("used", "alice", c.Pending.ParamsHash, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	approved, err := checkpoint.Approve(ctx, s, tokens, "used", "alice", tok)
	if err != nil {
		t.Fatal(err)
	}
	parent := approved.ID
	for i, mine := range []*checkpoint.Checkpoint{
		func() *checkpoint.Checkpoint { // built afresh by the loop
			m := Sample("used", 0)
			m.Status = checkpoint.StatusWaitingApproval
			m.Pending, _ = checkpoint.NewPendingAction(c.Pending.Tool, c.Pending.Params)
			return m
		}(),
		before, // a copy from before the approval
	} {
		if len(mine.UsedNonces) != 0 {
			t.Fatalf("case %d carries nonces", i)
		}
		mine.UsedNonces = nil
		save(t, s, mine, parent)
		parent = mine.ID
		if len(mine.UsedNonces) != 1 {
			t.Errorf("case %d: the saved checkpoint's UsedNonces are %v, want the approval's", i, mine.UsedNonces)
		}
		for _, h := range []checkpoint.Store{s, open(t, b, checkpoint.Options{})} {
			latest, err := h.Latest(ctx, "used")
			if err != nil {
				t.Fatal(err)
			}
			if len(latest.UsedNonces) != 1 {
				t.Errorf("case %d: Latest's UsedNonces are %v", i, latest.UsedNonces)
			}
			_, err = checkpoint.Approve(ctx, h, tokens, "used", "alice", tok)
			wantErr(t, err, checkpoint.ErrTokenUsed, fmt.Sprintf("case %d: the used token after a save without UsedNonces", i))
		}
	}
	// A nonce the caller adds is kept beside the store's.
	cur, err := s.Latest(ctx, "used")
	if err != nil {
		t.Fatal(err)
	}
	cur.UsedNonces = []string{"caller-nonce"}
	save(t, s, cur, cur.ID)
	if latest, _ := s.Latest(ctx, "used"); latest == nil || len(latest.UsedNonces) != 2 || latest.UsedNonces[1] != "caller-nonce" {
		t.Errorf("after a save adding a nonce: %v", latest.UsedNonces)
	}
}

// testState: the loop's own data comes back byte for byte, and an
// unchanged State is not written again.
func testState(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	c := Sample("state", 0)
	c.State = json.RawMessage(`{"cursor": 41,  "model": "gpt-4o"}`)
	save(t, s, c, "")
	got, err := s.Latest(ctx, "state")
	if err != nil || string(got.State) != string(c.State) {
		t.Fatalf("state: %v %q", err, got.State)
	}
	before, _ := b.Dump()
	got.Task = "same state, another task"
	save(t, s, got, got.ID)
	after, _ := b.Dump()
	if n := bytes.Count(after, []byte(`"cursor": 41`)); n != 1 {
		t.Fatalf("an unchanged State is stored %d times (dump grew %d bytes)", n, len(after)-len(before))
	}
	got.State = json.RawMessage(`not json`)
	wantErr(t, s.Save(ctx, got, got.ID), checkpoint.ErrInvalid, "a State that is not JSON")
}

// testRedactsByDefault: Options{} keeps the secrets of a transcript's tail
// out of the store; Plain keeps them, by explicit choice.
func testRedactsByDefault(t *testing.T, b Backend) {
	ctx := context.Background()
	const secret = "ghp_x7Kq9Lm2Vb8Nc4Zr1Tw6Yp3Hs5Jd0Fg2Ae9U"
	c := Sample("default-redaction", 0)
	c.Transcript.Messages[2].Parts[0].Text = "export GITHUB_TOKEN=" + secret
	save(t, open(t, b, checkpoint.Options{}), c, "")
	dump, _ := b.Dump()
	if bytes.Contains(dump, []byte(secret)) {
		t.Fatal("Options{} stored a secret of the transcript's tail")
	}
	p := Sample("plain", 0)
	p.Transcript.Messages[2].Parts[0].Text = "export GITHUB_TOKEN=" + secret
	s := open(t, b, checkpoint.Options{Plain: true})
	save(t, s, p, "")
	if got, err := s.Latest(ctx, "plain"); err != nil || !strings.Contains(got.Transcript.Messages[2].Parts[0].Text, secret) {
		t.Fatalf("Plain lost the value: %v", err)
	}
	r, _ := redact.New(redact.Config{})
	if _, err := b.Open(checkpoint.Options{Plain: true, Redactor: r}); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Fatalf("Plain with a Redactor: %v", err)
	}
}

// testSaveCompaction: SaveCompaction is compare-and-set like Save.
func testSaveCompaction(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	tr := *Sample("x", 0).Transcript
	rec := compact.Compaction{SourceHash: tr.Hash(), Method: compact.MethodFallback}
	first, err := checkpoint.SaveCompaction(ctx, s, "compacted", "", tr, rec)
	if err != nil || first.Seq != 1 || len(first.Compactions) != 1 || first.Task == "" {
		t.Fatalf("first: %v %+v", err, first)
	}
	// Another writer saves in between: a compaction of the older state is
	// refused, not written over it.
	other, _ := s.Latest(ctx, "compacted")
	other.Steps = append(other.Steps, checkpoint.Step{ID: "written-meanwhile", Status: checkpoint.StepCompleted})
	save(t, s, other, other.ID)
	_, err = checkpoint.SaveCompaction(ctx, s, "compacted", first.ID, tr, rec)
	wantErr(t, err, checkpoint.ErrConflict, "a compaction over a stale parent")
	c, err := checkpoint.SaveCompaction(ctx, s, "compacted", other.ID, tr, rec)
	if err != nil || c.Step("written-meanwhile") == nil || len(c.Compactions) != 2 {
		t.Fatalf("over the latest: %v %+v", err, c)
	}
}

// compactingSession saves the checkpoints of a session whose transcript
// is compacted on the way, so that old messages are held only by old
// checkpoints: [m0 m1], [m0 m1 m2 m3], [h m3 m4], [h m3 m4 m5]. It
// returns their IDs.
func compactingSession(t *testing.T, s checkpoint.Store, session string) []string {
	t.Helper()
	m := func(i int) compact.Message {
		return compact.UserMessage(fmt.Sprintf("message %d of a session whose middle is compacted", i))
	}
	h := compact.AssistantMessage("handoff: messages 0 to 2 summarized")
	lists := [][]compact.Message{{m(0), m(1)}, {m(0), m(1), m(2), m(3)}, {h, m(3), m(4)}, {h, m(3), m(4), m(5)}}
	var ids []string
	parent := ""
	for _, msgs := range lists {
		c := &checkpoint.Checkpoint{Session: session, Task: "a task", Status: checkpoint.StatusRunning,
			Transcript: &compact.Transcript{Messages: msgs}}
		save(t, s, c, parent)
		parent = c.ID
		ids = append(ids, c.ID)
	}
	return ids
}

// testElementDamage (QA-31): a damaged element costs the checkpoints that
// hold it, no others: they load, Verify names exactly the lost ones, and
// Recover makes the newest checkpoint that loads the head.
func testElementDamage(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	ids := compactingSession(t, s, "mid")
	// m2, written by the 2nd save, is held by the 2nd checkpoint only.
	if err := b.CorruptContent("mid", ids[1]); err != nil {
		t.Fatal(err)
	}
	s = open(t, b, checkpoint.Options{})
	for i, id := range ids {
		_, err := s.Load(ctx, "mid", id)
		if (err != nil) != (i == 1) {
			t.Errorf("damaged m2: load of checkpoint %d: %v; want only the 2nd lost", i+1, err)
		}
		if i == 1 && (!errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), "damaged")) {
			t.Errorf("damaged m2: the lost checkpoint's error does not say its element is damaged: %v", err)
		}
	}
	if c, err := s.Latest(ctx, "mid"); err != nil || c.ID != ids[3] {
		t.Errorf("damaged m2: Latest: %v, %v; want the 4th", c, err)
	}
	_, problems, err := checkpoint.Verify(ctx, s, "mid")
	if err != nil || len(problems) != 1 || problems[0].ID != ids[1] {
		t.Errorf("damaged m2: Verify: %+v, %v; want one problem, the 2nd checkpoint", problems, err)
	}
	if c, err := checkpoint.Recover(ctx, s, "mid"); err != nil || c.ID != ids[3] {
		t.Errorf("damaged m2: Recover: %v, %v; want the 4th, the head", c, err)
	}
	if _, problems, err := checkpoint.Verify(ctx, s, "mid"); err != nil || len(problems) != 0 {
		t.Errorf("damaged m2: Verify after Recover: %+v, %v", problems, err)
	}
	// Recover drops the damage and the 2nd, never a checkpoint that loads
	// (QA-34): the 1st stays, listed after the 3rd.
	if h, err := s.History(ctx, "mid"); err != nil || len(h) != 3 || h[1].ID != ids[2] || h[2].ID != ids[0] {
		t.Errorf("damaged m2: History after Recover: %+v, %v; want the 4th, the 3rd and the 1st", h, err)
	}
	for _, i := range []int{0, 2, 3} {
		if _, err := s.Load(ctx, "mid", ids[i]); err != nil {
			t.Errorf("damaged m2: checkpoint %d after Recover: %v", i+1, err)
		}
	}

	// m5, written by the 4th save, is held by the head only: the head is
	// lost, the 3rd checkpoint becomes the head, and the session goes on.
	ids = compactingSession(t, s, "head")
	if err := b.CorruptContent("head", ids[3]); err != nil {
		t.Fatal(err)
	}
	s = open(t, b, checkpoint.Options{})
	_, err = s.Latest(ctx, "head")
	wantErr(t, err, checkpoint.ErrCorrupt, "damaged m5: Latest")
	for i, id := range ids[:3] {
		if _, err := s.Load(ctx, "head", id); err != nil {
			t.Errorf("damaged m5: checkpoint %d: %v", i+1, err)
		}
	}
	_, problems, err = checkpoint.Verify(ctx, s, "head")
	if err != nil || len(problems) != 1 || problems[0].ID != ids[3] {
		t.Errorf("damaged m5: Verify: %+v, %v; want one problem, the 4th checkpoint", problems, err)
	}
	c, err := checkpoint.Recover(ctx, s, "head")
	if err != nil || c.ID != ids[2] {
		t.Fatalf("damaged m5: Recover: %v, %v; want the 3rd", c, err)
	}
	if h, err := s.History(ctx, "head"); err != nil || len(h) != 3 {
		t.Errorf("damaged m5: History after Recover: %d checkpoints, %v; want 3", len(h), err)
	}
	c.Transcript.Messages = append(c.Transcript.Messages, compact.UserMessage("go on"))
	save(t, s, c, ids[2])
	if _, problems, err := checkpoint.Verify(ctx, s, "head"); err != nil || len(problems) != 0 {
		t.Errorf("damaged m5: Verify after Recover and a save: %+v, %v", problems, err)
	}
}
