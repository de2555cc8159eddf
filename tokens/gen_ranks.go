//go:build ignore

// gen_ranks writes the BPE rank tables compact embeds, from the tiktoken
// files that github.com/pkoukk/tiktoken-go-loader embeds. Run it with
// "go generate ./tokens".
//
// The tables are laid out here, once, so that the program only slices
// them at run time: see package tokens/internal/ranktable for the layout.
// Ranks must run from 0 to n-1 without gaps, which this program checks.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/compactkit/compact/tokens/internal/ranktable"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		if err := write(name); err != nil {
			log.Fatalf("%s: %v", name, err)
		}
	}
}

func write(name string) error {
	ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		return err
	}
	byRank := make([]string, len(ranks))
	for tok, r := range ranks {
		if r < 0 || r >= len(ranks) || byRank[r] != "" {
			return fmt.Errorf("ranks are not 0..%d without gaps (rank %d)", len(ranks)-1, r)
		}
		byRank[r] = tok
	}
	table, err := ranktable.Build(byRank)
	if err != nil {
		return err
	}
	return os.WriteFile(name+".ranks", table, 0o644)
}
