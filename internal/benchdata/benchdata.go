// Package benchdata writes long transcripts for the benchmarks of the
// compaction path: the sample sessions of package sample (seed 1, 2, 3,
// ...) one after another in one file of a format, until a number of tokens
// or bytes is reached. The output is a pure function of the format and the
// limits, so every run of a benchmark reads the same bytes; nothing of it
// is committed.
package benchdata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/sample"
	"github.com/compactkit/compact/tokens"
)

// Formats are the formats Write can produce.
var Formats = []format.Name{format.OpenAIChat, format.OpenAIChatJSONL, format.ClaudeCode, format.Codex}

// Limits say when Write stops: after the first session that reaches
// either (a zero field is no limit; one must be set).
type Limits struct {
	// Tokens counts the transcript as "compact count" does with the
	// default model (gpt-4o, o200k_base), session by session.
	Tokens int64
	Bytes  int64
}

// Stats is what Write wrote.
type Stats struct {
	Bytes    int64
	Tokens   int64 // the sessions' counts, summed (within a few tokens a session of the whole's)
	Sessions int
	Messages int
}

// Write writes a transcript of format f to w, session after session, until
// lim is reached.
func Write(w io.Writer, f format.Name, lim Limits) (Stats, error) {
	if lim.Tokens <= 0 && lim.Bytes <= 0 {
		return Stats{}, errors.New("benchdata: no limit")
	}
	counter, err := tokens.ForModel("gpt-4o", tokens.WithCache(nil))
	if err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countingWriter{w: bw}
	var st Stats
	var tail []byte // what closes the document (the JSON formats)
	for seed := uint64(1); ; seed++ {
		s := sample.Generate(seed)
		msgs, chunk, closing, err := render(f, s, seed == 1)
		if err != nil {
			return st, fmt.Errorf("benchdata: session %d: %w", seed, err)
		}
		if seed > 1 && f == format.OpenAIChat {
			cw.Write([]byte(",\n"))
		}
		if _, err := cw.Write(chunk); err != nil {
			return st, err
		}
		if seed == 1 {
			tail = closing
		}
		t, err := format.Read(bytes.NewReader(sessionDoc(f, chunk, seed == 1)), "session", f)
		if err != nil {
			return st, fmt.Errorf("benchdata: session %d does not read back: %w", seed, err)
		}
		st.Tokens += int64(counter.Transcript(t))
		st.Sessions++
		st.Messages += msgs
		if (lim.Tokens > 0 && st.Tokens >= lim.Tokens) || (lim.Bytes > 0 && cw.n >= lim.Bytes) {
			break
		}
	}
	if _, err := cw.Write(tail); err != nil {
		return st, err
	}
	st.Bytes = cw.n
	return st, bw.Flush()
}

// render returns one session in format f: the number of messages, the
// bytes to append, and (for the first session of a JSON document) the
// bytes that close the document.
func render(f format.Name, s *sample.Session, first bool) (int, []byte, []byte, error) {
	switch f {
	case format.ClaudeCode:
		b := sample.ClaudeCode(s)
		return bytes.Count(b, []byte("\n")), b, nil, nil
	case format.Codex:
		b := sample.Codex(s)
		return bytes.Count(b, []byte("\n")), b, nil, nil
	case format.OpenAIChat, format.OpenAIChatJSONL:
		var doc struct {
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
			Tools    json.RawMessage   `json:"tools"`
		}
		if err := json.Unmarshal(sample.OpenAIChat(s), &doc); err != nil {
			return 0, nil, nil, err
		}
		msgs := doc.Messages
		if !first {
			msgs = msgs[1:] // one system prompt, at the top
		}
		var b bytes.Buffer
		if first && f == format.OpenAIChat {
			fmt.Fprintf(&b, "{\"model\": %q,\n\"messages\": [\n", doc.Model)
		}
		for i, m := range msgs {
			if f == format.OpenAIChat && i > 0 {
				b.WriteString(",\n")
			}
			if err := json.Compact(&b, m); err != nil {
				return 0, nil, nil, err
			}
			if f == format.OpenAIChatJSONL {
				b.WriteByte('\n')
			}
		}
		var closing []byte
		if first && f == format.OpenAIChat {
			var t bytes.Buffer
			t.WriteString("\n],\n\"tools\": ")
			if err := json.Compact(&t, doc.Tools); err != nil {
				return 0, nil, nil, err
			}
			t.WriteString("}\n")
			closing = t.Bytes()
		}
		return len(msgs), b.Bytes(), closing, nil
	}
	return 0, nil, nil, fmt.Errorf("format %q: want one of %v", f, Formats)
}

// sessionDoc makes one session's chunk a document of its own, to count it.
func sessionDoc(f format.Name, chunk []byte, first bool) []byte {
	if f != format.OpenAIChat {
		return chunk
	}
	if first {
		return append(append([]byte(nil), chunk...), "\n]}"...)
	}
	return append(append([]byte("["), chunk...), ']')
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// RepeatCodex writes the Codex rollout src again and again until size bytes
// are written, call ids made unique per repetition so that pairs stay
// pairs: format's 100 MB Codex benchmark input (format/bench_test.go),
// built from a real rollout of the corpus.
func RepeatCodex(w io.Writer, src []byte, size int64) (int64, error) {
	if len(src) == 0 {
		return 0, errors.New("benchdata: empty rollout")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	for rep := 0; n < size; rep++ {
		m, err := bw.Write(bytes.ReplaceAll(src, []byte(`"call_id":"call_`), []byte(fmt.Sprintf(`"call_id":"r%d_call_`, rep))))
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}
