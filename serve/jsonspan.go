package serve

import (
	"github.com/compactkit/compact/internal/jsonscan"
)

// writeWithout appends v to dst leaving out every object member, at any
// depth, whose key is one of drop. It is used to compare list elements
// while ignoring fields a client moves from request to request without
// changing what the model reads (Anthropic's cache_control breakpoints).
// v is a valid JSON value (the format reader has read it).
func writeWithout(dst, v []byte, drop []string) []byte {
	i := 0
	for i < len(v) {
		if v[i] != '"' {
			dst = append(dst, v[i])
			i++
			continue
		}
		j := jsonscan.StringEnd(v, i)
		if j < 0 {
			return append(dst, v[i:]...)
		}
		// A key is a string followed by ':'.
		k := jsonscan.SkipSpace(v, j)
		if k < len(v) && v[k] == ':' && dropKey(v[i:j], drop) {
			end := jsonscan.ValueEnd(v, k+1)
			if end < 0 {
				return append(dst, v[i:]...)
			}
			end = jsonscan.SkipSpace(v, end)
			if end < len(v) && v[end] == ',' {
				end++
			} else {
				dst = trimComma(dst)
			}
			i = end
			continue
		}
		dst = append(dst, v[i:j]...)
		i = j
	}
	return dst
}

func dropKey(q []byte, drop []string) bool {
	for _, d := range drop {
		if len(q) == len(d)+2 && string(q[1:len(q)-1]) == d {
			return true
		}
	}
	return false
}

// trimComma removes a trailing ',' (and the spaces after it) from dst: the
// member dropped was its object's last.
func trimComma(dst []byte) []byte {
	k := len(dst)
	for k > 0 && (dst[k-1] == ' ' || dst[k-1] == '\n' || dst[k-1] == '\t' || dst[k-1] == '\r') {
		k--
	}
	if k > 0 && dst[k-1] == ',' {
		return dst[:k-1]
	}
	return dst
}
