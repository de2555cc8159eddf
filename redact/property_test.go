package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Property tests: invariants that hold for any input, checked on texts
// assembled from secrets, secret-like names, look-alikes, escapes, quotes
// and masks.

// propSecrets: the first eight have vendor formats, detectable anywhere.
var propSecrets = []string{tGitHub, tGitHub2, tNPM, tAWSID, tOpenAI, tSlack, tJWT, "glpat-Qx3vB8nW2mK5tR9yH4jL",
	tAWSSec, tPassword, "q8W2xZ0pL4vR7nT1yB6cK3mH"}

var propFragments = []string{
	"password=", "PASSWORD: ", `"token": "`, "'api_key': '", "Authorization: Bearer ", "export SECRET_KEY=",
	"postgres://app:", "@db:5432/x", "-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----", "kind: Secret\ndata:\n  k: ",
	"\\n", "\\\"", `\\`, `"`, "'", "`", "\n", "\r\n", " ", "\t", "=", ":", ";", ",", "&", "?", "/", "{", "}", "[", "]", "(", ")",
	"[REDACTED]", "[REDACTED:password#1]", "[REDACTED:", "#1]", "${TOKEN}", "changeme", "xxxx", "é", "\u2028", "\xff",
	"6b1f6e8a-3c1d-4e2b-9a7f-0c5d4e3b2a19", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"toolu_01Qx3vB8nW2mK5tR9yH4jL7p", "max_tokens: 4096", "curl -u u:", " -p", "cat master.key\n", "login is a / ",
}

func genText() *rapid.Generator[string] {
	piece := rapid.OneOf(
		rapid.SampledFrom(propSecrets),
		rapid.SampledFrom(propFragments),
		rapid.StringMatching(`[A-Za-z0-9_+/=.-]{0,40}`),
		rapid.String(),
	)
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(piece, 0, 24).Draw(t, "pieces"), "")
	})
}

func TestPropIdempotent(t *testing.T) {
	r := newTestRedactor(t)
	rapid.Check(t, func(t *rapid.T) {
		in := genText().Draw(t, "text")
		once := r.String(in)
		if twice := r.String(once); twice != once {
			t.Fatalf("Redact not idempotent:\n in: %q\n 1x: %q\n 2x: %q", in, once, twice)
		}
	})
}

// TestPropFindings checks that findings are ordered, disjoint spans of the
// input, and that the output is the input with exactly those spans masked.
func TestPropFindings(t *testing.T) {
	r := newTestRedactor(t)
	rapid.Check(t, func(t *rapid.T) {
		in := genText().Draw(t, "text")
		sc := r.NewScope()
		out, found := sc.Redact(in)
		var b strings.Builder
		prev := 0
		for _, f := range found {
			if f.Start < prev || f.End <= f.Start || f.End > len(in) {
				t.Fatalf("bad span %+v after %d in %d bytes", f, prev, len(in))
			}
			b.WriteString(in[prev:f.Start])
			b.WriteString(sc.m.mask(f.Rule, in[f.Start:f.End]))
			prev = f.End
		}
		b.WriteString(in[prev:])
		if b.String() != out {
			t.Fatalf("output is not the input with its findings masked:\n got %q\nwant %q", out, b.String())
		}
	})
}

// TestPropSecretsGone places known secrets between separators: none may
// survive.
func TestPropSecretsGone(t *testing.T) {
	r := newTestRedactor(t)
	seps := []string{" ", "\n", `"`, "'", "\\n", ", ", "=", ": ", "(", ")"}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "n")
		var b strings.Builder
		var placed []string
		for i := 0; i < n; i++ {
			b.WriteString(rapid.SampledFrom(seps).Draw(t, "sep"))
			s := rapid.SampledFrom(propSecrets[:8]).Draw(t, "secret") // the vendor-formatted ones
			placed = append(placed, s)
			b.WriteString(s)
			b.WriteString(rapid.SampledFrom(seps).Draw(t, "sep"))
		}
		out := r.String(b.String())
		for _, s := range placed {
			if strings.Contains(out, s) {
				t.Fatalf("%q survived in %q", s, out)
			}
		}
	})
}

// jsonValue draws a JSON value whose strings mix secrets, escapes and
// arbitrary text.
func jsonValue(depth int) *rapid.Generator[any] {
	str := rapid.Custom(func(t *rapid.T) any { return genText().Draw(t, "s") })
	if depth == 0 {
		return rapid.OneOf(str, rapid.Custom(func(t *rapid.T) any { return rapid.Float64().Draw(t, "f") }),
			rapid.Just[any](nil), rapid.Just[any](true))
	}
	return rapid.OneOf(
		str,
		rapid.Custom(func(t *rapid.T) any {
			keys := rapid.SliceOfN(rapid.SampledFrom([]string{"password", "token", "api_key", "content", "text", "id", "auth", "data", "k"}), 0, 5).Draw(t, "keys")
			m := map[string]any{}
			for _, k := range keys {
				m[k] = jsonValue(depth-1).Draw(t, "v")
			}
			return m
		}),
		rapid.Custom(func(t *rapid.T) any {
			return rapid.SliceOfN(jsonValue(depth-1), 0, 4).Draw(t, "items")
		}),
	)
}

// TestPropJSONStaysValid checks that RedactBytes keeps any JSON document
// and any JSONL valid, with the same structure.
func TestPropJSONStaysValid(t *testing.T) {
	r := newTestRedactor(t)
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.IntRange(1, 3).Draw(t, "lines")
		var docs []string
		for i := 0; i < lines; i++ {
			v := jsonValue(3).Draw(t, "doc")
			b, err := json.Marshal(v)
			if err != nil {
				t.Skip(err)
			}
			if rapid.Bool().Draw(t, "indent") && lines == 1 {
				b, _ = json.MarshalIndent(v, "", "  ")
			}
			docs = append(docs, string(b))
		}
		in := strings.Join(docs, "\n") + "\n"
		out, _ := r.RedactBytes([]byte(in))
		outLines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if lines == 1 {
			outLines = []string{string(out)}
		}
		if len(outLines) != len(docs) {
			t.Fatalf("%d documents in, %d out", len(docs), len(outLines))
		}
		for i, d := range outLines {
			var before, after any
			json.Unmarshal([]byte(docs[i]), &before)
			if err := json.Unmarshal([]byte(d), &after); err != nil {
				t.Fatalf("document %d no longer JSON: %v\n in: %s\nout: %s", i, err, docs[i], d)
			}
			if shape(before) != shape(after) {
				t.Fatalf("document %d changed shape:\n in: %s\nout: %s", i, docs[i], d)
			}
		}
	})
}

// shape renders a JSON value's structure: keys and types, not strings.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var b strings.Builder
		b.WriteString("{")
		for _, k := range sortedKeys(x) {
			b.WriteString(k + ":" + shape(x[k]) + ",")
		}
		return b.String() + "}"
	case []any:
		var b strings.Builder
		b.WriteString("[")
		for _, e := range x {
			b.WriteString(shape(e) + ",")
		}
		return b.String() + "]"
	case string:
		return "s"
	case nil:
		return "null"
	}
	return "v"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
