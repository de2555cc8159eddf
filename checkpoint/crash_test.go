package checkpoint_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// The test binary doubles as the writer process of the crash and
// multi-process tests: re-executed with one of these variables set, it runs
// the writer instead of the tests.
const (
	writerModeEnv = "CHECKPOINT_TEST_WRITER"
	writerDirEnv  = "CHECKPOINT_TEST_DIR"
)

func TestMain(m *testing.M) {
	switch os.Getenv(writerModeEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		os.Exit(crashWriter(os.Getenv(writerDirEnv)))
	case "race":
		os.Exit(raceWriter(os.Getenv(writerDirEnv)))
	case "once":
		os.Exit(onceWriter(os.Getenv(writerDirEnv)))
	case "first":
		os.Exit(firstWriter(os.Getenv(writerDirEnv)))
	default:
		fmt.Fprintln(os.Stderr, "unknown writer mode")
		os.Exit(3)
	}
}

// crashWriter saves checkpoints of one session until killed, printing each
// committed one after Save returns.
func crashWriter(dir string) int {
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := os.Stdout
	for {
		c, err := s.Latest(ctx, "crash")
		parent := ""
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
			c = storetest.Sample("crash", 0)
		case err != nil:
			fmt.Fprintln(os.Stderr, "latest:", err)
			return 1
		default:
			parent = c.ID
		}
		// Vary the size, so kills land in writes of different lengths.
		size := 50_000 + rand.IntN(150_000)
		if raceEnabled {
			size /= 8
		}
		c.Transcript.Messages[2].Parts[0].Text = strings.Repeat("y", size)
		c.Task = fmt.Sprint("save ", c.Seq+1)
		if err := s.Save(ctx, c, parent); err != nil {
			fmt.Fprintln(os.Stderr, "save:", err)
			return 1
		}
		fmt.Fprintf(out, "ok %d %s %s\n", c.Seq, c.ID, c.Hash)
	}
}

