package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact/checkpoint"
)

// RaceWriter is the body of a writer process of TwoProcessesLoseNothing:
// it commits 40 checkpoints on session "race" of s, reloading on every
// conflict, writing "ok ID TASK" for each commit and "conflicts N" at the
// end to out.
func RaceWriter(ctx context.Context, s checkpoint.Store, out io.Writer) error {
	conflicts := 0
	for n := 0; n < 40; {
		c, err := s.Latest(ctx, "race")
		if err != nil {
			return fmt.Errorf("latest: %w", err)
		}
		c.Task = fmt.Sprintf("pid %d commit %d", os.Getpid(), n)
		err = s.Save(ctx, c, c.ID)
		if errors.Is(err, checkpoint.ErrConflict) {
			conflicts++
			continue
		}
		if err != nil {
			return fmt.Errorf("save: %w", err)
		}
		fmt.Fprintf(out, "ok %s %s\n", c.ID, c.Task)
		n++
	}
	fmt.Fprintf(out, "conflicts %d\n", conflicts)
	return nil
}

// TwoProcessesLoseNothing starts two writer processes on session "race" of
// the store s reads (start returns a command running RaceWriter on it) and
// checks that every commit either of them saw succeed is in the history,
// and the history has no others.
func TwoProcessesLoseNothing(t *testing.T, s checkpoint.Store, start func() *exec.Cmd) {
	c := Sample("race", 0)
	if err := s.Save(context.Background(), c, ""); err != nil {
		t.Fatal(err)
	}
	type result struct {
		commits   map[string]string
		conflicts int
		err       error
	}
	results := make(chan result, 2)
	for range 2 {
		cmd := start()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			r := result{commits: map[string]string{}}
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f := strings.SplitN(sc.Text(), " ", 3)
				switch f[0] {
				case "ok":
					r.commits[f[1]] = f[2]
				case "conflicts":
					r.conflicts, _ = strconv.Atoi(f[1])
				}
			}
			r.err = cmd.Wait()
			results <- r
		}()
	}
	all := map[string]string{}
	conflicts := 0
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("writer failed: %v", r.err)
		}
		for id, task := range r.commits {
			all[id] = task
		}
		conflicts += r.conflicts
	}
	h, err := s.History(context.Background(), "race")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 80 || len(h) != 81 {
		t.Fatalf("%d commits reported, history of %d; want 80 and 81", len(all), len(h))
	}
	for _, m := range h[:80] {
		task, ok := all[m.ID]
		if !ok {
			t.Fatalf("history holds %s, which no writer committed", m.ID)
		}
		got, err := s.Load(context.Background(), "race", m.ID)
		if err != nil || got.Task != task {
			t.Fatalf("%s: %v %q vs %q", m.ID, err, got.Task, task)
		}
	}
	t.Logf("2 processes, 80 commits, %d conflicts", conflicts)
}
