package format

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/sample"
)

// checkScanOpenAI holds scanOpenAIMessage to json.Unmarshal on one valid
// record: when it reads the record, the decoder reads it the same.
func checkScanOpenAI(t *testing.T, raw []byte) bool {
	t.Helper()
	var fast oaMessage
	if !scanOpenAIMessage(raw, &fast) {
		return false
	}
	var slow oaMessage
	if err := json.Unmarshal(raw, &slow); err != nil {
		t.Fatalf("read in place, but the decoder says %v: %s", err, raw)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("in place %+v\ndecoder  %+v\nrecord %s", fast, slow, raw)
	}
	return true
}

func TestScanOpenAIMessageMatchesDecoder(t *testing.T) {
	records := [][]byte{
		[]byte(`{"role":"user","content":"hi \u00e9\n","name":"x"}`),
		[]byte(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls\"}"}}],"refusal":null}`),
		[]byte(`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"ok"}]}`),
		[]byte(`{"role":"assistant","function_call":{"name":"f","arguments":{"a":1}},"reasoning":"r","reasoning_content":"rc","id":7}`),
		[]byte(`{"role":null,"name":null,"tool_calls":null,"function_call":null,"extra":{"role":1}}`),
	}
	declined := [][]byte{
		[]byte(`{"role":"user","role":"assistant"}`),
		[]byte(`{"Role":"user"}`),
		[]byte(`{"role":5}`),
		[]byte(`{"name":["x"]}`),
		[]byte(`{"tool_calls":[{"id":1}]}`),
		[]byte(`{"tool_calls":[{"custom":{"name":"x","input":"y"}}]}`),
		[]byte(`{"tool_calls":["x"]}`),
		[]byte(`["role"]`),
		[]byte(`{"function_call":{"name":"a","name":"b"}}`),
		[]byte(`{"tool_callſ":[]}`),
	}
	for _, r := range records {
		if !checkScanOpenAI(t, r) {
			t.Errorf("declined %s", r)
		}
	}
	for _, r := range declined {
		var o oaMessage
		if scanOpenAIMessage(r, &o) {
			t.Errorf("read %s in place: the decoder reads or reports it otherwise", r)
		}
	}
	// Real records: the samples and the corpus's JSON documents.
	var docs [][]byte
	for _, f := range sample.Files(sample.DefaultSeed) {
		docs = append(docs, f.Data)
	}
	if corpus.Available() {
		for _, path := range corpus.AllTranscripts(t) {
			if b, err := os.ReadFile(path); err == nil && len(b) < 64<<20 {
				docs = append(docs, b)
			}
		}
	}
	read := 0
	for _, b := range docs {
		doc, ok := scanJSONDoc(b, []string{"messages"})
		if !ok {
			continue
		}
		for _, it := range doc.items {
			if checkScanOpenAI(t, it.raw) {
				read++
			}
		}
	}
	if read == 0 {
		t.Fatal("no real record was read in place")
	}
	t.Logf("%d real records read in place as the decoder reads them", read)
}

func FuzzScanOpenAIMessage(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","content":"x","tool_calls":[{"id":"a","type":"function","function":{"name":"n","arguments":"{}"}}]}`))
	f.Add([]byte(`{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"\ud83d\ude00"}]}`))
	f.Add([]byte(`{"ROLE":"user","content":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if json.Valid(raw) {
			checkScanOpenAI(t, raw)
		}
	})
}
