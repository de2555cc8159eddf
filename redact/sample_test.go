package redact

import (
	"math/rand/v2"
	"regexp/syntax"
	"strings"
	"testing"
)

// sampleRegexp draws a random string matching re (unbounded repeats are
// drawn up to min+12).
func sampleRegexp(rng *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		total := 0
		for i := 0; i < len(re.Rune); i += 2 {
			total += int(re.Rune[i+1]-re.Rune[i]) + 1
		}
		n := rng.IntN(total)
		for i := 0; i < len(re.Rune); i += 2 {
			size := int(re.Rune[i+1]-re.Rune[i]) + 1
			if n < size {
				b.WriteRune(re.Rune[i] + rune(n))
				return
			}
			n -= size
		}
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte('x')
	case syntax.OpCapture:
		sampleRegexp(rng, re.Sub[0], b)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sampleRegexp(rng, s, b)
		}
	case syntax.OpAlternate:
		sampleRegexp(rng, re.Sub[rng.IntN(len(re.Sub))], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 1
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, 12
		case syntax.OpPlus:
			lo, hi = 1, 13
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 12
			}
		}
		for n := lo + rng.IntN(hi-lo+1); n > 0; n-- {
			sampleRegexp(rng, re.Sub[0], b)
		}
	}
}

// handSamples are tokens whose validity random drawing cannot give
// (checksums, JSON headers, encoded prefixes).
var handSamples = map[string][]string{
	"github-token":        {tGitHub, tGitHub2, "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"},
	"npm-token":           {tNPM},
	"jwt":                 {tJWT, "ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lpT2lJME1tUTJZak5pTWlJc0ltbGhkQ0k2TVRjd01EQXdNREF3TUgwLnE4VzJ4WjBwTDR2UjduVDF5QjZjSzNtSDlzRDVmRzJqQThlVTFpTzR3UTc="},
	"aws-bedrock-api-key": {"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29tLz9BY3Rpb249Q2FsbFdpdGhCZWFyZXJUb2tlbg=="},
}

// vendorSamples returns, per rule id, tokens of every vendor format.
func vendorSamples(t *testing.T) map[string][]string {
	rng := rand.New(rand.NewPCG(1, 2))
	out := map[string][]string{}
	for id, s := range handSamples {
		out[id] = append(out[id], s...)
	}
	type spec struct {
		id, re string
		ent    float64
		check  func(string) bool
	}
	var specs []spec
	for _, tk := range vendorTokens {
		specs = append(specs, spec{tk.id, tk.re, tk.ent, tk.check})
	}
	for _, m := range midTokens {
		specs = append(specs, spec{m.id, m.re, m.ent, nil})
	}
	for _, sp := range specs {
		if _, ok := handSamples[sp.id]; ok {
			continue
		}
		re, err := syntax.Parse(sp.re, syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", sp.id, err)
		}
		got := 0
		for try := 0; try < 200 && got < 2; try++ {
			var b strings.Builder
			sampleRegexp(rng, re, &b)
			s := b.String()
			if isPlaceholder(strings.TrimLeft(s, "A")) || (sp.ent > 0 && entropy(s) < sp.ent) || (sp.check != nil && !sp.check(s)) {
				continue
			}
			if strings.HasSuffix(s, "-") || strings.HasSuffix(s, "_") || strings.HasSuffix(s, ".") {
				continue // a format that may end in a separator: the draw glues badly to contexts
			}
			out[sp.id] = append(out[sp.id], s)
			got++
		}
		if got == 0 {
			t.Errorf("%s: no valid sample drawn from %s", sp.id, sp.re)
		}
	}
	return out
}
