package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/compactkit/compact/redact"
)

const redactUsage = "compact redact [-o FILE] [--report] [--json] [--rules FILE] [--mask-env NAMES] [--as auto|text|json] [FILE|-]"

const redactExamples = `  compact redact session.jsonl > clean.jsonl
      mask secrets in a transcript; JSON and JSONL stay valid, every byte
      that is not a secret is kept
  env | compact redact
      any text, stdin to stdout
  compact redact --report -o clean.jsonl session.jsonl
      also list what was masked (rule, line:column) on stderr
  compact redact --rules company.toml --mask-env DB_PASSWORD,STRIPE_KEY app.log
      add custom rules (gitleaks TOML) and always mask the values of these
      environment variables
  compact redact --list-rules
      the built-in rules
`

func runRedact(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "redact", redactUsage, redactExamples)
	output := fs.String("o", "", "write the redacted text to `FILE` (atomically) instead of stdout")
	report := fs.Bool("report", false, "print each finding (rule, line:column, length) to stderr")
	asJSON := fs.Bool("json", false, "with --report: print findings as JSON Lines")
	rulesFile := fs.String("rules", "", "add custom rules from a gitleaks-style TOML `FILE`")
	maskEnv := fs.String("mask-env", "", "comma-separated environment variable `NAMES` whose values are always masked")
	as := fs.String("as", "auto", "input kind: auto (JSON and JSONL detected, kept valid), text or json (fail unless JSON/JSONL)")
	list := fs.Bool("list-rules", false, "print the built-in rules and exit")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *list {
		return listRules(e)
	}
	if *as != "auto" && *as != "text" && *as != "json" {
		return usageErrorf("--as %q: want auto, text or json", *as)
	}
	cfg := redact.Config{}
	if *rulesFile != "" {
		f, err := os.Open(*rulesFile)
		if err != nil {
			return badInput(err)
		}
		cfg, err = redact.LoadRules(f)
		f.Close()
		if err != nil {
			return badInput(fmt.Errorf("%s: %w", *rulesFile, err))
		}
	}
	r, err := redact.New(cfg)
	if err != nil {
		return badInput(err)
	}
	for _, name := range strings.Split(*maskEnv, ",") {
		if name = strings.TrimSpace(name); name != "" {
			r.AddValue(e.getenv(name))
		}
	}

	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	data, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", in.name, err)
	}

	var out []byte
	var found []redact.Finding
	switch *as {
	case "text":
		s, f := r.Redact(string(data))
		out, found = []byte(s), f
	case "json":
		if err := jsonDocError(data); err != nil {
			return badInput(fmt.Errorf("%s: not JSON or JSON Lines: %w", in.name, err))
		}
		out, found = r.RedactBytes(data)
	default:
		out, found = r.RedactBytes(data)
	}
	if err := writeOutput(e, *output, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	}); err != nil {
		return err
	}
	if *report {
		if err := printFindings(e, in.name, data, found, *asJSON); err != nil {
			return err
		}
	}
	if st := r.Stats(); st.Timeouts > 0 {
		fmt.Fprintf(e.stderr, "compact: warning: %d custom-rule matches timed out; text they ran on may still hold secrets\n", st.Timeouts)
	}
	return nil
}

// jsonDocError returns nil for a JSON document or JSON Lines, and
// otherwise where the input stops being either: the byte offset (and the
// line, for lines) and what is wrong there.
func jsonDocError(data []byte) error {
	var v json.RawMessage
	docErr := json.Unmarshal(data, &v)
	if docErr == nil {
		return nil
	}
	lines, offset := 0, 0
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) != "" {
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				if lines == 0 {
					break // not lines either: the document's error says where
				}
				var syn *json.SyntaxError
				if errors.As(err, &syn) {
					return fmt.Errorf("line %d, byte %d: %w", i+1, offset+int(syn.Offset), err)
				}
				return fmt.Errorf("line %d: %w", i+1, err)
			}
			lines++
		}
		offset += len(line) + 1
	}
	if lines > 1 {
		return nil
	}
	var syn *json.SyntaxError
	if errors.As(docErr, &syn) {
		return fmt.Errorf("byte %d: %w", syn.Offset, docErr)
	}
	return docErr
}

// shownURL is a store's or an API's URL as printed and stored: its
// password masked (issue 17, leak 5).
func shownURL(spec string) string { return redact.MaskURLs(spec) }

// shownCommand is a command line as reported: URL passwords masked, and
// whatever the built-in rules find in its flags (a --focus that quotes a
// secret).
func shownCommand(name string, args []string) string {
	line := redact.MaskURLs(name + " " + shellJoin(args))
	if r, err := redact.New(redact.Config{}); err == nil {
		line = r.String(line)
	}
	return line
}

// redactFinding is one line of --report --json.
type redactFinding struct {
	File   string `json:"file"`
	Rule   string `json:"rule"`
	Line   int    `json:"line"`
	Column int    `json:"column"` // in bytes, from 1
	Start  int    `json:"start"`  // byte offsets into the input
	End    int    `json:"end"`
}

func printFindings(e *env, name string, data []byte, found []redact.Finding, asJSON bool) error {
	// Line starts, to turn byte offsets into line:column.
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	enc := json.NewEncoder(e.stderr)
	enc.SetEscapeHTML(false)
	for _, f := range found {
		line := sort.Search(len(starts), func(i int) bool { return starts[i] > f.Start })
		col := f.Start - starts[line-1] + 1
		var err error
		if asJSON {
			err = enc.Encode(redactFinding{File: name, Rule: f.Rule, Line: line, Column: col, Start: f.Start, End: f.End})
		} else {
			_, err = fmt.Fprintf(e.stderr, "%s:%d:%d: %s (%d bytes)\n", name, line, col, f.Rule, f.End-f.Start)
		}
		if err != nil {
			return err
		}
	}
	if !asJSON {
		_, err := fmt.Fprintf(e.stderr, "%s: %d secret(s) masked\n", name, len(found))
		return err
	}
	return nil
}

func listRules(e *env) error {
	seen := map[string]bool{}
	for _, ri := range redact.BuiltinRules() {
		key := ri.ID + "\x00" + ri.Description
		if seen[key] {
			continue
		}
		seen[key] = true
		if _, err := fmt.Fprintf(e.stdout, "%-34s %s\n", ri.ID, ri.Description); err != nil {
			return err
		}
	}
	return nil
}
