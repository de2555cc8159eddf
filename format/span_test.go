package format

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/corpus"
)

// readSpans reads path with its records kept as spans of the file.
func readSpans(t *testing.T, path string) (compact.Transcript, *os.File, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tr, err := ReadWith(f, filepath.Base(path), "", ReadOptions{Source: f})
	return tr, f, err
}

// TestSpansMatchBytes reads every corpus transcript twice, with its source
// records as bytes and as spans of the file: once the spans are loaded
// back, the two transcripts are the same, and so is what each writes
// (whole, and compacted to head and tail).
func TestSpansMatchBytes(t *testing.T) {
	files := corpus.AllTranscripts(t)
	spanned := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, werr := ReadWith(bytes.NewReader(data), filepath.Base(path), "", ReadOptions{})
			got, f, gerr := readSpans(t, path)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("errors differ: bytes %v, spans %v", werr, gerr)
			}
			if werr != nil {
				return
			}
			for _, m := range got.Messages {
				if len(m.Source.Spans) > 0 {
					spanned++
					break
				}
			}
			// Compacted first: only the kept messages are loaded.
			if in, ok := compactForTest(&want, 2, 4); ok {
				gin, _ := compactForTest(&got, 2, 4)
				if err := Write(new(bytes.Buffer), gin, Name(gin.Format)); hasSpans(&gin) && !errors.Is(err, ErrSourceNotLoaded) {
					t.Fatalf("writing with spans not loaded: %v, want ErrSourceNotLoaded", err)
				}
				if err := LoadSources(f, path, &gin); err != nil {
					t.Fatal(err)
				}
				sameWrite(t, &in, &gin)
			}
			if err := LoadSources(f, path, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				for i := range want.Messages {
					if !reflect.DeepEqual(want.Messages[i], got.Messages[i]) {
						t.Fatalf("message %d differs:\nbytes %+v\nspans %+v", i, want.Messages[i], got.Messages[i])
					}
				}
				t.Fatal("transcripts differ")
			}
			sameWrite(t, &want, &got)
			// Check reads with spans of data, then slices data.
			checked, problems, err := Check(data, filepath.Base(path), "")
			if err != nil || !reflect.DeepEqual(want.Messages, checked.Messages) {
				t.Fatalf("Check read another transcript (%v)", err)
			}
			// CheckFile reads the file twice instead of holding it.
			fromFile, fproblems, err := CheckFile(f, int64(len(data)), filepath.Base(path), "")
			if err == nil {
				err = LoadSources(f, path, &fromFile)
			}
			if err != nil || !reflect.DeepEqual(problems, fproblems) || !reflect.DeepEqual(want.Messages, fromFile.Messages) {
				t.Fatalf("CheckFile differs from Check (%v):\n%v\n%v", err, problems, fproblems)
			}
		})
	}
	if spanned == 0 && len(files) > 0 {
		t.Error("no corpus transcript was read with spans")
	}
}

func hasSpans(t *compact.Transcript) bool {
	return checkLoaded(t) != nil
}

func sameWrite(t *testing.T, want, got *compact.Transcript) {
	t.Helper()
	var a, b bytes.Buffer
	werr := Write(&a, *want, Name(want.Format))
	gerr := Write(&b, *got, Name(got.Format))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("write errors differ: %v, %v", werr, gerr)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("outputs differ (%d vs %d bytes)", a.Len(), b.Len())
	}
}

// TestSpansSourceChanged: a file changed between the read and the load is
// an error naming the record, never bytes written from the new file.
func TestSpansSourceChanged(t *testing.T) {
	lines := `{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/w"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello there"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}
`
	for _, tc := range []struct {
		name   string
		change func(string) string
	}{
		{"edited", func(s string) string {
			return string(bytes.Replace([]byte(s), []byte("hello there"), []byte("hello THERE"), 1))
		}},
		{"truncated", func(s string) string { return s[:len(s)/2] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rollout.jsonl")
			if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
				t.Fatal(err)
			}
			tr, f, err := readSpans(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if !hasSpans(&tr) {
				t.Fatal("no spans kept")
			}
			if err := os.WriteFile(path, []byte(tc.change(lines)), 0o644); err != nil {
				t.Fatal(err)
			}
			err = LoadSources(f, path, &tr)
			var fe *Error
			if !errors.Is(err, ErrSourceChanged) || !errors.As(err, &fe) || fe.Offset < 0 {
				t.Fatalf("LoadSources = %v, want ErrSourceChanged at an offset", err)
			}
			if !hasSpans(&tr) {
				t.Error("a failed load changed the transcript")
			}
		})
	}
}

