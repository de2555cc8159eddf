//go:build ignore

// gen_ranks writes the BPE rank tables compact embeds, from the tiktoken
// files that github.com/pkoukk/tiktoken-go-loader embeds. Run it with
// "go generate ./tokens".
//
// The output is smaller than the base64 text it comes from and needs no
// parsing at run time: the magic "CTR1", the token count n (uint32, little
// endian), n token lengths (one byte each, tokens being at most 255 bytes),
// then the n tokens' bytes back to back, in rank order. Ranks must run from
// 0 to n-1 without gaps, which this program checks.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"os"

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
		if len(tok) == 0 || len(tok) > 255 {
			return fmt.Errorf("token of rank %d has length %d", r, len(tok))
		}
		byRank[r] = tok
	}
	var b bytes.Buffer
	b.WriteString("CTR1")
	binary.Write(&b, binary.LittleEndian, uint32(len(byRank)))
	for _, tok := range byRank {
		b.WriteByte(byte(len(tok)))
	}
	for _, tok := range byRank {
		b.WriteString(tok)
	}
	return os.WriteFile(name+".ranks", b.Bytes(), 0o644)
}
