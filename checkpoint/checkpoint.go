// Package checkpoint saves an agent session's state so that an interrupted
// run resumes from a consistent point instead of starting over: without
// repeating side effects, without trusting a stale approval and without
// losing completed work.
//
// A Checkpoint holds the session's plan (its steps and their outputs), the
// compacted transcript with its compaction records, an idempotency cache of
// tool results, the side effects performed, the action waiting for approval
// and references to the permissions in force. Checkpoints of a session form a
// chain: each names its parent, and a Store saves a new one only if its
// expected parent is still the latest (compare-and-set), so two workers on
// one session can never silently overwrite each other.
//
// Two stores implement Store: FileStore, a directory on local disk (the
// default), and the Redis store of package checkpoint/redis, for many
// workers on many machines. Both are LogStores: a checkpoint is stored as
// elements (each message, step, cached result, ...) addressed by their
// hash and shared by every checkpoint that holds them, plus a record of
// what changed, so a save writes only what is new and costs the same for a
// long session as for a short one. Both encrypt at rest (AES-GCM) when
// given a key, and both redact by default: every string of a checkpoint
// that could carry a secret passes through a redact.Redactor before it is
// written, unless Options.Plain says otherwise.
package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/compactkit/compact"
)

// SchemaVersion is the version of the Checkpoint layout this package writes.
// Checkpoints of a newer version are refused rather than misread.
const SchemaVersion = 1

// Errors callers branch on. Stores wrap them with the session and checkpoint
// concerned.
var (
	// ErrNotFound: no such session or checkpoint.
	ErrNotFound = errors.New("checkpoint not found")
	// ErrConflict: the expected parent is no longer the session's latest
	// checkpoint; another writer saved first. Reload and retry.
	ErrConflict = errors.New("checkpoint conflict: the session moved on since the expected parent")
	// ErrCorrupt: stored bytes fail their hash, are truncated or cannot be
	// decoded. A corrupt checkpoint is reported, never loaded as empty state.
	ErrCorrupt = errors.New("checkpoint corrupt")
	// ErrInvalid: a checkpoint, session ID or checkpoint ID that cannot be
	// saved or looked up as given.
	ErrInvalid = errors.New("invalid checkpoint")
	// ErrKeyRequired: an encrypted checkpoint was read by a store without a key.
	ErrKeyRequired = errors.New("checkpoint is encrypted and no key was given")
	// ErrWrongKey: an encrypted checkpoint does not open with the store's key.
	ErrWrongKey = errors.New("checkpoint does not decrypt with this key")
	// ErrUnavailable: the store cannot be reached (a Redis server down).
	ErrUnavailable = errors.New("checkpoint store unavailable")
	// ErrCompleted: Resume of a session that already completed.
	ErrCompleted = errors.New("session already completed")
	// ErrCancelled: Resume of a session that was cancelled.
	ErrCancelled = errors.New("session was cancelled")
	// ErrNotWaiting: Approve of a session that waits for no approval.
	ErrNotWaiting = errors.New("session is not waiting for approval")
)

// Status is where a session stands.
type Status string

// Session statuses.
const (
	StatusPending         Status = "pending"
	StatusRunning         Status = "running"
	StatusPaused          Status = "paused"
	StatusWaitingApproval Status = "waiting_approval"
	StatusCompleted       Status = "completed"
	StatusFailed          Status = "failed"
	StatusCancelled       Status = "cancelled"
)

// Statuses lists every session status, in lifecycle order.
var Statuses = []Status{StatusPending, StatusRunning, StatusPaused, StatusWaitingApproval,
	StatusCompleted, StatusFailed, StatusCancelled}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, x := range Statuses {
		if s == x {
			return true
		}
	}
	return false
}

// StepStatus is where one step of a plan stands.
type StepStatus string

// Step statuses.
const (
	StepPending   StepStatus = "pending"
	StepRunning   StepStatus = "running"
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
)

// Valid reports whether s is a known step status.
func (s StepStatus) Valid() bool {
	switch s {
	case StepPending, StepRunning, StepCompleted, StepFailed, StepSkipped:
		return true
	}
	return false
}

