package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// progressAt returns a progress of 10 files of 100 bytes each, started at
// t0, whose clock reads now.
func progressAt(mode progressMode, width int, now *time.Time) (*batchProgress, *bytes.Buffer) {
	var w bytes.Buffer
	p := newBatchProgress(&w, mode, func() int { return width }, time.Second)
	p.now = func() time.Time { return *now }
	p.start, p.total, p.totalBytes = *now, 10, 1000
	return p, &w
}

func TestProgressBarLayout(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const numbers = "4/10 files  1 failed  22.5k tokens saved (75%)  ETA 6s"
	tests := []struct {
		width    int
		prefix   bool
		barWidth int // 0: no bar
		cut      bool
	}{
		{120, true, 30, false},
		{100, true, 28, false},
		{80, false, 22, false}, // the name gives way first
		{70, false, 12, false},
		{60, false, 0, false}, // then the bar
		{50, false, 0, true},  // then the line is cut
	}
	for _, tt := range tests {
		now := t0
		p, w := progressAt(progressBar, tt.width, &now)
		for i := range 3 {
			now = now.Add(time.Second)
			p.fileDone(&fileResult{Status: statusCompacted, TokensBefore: 10000, TokensAfter: 2500 + i, size: 100})
		}
		now = now.Add(time.Second)
		p.fileDone(&fileResult{Status: statusFailed, size: 100})
		p.drawBar()
		out := w.String()
		line := out[strings.LastIndex(out, "\r\033[K")+len("\r\033[K"):]
		if n := len([]rune(line)); n > tt.width-1 {
			t.Errorf("width %d: line of %d columns: %q", tt.width, n, line)
		}
		want := numbers
		if tt.cut {
			want = numbers[:tt.width-1]
		}
		if tt.barWidth > 0 {
			fill := 4 * tt.barWidth / 10 // 400 of 1000 bytes done
			want = "[" + strings.Repeat("=", fill) + ">" + strings.Repeat(" ", tt.barWidth-fill-1) + "] " + want
		}
		if tt.prefix {
			want = "compact batch " + want
		}
		if line != want {
			t.Errorf("width %d:\ngot  %q\nwant %q", tt.width, line, want)
		}
	}
}

// TestProgressETA: the ETA is the bytes left at the rate this run has
// compacted bytes; files an earlier run finished do not speed it up.
func TestProgressETA(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p, _ := progressAt(progressOff, 80, &now)
	if got := p.eta(); got != "--" {
		t.Fatalf("before any file: ETA %s", got)
	}
	// Four files done earlier, at once: no rate yet.
	for range 4 {
		p.fileDone(&fileResult{Status: statusCompacted, Resumed: true, size: 100})
	}
	if got := p.eta(); got != "--" {
		t.Fatalf("after resumed files only: ETA %s", got)
	}
	// Two compacted in 4 s: 50 bytes/s, 400 bytes left.
	now = now.Add(4 * time.Second)
	p.fileDone(&fileResult{Status: statusCompacted, size: 100})
	p.fileDone(&fileResult{Status: statusUnchanged, size: 100})
	if got := p.eta(); got != "8s" {
		t.Fatalf("ETA %s, want 8s", got)
	}
	for range 4 {
		p.fileDone(&fileResult{Status: statusSkipped, size: 100})
	}
	if got := p.eta(); got != "0s" {
		t.Fatalf("when done: ETA %s", got)
	}
}

func TestProgressStatusLine(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p, w := progressAt(progressLines, 80, &now)
	p.fileDone(&fileResult{Status: statusCompacted, TokensBefore: 90000, TokensAfter: 20000, Resumed: true, size: 100})
	now = now.Add(75 * time.Second)
	p.fileDone(&fileResult{Status: statusUnchanged, TokensBefore: 1000, TokensAfter: 1000, size: 200})
	p.fileDone(&fileResult{Status: statusSkipped, size: 100})
	p.setNote("stopping")
	want := "compact batch: 3/10 files (1 compacted, 1 unchanged, 1 skipped, 0 failed; 1 done earlier), " +
		"70,000 tokens saved (77%), 1m15s elapsed, ETA 2m30s, stopping"
	if got := p.statusLine(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if w.Len() != 0 {
		t.Fatalf("lines mode printed before its interval: %q", w.String())
	}
	p.println("compact batch: failed: x")
	p.end()
	if got := w.String(); got != "compact batch: failed: x\n"+want+"\n" {
		t.Fatalf("output %q", got)
	}
}

// TestProgressPrintlnOverBar: a line printed while the bar shows clears
// it, and the bar comes back below the line.
func TestProgressPrintlnOverBar(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p, w := progressAt(progressBar, 80, &now)
	p.drawBar()
	p.println("compact batch: failed: a.json: boom")
	got := strings.Split(w.String(), "\r\033[K")
	if len(got) != 4 || got[0] != "" || !strings.HasPrefix(got[1], "compact batch [") ||
		got[2] != "compact batch: failed: a.json: boom\n" || got[3] != got[1] {
		t.Fatalf("output %q", w.String())
	}
	p.end()
	if !strings.HasSuffix(w.String(), got[3]+"\r\033[K") {
		t.Fatalf("the bar is not cleared at the end: %q", w.String())
	}
	p.println("after")
	if !strings.HasSuffix(w.String(), "\r\033[Kafter\n") {
		t.Fatalf("after the end: %q", w.String())
	}
}

func TestAbbreviate(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 22497: "22.5k", 999_949: "999.9k",
		999_950: "1.0M", 4_500_000: "4.5M", 2_000_000_000: "2.0G", -1500: "-1.5k"} {
		if got := abbreviate(n); got != want {
			t.Errorf("abbreviate(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1499 * time.Millisecond: "1s", 59 * time.Second: "59s", 61 * time.Second: "1m01s",
		time.Hour + 2*time.Minute + 3*time.Second: "1h02m", 50 * time.Hour: "50h00m",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
