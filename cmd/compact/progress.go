package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// progressMode is how a batch shows its progress on stderr.
type progressMode int

const (
	progressOff   progressMode = iota // --quiet
	progressBar                       // a terminal: one line redrawn in place
	progressLines                     // a log or a pipe: a plain line now and then
)

// barRedraw is the least time between two redraws of the bar, so a batch of
// many small files does not spend its time writing to the terminal; the bar
// is also redrawn this often when nothing finishes, to keep the ETA fresh.
const barRedraw = 200 * time.Millisecond

// The bar is 10 to 30 columns wide, narrower on a narrow terminal.
const (
	minBar = 10
	maxBar = 30
)

// batchProgress tracks a batch's files as they finish and shows it: on a
// terminal a bar with files done, tokens saved and the ETA; elsewhere a line
// every interval; nothing when off. Lines printed through it (failures,
// notes) never tear the bar. It is safe for concurrent use.
type batchProgress struct {
	w        io.Writer
	mode     progressMode
	width    func() int    // terminal columns (bar), asked at each redraw: terminals resize
	interval time.Duration // between lines (lines)
	now      func() time.Time

	mu    sync.Mutex
	start time.Time
	total int
	// totalBytes is the size of every file; doneBytes of those finished;
	// workBytes of those this run read and compacted (not the ones an
	// earlier run finished), which is what the ETA's rate is measured on.
	totalBytes, doneBytes, workBytes int64
	counts                           map[fileStatus]int
	done, resumed                    int
	tokensBefore, tokensAfter        int64
	note                             string
	shown                            bool // the bar is on screen
	lastDraw                         time.Time

	stop    chan struct{}
	endOnce sync.Once
	wg      sync.WaitGroup
}

// newBatchProgress returns the progress of a batch shown on w. width
// returns the terminal's columns, 0 when unknown (80 is assumed).
func newBatchProgress(w io.Writer, mode progressMode, width func() int, interval time.Duration) *batchProgress {
	return &batchProgress{w: w, mode: mode, width: width, interval: interval, now: time.Now,
		counts: map[fileStatus]int{}, stop: make(chan struct{})}
}

// begin starts the clock and the redraws for total files of totalBytes.
func (p *batchProgress) begin(total int, totalBytes int64) {
	p.mu.Lock()
	p.start, p.total, p.totalBytes = p.now(), total, totalBytes
	p.mu.Unlock()
	tick := barRedraw
	switch p.mode {
	case progressOff:
		return
	case progressLines:
		tick = p.interval
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				if p.mode == progressBar {
					p.drawBar()
				} else {
					fmt.Fprintln(p.w, p.statusLine())
				}
				p.mu.Unlock()
			}
		}
	}()
}

// fileDone counts one finished file.
func (p *batchProgress) fileDone(r *fileResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.counts[r.Status]++
	p.doneBytes += r.size
	if r.Resumed {
		p.resumed++
	} else {
		p.workBytes += r.size
	}
	if r.Status == statusCompacted || r.Status == statusUnchanged {
		p.tokensBefore += int64(r.TokensBefore)
		p.tokensAfter += int64(r.TokensAfter)
	}
	if p.mode == progressBar && p.now().Sub(p.lastDraw) >= barRedraw {
		p.drawBar()
	}
}

// setNote shows s beside the counts (bar and lines), e.g. that the batch
// is stopping.
func (p *batchProgress) setNote(s string) {
	p.mu.Lock()
	p.note = s
	if p.mode == progressBar {
		p.drawBar()
	}
	p.mu.Unlock()
}

// println prints a line of its own on stderr, whatever the mode: the bar is
// cleared first and redrawn after it.
func (p *batchProgress) println(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
	fmt.Fprintln(p.w, s)
	if p.mode == progressBar && !p.start.IsZero() {
		p.drawBar()
	}
}

// end stops the redraws and clears the bar; off a terminal it prints the
// last status line, so a log always ends with the totals.
func (p *batchProgress) end() {
	p.endOnce.Do(func() {
		close(p.stop)
		p.wg.Wait()
		p.mu.Lock()
		defer p.mu.Unlock()
		switch p.mode {
		case progressBar:
			p.clearBar()
		case progressLines:
			fmt.Fprintln(p.w, p.statusLine())
		}
		p.mode = progressOff // lines printed after the end stay plain
	})
}

