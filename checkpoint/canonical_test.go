package checkpoint_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"pgregory.net/rapid"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{` { "a" : 1.0 } `, `{"a":1}`},
		{`1e3`, `1000`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`0.1`, `0.1`},
		{`-2.50`, `-2.5`},
		{`"<&>"`, `"<&>"`},
		{`{"z":{"y":2,"x":1}}`, `{"z":{"x":1,"y":2}}`},
		{``, `null`},
	}
	for _, tc := range tests {
		got, err := checkpoint.CanonicalJSON(json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("CanonicalJSON(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} 2`, `nope`} {
		if _, err := checkpoint.CanonicalJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("CanonicalJSON(%s) accepted invalid JSON", bad)
		}
	}
}

// Canonical JSON is a fixed point and does not depend on key order or
// spacing.
func TestCanonicalJSONProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z]{1,6}`), 1, 6, rapid.ID[string]).Draw(t, "keys")
		vals := rapid.SliceOfN(rapid.OneOf(
			rapid.Map(rapid.Int64(), func(i int64) any { return i }),
			rapid.Map(rapid.String(), func(s string) any { return s }),
			rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		), len(keys), len(keys)).Draw(t, "vals")
		var fwd, rev strings.Builder
		write := func(b *strings.Builder, i int, sep string) {
			k, _ := json.Marshal(keys[i])
			v, _ := json.Marshal(vals[i])
			b.WriteString(string(k) + sep + ":" + sep + string(v))
		}
		fwd.WriteString("{")
		rev.WriteString("{ ")
		for i := range keys {
			if i > 0 {
				fwd.WriteString(",")
				rev.WriteString(" , ")
			}
			write(&fwd, i, "")
			write(&rev, len(keys)-1-i, " ")
		}
		fwd.WriteString("}")
		rev.WriteString(" }")
		a, err := checkpoint.CanonicalJSON(json.RawMessage(fwd.String()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := checkpoint.CanonicalJSON(json.RawMessage(rev.String()))
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Fatalf("order changed the canonical form: %s vs %s", a, b)
		}
		again, _ := checkpoint.CanonicalJSON(a)
		if string(again) != string(a) {
			t.Fatalf("not a fixed point: %s -> %s", a, again)
		}
	})
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2.5,"x",null]`, `1e400`, `"\u00e9"`, `{"a":{"b":[{}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := checkpoint.CanonicalJSON(json.RawMessage(s))
		if err != nil {
			return
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form of %q is not JSON: %s", s, c)
		}
		again, err := checkpoint.CanonicalJSON(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("not a fixed point: %s -> %s (%v)", c, again, err)
		}
	})
}

func TestKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.txt")
	os.WriteFile(file, []byte("one"), 0o600)
	k1, err := checkpoint.Key("edit", json.RawMessage(`{"path":"in.txt","n":1}`), file)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := checkpoint.Key("edit", json.RawMessage(`{ "n":1.0, "path":"in.txt" }`), file)
	if k1 != k2 || !strings.HasPrefix(k1, "edit:") {
		t.Fatalf("same call, different spelling: %s vs %s", k1, k2)
	}
	if k3, _ := checkpoint.Key("view", json.RawMessage(`{"path":"in.txt","n":1}`), file); k3 == k1 {
		t.Fatal("another tool got the same key")
	}
	if k4, _ := checkpoint.Key("edit", json.RawMessage(`{"path":"in.txt","n":2}`), file); k4 == k1 {
		t.Fatal("other args got the same key")
	}
	os.WriteFile(file, []byte("two"), 0o600)
	if k5, _ := checkpoint.Key("edit", json.RawMessage(`{"path":"in.txt","n":1}`), file); k5 == k1 {
		t.Fatal("a changed input file kept its key")
	}
	if _, err := checkpoint.Key("edit", json.RawMessage(`{}`), filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing input file gave a key")
	}
	if _, err := checkpoint.Key("edit", json.RawMessage(`{`)); err == nil {
		t.Fatal("invalid args gave a key")
	}
}
