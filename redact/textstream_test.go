package redact

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/redact/casegen"
	"pgregory.net/rapid"
)

// streamCases are the generated redaction cases (every family in every
// context, split-line keys with LF and CRLF, PEM keys, YAML blocks,
// Kubernetes Secrets, JSON in JSON) and their negatives: the vocabulary
// of the streamed texts below.
var streamCases = sync.OnceValue(func() []string {
	var out []string
	for _, c := range casegen.Generate(ciSeed) {
		out = append(out, c.Text)
	}
	return out
})

// streamNoise are fragments that glue cases together in odd ways. PEM
// markers come only in pairs (inside the cases): a BEGIN line whose END is
// further on than the overlap is beyond what the stream promises.
var streamNoise = []string{"\n", "\r\n", "\n\n", " ", "\t", "=", ": ", `"`, "'", "\\", "{", "}", "[REDACTED:password#3]",
	"password=", "token: ", `{"content":"`, `"}`, "---\n", "  ", "é", "\xff", "AKIA", "ghp_"}

// failer is what the helpers need of a *testing.T or a *rapid.T.
type failer interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}

// streamed redacts text with RedactTextTo, windows of the given sizes.
func streamed(t failer, r *Redactor, text string, piece, overlap int, reader func(io.Reader) io.Reader) (string, []Finding, int) {
	ts := &textStreamer{piece: piece, overlap: overlap}
	var out bytes.Buffer
	var found []Finding
	sc := r.NewScope()
	if err := sc.ReserveFrom(strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	if err := ts.run(sc, &out, reader(strings.NewReader(text)), func(f Finding) error {
		found = append(found, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out.String(), found, ts.crossings
}

// sameAsWhole fails unless the streamed output and findings are those of
// RedactText on the whole text, each finding's Line and Column where it
// starts.
func sameAsWhole(t failer, text, want string, wantFound []Finding, got string, found []Finding) {
	t.Helper()
	if got != want {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("streamed output differs from the whole text's at byte %d of %d:\n whole:  %q\n stream: %q",
			i, len(want), want[max(0, i-80):min(len(want), i+80)], got[max(0, i-80):min(len(got), i+80)])
	}
	if len(found) != len(wantFound) {
		t.Fatalf("%d findings streamed, %d in the whole text", len(found), len(wantFound))
	}
	for i, f := range found {
		w := wantFound[i]
		line := strings.Count(text[:w.Start], "\n") + 1
		col := w.Start - (strings.LastIndexByte(text[:w.Start], '\n') + 1) + 1
		if f.Rule != w.Rule || f.Start != w.Start || f.End != w.End || f.Line != line || f.Column != col {
			t.Fatalf("finding %d: streamed %s %d-%d at %d:%d, whole %s %d-%d at %d:%d", i, f.Rule, f.Start, f.End, f.Line, f.Column, w.Rule, w.Start, w.End, line, col)
		}
	}
}

// TestPropRedactTextToMatchesWhole: for random texts and random window
// sizes, streaming writes the bytes and findings that redacting the whole
// text gives. Secrets are planted across the places where windows end,
// and reads come in random sizes.
func TestPropRedactTextToMatchesWhole(t *testing.T) {
	r := newTestRedactor(t)
	cases := streamCases()
	const overlap = 16 << 10 // above the reach of every construct the cases hold
	crossings := 0
	rapid.Check(t, func(rt *rapid.T) {
		piece := rapid.IntRange(256, 12<<10).Draw(rt, "piece")
		var b strings.Builder
		n := rapid.IntRange(1, 250).Draw(rt, "cases")
		for i := 0; i < n; i++ {
			if rapid.IntRange(0, 3).Draw(rt, "noise") == 0 {
				b.WriteString(rapid.SampledFrom(streamNoise).Draw(rt, "glue"))
			}
			c := rapid.SampledFrom(cases).Draw(rt, "case")
			// Plant the case across the next place a window may end:
			// every piece bytes, give or take the cut's move to a line start.
			if rapid.Bool().Draw(rt, "straddle") {
				next := (b.Len()/piece + 1) * piece
				if pad := next - b.Len() - len(c)/2; pad > 0 && pad < 2*len(c)+64 {
					b.WriteString(strings.Repeat(rapid.SampledFrom([]string{" ", "\n", "x"}).Draw(rt, "pad"), pad))
				}
			}
			b.WriteString(c)
			b.WriteString(rapid.SampledFrom([]string{"\n", "\r\n", " ", ""}).Draw(rt, "sep"))
		}
		text := b.String()
		chunk := rapid.IntRange(1, 1<<16).Draw(rt, "read")
		want, wantFound := r.NewScope().RedactText(text)
		got, found, c := streamed(rt, r, text, piece, overlap, func(in io.Reader) io.Reader { return &chunkReader{r: in, n: chunk} })
		crossings += c
		if got != want {
			os.WriteFile(os.TempDir()+"/streamfail.txt", []byte(fmt.Sprintf("%d\n%s", piece, text)), 0o644)
		}
		sameAsWhole(rt, text, want, wantFound, got, found)
	})
	if crossings == 0 {
		t.Error("no span crossed the end of a window: the test plants none where it matters")
	}
	t.Logf("%d spans crossed the end of a window", crossings)
}

// chunkReader returns at most n bytes a read, as a pipe does.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestRedactTextToDefaultWindows streams a text of several default windows
// (the generated cases again and again, each time with other secrets in
// them) and checks it against the whole, and that some span crossed a
// window's end.
func TestRedactTextToDefaultWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 20 MB of text")
	}
	r := newTestRedactor(t)
	var b strings.Builder
	for seed := uint64(1); b.Len() < textPiece+3*textOverlap; seed++ {
		for _, c := range casegen.Generate(seed) {
			b.WriteString(c.Text)
			b.WriteString("\n")
		}
	}
	text := b.String()
	want, wantFound := r.NewScope().RedactText(text)
	got, found, crossings := streamed(t, r, text, textPiece, textOverlap, func(in io.Reader) io.Reader { return in })
	sameAsWhole(t, text, want, wantFound, got, found)
	t.Logf("%d bytes, %d findings, %d spans across a window's end", len(text), len(found), crossings)
}

// TestRedactTextToReserves: a mask already in the input, read by
// ReserveFrom first, numbers the new secrets after it even when it lies
// far ahead of them.
func TestRedactTextToReserves(t *testing.T) {
	r := newTestRedactor(t)
	text := "password=" + tPassword + "\n" + strings.Repeat("filler line\n", 40000) + "password=[REDACTED:password#7]\n"
	want, _ := r.NewScope().RedactText(text)
	sc := r.NewScope()
	if err := sc.ReserveFrom(&chunkReader{r: strings.NewReader(text), n: 1000}); err != nil {
		t.Fatal(err)
	}
	ts := &textStreamer{piece: 4096, overlap: 4096}
	var out bytes.Buffer
	if err := ts.run(sc, &out, strings.NewReader(text), nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != want || !strings.HasPrefix(want, "password=[REDACTED:password#8]") {
		t.Fatalf("masks not numbered after the input's: %q", out.String()[:60])
	}
}

// TestRedactTextToErrors: an error of the reader or the writer stops the
// stream and is returned.
func TestRedactTextToErrors(t *testing.T) {
	r := newTestRedactor(t)
	boom := fmt.Errorf("boom")
	err := r.NewScope().RedactTextTo(io.Discard, io.MultiReader(strings.NewReader("password="+tPassword), &errReader{boom}), nil)
	if err != boom {
		t.Fatalf("reader error: got %v", err)
	}
	if err := r.NewScope().RedactTextTo(&errWriter{boom}, strings.NewReader("x"), nil); err != boom {
		t.Fatalf("writer error: got %v", err)
	}
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

type errWriter struct{ err error }

func (e *errWriter) Write([]byte) (int, error) { return 0, e.err }

// BenchmarkRedactTextTo streams mixed text, for the cost of the overlaps.
func BenchmarkRedactTextTo(b *testing.B) {
	r := newTestRedactor(b)
	var sb strings.Builder
	for seed := uint64(1); sb.Len() < 16<<20; seed++ {
		for _, c := range casegen.Generate(seed) {
			sb.WriteString(c.Text)
			sb.WriteString("\n")
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		if err := r.NewScope().RedactTextTo(io.Discard, strings.NewReader(text), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// stallReader is a chunkReader whose input stops before every few reads:
// before those reads it runs the stream's stall flush, as the timer does
// when a read waits (the lock is released while a read waits).
type stallReader struct {
	chunkReader
	ts    *textStreamer
	every int
	reads int
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.reads++; s.reads%s.every == 0 {
		s.ts.stalled()
	}
	return s.chunkReader.Read(p)
}

// TestPropStallFlushMatchesWhole: a stream that stops anywhere, any number
// of times, writes what it holds that is safe, and in the end the bytes and
// findings redacting the whole text gives: what a stall flush writes no
// later line changes (no secret of a PEM key, a YAML block, a Kubernetes
// Secret or a split token is let out before the line that makes it one).
func TestPropStallFlushMatchesWhole(t *testing.T) {
	r := newTestRedactor(t)
	cases := streamCases()
	flushes := 0
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		n := rapid.IntRange(1, 30).Draw(rt, "cases")
		for i := 0; i < n; i++ {
			if rapid.IntRange(0, 3).Draw(rt, "noise") == 0 {
				b.WriteString(rapid.SampledFrom(streamNoise).Draw(rt, "glue"))
			}
			b.WriteString(rapid.SampledFrom(cases).Draw(rt, "case"))
			b.WriteString(rapid.SampledFrom([]string{"\n", "\r\n", " ", ""}).Draw(rt, "sep"))
		}
		text := b.String()
		chunk := rapid.IntRange(1, 512).Draw(rt, "read")
		every := rapid.IntRange(1, 4).Draw(rt, "stall every")
		piece := rapid.IntRange(1<<10, 64<<10).Draw(rt, "piece")
		want, wantFound := r.NewScope().RedactText(text)
		ts := &textStreamer{piece: piece, overlap: 16 << 10}
		var out bytes.Buffer
		var found []Finding
		sc := r.NewScope()
		if err := sc.ReserveFrom(strings.NewReader(text)); err != nil {
			rt.Fatal(err)
		}
		in := &stallReader{chunkReader: chunkReader{r: strings.NewReader(text), n: chunk}, ts: ts, every: every}
		if err := ts.run(sc, &out, in, func(f Finding) error {
			found = append(found, f)
			return nil
		}); err != nil {
			rt.Fatal(err)
		}
		flushes += ts.flushes
		sameAsWhole(rt, text, want, wantFound, out.String(), found)
	})
	if flushes == 0 {
		t.Error("no stall flush wrote anything")
	}
	t.Logf("%d stall flushes", flushes)
}

// lineWriter records what is written and tells each write.
type lineWriter struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestRedactTextToLiveOnAPipe: a line with a secret written to a pipe that
// then stays open is printed, masked, before the writer closes it; a PEM
// key whose END line has not come is not printed (not even its BEGIN
// line) until it does; the whole output is the whole input's redaction.
func TestRedactTextToLiveOnAPipe(t *testing.T) {
	r := newTestRedactor(t)
	pr, pw := io.Pipe()
	out := &lineWriter{wrote: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- r.NewScope().RedactTextTo(out, pr, nil) }()

	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for !ok(out.String()) {
			select {
			case <-out.wrote:
			case <-deadline:
				t.Fatalf("%s: not printed within 5 s of the input stopping; printed so far: %q", what, out.String())
			}
		}
	}
	line1 := "12:00:01 deploy: GITHUB_TOKEN=" + tGitHub + "\n"
	if _, err := io.WriteString(pw, line1); err != nil {
		t.Fatal(err)
	}
	waitFor("the token line", func(s string) bool { return strings.Contains(s, "GITHUB_TOKEN=[REDACTED:github-token#1]\n") })
	if strings.Contains(out.String(), tGitHub) {
		t.Fatalf("the token was printed: %q", out.String())
	}

	pemHead := "12:00:02 key follows\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
	if _, err := io.WriteString(pw, pemHead); err != nil {
		t.Fatal(err)
	}
	waitFor("the line before the key", func(s string) bool { return strings.Contains(s, "key follows\n") })
	time.Sleep(3 * StallFlush)
	if s := out.String(); strings.Contains(s, "BEGIN") || strings.Contains(s, "b3BlbnNz") {
		t.Fatalf("a key without its END line was printed: %q", s)
	}
	rest := "QyNTUxOQAAACDnK1vsh0nEYjQ0cRtIWsC9W1yPSyHkRGcTGGB3Ib4eXwAAAJg\n-----END OPENSSH PRIVATE KEY-----\n12:00:03 done\n"
	if _, err := io.WriteString(pw, rest); err != nil {
		t.Fatal(err)
	}
	waitFor("the key and the line after it", func(s string) bool { return strings.HasSuffix(s, "12:00:03 done\n") })
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	in := line1 + pemHead + rest
	if want, _ := r.NewScope().RedactText(in); out.String() != want {
		t.Fatalf("live output differs from the whole input's redaction:\n got  %q\n want %q", out.String(), want)
	}
}

// TestRedactTextToLongPEMFailsSafe: a private key whose body is longer
// than the stream's overlap (a MiB by default) is masked in two or more
// pieces rather than whole, as redacting the whole text does; but no line
// of its body is written unmasked, whatever window it falls in.
func TestRedactTextToLongPEMFailsSafe(t *testing.T) {
	r := newTestRedactor(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var body []string
	for range 700 { // 45 KiB: eleven overlaps of 4 KiB
		line := make([]byte, 64)
		for i := range line {
			line[i] = b64[rng.IntN(64)]
		}
		body = append(body, string(line))
	}
	for _, end := range []string{"-----END RSA PRIVATE KEY-----\n", ""} { // with its END line, and cut short
		text := "boot\n-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n" + end + "# after the key\n"
		whole, _ := r.NewScope().RedactText(text)
		for _, l := range body {
			if strings.Contains(whole, l) {
				t.Fatalf("whole-text redaction leaves a body line: %s", l)
			}
		}
		for _, piece := range []int{1024, 4096, 10000} {
			got, _, _ := streamed(t, r, text, piece, 4096, func(in io.Reader) io.Reader { return in })
			for i, l := range body {
				if strings.Contains(got, l) {
					t.Fatalf("END %v, piece %d: body line %d of %d written unmasked", end != "", piece, i+1, len(body))
				}
			}
			if !strings.HasPrefix(got, "boot\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED:private-key#1]") || !strings.HasSuffix(got, "\n# after the key\n") {
				t.Fatalf("END %v, piece %d: %q ... %q", end != "", piece, got[:min(len(got), 80)], got[max(0, len(got)-80):])
			}
			if !strings.HasSuffix(got, "]\n"+end+"# after the key\n") {
				t.Fatalf("END %v, piece %d: the lines after the body are not kept: %q", end != "", piece, got[max(0, len(got)-80):])
			}
		}
	}
}

// TestRedactTextToEndClosesQuote (QA-38): a stream that ends inside a
// quoted value (a cut-short .env) has the value masked, as a line break
// after it would, also when a stall flush wrote the lines before it.
func TestRedactTextToEndClosesQuote(t *testing.T) {
	r := newTestRedactor(t)
	const secret = "Kq7mZ2pQA99xWv05"
	text := "# deploy 5\nHOST=db5.internal\nDB_PASSWORD=\"" + secret
	for _, every := range []int{1 << 30, 1} {
		ts := &textStreamer{piece: 4096, overlap: 4096}
		var out bytes.Buffer
		in := &stallReader{chunkReader: chunkReader{r: strings.NewReader(text), n: 16}, ts: ts, every: every}
		if err := ts.run(r.NewScope(), &out, in, nil); err != nil {
			t.Fatal(err)
		}
		if want, _ := r.NewScope().RedactText(text); out.String() != want || strings.Contains(want, secret) {
			t.Fatalf("stalls every %d reads: %q, whole %q", every, out.String(), want)
		}
	}
}
