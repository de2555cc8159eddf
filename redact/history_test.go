package redact_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/sample"
	"github.com/compactkit/compact/redact"
	"pgregory.net/rapid"
)

// Issue 18, part 3: masks never depend on what a Redactor (or a Compactor
// holding one) did before. A run resumed from a checkpoint, with a fresh
// process, must write what an uninterrupted run writes.

// secretText draws a text holding secrets of a few families.
func secretText() *rapid.Generator[string] {
	secrets := []string{
		"ghp_R8s2kFq7Lm3Xv9Zt1Yw4Pn6Bc5Hd0Je2Ug8a", "password=Kq7#mZ2p9vLw", "AKIAIOSFODNN7QWERTYU",
		"postgres://app:Hunter2x9Q@db:5432/x", "token: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
		`{"api_key": "q8W2xZ0pL4vR7nT1yB6cK3mH"}`, "[REDACTED:password#1]", "[REDACTED:github-token#3]",
	}
	return rapid.Custom(func(t *rapid.T) string {
		var b bytes.Buffer
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(secrets)-1), 0, 8).Draw(t, "secrets") {
			fmt.Fprintf(&b, "%s %s\n", rapid.StringMatching(`[a-z ]{0,12}`).Draw(t, "filler"), secrets[i])
		}
		return b.String()
	})
}

// TestPropFreshAndUsedRedactorAgree: redacting a text gives the same bytes
// with a fresh Redactor and with one that redacted other texts first.
func TestPropFreshAndUsedRedactorAgree(t *testing.T) {
	used, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		for _, s := range rapid.SliceOfN(secretText(), 0, 4).Draw(t, "before") {
			used.Redact(s)
		}
		text := secretText().Draw(t, "text")
		fresh, _ := redact.New(redact.Config{})
		a, _ := fresh.Redact(text)
		b, _ := used.Redact(text)
		if a != b {
			t.Fatalf("fresh and used redactors differ on %q:\nfresh %q\nused  %q", text, a, b)
		}
	})
}

// TestFreshAndUsedTranscriptsAgree: the same for whole transcripts, over
// the sample sessions in every format.
func TestFreshAndUsedTranscriptsAgree(t *testing.T) {
	used, _ := redact.New(redact.Config{})
	for _, seed := range []uint64{1, 2, 3} {
		for _, f := range sample.Files(seed) {
			tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := redact.New(redact.Config{})
			a, _ := fresh.Transcript(tr)
			b, _ := used.Transcript(tr)
			if wa, wb := write(t, a, f.Format), write(t, b, f.Format); !bytes.Equal(wa, wb) {
				t.Errorf("seed %d %s: fresh and used redactors write different transcripts", seed, f.Name)
			}
		}
	}
}

// TestFreshAndUsedCompactorAgree: compact(t) is the same bytes for a fresh
// Compactor and for one that compacted other sessions (with other secrets)
// first, with the redactor it was given and with its default one.
func TestFreshAndUsedCompactorAgree(t *testing.T) {
	ctx := context.Background()
	newCompactor := func(r *redact.Redactor) *compactor.Compactor {
		cfg := compactor.DefaultConfig()
		cfg.Strategy = compactor.StrategyFallback
		cfg.Force = true
		cfg.Redactor = r
		c, err := compactor.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	shared, _ := redact.New(redact.Config{})
	for _, r := range []*redact.Redactor{nil, shared} {
		used := newCompactor(r)
		for _, seed := range []uint64{7, 8} { // other sessions, other secrets
			for _, f := range sample.Files(seed) {
				tr, _ := format.Read(bytes.NewReader(f.Data), f.Name, "")
				if _, err := used.Compact(ctx, tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range sample.Files(1) {
			tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			freshRes, err := newCompactor(nil).Compact(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			usedRes, err := used.Compact(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			if !freshRes.Changed() {
				t.Fatalf("%s: nothing compacted", f.Name)
			}
			if a, b := write(t, freshRes.Transcript, f.Format), write(t, usedRes.Transcript, f.Format); !bytes.Equal(a, b) {
				t.Errorf("%s (shared redactor %v): fresh and used compactors write different transcripts", f.Name, r != nil)
			}
		}
	}
}

func write(t *testing.T, tr compact.Transcript, to string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := format.Write(&b, tr, format.Name(to)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