func (p *batchProgress) clearBar() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// drawBar redraws the bar in place. The line never reaches the last column,
// so the terminal does not wrap it and the \r returns to its start.
func (p *batchProgress) drawBar() {
	p.lastDraw = p.now()
	width := p.width()
	if width <= 0 {
		width = 80
	}
	files := fmt.Sprintf(" %d/%d files", p.done, p.total)
	parts := []string{p.savedText(true), "ETA " + p.eta()}
	if n := p.counts[statusFailed]; n > 0 {
		parts = append([]string{fmt.Sprintf("%d failed", n)}, parts...)
	}
	if p.note != "" {
		parts = append(parts, p.note)
	}
	rest := files
	for _, s := range parts {
		rest += "  " + s
	}
	// On a narrow terminal the name goes first, then the bar; the numbers
	// stay.
	prefix := "compact batch "
	room := width - 1 - len(rest)
	if room-len(prefix)-2 < minBar {
		prefix = ""
	}
	barWidth := min(room-len(prefix)-2, maxBar)
	if barWidth < minBar {
		barWidth = 0
	}
	line := prefix + p.bar(barWidth) + rest
	line = strings.TrimLeft(line, " ")
	if r := []rune(line); len(r) > width-1 {
		line = string(r[:width-1])
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
	p.shown = true
}

// bar draws [=====>     ] filled by the share of bytes done, which tracks
// the time left better than the share of files when sizes differ.
func (p *batchProgress) bar(width int) string {
	if width <= 0 {
		return ""
	}
	share := 1.0
	if p.totalBytes > 0 {
		share = float64(p.doneBytes) / float64(p.totalBytes)
	} else if p.total > 0 {
		share = float64(p.done) / float64(p.total)
	}
	fill := int(share * float64(width))
	fill = max(0, min(fill, width))
	s := strings.Repeat("=", fill)
	if fill < width {
		s += ">" + strings.Repeat(" ", width-fill-1)
	}
	return "[" + s + "]"
}

// statusLine is the line printed off a terminal.
func (p *batchProgress) statusLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "compact batch: %d/%d files (%d compacted, %d unchanged, %d skipped, %d failed",
		p.done, p.total, p.counts[statusCompacted], p.counts[statusUnchanged], p.counts[statusSkipped], p.counts[statusFailed])
	if p.resumed > 0 {
		fmt.Fprintf(&b, "; %d done earlier", p.resumed)
	}
	fmt.Fprintf(&b, "), %s, %s elapsed, ETA %s", p.savedText(false), shortDuration(p.now().Sub(p.start)), p.eta())
	if p.note != "" {
		b.WriteString(", " + p.note)
	}
	return b.String()
}

// savedText says how many tokens the batch saved, abbreviated (12.3k) for
// the bar.
func (p *batchProgress) savedText(short bool) string {
	saved := p.tokensBefore - p.tokensAfter
	n := thousands(saved)
	if short {
		n = abbreviate(saved)
	}
	s := n + " tokens saved"
	if p.tokensBefore > 0 {
		s += " (" + strconv.Itoa(int(100*float64(saved)/float64(p.tokensBefore)+0.5)) + "%)"
	}
	return s
}

// eta is the time left at the rate this run has read and compacted bytes
// so far; "--" until there is a rate to go by.
func (p *batchProgress) eta() string {
	if p.done == p.total {
		return "0s"
	}
	elapsed := p.now().Sub(p.start)
	if p.workBytes == 0 || elapsed <= 0 {
		return "--"
	}
	rate := float64(p.workBytes) / elapsed.Seconds()
	left := time.Duration(float64(p.totalBytes-p.doneBytes) / rate * float64(time.Second))
	return shortDuration(left)
}

// abbreviate prints n as 950, 12.3k or 4.5M.
func abbreviate(n int64) string {
	switch {
	case n >= 999_950_000 || n <= -999_950_000:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + "G"
	case n >= 999_950 || n <= -999_950:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 1000 || n <= -1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// shortDuration prints d as 45s, 3m04s or 1h02m.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
