package main

import (
	"context"
	"fmt"
	"io"

	"github.com/compactkit/compact"

	"github.com/compactkit/compact/format"
)

const convertUsage = "compact convert --to NAME [--from NAME] [-o FILE] [FILE|-]"

const convertExamples = `  compact convert --to openai session.jsonl > chat.json
      a Claude Code session as OpenAI Chat messages (one "tool" message per
      tool result, right after the call)
  compact convert --to anthropic -o request.json chat.json
      OpenAI Chat to an Anthropic Messages request, written atomically
  cat run.traj | compact convert --from swe-agent --to openai-jsonl -
      read stdin as a SWE-agent trajectory, write JSON lines

Messages written back into the format they were read from are copied byte
for byte. Thinking is written only into its own format (no API accepts
another's reasoning); names, and the flags marking harness-injected or
summary messages, are dropped where the target has no place for them.
`

func runConvert(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "convert", convertUsage, convertExamples)
	to := fs.String("to", "", "write format `NAME`: "+formatNames(true))
	from := fs.String("from", "", "read as format `NAME` instead of detecting it ("+formatNames(false)+")")
	out := fs.String("o", "", "write to `FILE` (atomically) instead of stdout")
	rf := addReadFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *to == "" {
		return usageErrorf("convert: --to is required (one of %s)", formatNames(true))
	}
	f, ok := format.Lookup(format.Name(*to))
	if !ok || f.Write == nil {
		return usageErrorf("convert: cannot write %q (compact writes %s)", *to, formatNames(true))
	}
	if *from != "" {
		if _, ok := format.Lookup(format.Name(*from)); !ok {
			return usageErrorf("convert: unknown --from format %q (known: %s)", *from, formatNames(false))
		}
	}
	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := e.checkOutput("-o", *out); err != nil {
		return err
	}
	t, _, err := readInput(e, in, in.name, format.Name(*from), rf)
	if err != nil {
		return badInput(err)
	}
	if n := len(t.Records); n > 0 && !sameFamily(format.Name(t.Format), f.Name) {
		fmt.Fprintf(e.stderr, "compact: note: %s: %d %s records (metadata: %s) have no place in %s and are not written\n",
			in.name, n, t.Format, recordTypes(t.Records), f.Name)
	}
	return writeOutput(e, *out, func(w io.Writer) error {
		return format.Write(w, t, f.Name)
	})
}

// sameFamily reports formats whose records are interchangeable (OpenAI Chat
// as JSON and as JSON lines).
func sameFamily(a, b format.Name) bool {
	chat := func(n format.Name) bool { return n == format.OpenAIChat || n == format.OpenAIChatJSONL }
	return a == b || chat(a) && chat(b)
}

// recordTypes lists records' kinds with their counts.
func recordTypes(recs []compact.Record) string {
	n := map[string]int{}
	for _, r := range recs {
		n[r.Type]++
	}
	return counts(n, nil)
}
