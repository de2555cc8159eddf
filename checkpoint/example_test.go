package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/compactkit/compact/checkpoint"
)

// An agent loop saves its state after each step; a crashed run resumes
// where it stopped, without redoing completed steps.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	store, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	c := &checkpoint.Checkpoint{Session: "build-42", Task: "fix the failing build", Status: checkpoint.StatusRunning,
		Steps: []checkpoint.Step{{ID: "read", Status: checkpoint.StepPending}, {ID: "patch", Status: checkpoint.StepPending}}}
	if err := store.Save(ctx, c, ""); err != nil { // "" : a new session
		fmt.Println(err)
		return
	}
	c.Steps[0].Status, c.Steps[0].Output = checkpoint.StepCompleted, "main.go read"
	c.Steps[1].Status = checkpoint.StepRunning
	if err := store.Save(ctx, c, c.ID); err != nil { // over the checkpoint we hold
		fmt.Println(err)
		return
	}
	// ... the process dies here, in the middle of "patch".

	r, err := checkpoint.Resume(ctx, store, "build-42")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reset:", r.Reset)
	fmt.Println("next:", r.Next.ID)
	fmt.Println("kept:", r.Checkpoint.Steps[0].Output)
	fmt.Println("retries:", r.Checkpoint.RetryCount)
	// Output:
	// reset: [patch]
	// next: patch
	// kept: main.go read
	// retries: 1
}

// Two workers that read the same checkpoint cannot both build on it.
func ExampleStore_conflict() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	store, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	store.Save(ctx, &checkpoint.Checkpoint{Session: "s", Status: checkpoint.StatusRunning}, "")

	a, _ := store.Latest(ctx, "s")
	b, _ := store.Latest(ctx, "s")
	fmt.Println("a:", store.Save(ctx, a, a.ID))
	err := store.Save(ctx, b, b.ID)
	fmt.Println("b conflicts:", errors.Is(err, checkpoint.ErrConflict))
	// Output:
	// a: <nil>
	// b conflicts: true
}

// A tool call with side effects runs once, however many times the session
// is resumed.
func ExampleCache_Do() {
	ctx := context.Background()
	cache := checkpoint.NewCache(nil) // from a checkpoint: NewCache(c.ToolCache)
	key, _ := checkpoint.Key("send_invoice", json.RawMessage(`{"customer":"acme","amount":1200}`))
	send := func(context.Context) (json.RawMessage, error) {
		fmt.Println("sending")
		return json.RawMessage(`{"invoice":"inv_77"}`), nil
	}
	for range 2 {
		r, _ := cache.Do(ctx, key, send)
		fmt.Println(string(r))
	}
	// Output:
	// sending
	// {"invoice":"inv_77"}
	// {"invoice":"inv_77"}
}

// A resume token approves one pending action, for one user, until it
// expires.
func ExampleTokens() {
	tokens := checkpoint.Tokens{Key: []byte("a signing key of 16+ bytes")}
	action, _ := checkpoint.NewPendingAction("deploy", json.RawMessage(`{"env":"prod"}`))
	tok, _ := tokens.Issue("session-9", "alice", action.ParamsHash, 15*time.Minute)

	fmt.Println(tokens.Verify(tok, "session-9", "alice", action.ParamsHash))
	fmt.Println(errors.Is(tokens.Verify(tok, "session-9", "bob", action.ParamsHash), checkpoint.ErrTokenUser))
	changed, _ := checkpoint.NewPendingAction("deploy", json.RawMessage(`{"env":"prod","force":true}`))
	fmt.Println(errors.Is(tokens.Verify(tok, "session-9", "alice", changed.ParamsHash), checkpoint.ErrTokenParams))
	// Output:
	// <nil>
	// true
	// true
}

// FindResumable offers failed or paused work similar to a new task.
func ExampleFindResumable() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	store, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	store.Save(ctx, &checkpoint.Checkpoint{Session: "old-run", Task: "upgrade the postgres driver and fix tests",
		Status: checkpoint.StatusFailed, Steps: []checkpoint.Step{{ID: "bump", Status: checkpoint.StepCompleted}}}, "")

	matches, _ := checkpoint.FindResumable(ctx, store, "fix tests after the postgres driver upgrade", checkpoint.FindOptions{})
	for _, m := range matches {
		fmt.Printf("%s %.2f\n", m.Session, m.Score)
	}
	// Output:
	// old-run 0.75
}
