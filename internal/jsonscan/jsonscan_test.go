package jsonscan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestPrefix: a text cut short says so, and what was read before the cut
// is still there, which is what detection reads from a file's first bytes.
func TestPrefix(t *testing.T) {
	doc := `{"type":"session_meta","payload":{"id":"x"},"items":[{"a":1},{"b":2},{"c"`
	members, complete := Members(doc)
	if complete || len(members) != 3 {
		t.Fatalf("Members = %v, %v", members, complete)
	}
	if got := Value(doc, members[1].Value); got != `{"id":"x"}` {
		t.Errorf("payload = %s", got)
	}
	if members[2].Value.End != -1 {
		t.Errorf("the cut value has End %d, want -1", members[2].Value.End)
	}
	elems, complete := Elements(Value(doc, members[2].Value))
	if complete || len(elems) != 2 {
		t.Errorf("Elements = %v, %v", elems, complete)
	}
	for _, s := range []string{`123`, `true`, `"abc`, `{"a":[1,2}`, `[`, ``, `   `} {
		if end := ValueEnd(s, 0); end != -1 {
			t.Errorf("ValueEnd(%q) = %d, want -1 (cut short)", s, end)
		}
	}
	if end := ValueEnd(`123,`, 0); end != 3 {
		t.Errorf("ValueEnd(123,) = %d", end)
	}
}

func TestMalformed(t *testing.T) {
	for _, s := range []string{`{"a":1 "b":2}`, `{"a":1,,"b":2}`, `{a:1}`, `{"a" 1}`, `{"a\x":1}`} {
		if _, complete := Members(s); complete {
			t.Errorf("Members(%q) complete", s)
		}
	}
	for _, s := range []string{`[1 2]`, `[1,,2]`, `[,]`} {
		if _, complete := Elements(s); complete {
			t.Errorf("Elements(%q) complete", s)
		}
	}
}

func TestFindLastWinsCaseInsensitive(t *testing.T) {
	doc := `{"Type":"a","other":1,"type":"b"}`
	if got := LookupString(doc, "type"); got != "b" {
		t.Errorf("LookupString(type) = %q, want b", got)
	}
	var v struct{ Type string }
	if err := json.Unmarshal([]byte(doc), &v); err != nil || v.Type != "b" {
		t.Fatalf("encoding/json: %q, %v", v.Type, err)
	}
	if got := Lookup(doc, "missing"); got != "" {
		t.Errorf("Lookup(missing) = %q", got)
	}
	if !HasKeys(doc, "Type", "other") || HasKeys(doc, "TYPE") {
		t.Error("HasKeys matches keys exactly")
	}
}

func TestSetMembers(t *testing.T) {
	obj := []byte(`{ "a": 1, "b" : {"x": [1, 2]}, "c":"<&>" }`)
	got := SetMembers(obj, map[string]json.RawMessage{"a": json.RawMessage(`2`), "d": json.RawMessage(`"new"`)}, []string{"d"}, "c")
	want := `{"a":2,"b":{"x": [1, 2]},"d":"new"}`
	if string(got) != want {
		t.Errorf("SetMembers = %s, want %s", got, want)
	}
}

func TestRaw(t *testing.T) {
	var v struct {
		A Raw `json:"a"`
		B Raw `json:"b"`
		C Raw `json:"c"`
	}
	in := []byte(`{"a":"x\ny","b":null}`)
	if err := json.Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	if s, ok := v.A.Unquote(); !ok || s != "x\ny" || v.A.First() != '"' {
		t.Errorf("A = %q %v", s, ok)
	}
	if !v.B.IsNull() || !v.C.IsNull() || v.C.First() != 0 {
		t.Errorf("B, C = %q, %q", v.B, v.C)
	}
	if &v.A[0] != &in[5] {
		t.Error("Raw copied its value")
	}
}

func TestDescribe(t *testing.T) {
	got := []string{}
	for _, s := range []string{`{}`, ` []`, `"s"`, `true`, `null`, `-1`, ``} {
		got = append(got, Describe(s))
	}
	want := []string{"an object", "an array", "a string", "a boolean", "null", "a number", "nothing"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Describe = %q", got)
	}
}

func TestJoinArray(t *testing.T) {
	if got := string(JoinArray([]json.RawMessage{json.RawMessage(`{ "a" : 1 }`), json.RawMessage(`2`)})); got != `[{ "a" : 1 },2]` {
		t.Errorf("JoinArray = %s", got)
	}
	if got := string(JoinArray[string](nil)); got != `[]` {
		t.Errorf("JoinArray(nil) = %s", got)
	}
}

func ExampleMembers() {
	rec := []byte(`{"type":"response_item","payload":{"type":"message","role":"user"}}`)
	members, _ := Members(rec)
	for _, m := range members {
		fmt.Printf("%s: %s\n", m.Key, Value(rec, m.Value))
	}
	role := LookupString(Lookup(rec, "payload"), "role")
	fmt.Println("role:", role)
	// Output:
	// type: "response_item"
	// payload: {"type":"message","role":"user"}
	// role: user
}

func ExampleUnquotePrefix() {
	// A Codex output envelope cut short in the middle of its output.
	env := `{"output":"line 1\nline 2\nli`
	body, _ := UnquotePrefix(env[len(`{"output":"`):])
	fmt.Printf("%q\n", body)
	// Output: "line 1\nline 2\nli"
}
