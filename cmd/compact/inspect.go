package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

const inspectUsage = "compact inspect [--json] [--check] [--format NAME] [--skip-bad-lines] [--strict-utf8] [FILE|-]"

const inspectExamples = `  compact inspect session.jsonl
      format, messages by role, tool calls and results, orphans, handoffs,
      compaction markers, size and the records kept as metadata
  compact inspect --json rollout.jsonl | jq '.orphans'
      the same as one JSON object
  cat chat.json | compact inspect --format openai -
      read stdin as OpenAI Chat, skipping detection
`

// inspectReport is what "compact inspect" says about a transcript. Its JSON
// form is the --json output; keys are stable.
type inspectReport struct {
	File        string           `json:"file"`
	Format      string           `json:"format"`
	Bytes       int64            `json:"bytes"`
	Messages    int              `json:"messages"`
	Roles       map[string]int   `json:"roles"`
	ToolCalls   int              `json:"tool_calls"`
	ToolResults int              `json:"tool_results"`
	ToolTurns   int              `json:"tool_turns"` // assistant turns that make calls
	Orphans     []compact.Orphan `json:"orphans"`
	Handoffs    []inspectHandoff `json:"handoffs"`
	Markers     []inspectMarker  `json:"markers"`
	Records     int              `json:"records"`
	RecordTypes map[string]int   `json:"record_types"`
	Tools       int              `json:"tools"` // tool definitions
	Synthetic   int              `json:"synthetic"`
	Thinking    int              `json:"thinking"` // thinking parts
	Images      int              `json:"images"`
	// Unread counts, by kind, the records the reader recognised but could
	// not read (kept as records); Warnings counts every warning by kind
	// (unread, skipped, split_line, duplicate, invalid_utf8).
	Unread   map[string]int `json:"unread"`
	Warnings map[string]int `json:"warnings"`
}

// addWarnings counts the reader's warnings into r.
func (r *inspectReport) addWarnings(ws []format.Warning) {
	for _, w := range ws {
		r.Warnings[string(w.Kind)]++
		if w.Kind == format.WarnUnread {
			r.Unread[w.Record]++
		}
	}
}

// inspectHandoff is a message that summarises earlier turns.
type inspectHandoff struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	// Kind is "compact" for a handoff compact wrote (signed under
	// COMPACT_HANDOFF_KEY or the default), "unverified compact" for one
	// shaped like it that does not verify (compact reads it as text),
	// "summary" for an agent's own compaction summary.
	Kind string `json:"kind"`
}

// inspectMarker is a record marking a compaction the agent did itself.
type inspectMarker struct {
	At   int    `json:"at"` // the index of the message it precedes
	Type string `json:"type"`
}

func runInspect(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "inspect", inspectUsage, inspectExamples)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	as := fs.String("format", "", "read as format `NAME` instead of detecting it ("+formatNames(false)+")")
	rf := addReadFlags(fs)
	doCheck := fs.Bool("check", false, "check instead whether the agent will resume the file whole, and exit 1 if not (see compact check)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *doCheck {
		return check(e, pos, format.Name(*as), *asJSON)
	}
	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	// From a file, the messages keep where their records lie, not their
	// bytes: inspect reads none of them.
	var at io.ReaderAt
	if f := in.file(); f != nil {
		at = f
	}
	counted := &countingReader{r: in}
	t, warnings, err := readInputAt(e, counted, in.name, format.Name(*as), rf, at)
	if err != nil {
		return badInput(err)
	}
	if _, err := io.Copy(io.Discard, counted); err != nil { // the size is the whole input's
		return fmt.Errorf("%s: %w", in.name, err)
	}
	key, err := handoffKey(e)
	if err != nil {
		return err
	}
	rep := inspect(in.name, counted.n, &t, key)
	rep.addWarnings(warnings)
	return writeOutput(e, "", func(w io.Writer) error {
		if *asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return rep.writeText(w)
	})
}

// inspect summarises t.
func inspect(file string, size int64, t *compact.Transcript, key []byte) inspectReport {
	rep := inspectReport{
		File: file, Format: t.Format, Bytes: size, Messages: len(t.Messages),
		Roles: map[string]int{}, RecordTypes: map[string]int{}, Tools: len(t.Tools),
		Orphans: t.Orphans(), Handoffs: []inspectHandoff{}, Markers: []inspectMarker{},
		ToolTurns: len(t.ToolGroups()), Records: len(t.Records),
		Unread: map[string]int{}, Warnings: map[string]int{},
	}
	if rep.Orphans == nil {
		rep.Orphans = []compact.Orphan{}
	}
	for i, m := range t.Messages {
		rep.Roles[string(m.Role)]++
		rep.ToolCalls += len(m.ToolCalls())
		rep.ToolResults += len(m.ResultIDs())
		if m.Synthetic {
			rep.Synthetic++
		}
		for _, p := range m.Parts {
			switch p.Type {
			case compact.PartThinking:
				rep.Thinking++
			case compact.PartImage:
				rep.Images++
			}
		}
		switch {
		case m.Summary && format.IsHandoff(&m) && compact.VerifyHandoff(&m, key):
			rep.Handoffs = append(rep.Handoffs, inspectHandoff{i, m.ID, "compact"})
		case m.Summary && format.IsHandoff(&m):
			// Shaped as compact's handoff, not signed under the key
			// (COMPACT_HANDOFF_KEY): compact reads it as text.
			rep.Handoffs = append(rep.Handoffs, inspectHandoff{i, m.ID, "unverified compact"})
		case m.Summary:
			rep.Handoffs = append(rep.Handoffs, inspectHandoff{i, m.ID, "summary"})
		}
	}
	for _, r := range t.Records {
		rep.RecordTypes[r.Type]++
		if r.Marker {
			rep.Markers = append(rep.Markers, inspectMarker{r.At, r.Type})
		}
	}
	return rep
}

