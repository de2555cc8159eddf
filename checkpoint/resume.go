package checkpoint

import (
	"context"
	"fmt"
	"slices"
)

// Resumption is what Resume found: the state to continue from and what to
// run next.
type Resumption struct {
	// Checkpoint is the latest checkpoint with interrupted and failed steps
	// reset to pending. It is not saved: save the next state with parent
	// Checkpoint.ID, so a concurrent resume of the same session conflicts.
	Checkpoint *Checkpoint
	// Next is the first step still to run (pointing into
	// Checkpoint.Steps), nil when every step is completed or skipped, and
	// nil for a checkpoint without steps (a loop that keeps its progress in
	// State or in the transcript).
	Next *Step
	// Reset lists the steps that were reset to pending.
	Reset []string
	// NeedsApproval is set when the session waits for approval: nothing
	// runs until Approve accepts a token for Checkpoint.Pending.
	NeedsApproval bool
}

// Resume loads a session's latest checkpoint to continue it. Running steps
// (interrupted) and failed steps are reset to pending; completed steps keep
// their outputs. A session that completed or was cancelled is refused with
// ErrCompleted or ErrCancelled. A session that was running or failed counts
// one more retry. The returned checkpoint's Status is set to running
// (pending, paused and failed sessions alike), except for a session waiting
// for approval, which stays waiting; CurrentStep is set to Next's ID. None
// of this is saved until the caller saves it.
func Resume(ctx context.Context, s Store, session string) (*Resumption, error) {
	c, err := s.Latest(ctx, session)
	if err != nil {
		return nil, err
	}
	switch c.Status {
	case StatusCompleted:
		return nil, fmt.Errorf("%w: session %s (checkpoint %s)", ErrCompleted, session, c.ID)
	case StatusCancelled:
		return nil, fmt.Errorf("%w: session %s (checkpoint %s)", ErrCancelled, session, c.ID)
	}
	r := &Resumption{Checkpoint: c}
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Status == StepRunning || st.Status == StepFailed {
			st.Status, st.Output, st.Error, st.Duration = StepPending, "", "", 0
			r.Reset = append(r.Reset, st.ID)
		}
		if r.Next == nil && st.Status == StepPending {
			r.Next = st
		}
	}
	switch c.Status {
	case StatusWaitingApproval:
		r.NeedsApproval = true
	case StatusRunning, StatusFailed:
		c.RetryCount++
		c.Status = StatusRunning
	default:
		c.Status = StatusRunning
	}
	if r.Next != nil {
		c.CurrentStep = r.Next.ID
	}
	return r, nil
}

// Approve accepts a resume token for the pending action of a session that
// waits for approval, and saves the approval as a new checkpoint: Pending
// marked approved by user, status paused (ready for Resume to pick up; not
// running, since nothing runs it yet), and the token's nonce added to
// UsedNonces. A token that is forged, expired, for another session or
// user, or for params that have changed since it was issued is refused
// with the matching ErrToken error; a token that already approved an
// action (of this session, whatever its params) with ErrTokenUsed. The
// save is compare-and-set, so two approvals racing with one token cannot
// both win.
func Approve(ctx context.Context, s Store, tokens Tokens, session, user, token string) (*Checkpoint, error) {
	c, err := s.Latest(ctx, session)
	if err != nil {
		return nil, err
	}
	if c.Status != StatusWaitingApproval || c.Pending == nil {
		return nil, fmt.Errorf("%w: session %s is %s", ErrNotWaiting, session, c.Status)
	}
	claims, err := tokens.verify(token, session, user, c.Pending.ParamsHash)
	if err != nil {
		return nil, fmt.Errorf("approve session %s: %w", session, err)
	}
	if slices.Contains(c.UsedNonces, claims.Nonce) {
		return nil, fmt.Errorf("approve session %s: %w", session, ErrTokenUsed)
	}
	c.UsedNonces = append(c.UsedNonces, claims.Nonce)
	c.Pending.ApprovedBy = user
	c.Pending.ApprovedAt = tokens.now().UTC()
	c.Status = StatusPaused
	if err := s.Save(ctx, c, c.ID); err != nil {
		return nil, err
	}
	return c, nil
}
