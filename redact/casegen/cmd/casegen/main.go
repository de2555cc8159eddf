// Command casegen writes the labelled redaction cases of package casegen
// for a seed, as JSON Lines:
//
//	go run ./redact/casegen/cmd/casegen -seed 11 > cases.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/compactkit/compact/redact/casegen"
)

func main() {
	seed := flag.Uint64("seed", 1, "the seed: the same seed writes the same cases")
	out := flag.String("o", "", "write to `FILE` instead of stdout")
	flag.Parse()
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "casegen:", err)
			os.Exit(1)
		}
		w = f
	}
	bw := bufio.NewWriter(w)
	err := casegen.Write(bw, casegen.Generate(*seed))
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && w != os.Stdout {
		err = w.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "casegen:", err)
		os.Exit(1)
	}
}