// Checkpoint is a session's state at one point. A Store fills the identity
// fields (SchemaVersion, ID, ParentID, Seq, CreatedAt, UpdatedAt, Hash) when
// it saves; the caller fills the rest.
type Checkpoint struct {
	SchemaVersion int    `json:"schema_version"`
	ID            string `json:"id"`
	// ParentID is the checkpoint this one was saved over; "" for the first
	// checkpoint of a session.
	ParentID string `json:"parent_id,omitempty"`
	// Seq counts the session's checkpoints from 1; a child's Seq is its
	// parent's plus one.
	Seq     int64  `json:"seq"`
	Session string `json:"session"`
	// Task describes what the session is doing, in the words of whoever
	// started it. FindResumable matches new tasks against it.
	Task        string `json:"task,omitempty"`
	Status      Status `json:"status"`
	PlanVersion int    `json:"plan_version,omitempty"`
	// CurrentStep is the ID of the step being worked on, "" when none.
	CurrentStep string `json:"current_step,omitempty"`
	Steps       []Step `json:"steps,omitempty"`
	// Transcript is the compacted conversation; Compactions records each
	// compaction that produced it, oldest first.
	Transcript  *compact.Transcript  `json:"transcript,omitempty"`
	Compactions []compact.Compaction `json:"compactions,omitempty"`
	// ToolCache maps an idempotency key (see Key) to the tool's result, so a
	// resumed run reuses results instead of calling the tool again.
	ToolCache   map[string]json.RawMessage `json:"tool_cache,omitempty"`
	SideEffects []SideEffect               `json:"side_effects,omitempty"`
	// Pending is the action waiting for approval when Status is
	// StatusWaitingApproval.
	Pending *PendingAction `json:"pending,omitempty"`
	// Permissions snapshots the grants in force, by reference only.
	Permissions []Permission `json:"permissions,omitempty"`
	RetryCount  int          `json:"retry_count,omitempty"`
	LastError   string       `json:"last_error,omitempty"`
	// State is the loop's own data, as JSON: whatever it needs to go on
	// that has no field here (counters, a cursor, a model's settings).
	// Stores keep it byte for byte (redacted in redacting mode).
	State json.RawMessage `json:"state,omitempty"`
	// UsedNonces lists the nonces of the resume tokens Approve accepted
	// for this session, so that a token approves one pending action once.
	// Save keeps the parent's nonces whatever this field holds (it sets
	// the field to the union): a writer that builds its checkpoint afresh
	// cannot re-arm a used token.
	UsedNonces []string `json:"used_nonces,omitempty"`
	// CreatedAt is when the session's first checkpoint was saved; UpdatedAt
	// when this one was.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Hash is the sha256, in hex, of the checkpoint as stored: its identity
	// fields and the addresses of all its elements (the hashes of their
	// encodings, keyed when encrypted), so it proves the whole content, as
	// stored (in redacting mode, redacted). Checkpoints written before logs
	// keep the hash of their body.
	Hash string `json:"sha256,omitempty"`
}

// Step is one step of a session's plan.
type Step struct {
	ID     string     `json:"id"`
	Status StepStatus `json:"status"`
	// InputHash identifies the step's input, so a changed input is noticed
	// on resume.
	InputHash string          `json:"input_hash,omitempty"`
	Output    string          `json:"output,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Duration  time.Duration   `json:"duration_ns,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// SideEffect records an action with effects outside the agent (a payment, a
// sent mail, a pushed commit), by the idempotency key it ran under and the
// receipt it returned.
type SideEffect struct {
	Tool    string          `json:"tool"`
	Key     string          `json:"key"`
	Receipt json.RawMessage `json:"receipt,omitempty"`
	At      time.Time       `json:"at,omitzero"`
}

// PendingAction is an action that waits for a person's approval. ParamsHash
// is ParamsHash(Params); a resume token is bound to it, so changing the
// params voids the approval.
type PendingAction struct {
	Tool       string          `json:"tool"`
	Params     json.RawMessage `json:"params,omitempty"`
	ParamsHash string          `json:"params_hash"`
	// ApprovedBy and ApprovedAt record the approval Approve accepted.
	ApprovedBy string    `json:"approved_by,omitempty"`
	ApprovedAt time.Time `json:"approved_at,omitzero"`
}

// NewPendingAction returns the pending action for tool with params, its
// ParamsHash filled in.
func NewPendingAction(tool string, params json.RawMessage) (*PendingAction, error) {
	h, err := ParamsHash(params)
	if err != nil {
		return nil, err
	}
	return &PendingAction{Tool: tool, Params: params, ParamsHash: h}, nil
}

// Permission is a grant the session holds, by reference: Ref says where the
// credential lives ("env:GITHUB_TOKEN", "vault:kv/ci/deploy"), never what it
// is.
type Permission struct {
	Scope string `json:"scope"`
	Ref   string `json:"ref,omitempty"`
}

// The patterns are compiled on first use, not at start-up.
var (
	idPattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`) })
	refPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9+.-]*:[^\s]+$`) })
)

