package format

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// Fuzz targets, one per reader of the API formats. Each reads arbitrary
// bytes with its format forced: it must return a transcript or an *Error,
// never panic; and a transcript it returns must convert to every writer and
// read back with its calls, orphans and texts (checkConversion).
//
//	go test -fuzz=FuzzReadOpenAIChat -fuzztime=2m ./format/

func FuzzReadOpenAIChat(f *testing.F) {
	seedFuzz(f, "testdata/openai/*.json", `[{"role":"user","content":[{"type":"text","text":"x"}]}]`, `{"messages":[],"tools":[]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, OpenAIChat) })
}

func FuzzReadOpenAIChatJSONL(f *testing.F) {
	seedFuzz(f, "testdata/openai/*.jsonl", "{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"x\"}\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, OpenAIChatJSONL) })
}

// seedFuzz adds the fixtures matching glob, the small corpus files (the
// large ones slow every execution down) and extra inputs as seeds.
func seedFuzz(f *testing.F, glob string, extra ...string) {
	files, _ := filepath.Glob(glob)
	var seeds []string
	if corpus.Available() { // the shared corpus adds seeds where it is
		seeds, _ = filepath.Glob(filepath.Join(corpusDir(f), "*"))
	}
	for _, c := range seeds {
		if st, err := os.Stat(c); err == nil && st.Size() < 16<<10 && filepath.Ext(c) != ".md" && filepath.Ext(c) != ".py" {
			files = append(files, c)
		}
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

func fuzzReader(t *testing.T, data []byte, as Name) {
	for _, fm := range Formats() {
		if fm.Sniff != nil {
			fm.Sniff(data) // must not panic on any head
		}
	}
	tr, err := Read(bytes.NewReader(data), "fuzz", as)
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) is not an *Error", err, err)
		}
		if fe.File != "fuzz" || fe.Msg == "" {
			t.Fatalf("error %+v does not name the file or say what was expected", fe)
		}
		return
	}
	for _, to := range writers {
		checkConversion(t, tr, to)
	}
}
