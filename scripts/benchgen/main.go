// Command benchgen writes a long deterministic transcript for the
// benchmarks of the compaction path (package internal/benchdata): the
// sample sessions one after another until a number of tokens or bytes.
//
//	go run ./scripts/benchgen -format openai -tokens 10000000 -o /tmp/10m.json
//	go run ./scripts/benchgen -format claude-code -bytes 1000000000 -o /tmp/1g.jsonl
//	go run ./scripts/benchgen -codex-rollout ROLLOUT.jsonl -bytes 104857600 -o /tmp/codex.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/benchdata"
)

func main() {
	as := flag.String("format", "openai", fmt.Sprintf("format to write: one of %v", benchdata.Formats))
	toks := flag.Int64("tokens", 0, "stop after the session that reaches this many tokens")
	size := flag.Int64("bytes", 0, "stop after the session that reaches this many bytes")
	out := flag.String("o", "", "output `FILE` (required)")
	rollout := flag.String("codex-rollout", "", "repeat this Codex rollout `FILE` to -bytes instead (format's 100 MB Codex benchmark: the corpus's codex_agentcmd rollout)")
	flag.Parse()
	if *rollout != "" {
		src, err := os.ReadFile(*rollout)
		if err == nil {
			err = writeFile(*out, func(f *os.File) error { _, err := benchdata.RepeatCodex(f, src, *size); return err })
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchgen:", err)
			os.Exit(1)
		}
		st, _ := os.Stat(*out)
		fmt.Printf("%s: codex, %d bytes\n", *out, st.Size())
		return
	}
	if *out == "" || (*toks <= 0 && *size <= 0) {
		fmt.Fprintln(os.Stderr, "usage: benchgen -format NAME (-tokens N | -bytes N) -o FILE")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
	st, err := benchdata.Write(f, format.Name(*as), benchdata.Limits{Tokens: *toks, Bytes: *size})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out)
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %s, %d bytes, ~%d tokens, %d sessions, %d messages\n", *out, *as, st.Bytes, st.Tokens, st.Sessions, st.Messages)
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