// ValidSessionID reports whether id can name a session: 1 to 128 letters,
// digits, '.', '_' or '-', starting with a letter or digit. The same rule
// holds in every store, so a session moves between stores unchanged.
func ValidSessionID(id string) bool { return idPattern().MatchString(id) }

// validate checks what the caller filled in, before a store assigns the
// identity fields. An empty Status is refused like an unknown one: a
// checkpoint always says where its session stands. Only the steps at
// positions check are checked (all when kept is nil); kept tells whether
// an ID is that of a step an earlier save checked and this one keeps.
func (c *Checkpoint) validate(redacting bool, check []int, kept func(id string) bool) error {
	if !ValidSessionID(c.Session) {
		return fmt.Errorf("%w: session ID %q: want 1-128 of [A-Za-z0-9._-], starting with a letter or digit", ErrInvalid, c.Session)
	}
	if !c.Status.Valid() {
		return fmt.Errorf("%w: session %s: unknown status %q", ErrInvalid, c.Session, c.Status)
	}
	if kept == nil {
		kept = func(string) bool { return false }
		check = make([]int, len(c.Steps))
		for i := range check {
			check[i] = i
		}
	}
	seen := make(map[string]bool, len(check))
	for _, i := range check {
		s := &c.Steps[i]
		if s.ID == "" {
			return fmt.Errorf("%w: session %s: step %d has no ID", ErrInvalid, c.Session, i)
		}
		if seen[s.ID] || kept(s.ID) {
			return fmt.Errorf("%w: session %s: step ID %q repeats", ErrInvalid, c.Session, s.ID)
		}
		seen[s.ID] = true
		if !s.Status.Valid() {
			return fmt.Errorf("%w: session %s: step %q: unknown status %q", ErrInvalid, c.Session, s.ID, s.Status)
		}
	}
	if c.CurrentStep != "" && !seen[c.CurrentStep] && !kept(c.CurrentStep) {
		return fmt.Errorf("%w: session %s: current step %q is not a step", ErrInvalid, c.Session, c.CurrentStep)
	}
	if c.Status == StatusWaitingApproval && c.Pending == nil {
		return fmt.Errorf("%w: session %s: waiting for approval without a pending action", ErrInvalid, c.Session)
	}
	if p := c.Pending; p != nil && p.ParamsHash == "" {
		return fmt.Errorf("%w: session %s: pending action without a params hash (use NewPendingAction)", ErrInvalid, c.Session)
	}
	if p := c.Pending; p != nil {
		h, err := ParamsHash(p.Params)
		if err != nil {
			return fmt.Errorf("%w: session %s: pending action: %w", ErrInvalid, c.Session, err)
		}
		// Params read back from a redacting store are masked, so their hash
		// cannot be recomputed: the stored hash, taken from the real params
		// when they were first saved, stands.
		masked := redacting && bytes.Contains(p.Params, []byte("[REDACTED"))
		if p.ParamsHash != h && !masked {
			return fmt.Errorf("%w: session %s: pending action's params hash does not match its params (use NewPendingAction)", ErrInvalid, c.Session)
		}
	}
	for _, p := range c.Permissions {
		if p.Ref != "" && !refPattern().MatchString(p.Ref) {
			// A bare value is most likely the secret itself.
			return fmt.Errorf("%w: session %s: permission %q: ref must be a reference like env:NAME or vault:path, not a value", ErrInvalid, c.Session, p.Scope)
		}
	}
	// Step args, cached results and State are checked to be JSON when a
	// store encodes them, so an unchanged one costs nothing to save again.
	return nil
}

