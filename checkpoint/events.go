package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Event is one state transition of a session: its own status, or one
// step's, changing from From to To in the checkpoint named.
type Event struct {
	Time       time.Time `json:"time"`
	Session    string    `json:"session"`
	Checkpoint string    `json:"checkpoint"`
	Seq        int64     `json:"seq"`
	// Step is the step that changed, "" for the session's status.
	Step string `json:"step,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to"`
}

// EventLog is an append-only JSONL file of events, one line per event,
// each line on disk before Append returns. One writer at a time: FileStore
// appends under its session lock.
type EventLog struct {
	mu sync.Mutex
	f  *os.File
}

// OpenEventLog opens (creating with mode 0600) the event log at path. A
// last line torn by a crash in the middle of an append is cut off, so the
// next line starts clean.
func OpenEventLog(path string) (*EventLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	if err := trimTornTail(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("event log %s: %w", path, err)
	}
	return &EventLog{f: f}, nil
}

// trimTornTail truncates f after its last newline.
func trimTornTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	end := st.Size()
	buf := make([]byte, 4096)
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if cut := pos + int64(i) + 1; cut != end {
				return f.Truncate(cut)
			}
			return nil
		}
	}
	return f.Truncate(0)
}

// Append writes events as lines, in one write, and syncs the file.
func (l *EventLog) Append(events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("event log: %w", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	return nil
}

// Close closes the log.
func (l *EventLog) Close() error { return l.f.Close() }

// CorruptLine is a line of an event log that does not decode.
type CorruptLine struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// ReadEvents reads an event log. A last line without its newline that does
// not decode (an append cut short) is skipped; other lines that do not
// decode are returned in corrupt, and reading goes on. The error is for a
// failure to read r.
func ReadEvents(r io.Reader) (events []Event, corrupt []CorruptLine, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		b, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return events, corrupt, fmt.Errorf("event log line %d: %w", line, rerr)
		}
		torn := rerr != nil // no newline: the last line, maybe cut short
		if len(bytes.TrimSpace(b)) > 0 {
			var e Event
			if derr := json.Unmarshal(b, &e); derr != nil {
				if !torn {
					corrupt = append(corrupt, CorruptLine{Line: line, Err: derr.Error()})
				}
			} else {
				events = append(events, e)
			}
		}
		if rerr != nil {
			return events, corrupt, nil
		}
	}
}

// headRecord is the payload of a FileStore head pointer: the session's
// summary, and its step statuses so the next save knows what changed.
type headRecord struct {
	Info  SessionInfo           `json:"info"`
	Steps map[string]StepStatus `json:"steps,omitempty"`
}

func newHeadRecord(c *Checkpoint) headRecord {
	h := headRecord{Info: c.info()}
	if len(c.Steps) > 0 {
		h.Steps = make(map[string]StepStatus, len(c.Steps))
		for _, s := range c.Steps {
			h.Steps[s.ID] = s.Status
		}
	}
	return h
}

// transitions lists what changed from prev (nil for a new session) to c.
func transitions(prev *headRecord, c *Checkpoint) []Event {
	var out []Event
	ev := func(step, from, to string) {
		out = append(out, Event{Time: c.UpdatedAt, Session: c.Session, Checkpoint: c.ID, Seq: c.Seq, Step: step, From: from, To: to})
	}
	var from Status
	var steps map[string]StepStatus
	if prev != nil {
		from, steps = prev.Info.Status, prev.Steps
	}
	if from != c.Status {
		ev("", string(from), string(c.Status))
	}
	now := make(map[string]bool, len(c.Steps))
	for _, s := range c.Steps {
		now[s.ID] = true
		if was := steps[s.ID]; was != s.Status {
			ev(s.ID, string(was), string(s.Status))
		}
	}
	// Steps dropped by a new plan version.
	var gone []string
	for id := range steps {
		if !now[id] {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		ev(id, string(steps[id]), "removed")
	}
	return out
}
