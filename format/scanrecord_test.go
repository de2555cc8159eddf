package format

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/jsonscan"
	"github.com/compactkit/compact/internal/sample"
)

// checkScanRecords holds every in-place reader of a record to
// json.Unmarshal on one valid JSON value: where a scan serves it, the
// decoder reads the same and reports nothing; decodeAnthropicBlock, which
// falls back by itself, answers as the decoder does. It returns how many
// scans served raw.
func checkScanRecords(t *testing.T, raw []byte) int {
	t.Helper()
	served := 0
	check := func(name string, ok bool, fast, slow any) {
		t.Helper()
		if !ok {
			return
		}
		served++
		if err := json.Unmarshal(raw, slow); err != nil {
			t.Fatalf("%s: read in place, but the decoder says %v: %s", name, err, raw)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: in place %+v\ndecoder  %+v\nrecord %s", name, fast, slow, raw)
		}
	}
	var am, am2 anMessage
	check("anMessage", scanAnthropicMessage(raw, &am), &am, &am2)
	var ri, ri2 respItem
	check("respItem", scanRespItem(raw, &ri), &ri, &ri2)
	var rp, rp2 respPart
	check("respPart", scanRecord(raw, []recordField{
		{key: "type", str: &rp.Type}, {key: "text", str: &rp.Text}, {key: "refusal", str: &rp.Refusal},
		{key: "image_url", str: &rp.ImageURL}, {key: "file_id", str: &rp.FileID}, {key: "filename", str: &rp.Filename},
		{key: "stdout", str: &rp.Stdout}, {key: "stderr", str: &rp.Stderr},
	}), &rp, &rp2)
	var ab, ab2 anBlock
	err, err2 := decodeAnthropicBlock(raw, &ab), json.Unmarshal(raw, &ab2)
	if (err == nil) != (err2 == nil) || err == nil && !reflect.DeepEqual(ab, ab2) {
		t.Fatalf("anBlock: %+v (%v)\ndecoder %+v (%v)\nrecord %s", ab, err, ab2, err2, raw)
	}
	return served
}

func TestScanRecordsMatchDecoder(t *testing.T) {
	for _, r := range []string{
		`{"role":"user","content":"hi \u00e9","id":"m1"}`,
		`{"role":null,"content":[{"type":"text","text":"a"}]}`,
		`{"type":"tool_use","id":"t","name":"bash","input":{"command":"ls"},"cache_control":{"type":"ephemeral"}}`,
		`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok"}],"is_error":true}`,
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA"}}`,
		`{"type":"image","source":null,"is_error":null,"text":null}`,
		`{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"s"},null],"encrypted_content":"x"}`,
		`{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}","status":"completed"}`,
		`{"type":"input_text","text":"t","stdout":"o"}`,
	} {
		if checkScanRecords(t, []byte(r)) == 0 {
			t.Errorf("no scan served %s", r)
		}
	}
	// Odd records: the scans decline them (a message's key twice, in
	// another case, of another type) or answer as the decoder does.
	for i, r := range []string{
		`{"role":"user","role":"assistant"}`, `{"Role":"user"}`, `{"role":5,"role":"user"}`,
		`{"type":"text","is_error":"yes"}`, `{"type":"image","source":"x"}`, `{"type":"image","source":{"type":1}}`,
		`{"summary":{"text":"x"}}`, `{"summary":["x"]}`, `{"type":"text","text":{"a":1}}`, `["role"]`, `{"tool_uſe_id":"x"}`,
	} {
		var am anMessage
		if i < 3 && scanAnthropicMessage([]byte(r), &am) {
			t.Errorf("read %s in place", r)
		}
		checkScanRecords(t, []byte(r))
	}
	// Real records: the samples' and the corpus's documents, their
	// records and the blocks and parts inside them.
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
	served := 0
	var walk func(v []byte, depth int)
	walk = func(v []byte, depth int) {
		if depth > 4 || len(v) == 0 {
			return
		}
		switch v[0] {
		case '{':
			served += checkScanRecords(t, v)
			members, _ := jsonscan.Members(v)
			for _, m := range members {
				walk(v[m.Value.Start:m.Value.End], depth+1)
			}
		case '[':
			elems, _ := jsonscan.Elements(v)
			for _, e := range elems {
				walk(v[e.Start:e.End], depth+1)
			}
		}
	}
	for _, b := range docs {
		if doc, ok := scanJSONDoc(b, []string{"messages", "input", "output"}); ok {
			for _, it := range doc.items {
				walk(it.raw, 0)
			}
		}
	}
	if served == 0 {
		t.Fatal("no real record was read in place")
	}
	t.Logf("%d real records read in place as the decoder reads them", served)
}

// FuzzScanRecords: on any valid JSON, the in-place readers of Anthropic
// messages and blocks and of Responses items and parts read what
// json.Unmarshal reads, or decline.
func FuzzScanRecords(f *testing.F) {
	f.Add([]byte(`{"type":"tool_result","tool_use_id":"t","content":"x","is_error":false,"source":{"url":"u"}}`))
	f.Add([]byte(`{"type":"reasoning","summary":[{"text":"s"}],"content":null,"role":"assistant","id":"x"}`))
	f.Add([]byte(`{"role":"user","content":[{"type":"text","text":"\ud83d\ude00"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if jsonscan.Valid(raw) {
			checkScanRecords(t, raw)
		}
	})
}
