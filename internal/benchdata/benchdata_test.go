package benchdata

import (
	"bytes"
	"testing"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/tokens"
)

func TestWriteReadsBack(t *testing.T) {
	counter, err := tokens.ForModel("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			st, err := Write(&b, f, Limits{Tokens: 40000})
			if err != nil {
				t.Fatal(err)
			}
			if st.Sessions < 2 || st.Tokens < 40000 || st.Bytes != int64(b.Len()) {
				t.Fatalf("stats %+v for %d bytes", st, b.Len())
			}
			tr, err := format.Read(bytes.NewReader(b.Bytes()), "bench", "")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != string(f) {
				t.Fatalf("detected as %s", tr.Format)
			}
			if o := tr.Orphans(); len(o) > 0 {
				t.Fatalf("%d orphans, first %+v", len(o), o[0])
			}
			// The sessions' counts add up to the whole's, within the
			// per-session overhead (priming, tool definitions).
			if n := counter.Transcript(tr); n < int(st.Tokens)*9/10 || n > int(st.Tokens)*11/10 {
				t.Fatalf("the file counts %d tokens, Write said %d", n, st.Tokens)
			}
			var again bytes.Buffer
			if _, err := Write(&again, f, Limits{Tokens: 40000}); err != nil || !bytes.Equal(again.Bytes(), b.Bytes()) {
				t.Fatalf("a second Write differs (%v)", err)
			}
		})
	}
}

func TestWriteNeedsALimit(t *testing.T) {
	if _, err := Write(&bytes.Buffer{}, format.OpenAIChat, Limits{}); err == nil {
		t.Fatal("Write without a limit succeeded")
	}
	if _, err := Write(&bytes.Buffer{}, format.GeminiCLI, Limits{Bytes: 1}); err == nil {
		t.Fatal("Write of an unsupported format succeeded")
	}
}
