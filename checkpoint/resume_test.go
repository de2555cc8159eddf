package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

func TestApprove(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tokens := checkpoint.Tokens{Key: []byte("approval-key-0123456789"), Now: func() time.Time { return now }}
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	c := storetest.Sample("deploy", 0)
	c.Status = checkpoint.StatusWaitingApproval
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	r, err := checkpoint.Resume(ctx, s, "deploy")
	if err != nil || !r.NeedsApproval || r.Checkpoint.Status != checkpoint.StatusWaitingApproval {
		t.Fatalf("resume of a waiting session: %+v %v", r, err)
	}
	tok, _ := tokens.Issue("deploy", "alice", c.Pending.ParamsHash, 10*time.Minute)

	_, err = checkpoint.Approve(ctx, s, tokens, "deploy", "mallory", tok)
	if !errors.Is(err, checkpoint.ErrTokenUser) {
		t.Fatalf("other user: %v", err)
	}
	// The params change after the token was issued: the approval is void.
	changed, _ := checkpoint.NewPendingAction("deploy", json.RawMessage(`{"env":"prod","version":"6.6.6"}`))
	c.Pending = changed
	if err := s.Save(ctx, c, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = checkpoint.Approve(ctx, s, tokens, "deploy", "alice", tok)
	if !errors.Is(err, checkpoint.ErrTokenParams) {
		t.Fatalf("changed params: %v", err)
	}
	tok, _ = tokens.Issue("deploy", "alice", changed.ParamsHash, 10*time.Minute)
	late := tokens
	late.Now = func() time.Time { return now.Add(time.Hour) }
	if _, err := checkpoint.Approve(ctx, s, late, "deploy", "alice", tok); !errors.Is(err, checkpoint.ErrTokenExpired) {
		t.Fatalf("expired: %v", err)
	}
	if _, err := checkpoint.Approve(ctx, s, tokens, "deploy", "alice", tok[:len(tok)-2]+"xx"); !errors.Is(err, checkpoint.ErrTokenInvalid) {
		t.Fatalf("forged: %v", err)
	}
	got, err := checkpoint.Approve(ctx, s, tokens, "deploy", "alice", tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != checkpoint.StatusPaused || got.Pending.ApprovedBy != "alice" || !got.Pending.ApprovedAt.Equal(now) {
		t.Fatalf("approved: %s %+v", got.Status, got.Pending)
	}
	// Picking the approved session up is not a retry.
	r, err = checkpoint.Resume(ctx, s, "deploy")
	if err != nil || r.NeedsApproval || r.Checkpoint.RetryCount != 1 || r.Checkpoint.Status != checkpoint.StatusRunning {
		t.Fatalf("resume after approval: %+v %v", r, err)
	}
	if _, err := checkpoint.Approve(ctx, s, tokens, "deploy", "alice", tok); !errors.Is(err, checkpoint.ErrNotWaiting) {
		t.Fatalf("second approval: %v", err)
	}
}

func TestResumeStatuses(t *testing.T) {
	ctx := context.Background()
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	tests := []struct {
		status  checkpoint.Status
		want    error
		retries int
		next    string
	}{
		{checkpoint.StatusPending, nil, 1, "build"},
		{checkpoint.StatusRunning, nil, 2, "build"},
		{checkpoint.StatusPaused, nil, 1, "build"},
		{checkpoint.StatusFailed, nil, 2, "build"},
		{checkpoint.StatusCompleted, checkpoint.ErrCompleted, 0, ""},
		{checkpoint.StatusCancelled, checkpoint.ErrCancelled, 0, ""},
	}
	for _, tc := range tests {
		session := "st-" + string(tc.status)
		c := storetest.Sample(session, 0)
		c.Status = tc.status
		if err := s.Save(ctx, c, ""); err != nil {
			t.Fatal(err)
		}
		r, err := checkpoint.Resume(ctx, s, session)
		if tc.want != nil {
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.status, err, tc.want)
			}
			continue
		}
		if err != nil || r.Next.ID != tc.next || r.Checkpoint.RetryCount != tc.retries || r.Checkpoint.Status != checkpoint.StatusRunning {
			t.Errorf("%s: %+v %v", tc.status, r, err)
		}
		if r.Checkpoint.Steps[0].Output != "package main" || r.Checkpoint.Steps[0].Status != checkpoint.StepCompleted {
			t.Errorf("%s: completed step lost its output", tc.status)
		}
	}
	if _, err := checkpoint.Resume(ctx, s, "missing"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	// All done: nothing next.
	c := storetest.Sample("all-done", 0)
	for i := range c.Steps {
		c.Steps[i].Status = checkpoint.StepCompleted
	}
	s.Save(ctx, c, "")
	if r, err := checkpoint.Resume(ctx, s, "all-done"); err != nil || r.Next != nil {
		t.Fatalf("all done: %+v %v", r, err)
	}
}

func TestFindResumable(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := storetest.NewClock(start)
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{Now: clock.Now})
	add := func(session, task string, st checkpoint.Status, completed bool) {
		c := storetest.Sample(session, 0)
		c.Task, c.Status = task, st
		if !completed {
			c.Steps[0].Status = checkpoint.StepPending
		}
		if err := s.Save(ctx, c, ""); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
	}
	add("old", "fix the failing build in main.go", checkpoint.StatusFailed, true)
	clock.Advance(25 * time.Hour)
	add("exact", "Fix the failing build in main.go!", checkpoint.StatusFailed, true)
	add("close", "fix the build in main.go and add tests", checkpoint.StatusPaused, true)
	add("unrelated", "write release notes for v2", checkpoint.StatusFailed, true)
	add("nothing-done", "fix the failing build in main.go", checkpoint.StatusFailed, false)
	add("finished", "fix the failing build in main.go", checkpoint.StatusCompleted, true)
	add("running", "fix the failing build in main.go", checkpoint.StatusRunning, true)

	got, err := checkpoint.FindResumable(ctx, s, "fix the failing build in main.go", checkpoint.FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got {
		names = append(names, m.Session)
	}
	if len(got) != 2 || got[0].Session != "exact" || got[0].Score != 1 || got[1].Session != "close" {
		t.Fatalf("matches %v %+v", names, got)
	}
	// {fix the build in main go and add tests} vs {fix the failing build in
	// main go}: 6 words shared, 10 in all.
	if got[1].Score != 0.6 {
		t.Fatalf("close score %v", got[1].Score)
	}
	strict, _ := checkpoint.FindResumable(ctx, s, "fix the failing build in main.go", checkpoint.FindOptions{Threshold: 0.9})
	if len(strict) != 1 {
		t.Fatalf("threshold 0.9: %+v", strict)
	}
	wide, _ := checkpoint.FindResumable(ctx, s, "fix the failing build in main.go", checkpoint.FindOptions{Window: 48 * time.Hour})
	if len(wide) != 3 {
		t.Fatalf("48h window: %+v", wide)
	}
}

// The documented edges (issue 18.5): Resume sets a paused session's status
// to running and leaves Next nil for a checkpoint without steps; Save
// refuses an empty Status.
func TestResumeWithoutSteps(t *testing.T) {
	ctx := context.Background()
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	c := &checkpoint.Checkpoint{Session: "no-steps", Task: "keep going", State: json.RawMessage(`{"turn":7}`)}
	if err := s.Save(ctx, c, ""); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Fatalf("save with an empty status: %v", err)
	}
	c.Status = checkpoint.StatusPaused
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	r, err := checkpoint.Resume(ctx, s, "no-steps")
	if err != nil || r.Next != nil || r.Checkpoint.Status != checkpoint.StatusRunning || string(r.Checkpoint.State) != `{"turn":7}` {
		t.Fatalf("resume: %v %+v", err, r)
	}
}