// TestFileStoreSurvivesSIGKILL kills a writer process at random moments
// during 600+ saves. After every kill the latest committed checkpoint must
// load, match its hash, and be no older than the last save the writer saw
// succeed.
func TestFileStoreSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary many times")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	const wantSaves = 600
	saves, kills, midWrite := 0, 0, 0
	var lastSeq int64
	for saves < wantSaves {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), writerModeEnv+"=crash", writerDirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		var reported []string
		// Wait for the first save of this run, then kill at a random moment.
		if lines.Scan() {
			reported = append(reported, lines.Text())
		}
		wait := 40_000
		if raceEnabled {
			wait = 80_000
		}
		time.Sleep(time.Duration(rand.IntN(wait)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for lines.Scan() {
			reported = append(reported, lines.Text())
		}
		io.Copy(io.Discard, stdout)
		werr := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("writer ended by itself (%v): %s", werr, stderr.String())
		}
		kills++
		saves += len(reported)
		var seen int64
		if n := len(reported); n > 0 {
			f := strings.Fields(reported[n-1])
			seen, _ = strconv.ParseInt(f[1], 10, 64)
		}
		if committed, size, err := checkpoint.LogTail(dir, "crash"); err != nil {
			t.Fatalf("after kill %d: %v", kills, err)
		} else if size > committed {
			midWrite++ // killed in the middle of a batch: a torn tail
		}
		s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Latest(ctx, "crash")
		if err != nil {
			t.Fatalf("after kill %d (%d saves): latest does not load: %v", kills, saves, err)
		}
		if c.Seq < seen || c.Seq > seen+1 {
			t.Fatalf("after kill %d: latest is seq %d, the writer last committed %d", kills, c.Seq, seen)
		}
		if c.Seq < lastSeq {
			t.Fatalf("after kill %d: latest went back from %d to %d", kills, lastSeq, c.Seq)
		}
		if c.Task != fmt.Sprint("save ", c.Seq) {
			t.Fatalf("after kill %d: seq %d holds task %q", kills, c.Seq, c.Task)
		}
		if len(c.Hash) != 64 {
			t.Fatalf("no hash")
		}
		lastSeq = c.Seq
	}
	s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	n, problems, err := checkpoint.Verify(ctx, s)
	if err != nil || len(problems) > 0 {
		t.Fatalf("verify after the crashes: %v %+v", err, problems)
	}
	res, err := s.Prune(ctx, checkpoint.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(s.EventLogPath("crash"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, corrupt, err := checkpoint.ReadEvents(f)
	if err != nil || len(corrupt) > 0 || len(events) == 0 {
		t.Fatalf("event log after the crashes: %d events, corrupt %+v, %v", len(events), corrupt, err)
	}
	t.Logf("%d kills during %d saves; latest seq %d; %d kills left a torn batch at the log's end; %d checkpoints verified; prune removed %d",
		kills, saves, lastSeq, midWrite, n, res.Checkpoints)
}

// raceWriter commits 40 checkpoints on session "race" of the store in dir.
func raceWriter(dir string) int {
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := storetest.RaceWriter(context.Background(), s, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// onceWriter reads the latest checkpoint, says "ready", waits for a line
// on stdin, then saves over what it read once and says how it went.
func onceWriter(dir string) int {
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := s.Latest(ctx, "once")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	c.Task = fmt.Sprint("written by ", os.Getpid())
	switch err := s.Save(ctx, c, c.ID); {
	case err == nil:
		fmt.Println("saved", c.ID)
	case errors.Is(err, checkpoint.ErrConflict):
		fmt.Println("conflict")
	default:
		fmt.Println("error", err)
	}
	return 0
}

// firstWriter saves the first checkpoint of session "fresh" and says how
// it went.
func firstWriter(dir string) int {
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c := &checkpoint.Checkpoint{Session: "fresh", Task: "first", Status: checkpoint.StatusRunning}
	if err := s.Save(context.Background(), c, ""); err != nil {
		fmt.Println("error", err)
	} else {
		fmt.Println("saved", c.ID)
	}
	return 0
}

func writer(t *testing.T, mode, dir string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), writerModeEnv+"="+mode, writerDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes read the same head and save over it at the same moment:
// exactly one wins, the other gets ErrConflict.
func TestFileStoreTwoProcessesOneWins(t *testing.T) {
	dir := t.TempDir()
	s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	c := storetest.Sample("once", 0)
	if err := s.Save(context.Background(), c, ""); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		var ins []io.WriteCloser
		var outs []*bufio.Scanner
		var cmds []*exec.Cmd
		for range 2 {
			cmd := writer(t, "once", dir)
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			if !sc.Scan() || sc.Text() != "ready" {
				t.Fatalf("writer did not get ready: %q", sc.Text())
			}
			ins, outs, cmds = append(ins, in), append(outs, sc), append(cmds, cmd)
		}
		for _, in := range ins {
			io.WriteString(in, "go\n")
		}
		var results []string
		for i, sc := range outs {
			sc.Scan()
			results = append(results, strings.Fields(sc.Text())[0])
			cmds[i].Wait()
		}
		if !(results[0] == "saved" && results[1] == "conflict") && !(results[0] == "conflict" && results[1] == "saved") {
			t.Fatalf("round %d: results %v, want one saved and one conflict", round, results)
		}
		h, err := s.History(context.Background(), "once")
		if err != nil || len(h) != round+2 {
			t.Fatalf("round %d: history %d, %v", round, len(h), err)
		}
	}
}

// Two processes hammer one session: every commit either of them saw
// succeed is in the history, and the history has no others.
func TestFileStoreTwoProcessesLoseNothing(t *testing.T) {
	dir := t.TempDir()
	s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	storetest.TwoProcessesLoseNothing(t, s, func() *exec.Cmd { return writer(t, "race", dir) })
}
