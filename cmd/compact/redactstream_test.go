package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/redact"
)

// TestRedactStreamsText: text (--as text, or auto on input that is no
// JSON document) is redacted as it streams, with the bytes whole-input
// redaction writes: here a file of several of the stream's windows whose
// last line holds a mask, which numbers the secrets before it (the file is
// read for its masks first), and a report whose line:column are the
// whole input's.
func TestRedactStreamsText(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 9<<20; i++ {
		b.WriteString("line " + strings.Repeat("x", i%90) + "\n")
		if i%5000 == 0 {
			b.WriteString("GITHUB_TOKEN=" + ghToken + "\nexport PASSWORD='Zq8!vR2#pLm9'\n")
		}
	}
	b.WriteString("PASSWORD=[REDACTED:password#4]\n")
	in := b.String()
	path := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want, found := r.NewScope(in).RedactText(in)
	for _, args := range [][]string{{"--as", "text", path}, {path}} {
		code, out, errOut := redactRun(t, "", nil, append([]string{"--report"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if out != want {
			t.Fatalf("%v: streamed output is not the whole input's (%d and %d bytes)", args, len(out), len(want))
		}
		if !strings.Contains(out, "PASSWORD='[REDACTED:password#5]'") {
			t.Errorf("%v: new secrets not numbered after the input's mask", args)
		}
		f := found[len(found)-1]
		line := strings.Count(in[:f.Start], "\n") + 1
		col := f.Start - strings.LastIndexByte(in[:f.Start], '\n')
		if wantLine := path + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": password"; !strings.Contains(errOut, wantLine) {
			t.Errorf("%v: report lacks %q", args, wantLine)
		}
	}
}

// TestStartsAsText: auto streams only input that whole-input redaction
// would read as text.
func TestStartsAsText(t *testing.T) {
	for in, want := range map[string]bool{
		"":                                false,
		"   \n\t":                         false,
		`{"a":1}` + "\n" + `{"b":2}`:      false,
		"[1,2]":                           false,
		`"just a string"`:                 false,
		"42\n" + `{"a":1}`:                false,
		"true":                            false,
		"token=abc\n{\"a\":1}\n":          true,
		"  \n  export X=1\n":              true,
		"the quick brown fox":             true,
		"12 monkeys\n":                    true,
		"\x00\x00\x00":                    true,
		strings.Repeat(" ", 70000) + "x":  true,
		strings.Repeat("a", 70000) + "\n": true,
	} {
		br := bufio.NewReaderSize(strings.NewReader(in), 64<<10)
		if got := startsAsText(br); got != want {
			t.Errorf("startsAsText(%.40q) = %v, want %v", in, got, want)
		}
	}
}

// TestStartsAsTextOnAStalledPipe: telling text from JSON reads no more than
// the first line: a pipe that stops after it (tail -f) is told at once,
// not after 64 KiB or its end.
func TestStartsAsTextOnAStalledPipe(t *testing.T) {
	for _, tc := range []struct {
		first string
		text  bool
	}{{"12:00:01 deploy GITHUB_TOKEN=x\n", true}, {"\n\n{\"a\": 1}\n", false}, {"42\n", false}} {
		pr, pw := io.Pipe()
		go io.WriteString(pw, tc.first) // and the pipe stays open
		got := make(chan bool, 1)
		go func() { got <- startsAsText(bufio.NewReaderSize(pr, 64<<10)) }()
		select {
		case text := <-got:
			if text != tc.text {
				t.Errorf("startsAsText(%q) = %v, want %v", tc.first, text, tc.text)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("startsAsText(%q) still waits on a pipe that stopped after the first line", tc.first)
		}
		pw.Close()
	}
}
