package redact

import "strings"

// MaskURLs returns s with the password of every URL in it masked, and the
// values of its query parameters whose names are secret-like:
//
//	redis://:Hunter2x@cache:6379/0      -> redis://:[REDACTED:url-password]@cache:6379/0
//	https://gw.example/v1?api_key=abc12 -> https://gw.example/v1?api_key=[REDACTED:api-key]
//
// It masks what a URL says is a credential, whatever it looks like (a
// Redactor judges whether a value looks like one): for URLs given on a
// command line or in a setting, which are printed in progress lines and
// error messages and stored in reports and checkpoints. Masks carry no
// number: MaskURLs has no scope to number them in.
func MaskURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	prev := 0
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		at := i + j + 3
		i = at
		// The user name ends at the first colon; the password at the
		// first @ followed by a host (see detectURLCreds).
		colon := -1
		for k := at; k < len(s) && k-at < 256; k++ {
			c := s[k]
			if c == ':' {
				colon = k
				break
			}
			if c == '/' || c == '?' || c == '#' || c == '@' || c == '[' || isSpace(c) || isQuote(c) {
				break
			}
		}
		hostAt := at
		if colon >= 0 {
			// Printed and stored, a URL is masked to its last @ before a
			// host: more rather than less when the password holds an @.
			last := -1
			for k := colon + 1; k < len(s) && k-colon < 512; k++ {
				c := s[k]
				if isSpace(c) || isQuote(c) || (c == ':' && strings.HasPrefix(s[k:], "://")) {
					break
				}
				if c == '@' && hostFollows(s, k+1) {
					last = k
				}
			}
			if last > colon+1 {
				if !strings.Contains(s[colon+1:last], maskKeyword) {
					b.WriteString(s[prev : colon+1])
					b.WriteString("[REDACTED:url-password]")
					prev = last
				}
			}
			if last >= 0 {
				hostAt = last + 1
			}
		}
		// The query: name=value pairs up to the end of the URL.
		end := hostAt
		for end < len(s) && !isSpace(s[end]) && !isQuote(s[end]) && s[end] != '<' && s[end] != '>' &&
			!(s[end] == ':' && strings.HasPrefix(s[end:], "://")) {
			end++
		}
		q := strings.IndexByte(s[hostAt:end], '?')
		if q < 0 {
			i = max(i, hostAt)
			continue
		}
		for _, kv := range splitSpans(s, hostAt+q+1, end, '&') {
			eq := strings.IndexByte(s[kv[0]:kv[1]], '=')
			if eq <= 0 || kv[0]+eq+1 >= kv[1] {
				continue
			}
			name := s[kv[0] : kv[0]+eq]
			if k := strings.IndexByte(name, '#'); k >= 0 {
				continue
			}
			class, label := classifyName(name)
			vs := kv[0] + eq + 1
			if _, masked := maskAt(s, vs); class == nameNone || masked || isReference(s[vs:kv[1]]) {
				continue
			}
			b.WriteString(s[prev:vs])
			b.WriteString("[REDACTED:" + label + "]")
			prev = kv[1]
		}
		i = max(i, end)
	}
	if prev == 0 {
		return s
	}
	b.WriteString(s[prev:])
	return b.String()
}

// splitSpans splits s[from:to] at sep, returning the spans of the pieces.
func splitSpans(s string, from, to int, sep byte) [][2]int {
	var out [][2]int
	for from <= to {
		k := strings.IndexByte(s[from:to], sep)
		if k < 0 {
			out = append(out, [2]int{from, to})
			break
		}
		out = append(out, [2]int{from, from + k})
		from += k + 1
	}
	return out
}
