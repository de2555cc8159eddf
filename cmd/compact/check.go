package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

const checkUsage = "compact check [--json] [--format NAME] [FILE|-]   (also: compact inspect --check)"

const checkExamples = `  compact check session.jsonl && claude --resume
      exit 0 when Claude Code will resume the session whole, 1 when a
      damaged line, a broken parent chain, a split tool pair or a split
      model turn would make it drop part of the history
  compact check --json rollout.jsonl | jq '.problems'
      the same as one JSON object

Agents resume a damaged file silently, with part of its history gone: this
check is the warning they do not give. Run it on every file compact wrote.
`

// checkReport is what "compact check" says; its JSON form is --json's.
type checkReport struct {
	File     string           `json:"file"`
	Format   string           `json:"format"`
	Messages int              `json:"messages"`
	OK       bool             `json:"ok"`
	Problems []format.Problem `json:"problems"`
}

func runCheck(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "check", checkUsage, checkExamples)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	as := fs.String("format", "", "read as format `NAME` instead of detecting it ("+formatNames(false)+")")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	return check(e, pos, format.Name(*as), *asJSON)
}

// check runs the resume check on the input pos names and prints it; the
// error exits 1 when the check fails.
func check(e *env, pos []string, as format.Name, asJSON bool) error {
	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	var t compact.Transcript
	var problems []format.Problem
	if f := in.file(); f != nil {
		// A file is read twice rather than held whole.
		t, problems, err = format.CheckFile(f, in.size(), in.name, as)
	} else {
		var data []byte
		if data, err = io.ReadAll(in); err != nil {
			return badInput(fmt.Errorf("%s: %w", in.name, err))
		}
		t, problems, err = format.Check(data, in.name, as)
	}
	if err != nil {
		return badInput(err)
	}
	rep := checkReport{File: in.name, Format: t.Format, Messages: len(t.Messages), OK: len(problems) == 0, Problems: problems}
	if rep.Problems == nil {
		rep.Problems = []format.Problem{}
	}
	if err := writeOutput(e, "", func(w io.Writer) error {
		if asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return rep.writeText(w)
	}); err != nil {
		return err
	}
	if !rep.OK {
		return &exitErr{code: exitFailure, err: fmt.Errorf("%s: %d problem(s): the agent would not resume it whole", in.name, len(problems))}
	}
	return nil
}

func (r *checkReport) writeText(w io.Writer) error {
	var b strings.Builder
	if r.OK {
		fmt.Fprintf(&b, "%s: ok: %s, %d messages; nothing its agent would drop on resume\n", r.File, r.Format, r.Messages)
	} else {
		fmt.Fprintf(&b, "%s: %s, %d messages; %d problem(s):\n", r.File, r.Format, r.Messages, len(r.Problems))
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  %s (%s)\n", p, p.Kind)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
