package casegen

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// jsonInner is s as it appears between the quotes of a JSON string.
func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b[1 : len(b)-1]))
}

// jsonString is s as a JSON string literal, HTML characters unescaped.
func jsonString(s string) string { return `"` + jsonInner(s) + `"` }

// asciiJSON escapes every non-ASCII character of a JSON text as \uXXXX,
// as Python's json.dumps does by default.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// shellWord quotes v for a shell when it needs quoting.
func shellWord(v string) string {
	if strings.ContainsAny(v, " \t\n'\"\\$`!#&*()[]{}<>?;|~") {
		return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
	}
	return v
}

// yamlScalar writes v as a YAML scalar: plain when YAML reads it back as
// the same string, quoted otherwise.
func yamlScalar(v string, quote byte) string {
	plain := quote == 0 && v != "" && !strings.ContainsAny(v[:1], "!&*-?:,[]{}#|>@`\"'%= ") &&
		!strings.Contains(v, ": ") && !strings.Contains(v, " #") && !strings.HasSuffix(v, ":")
	switch {
	case plain:
		return v
	case quote == '"' && !strings.ContainsAny(v, `"\`):
		return `"` + v + `"`
	case !strings.Contains(v, "'"):
		return "'" + v + "'"
	}
	return jsonString(v)
}

// quoted writes v between q, the value being free of q and backslashes
// (the families never draw them).
func quoted(v string, q byte) string { return string(q) + v + string(q) }

// pyQuote picks a Python string quote.
func (g *gen) pyQuote() byte { return pick(g, []byte{'"', '\''}) }

// queryEscape percent-encodes a query value.
func queryEscape(v string) string { return url.QueryEscape(v) }

// userinfoEscape percent-encodes a password for the userinfo of a URL.
func userinfoEscape(v string) string { return url.UserPassword("u", v).String()[2:] }