// FuzzSpans reads any input, in each format that keeps spans, with its
// records as bytes and as spans: the same error, or once loaded the same
// transcript and the same output.
//
//	go test ./format -run '^$' -fuzz FuzzSpans -fuzztime 2m
func FuzzSpans(f *testing.F) {
	seedFuzz(f, "testdata/openai/*.json", `[{"role":"user","content":"x"}]`, `{"messages":[],"tools":[]}`,
		"\ufeff[{\"role\":\"user\",\"content\":\"x\"}] ", `{"model":"m","messages":[{"role":"user","content":"\u00e9"}],"n":1}`,
		`[{"role":"user","content":"x"}] []`, `{"messages":{}}`, `[{"role":"user","content":"x"},]`)
	seedAgent(f, "codex")
	seedAgent(f, "claude")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, as := range []Name{"", OpenAIChat, OpenAIChatJSONL, Codex, ClaudeCode} {
			sameWithSpans(t, data, as)
		}
	})
}

// sameWithSpans checks one input read as as with and without spans.
func sameWithSpans(t *testing.T, data []byte, as Name) {
	t.Helper()
	var wwarn, gwarn []string
	want, werr := ReadWith(bytes.NewReader(data), "in", as, ReadOptions{Warn: func(w Warning) { wwarn = append(wwarn, w.String()) }})
	src := bytes.NewReader(data)
	got, gerr := ReadWith(bytes.NewReader(data), "in", as, ReadOptions{Source: src, Warn: func(w Warning) { gwarn = append(gwarn, w.String()) }})
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: errors differ: bytes %v, spans %v", as, werr, gerr)
	}
	if !reflect.DeepEqual(wwarn, gwarn) {
		t.Fatalf("%s: warnings differ:\nbytes %q\nspans %q", as, wwarn, gwarn)
	}
	if werr != nil {
		return
	}
	if err := LoadSources(src, "in", &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: transcripts differ:\nbytes %+v\nspans %+v", as, want, got)
	}
	sameWrite(t, &want, &got)
}

// TestSpansBadDocuments: a document the streamed reader cannot read whole
// fails as the whole-buffer reader fails, at the same place.
func TestSpansBadDocuments(t *testing.T) {
	for _, doc := range []string{
		`[{"role":"user","content":"x"}`, `[{"role":"user","content":"x"}] []`, `{"messages":{}}`, `{"messages":3}`,
		`[{"role":"user","content":"x"},]`, `[{"role":"user","content":"x"},{"role":5}]`, `[{"content":"x"}]`,
		`{"tools":[{"type":"function","function":7}],"messages":[{"role":"user","content":"x"}]}`,
		"[{\"role\":\"user\",\"content\":\"\xff\"}]", `{"role":"user","content":"x"}`, `  `, `[]`, `{}`,
		`[{"role":"user","content":"a\ud83d"}]`, `{"messages":[{"role":"user","content":"x"}], "messages":[{"role":"assistant","content":"y"}]}`,
	} {
		sameWithSpans(t, []byte(doc), OpenAIChat)
		sameWithSpans(t, []byte(doc), "")
	}
}

// TestCheckFileSameProblems: CheckFile finds what Check finds, damaged
// lines (with the compaction hint), broken chains and split pairs alike.
func TestCheckFileSameProblems(t *testing.T) {
	for name, src := range map[string]string{
		"loop.jsonl": `{"type":"user","uuid":"u1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"yo"}]}}
`,
		"gap.jsonl": `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}

{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"x"}]}}
{"type":"user","uuid":"u3","parentUuid":"zz","sessionId":"s","message":{"role":"user","content":"next"}}
{"type":"user","uuid":"u4","parentUuid":"u3","sessionId":"s","message":{"role":"user","con
`,
		"rollout.jsonl": `{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/w"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"t","type":"compacted","payload":{"message":"sum"
{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"again"}]}}
`,
	} {
		want, wp, werr := Check([]byte(src), name, "")
		got, gp, gerr := CheckFile(bytes.NewReader([]byte(src)), int64(len(src)), name, "")
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(wp, gp) {
			t.Fatalf("%s: Check %v %+v, CheckFile %v %+v", name, werr, wp, gerr, gp)
		}
		if len(wp) == 0 {
			t.Errorf("%s: no problem found", name)
		}
		if err := LoadSources(bytes.NewReader([]byte(src)), name, &got); err != nil || !reflect.DeepEqual(want.Messages, got.Messages) {
			t.Fatalf("%s: transcripts differ (%v)", name, err)
		}
		t.Logf("%s: %v", name, wp)
	}
}
