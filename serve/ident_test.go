package serve

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A prefix tells a request that repeats the elements it dropped by their
// identities in memory as it did by coveredHash: the same answer for any
// elements kept or dropped, changed, moved, cut, added to, or given or
// stripped of a volatile member (Anthropic's cache_control); a prefix read
// from the store (no identities yet) answers the same by its hash.
func TestExtendsByIdentsMatchesHash(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := rapid.SampledFrom(apis).Draw(rt, "api")
		n := rapid.IntRange(0, 10).Draw(rt, "n")
		type elem struct {
			text     string
			volatile bool
		}
		first := make([]elem, n)
		for i := range first {
			first[i] = elem{rapid.SampledFrom([]string{"a", "b", "c"}).Draw(rt, "text"), rapid.Bool().Draw(rt, "volatile")}
		}
		body := func(es []elem) []byte {
			parts := make([]string, len(es))
			for i, e := range es {
				cc := ""
				if e.volatile {
					cc = `,"cache_control":{"type":"ephemeral"}`
				}
				parts[i] = fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q%s}]}`, e.text, cc)
			}
			return []byte(fmt.Sprintf(`{"model":"m",%q:[%s]}`, a.list, strings.Join(parts, ",")))
		}
		sh1, err := shapeOf(a, body(first))
		if err != nil {
			rt.Fatal(err)
		}
		covered := rapid.IntRange(0, n).Draw(rt, "covered")
		var items []int
		for k := 0; k < covered; k++ {
			if rapid.Bool().Draw(rt, "kept") {
				items = append(items, k)
			}
		}
		items = append(items, -1) // the handoff
		// The next request: each element kept, changed or toggled, then cut
		// or added to.
		var next []elem
		for _, e := range first {
			switch rapid.IntRange(0, 5).Draw(rt, "change") {
			case 0:
				e.text += "x"
			case 1:
				e.volatile = !e.volatile
			}
			next = append(next, e)
		}
		if cut := rapid.IntRange(0, 3).Draw(rt, "cut"); cut > 0 && cut <= len(next) && rapid.Bool().Draw(rt, "cutting") {
			next = next[:len(next)-cut]
		}
		for range rapid.IntRange(0, 3).Draw(rt, "added") {
			next = append(next, elem{"new", rapid.Bool().Draw(rt, "volatile")})
		}
		sh2, err := shapeOf(a, body(next))
		if err != nil {
			rt.Fatal(err)
		}
		hash := sh1.hashDropped(covered, items)
		want := len(sh2.elems) >= covered && sh2.hashDropped(covered, items) == hash
		inMemory := &prefix{covered: covered, coveredHash: hash, items: items, dropped: sh1.droppedIdents(covered, items)}
		if got := inMemory.extends(sh2); got != want {
			rt.Fatalf("extends by identities = %v, by hash %v", got, want)
		}
		stored := &prefix{covered: covered, coveredHash: hash, items: items}
		if got := stored.extends(sh2); got != want {
			rt.Fatalf("a stored prefix's extends = %v, by hash %v", got, want)
		}
		if want && stored.dropped == nil {
			rt.Fatal("a stored prefix matched and kept no identities")
		}
		if want {
			// Its identities, taken from the request that matched, answer
			// as its hash does from then on.
			if !stored.extends(sh2) || stored.extends(sh1) != (sh1.hashDropped(covered, items) == hash) {
				rt.Fatal("a stored prefix's identities answer otherwise than its hash")
			}
		}
	})
}
