// Package clip shortens text to a byte budget by keeping its two ends,
// which is where tool outputs, arguments and messages say the most: how
// something started and how it ended.
package clip

import (
	"fmt"
	"unicode/utf8"
)

// Ends returns s when it fits in maxBytes, else about two thirds of
// maxBytes from its start and one third from its end, cut on rune
// boundaries, with marker (a format taking the number of omitted bytes)
// on a line of its own between them.
func Ends(s string, maxBytes int, marker string) string {
	if len(s) <= maxBytes {
		return s
	}
	head := maxBytes * 2 / 3
	tail := maxBytes - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + "\n" + fmt.Sprintf(marker, from-head) + "\n" + s[from:]
}

// BytesMarker is the marker the compactor and the summarizers leave where
// Ends omitted bytes.
const BytesMarker = "[... compact: %d bytes omitted ...]"
