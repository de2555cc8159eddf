package tokens

import (
	"bytes"
	"testing"
)

// Run each for minutes with, for example:
//
//	go test ./tokens -run '^$' -fuzz '^FuzzO200k$' -fuzztime 2m
func FuzzO200k(f *testing.F)  { fuzzEncoding(f, O200kBase) }
func FuzzCl100k(f *testing.F) { fuzzEncoding(f, Cl100kBase) }

func fuzzEncoding(f *testing.F, name string) {
	for _, s := range hostileAtoms {
		f.Add(s)
	}
	for _, s := range hostileStrings(11, 40) {
		f.Add(s)
	}
	f.Add("a\xffb\xc3(")
	e, o := mustEncoding(f, name), oracle(f, name)
	f.Fuzz(func(t *testing.T, s string) {
		if d := differ(e, o, s); d != "" {
			t.Fatalf("%s %q: %s", name, s, d)
		}
		if n := e.Count(s); n > 3*len(s) {
			t.Fatalf("%d tokens for %d bytes", n, len(s))
		}
	})
}

func FuzzEstimate(f *testing.F) {
	for _, s := range hostileAtoms {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Estimate(s)
		if n < 0 || n > 2*len(s)+1 || (s != "" && n == 0 && len(s) > 8) {
			t.Fatalf("Estimate(%q) = %d for %d bytes", s, n, len(s))
		}
	})
}

// FuzzModelsLoad: a configuration file either loads into entries that can
// be used, or is refused with an error; it never panics.
func FuzzModelsLoad(f *testing.F) {
	f.Add([]byte(`{"models": [{"name": "gpt-4o", "window": 64000}]}`))
	f.Add([]byte(`[{"name": "m", "encoding": "estimate", "window": 1000, "output_reserve": 10, "aliases": ["n"]}]`))
	f.Add([]byte("[[models]]\nname = \"local\"\nwindow = 4096\noutput_reserve = 512\n"))
	f.Add([]byte("[[models]]\nname = \"gpt-4\"\nencoding = \"o200k_base\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab := NewModels()
		if err := tab.Load(bytes.NewReader(data), "fuzz"); err != nil {
			return
		}
		for _, m := range tab.List() {
			got, ok := tab.Lookup(m.Name)
			if !ok || got.Window <= got.OutputReserve || got.OutputReserve < 0 {
				t.Fatalf("entry %+v looks up as %+v, %v", m, got, ok)
			}
			if got.Encoding != "" {
				if _, err := GetEncoding(got.Encoding); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
