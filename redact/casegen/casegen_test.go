package casegen

import (
	"bytes"
	"testing"
)

func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := Write(&a, Generate(7)); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, Generate(7)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("Generate(7) differs between runs")
	}
	var c bytes.Buffer
	_ = Write(&c, Generate(8))
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("seeds 7 and 8 give the same cases")
	}
}

// TestSeeds generates many seeds: Generate panics on a case whose secret
// or keep strings are not in its text.
func TestSeeds(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		Generate(seed)
	}
}

func TestEveryFamilyAndContext(t *testing.T) {
	cases := Generate(1)
	fams, ctxs := map[string]int{}, map[string]int{}
	pos, neg := 0, 0
	for _, c := range cases {
		if c.Kind == "pos" {
			pos++
			fams[c.Family]++
			ctxs[c.Context]++
			if len(c.Secrets) == 0 {
				t.Errorf("%s: positive without a secret", c.ID)
			}
		} else {
			neg++
			if len(c.Keep) == 0 {
				t.Errorf("%s: negative without a keep", c.ID)
			}
		}
	}
	for _, f := range families {
		if fams[f.id] == 0 {
			t.Errorf("family %s has no case", f.id)
		}
	}
	for _, c := range contexts {
		if ctxs[c.id] == 0 {
			t.Errorf("context %s has no case", c.id)
		}
	}
	t.Logf("%d positives, %d negatives, %d families, %d contexts", pos, neg, len(fams), len(ctxs))
}
