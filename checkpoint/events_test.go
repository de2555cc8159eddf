package checkpoint_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

func TestReadEvents(t *testing.T) {
	good := `{"time":"2025-01-01T00:00:00Z","session":"s","checkpoint":"c1","seq":1,"to":"running"}`
	tests := []struct {
		name         string
		in           string
		events       int
		corruptLines []int
	}{
		{"clean", good + "\n" + good + "\n", 2, nil},
		{"torn last line", good + "\n" + good[:20], 1, nil},
		{"complete last line without newline", good + "\n" + good, 2, nil},
		{"corrupt middle line", good + "\n{garbage\n" + good + "\n", 2, []int{2}},
		{"blank lines", "\n" + good + "\n\n", 1, nil},
		{"empty", "", 0, nil},
	}
	for _, tc := range tests {
		events, corrupt, err := checkpoint.ReadEvents(strings.NewReader(tc.in))
		if err != nil || len(events) != tc.events || len(corrupt) != len(tc.corruptLines) {
			t.Errorf("%s: %d events, corrupt %+v, %v", tc.name, len(events), corrupt, err)
			continue
		}
		for i, c := range corrupt {
			if c.Line != tc.corruptLines[i] || c.Err == "" {
				t.Errorf("%s: corrupt %+v", tc.name, c)
			}
		}
	}
}

func FuzzReadEvents(f *testing.F) {
	f.Add(`{"time":"2025-01-01T00:00:00Z","session":"s","checkpoint":"c","seq":1,"to":"running"}` + "\n{")
	f.Add("\n\n{}\n")
	f.Fuzz(func(t *testing.T, s string) {
		events, corrupt, err := checkpoint.ReadEvents(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(s, "\n") + 1; len(events)+len(corrupt) > lines {
			t.Fatalf("%d events and %d corrupt from %d lines", len(events), len(corrupt), lines)
		}
	})
}

// The store logs one event per transition, and a torn tail left by a crash
// is cut before the next append.
func TestFileStoreEventLog(t *testing.T) {
	ctx := context.Background()
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	c := storetest.Sample("ev", 0)
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	// Tear the log as a crash mid-append would.
	f, _ := os.OpenFile(s.EventLogPath("ev"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2025-01-01T00:00:00Z","sess`)
	f.Close()
	c.Steps[1].Status = checkpoint.StepCompleted
	c.Steps = c.Steps[:3] // "ship" dropped from the plan
	c.CurrentStep = "test"
	if err := s.Save(ctx, c, c.ID); err != nil {
		t.Fatal(err)
	}
	c.Task = "only the task changed"
	if err := s.Save(ctx, c, c.ID); err != nil {
		t.Fatal(err)
	}
	f, _ = os.Open(s.EventLogPath("ev"))
	defer f.Close()
	events, corrupt, err := checkpoint.ReadEvents(f)
	if err != nil || len(corrupt) != 0 {
		t.Fatalf("corrupt %+v, %v", corrupt, err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Step+":"+e.From+">"+e.To)
	}
	want := ":>running read:>completed build:>running test:>failed ship:>pending build:running>completed ship:pending>removed"
	if strings.Join(got, " ") != want {
		t.Fatalf("events\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	st, _ := os.Stat(s.EventLogPath("ev"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("event log mode %v", st.Mode())
	}
}
