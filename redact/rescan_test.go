package redact

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestPropRescanNearMasks: rescanning a masked text only around its masks
// finds what rescanning all of it finds, on long texts of secrets, names,
// look-alikes and escapes far apart and close together.
func TestPropRescanNearMasks(t *testing.T) {
	r := newTestRedactor(t)
	cases := streamCases()
	rounds, maxLen := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		for n := rapid.IntRange(1, 60).Draw(rt, "n"); n > 0; n-- {
			switch rapid.IntRange(0, 4).Draw(rt, "kind") {
			case 0:
				b.WriteString(rapid.SampledFrom(cases).Draw(rt, "case"))
			case 1:
				b.WriteString(genText().Draw(rt, "text"))
			case 2:
				b.WriteString(strings.Repeat(rapid.SampledFrom([]string{"lorem ipsum ", "\n", "x", `{"a":"b"}` + "\n"}).Draw(rt, "pad"), rapid.IntRange(1, 3000).Draw(rt, "padn")))
			case 3:
				// A name that fits the name-length limit only once the
				// tokens glued to it are masked: what only a rescan finds.
				b.WriteString(" " + rapid.SampledFrom(propSecrets[:8]).Draw(rt, "glued") + "." + rapid.SampledFrom(propSecrets[:8]).Draw(rt, "glued2") + "password=Zq8vR2pLm9xw\n")
			default:
				b.WriteString(rapid.SampledFrom(propSecrets).Draw(rt, "secret"))
			}
		}
		text := b.String()
		maxLen = max(maxLen, len(text))
		got, gotFound := r.Redact(text)
		rescanWhole = true
		want, wantFound := r.Redact(text)
		rescanWhole = false
		if got != want || len(gotFound) != len(wantFound) {
			rt.Fatalf("rescan near masks differs from a whole rescan:\n near:  %q\n whole: %q", got, want)
		}
		if strings.Contains(got, "password=[REDACTED") && strings.Contains(text, "password=Zq8vR2pLm9xw") && len(text) > 4*rescanReach {
			rounds++
		}
	})
	if rounds == 0 {
		t.Error("no long text held a secret only a rescan finds")
	}
	t.Logf("long texts with a secret only a rescan finds: %d; longest text %d bytes", rounds, maxLen)
}
