package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEnds(t *testing.T) {
	if got := Ends("short", 10, BytesMarker); got != "short" {
		t.Fatalf("a string within the budget changed: %q", got)
	}
	s := strings.Repeat("é", 100) // 200 bytes of two-byte runes
	got := Ends(s, 61, BytesMarker)
	if !utf8.ValidString(got) {
		t.Fatalf("cut inside a rune: %q", got)
	}
	head, tail, ok := strings.Cut(got, "\n[... compact: ")
	if !ok || !strings.HasPrefix(s, head) || len(head) > 40 {
		t.Fatalf("head %q", head)
	}
	_, end, _ := strings.Cut(tail, " bytes omitted ...]\n")
	if !strings.HasSuffix(s, end) || len(head)+len(end) > 61 || len(head)+len(end) < 58 {
		t.Fatalf("kept %d + %d bytes of a 61-byte budget", len(head), len(end))
	}
	if !strings.Contains(got, "compact: 140 bytes omitted") && !strings.Contains(got, "compact: 142 bytes omitted") {
		t.Fatalf("marker does not count the omitted bytes: %q", got)
	}
}