// Step returns the step with the given ID, or nil.
func (c *Checkpoint) Step(id string) *Step {
	for i := range c.Steps {
		if c.Steps[i].ID == id {
			return &c.Steps[i]
		}
	}
	return nil
}

// CompletedSteps counts the steps that completed.
func (c *Checkpoint) CompletedSteps() int {
	n := 0
	for _, s := range c.Steps {
		if s.Status == StepCompleted {
			n++
		}
	}
	return n
}

// Clone returns a deep copy of c: changing the copy's steps, cache, side
// effects or transcript leaves c as it was.
func (c *Checkpoint) Clone() *Checkpoint {
	d := *c
	d.Steps = append([]Step(nil), c.Steps...)
	if c.Transcript != nil {
		t := c.Transcript.Clone()
		d.Transcript = &t
	}
	d.Compactions = append([]compact.Compaction(nil), c.Compactions...)
	if c.ToolCache != nil {
		d.ToolCache = make(map[string]json.RawMessage, len(c.ToolCache))
		for k, v := range c.ToolCache {
			d.ToolCache[k] = v
		}
	}
	d.SideEffects = append([]SideEffect(nil), c.SideEffects...)
	if c.Pending != nil {
		p := *c.Pending
		d.Pending = &p
	}
	d.Permissions = append([]Permission(nil), c.Permissions...)
	d.UsedNonces = append([]string(nil), c.UsedNonces...)
	return &d
}

// Meta is what a store knows of one checkpoint without reading its body:
// enough to walk a session's history.
type Meta struct {
	ID        string    `json:"id"`
	ParentID  string    `json:"parent_id,omitempty"`
	Seq       int64     `json:"seq"`
	Session   string    `json:"session"`
	Status    Status    `json:"status"`
	UpdatedAt time.Time `json:"updated_at"`
	// Hash is the checkpoint's Hash.
	Hash string `json:"sha256"`
	// Size is the bytes of the checkpoint's record (its elements are shared
	// with other checkpoints and not counted), or of its file for a
	// checkpoint written before logs; Codec how it is stored ("plain" or
	// "aes-gcm").
	Size  int    `json:"size"`
	Codec string `json:"codec"`
}

// SessionInfo describes a session by its latest checkpoint.
type SessionInfo struct {
	Session        string    `json:"session"`
	Task           string    `json:"task,omitempty"`
	Status         Status    `json:"status"`
	Latest         string    `json:"latest"`
	Seq            int64     `json:"seq"`
	Steps          int       `json:"steps"`
	CompletedSteps int       `json:"completed_steps"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Damaged, when set, says why the session has no readable head (a
	// damaged log: where, and what). The other fields then describe the
	// newest checkpoint that can still be read (zero when none can), the
	// one Recover would make the head.
	Damaged string `json:"damaged,omitempty"`
	// Encrypted, when set, is the ID of the key the session's summary is
	// sealed with, which this store was not given (or does not hold):
	// Task and the step counts are then unknown, the rest is read.
	Encrypted string `json:"encrypted,omitempty"`
	// Busy reports that a writer held the session's lock longer than List
	// waits (a save in progress, or a writer stopped mid-save): nothing
	// else of the session was read.
	Busy bool `json:"busy,omitempty"`
}

// locked reports whether err is a checkpoint's refusal to open for want of
// its key (none given, or another).
func locked(err error) bool {
	return errors.Is(err, ErrKeyRequired) || errors.Is(err, ErrWrongKey)
}

func (c *Checkpoint) info() SessionInfo {
	return SessionInfo{
		Session: c.Session, Task: c.Task, Status: c.Status, Latest: c.ID, Seq: c.Seq,
		Steps: len(c.Steps), CompletedSteps: c.CompletedSteps(),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}