func (r *inspectReport) writeText(w io.Writer) error {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-13s %s\n", k, v) }
	line("file", r.File)
	f, _ := format.Lookup(format.Name(r.Format))
	line("format", r.Format+" ("+f.Description+")")
	line("size", thousands(r.Bytes)+" bytes")
	msgs := strconv.Itoa(r.Messages)
	if r.Messages > 0 {
		msgs += ": " + counts(r.Roles, roleOrder)
	}
	line("messages", msgs)
	calls := fmt.Sprintf("%d in %d turns, %d results", r.ToolCalls, r.ToolTurns, r.ToolResults)
	if r.ToolCalls == 0 && r.ToolResults == 0 {
		calls = "none"
	}
	line("tool calls", calls)
	line("orphans", list(len(r.Orphans), func(i int) string {
		o := r.Orphans[i]
		what := "call without result"
		if o.Kind == compact.OrphanResult {
			what = "result without call"
		}
		return fmt.Sprintf("#%d %s %q", o.Index, what, o.CallID)
	}))
	line("handoffs", list(len(r.Handoffs), func(i int) string {
		h := r.Handoffs[i]
		if h.Kind == "compact" {
			return fmt.Sprintf("#%d (compact handoff)", h.Index)
		}
		return fmt.Sprintf("#%d (the agent's own summary)", h.Index)
	}))
	line("markers", markerList(r.Markers))
	recs := "none"
	if r.Records > 0 {
		recs = fmt.Sprintf("%d kept as metadata: %s", r.Records, counts(r.RecordTypes, nil))
	}
	line("records", recs)
	if len(r.Unread) > 0 {
		line("unread", counts(r.Unread, nil)+" (kept as records; see the warnings)")
	}
	if len(r.Warnings) > 0 {
		line("warnings", counts(r.Warnings, nil))
	}
	var extra []string
	if r.Tools > 0 {
		extra = append(extra, fmt.Sprintf("%d tool definitions", r.Tools))
	}
	if r.Synthetic > 0 {
		extra = append(extra, fmt.Sprintf("%d harness-injected messages", r.Synthetic))
	}
	if r.Thinking > 0 {
		extra = append(extra, fmt.Sprintf("%d thinking parts", r.Thinking))
	}
	if r.Images > 0 {
		extra = append(extra, fmt.Sprintf("%d images", r.Images))
	}
	if len(extra) > 0 {
		line("also", strings.Join(extra, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markerList renders markers, folding runs of the same marker at the same
// place ("summary before #0 (x16)").
func markerList(ms []inspectMarker) string {
	type run struct {
		m inspectMarker
		n int
	}
	var runs []run
	for _, m := range ms {
		if k := len(runs) - 1; k >= 0 && runs[k].m == m {
			runs[k].n++
			continue
		}
		runs = append(runs, run{m, 1})
	}
	s := list(len(runs), func(i int) string {
		r := runs[i]
		out := fmt.Sprintf("%s before #%d", r.m.Type, r.m.At)
		if r.n > 1 {
			out += fmt.Sprintf(" (x%d)", r.n)
		}
		return out
	})
	if len(runs) > 0 {
		_, rest, _ := strings.Cut(s, ": ")
		s = fmt.Sprintf("%d: %s", len(ms), rest)
	}
	return s
}

// roleOrder is the order roles are listed in; others follow by name.
var roleOrder = []string{"system", "developer", "user", "assistant", "tool"}

// counts renders "a 3, b 1": the keys of order first, then the others by
// count (descending) and name.
func counts(m map[string]int, order []string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// list renders "none", or "n: item, item, ..." showing at most 10 items.
func list(n int, item func(int) string) string {
	if n == 0 {
		return "none"
	}
	const shown = 10
	parts := make([]string, 0, min(n, shown)+1)
	for i := 0; i < n && i < shown; i++ {
		parts = append(parts, item(i))
	}
	if n > shown {
		parts = append(parts, fmt.Sprintf("and %d more (see --json)", n-shown))
	}
	return fmt.Sprintf("%d: %s", n, strings.Join(parts, ", "))
}

// thousands renders n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// formatNames lists the known formats, or only those compact can write.
func formatNames(writable bool) string {
	var names []string
	for _, f := range format.Formats() {
		if !writable || f.Write != nil {
			names = append(names, string(f.Name))
		}
	}
	return strings.Join(names, ", ")
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
