package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/internal/jsonscan"
	"github.com/compactkit/compact/tokens"
)

// writeWithout agrees with encoding/json: the value it writes decodes to
// the input's value with the dropped members deleted at every depth.
func FuzzWriteWithout(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`,
		`{"cache_control":{"type":"ephemeral"},"content":[{"cache_control":1},{"a":"cache_control"}]}`,
		`{"a" : 1 , "cache_control" : [1,{"x":"}"}] }`,
		`["cache_control", {"cache_control": null}]`,
		`{"k\"cache_control":"cache_control","cache_control":"x"}`,
		`"cache_control"`, `12`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want any
		if json.Unmarshal(in, &want) != nil {
			return
		}
		out := writeWithout(nil, in, []string{"cache_control"})
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		drop(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v\nin  %s\nout %s", got, want, in, out)
		}
	})
}

// drop deletes every cache_control member of a decoded JSON value, at any
// depth (the tests' view of Anthropic's moving breakpoints).
func drop(x any) {
	switch x := x.(type) {
	case map[string]any:
		delete(x, "cache_control")
		for _, y := range x {
			drop(y)
		}
	case []any:
		for _, y := range x {
			drop(y)
		}
	}
}

// The rewrite never fails a request and never touches what is beside the
// list: whatever the body, it goes out as it came, or as valid JSON whose
// other members are the input's, byte for byte.
func FuzzRewrite(f *testing.F) {
	models := tokens.NewModels()
	if err := models.Set(tokens.Model{Name: "fuzz", Encoding: tokens.O200kBase, Window: 2000, OutputReserve: 200}); err != nil {
		f.Fatal(err)
	}
	s, err := New(Config{Models: models, Compaction: compactor.DefaultConfig()})
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		`{"model":"fuzz","messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"x x x x"},{"role":"user","content":"d"},{"role":"assistant","content":"e"}]}`,
		`{"model":"fuzz","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"t"}]},{"role":"user","content":"b"}],"instructions":"i"}`,
		`{"model":"fuzz","system":"s","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`,
		`{"model":"fuzz","messages":[]}`, `{"messages":"x"}`, `[]`, `{`,
	}
	for _, seed := range seeds {
		for i := range apis {
			f.Add(i, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which int, body []byte) {
		a := apis[(which%len(apis)+len(apis))%len(apis)]
		for _, force := range []bool{false, true} {
			out := s.rewrite(context.Background(), a, http.Header{}, body, force)
			if bytes.Equal(out.body, body) {
				continue
			}
			if !json.Valid(out.body) {
				t.Fatalf("rewritten body is not JSON:\n%s", out.body)
			}
			if beside(body, a.list) != beside(out.body, a.list) {
				t.Fatalf("members beside the list changed:\n%s\n%s", body, out.body)
			}
		}
	})
}

// beside returns body with its list's value cut out.
func beside(body []byte, list string) string {
	members, _ := jsonscan.Members(body)
	for _, m := range members {
		if m.Key == list {
			return string(body[:m.Value.Start]) + string(body[m.Value.End:])
		}
	}
	return string(body)
}
